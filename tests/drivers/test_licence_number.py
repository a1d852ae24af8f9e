"""A driver's licence number is stored in one form, trimmed and upper case, whoever writes it:
the model does it (`Driver.save`, as `Client.save` does a DOT), so a raw ORM write (a data fix,
a script) is found by the `licenseNumber` filter like the API's own writes."""

from __future__ import annotations

import pytest

from apps.drivers.models import Driver
from tests.factories import DriverFactory

pytestmark = pytest.mark.django_db


def test_a_raw_orm_write_stores_the_normal_form_the_filter_finds(api, carrier):
    driver = DriverFactory(client=carrier, license_number="  tx77  ")
    assert Driver.objects.get(pk=driver.pk).license_number == "TX77"

    response = api.get("/v1/drivers", {"licenseNumber": "tx77"})

    assert response.status_code == 200, response.content
    assert [d["id"] for d in response.json()["results"]] == [driver.pk]
    assert response.json()["results"][0]["licenseNumber"] == "TX77"


def test_a_saved_change_of_case_is_stored_upper_case(carrier):
    driver = DriverFactory(client=carrier, license_number="TX77")
    driver.license_number = "tx78 "
    driver.save(update_fields=["license_number"])
    assert Driver.objects.get(pk=driver.pk).license_number == "TX78"


def test_the_same_number_in_lower_case_is_no_change(api, carrier):
    driver = DriverFactory(client=carrier, license_number="TX77")
    before = api.get(f"/v1/drivers/{driver.pk}").json()

    response = api.put(f"/v1/drivers/{driver.pk}", {"licenseNumber": " tx77"}, format="json")

    assert response.status_code == 200, response.content
    assert response.json() == before
