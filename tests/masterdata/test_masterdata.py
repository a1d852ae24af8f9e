"""Contract section 12: master data loaded idempotently and looked up by name, code or id."""

from __future__ import annotations

import contextlib

import pytest
from rest_framework.exceptions import ValidationError

from apps.masterdata.lookup import resolve, resolve_city, resolve_many
from apps.masterdata.models import City, CoverageType, Make, State, UnitType
from apps.masterdata.services import masterdata_load

pytestmark = pytest.mark.django_db


def test_load_is_idempotent_and_complete():
    before = masterdata_load()
    after = masterdata_load()
    assert before == after
    assert State.objects.count() == 56  # 50 states, DC, 5 territories
    assert City.objects.count() > 25_000
    assert UnitType.objects.filter(is_power_unit=False).count() == 4
    assert set(
        CoverageType.objects.filter(schedules_drivers=True).values_list("code", flat=True)
    ) == {"OA", "DD"}
    assert Make.objects.filter(name="Hyundai Translead").exists()


def test_load_keeps_staff_edits():
    unit = UnitType.objects.get(name="Pickup")
    unit.is_power_unit = False
    unit.save()
    masterdata_load()
    unit.refresh_from_db()
    assert unit.is_power_unit is False


@pytest.mark.parametrize("value", ["Texas", " texas ", "TX", "tx"])
def test_state_by_name_or_code(value):
    assert resolve(State, value).code == "TX"


def test_lookup_by_id_and_coverage_code():
    texas = State.objects.get(code="TX")
    assert resolve(State, texas.id) == texas
    assert resolve(CoverageType, "apd").name == "Auto Physical Damage"
    assert resolve(CoverageType, "motor truck cargo").code == "MTC"


def test_unknown_name_names_the_value():
    with pytest.raises(ValidationError, match="Narnia"):
        resolve(State, "Narnia")


LOOKED_UP = ["Texas", " texas ", "TX", "tx", "Narnia", " ", "", "x" * 121, "District of Columbia"]


@pytest.mark.parametrize("model", [State, CoverageType, Make])
def test_many_names_are_looked_up_as_one_is_in_one_query(model, django_assert_num_queries):
    # The fleet batch's plate states: `resolve`'s rule, whatever the number of values.
    values = [*LOOKED_UP, "apd", "AL", "motor truck cargo", "Kenworth", "kenworth "]
    expected = {}
    for value in values:
        with contextlib.suppress(ValidationError):  # a value `resolve` refuses is left out
            expected[value] = resolve(model, value)
    with django_assert_num_queries(1):
        assert resolve_many(model, values) == expected
    assert expected  # each model names some of them


def test_city_is_looked_up_within_its_state():
    texas, oregon = State.objects.get(code="TX"), State.objects.get(code="OR")
    assert resolve_city(texas, "paris").state == texas
    with pytest.raises(ValidationError):
        resolve_city(oregon, "El Paso")
    with pytest.raises(ValidationError):
        resolve_city(None, "Austin")
