"""Master-data ids (`stateId`, `driverTypeId`…) are ids: JSON integers only (contract section 6),
refused with the message every other id field gives."""

from __future__ import annotations

import pytest

from apps.masterdata.models import (
    City,
    ClientType,
    CoverageType,
    DriverType,
    Insurer,
    LicenseType,
    Make,
    State,
    UnitType,
)
from tests.clients.test_api import field_errors
from tests.conftest import assert_problem
from tests.factories import ClientFactory, DriverFactory, PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db

INTEGER_ONLY = "A valid integer is required."


def an_id(model) -> int:
    """The id of a row of `model` (a city of Texas, where the factories' clients are)."""
    rows = model.objects.all()
    if model is City:
        rows = rows.filter(state__code="TX")
    if model is Insurer and not rows.exists():
        PolicyFactory()  # the factories' insurer
    return rows.order_by("pk").values_list("pk", flat=True).first()


# (resource, its factory, the id field, the master data it names)
ID_FIELDS = [
    ("clients", ClientFactory, "clientTypeId", ClientType),
    ("clients", ClientFactory, "stateId", State),
    ("clients", ClientFactory, "cityId", City),
    ("clients", ClientFactory, "mailingStateId", State),
    ("clients", ClientFactory, "mailingCityId", City),
    ("policies", PolicyFactory, "coverageTypeId", CoverageType),
    ("policies", PolicyFactory, "insurerId", Insurer),
    ("policies", PolicyFactory, "stateId", State),
    ("vehicles", VehicleFactory, "unitTypeId", UnitType),
    ("vehicles", VehicleFactory, "makeId", Make),
    ("vehicles", VehicleFactory, "licensePlateStateId", State),
    ("drivers", DriverFactory, "driverTypeId", DriverType),
    ("drivers", DriverFactory, "dlTypeId", LicenseType),
    ("drivers", DriverFactory, "licenseStateId", State),
    ("drivers", DriverFactory, "stateId", State),
    ("drivers", DriverFactory, "cityId", City),
]


def owned(factory, agency):
    if factory is ClientFactory:
        return factory(agency=agency)
    return factory(client=ClientFactory(agency=agency))


@pytest.mark.parametrize(("resource", "factory", "field", "model"), ID_FIELDS)
def test_a_master_data_id_that_is_not_a_json_integer_is_400(
    api, agency, resource, factory, field, model
):
    record = owned(factory, agency)
    pk = an_id(model)
    before = api.get(f"/v1/{resource}/{record.id}").json()[field]
    for sent in (str(pk), float(pk), True, f" {pk} ", [pk], {"id": pk}):
        response = api.put(f"/v1/{resource}/{record.id}", {field: sent}, format="json")
        assert field_errors(assert_problem(response, 400)) == {field: INTEGER_ONLY}, sent
    assert api.get(f"/v1/{resource}/{record.id}").json()[field] == before


@pytest.mark.parametrize(("resource", "factory", "field", "model"), ID_FIELDS)
def test_a_master_data_id_past_the_largest_integer_is_400(
    api, agency, resource, factory, field, model
):
    # Contract section 13: every integer in a body is at most 2^63-1.
    record = owned(factory, agency)
    response = api.put(f"/v1/{resource}/{record.id}", {field: 2**63}, format="json")
    assert field in field_errors(assert_problem(response, 400))


@pytest.mark.parametrize(
    ("resource", "factory", "field", "model"),
    [row for row in ID_FIELDS if row[3] is not City],  # a city id alone needs its state
)
def test_a_master_data_id_as_a_json_integer_is_taken(api, agency, resource, factory, field, model):
    record = owned(factory, agency)
    pk = an_id(model)
    response = api.put(f"/v1/{resource}/{record.id}", {field: pk}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()[field] == pk
