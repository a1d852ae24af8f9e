"""Issue 14: master data rows staff add, change or remove go through apps.masterdata.services;
uniqueness is the model's constraint (409 with its message), a row in use is never deleted."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from apps.core.exceptions import Conflict
from apps.core.models import unique_violations
from apps.masterdata.models import City, Make, State, UnitType
from apps.masterdata.services import masterdata_create, masterdata_delete, masterdata_update
from tests.factories import VehicleFactory

pytestmark = pytest.mark.django_db


def test_a_new_row_is_found_by_its_name_whatever_the_case():
    make = masterdata_create(user=None, model=Make, name="  Zeta Trucks ")
    assert Make.objects.by_name("ZETA TRUCKS").get() == make


def test_a_name_already_on_the_list_is_a_uniqueness_error_whatever_the_case():
    masterdata_create(user=None, model=Make, name="Zeta Trucks")
    with pytest.raises(ValidationError) as broken:
        masterdata_create(user=None, model=Make, name="zeta trucks")
    assert unique_violations(broken.value) == ["'zeta trucks' is already on this list."]
    assert Make.objects.by_name("zeta trucks").count() == 1


def test_a_city_is_unique_within_its_state_only():
    texas, oklahoma = State.objects.get(code="TX"), State.objects.get(code="OK")
    masterdata_create(user=None, model=City, name="Frontier Gap", state=texas)
    masterdata_create(user=None, model=City, name="Frontier Gap", state=oklahoma)
    with pytest.raises(ValidationError) as broken:
        masterdata_create(user=None, model=City, name="FRONTIER GAP", state=texas)
    assert unique_violations(broken.value) == ["Texas already has a city named 'FRONTIER GAP'."]


def test_a_renamed_row_is_found_by_its_new_name_and_may_not_take_anothers():
    make = masterdata_create(user=None, model=Make, name="Zeta Trucks")
    stale = Make.objects.get(pk=make.pk)
    stale.name = "changed on the form already"  # the service reads the row again
    renamed = masterdata_update(user=None, instance=stale, name="Zeta")
    assert Make.objects.by_name("zeta").get().pk == make.pk == renamed.pk
    with pytest.raises(ValidationError) as broken:
        masterdata_update(user=None, instance=renamed, name="Freightliner")
    assert unique_violations(broken.value) == ["'Freightliner' is already on this list."]
    assert Make.objects.get(pk=make.pk).name == "Zeta"


def test_only_the_rows_own_columns_can_be_written():
    with pytest.raises(TypeError):
        masterdata_create(user=None, model=Make, name="Zeta", name_key="forged")
    with pytest.raises(TypeError):
        masterdata_update(user=None, instance=Make.objects.first(), id=999)


def test_a_row_in_use_stays_and_an_unused_one_goes():
    vehicle = VehicleFactory()
    with pytest.raises(Conflict, match="in use"):
        masterdata_delete(user=None, instance=vehicle.unit_type)
    assert UnitType.objects.filter(pk=vehicle.unit_type_id).exists()
    spare = masterdata_create(user=None, model=UnitType, name="Dolly", is_power_unit=False)
    masterdata_delete(user=None, instance=spare)
    assert not UnitType.objects.filter(pk=spare.pk).exists()


def test_a_states_code_cannot_be_changed_because_drivers_keep_a_copy_of_it():
    texas = State.objects.get(code="TX")
    with pytest.raises(ValidationError) as refused:
        masterdata_update(user=None, instance=texas, code="TZ")
    assert "code" in refused.value.message_dict
    assert State.objects.filter(pk=texas.pk, code="TX").exists()
    masterdata_update(user=None, instance=texas, code="TX", name="Texas")  # unchanged: fine
