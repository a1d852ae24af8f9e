"""model_update: the one way a partial update is applied (no HTTP: a rule of the write path)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from apps.core.exceptions import Conflict
from apps.core.services import model_update
from apps.drivers.models import Driver
from apps.masterdata.models import State
from tests.factories import DriverFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_only_the_fields_present_in_data_change(manager):
    driver = DriverFactory(first_name="Ann", last_name="Lee", phone="555-0100")
    _, changed = model_update(
        instance=driver,
        fields=("first_name", "last_name", "phone"),
        data={"first_name": "Anne"},
        user=manager,
    )
    assert changed is True
    stored = Driver.objects.get(pk=driver.pk)
    assert (stored.first_name, stored.last_name, stored.phone) == ("Anne", "Lee", "555-0100")
    assert stored.updated_by == manager


def test_a_key_outside_fields_is_not_applied():
    driver = DriverFactory(first_name="Ann", license_number="D1")
    model_update(
        instance=driver, fields=("first_name",), data={"first_name": "Bo", "license_number": "X"}
    )
    stored = Driver.objects.get(pk=driver.pk)
    assert (stored.first_name, stored.license_number) == ("Bo", "D1")


def test_nothing_changed_is_neither_checked_nor_saved():
    driver = DriverFactory(first_name="Ann")
    before = Driver.objects.get(pk=driver.pk).updated_at

    def refuse(_):
        raise AssertionError("checked although nothing changed")

    _, changed = model_update(
        instance=driver, fields=("first_name",), data={"first_name": "Ann"}, check=refuse
    )
    assert changed is False
    assert Driver.objects.get(pk=driver.pk).updated_at == before


def test_a_relation_is_compared_by_key_and_saved():
    driver = DriverFactory(state=None)
    texas = State.objects.get(code="TX")
    _, changed = model_update(instance=driver, fields=("state",), data={"state": texas})
    assert changed is True
    assert Driver.objects.get(pk=driver.pk).state_id == texas.pk
    _, again = model_update(instance=driver, fields=("state",), data={"state": texas})
    assert again is False


def test_the_check_sees_the_record_as_it_will_be_and_can_refuse():
    driver = DriverFactory(first_name="Ann")
    seen = []

    def refuse(instance):
        seen.append(instance.first_name)
        raise Conflict("no")

    with pytest.raises(Conflict):
        model_update(
            instance=driver, fields=("first_name",), data={"first_name": "Bo"}, check=refuse
        )
    assert seen == ["Bo"]
    assert Driver.objects.get(pk=driver.pk).first_name == "Ann"


def test_the_model_validation_runs_before_saving():
    driver = DriverFactory(email="")
    with pytest.raises(ValidationError) as error:
        model_update(instance=driver, fields=("email",), data={"email": "not-an-address"})
    assert "email" in error.value.message_dict
    assert Driver.objects.get(pk=driver.pk).email == ""


def test_an_unknown_field_is_a_programming_error():
    driver = DriverFactory()
    with pytest.raises(TypeError):
        model_update(instance=driver, fields=("nickname",), data={"nickname": "x"})
    with pytest.raises(TypeError):
        model_update(instance=driver, fields=("vehicle_links",), data={"vehicle_links": []})


def test_a_model_without_updated_by_is_updated_all_the_same():
    user = UserFactory(first_name="A")
    _, changed = model_update(
        instance=user, fields=("first_name",), data={"first_name": "B"}, user=user
    )
    assert changed is True
    user.refresh_from_db()
    assert user.first_name == "B"
