"""A record id is 1 to 2^63-1 (contract section 13) in every field that takes one: a reference
in a JSON body, a master-data id, an id sent as a form value, an id filter. The bounds are
written once (apps.core.params.ID_BOUNDS)."""

from __future__ import annotations

import pytest
from django import forms
from rest_framework.exceptions import ValidationError

from apps.core.filters import IdFilter
from apps.core.serializers import reference_id_field
from apps.documents.api.serializers import FormIdField
from apps.masterdata.lookup import MasterDataIdField
from apps.masterdata.models import State

LARGEST = 2**63 - 1


@pytest.mark.parametrize(
    "field",
    [reference_id_field(), MasterDataIdField(State)],
    ids=["reference", "master data"],
)
@pytest.mark.parametrize("sent", [0, -1, LARGEST + 1])
def test_a_body_id_outside_its_bounds_is_refused(field, sent):
    with pytest.raises(ValidationError):
        field.run_validation(sent)


def test_a_body_reference_takes_the_largest_id():
    assert reference_id_field().run_validation(LARGEST) == LARGEST


@pytest.mark.parametrize("sent", ["0", str(LARGEST + 1)])
def test_a_form_id_outside_its_bounds_is_refused(sent):
    with pytest.raises(ValidationError):
        FormIdField().run_validation(sent)
    assert FormIdField().run_validation(str(LARGEST)) == LARGEST


@pytest.mark.parametrize("sent", ["0", str(LARGEST + 1)])
def test_an_id_filter_outside_its_bounds_is_refused(sent):
    field = IdFilter().field
    with pytest.raises(forms.ValidationError):
        field.clean(sent)
    assert field.clean(str(LARGEST)) == LARGEST


def test_a_field_may_name_its_own_bounds():
    # driverId 0 asks for a new driver (POST /v1/drivers/vehicles).
    assert reference_id_field(min_value=0).run_validation(0) == 0
