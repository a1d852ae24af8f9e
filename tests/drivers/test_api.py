"""Drivers and driver-vehicle associations: spec section 4, contract sections 6, 7 and 10."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.core.dates import today, us_text
from apps.drivers.models import Driver, DriverVehicle
from apps.masterdata.models import City, State
from tests.clients.test_api import field_errors
from tests.conftest import assert_problem
from tests.factories import ClientFactory, DriverFactory, VehicleFactory

pytestmark = pytest.mark.django_db


def payload(client, **extra):
    return {
        "clientId": client.id,
        "firstName": "Maria",
        "lastName": "Gonzalez",
        "driverType": "Owner Operator",
        **extra,
    }


def test_create_with_mm_dd_yyyy_dates_and_names(api, carrier):
    response = api.post(
        "/v1/drivers",
        payload(
            carrier,
            dateOfBirth="05-17-1984",
            hireDate="2019-03-01",
            licenseExpirationDate="06-30-2029",
            licenseNumber="tx12345678",
            licenseState="TX",
            dlType="cdl class a",
            state="Texas",
            city="Dallas",
        ),
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert response["Location"].endswith(f"/v1/drivers/{body['id']}")
    assert body["dateOfBirth"] == "05-17-1984"
    assert body["hireDate"] == "03-01-2019"
    assert body["licenseExpirationDate"] == "06-30-2029"
    assert body["driverType"] == "Owner Operator" and body["dlType"] == "CDL Class A"
    assert body["licenseNumber"] == "TX12345678" and body["city"] == "Dallas"
    assert body["coverages"] == [] and body["verified"] is False


def test_dates_before_the_year_1000_keep_four_digits(api, carrier):
    # What is read can be sent back: MM-dd-yyyy always has a four-digit year.
    dates = {
        "dateOfBirth": "0001-01-01",
        "hireDate": "0999-06-30",
        "licenseExpirationDate": "0999-12-31",
    }
    created = api.post("/v1/drivers", payload(carrier, **dates), format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    read = {field: body[field] for field in dates}
    assert read == {
        "dateOfBirth": "01-01-0001",
        "hireDate": "06-30-0999",
        "licenseExpirationDate": "12-31-0999",
    }
    sent_back = api.put(f"/v1/drivers/{body['id']}", read, format="json")
    assert sent_back.status_code == 200, sent_back.content
    assert {field: sent_back.json()[field] for field in dates} == read


@pytest.mark.parametrize("missing", ["clientId", "firstName", "lastName", "driverType"])
def test_create_requires_fields(api, carrier, missing):
    body = payload(carrier)
    del body[missing]
    assert missing in field_errors(
        assert_problem(api.post("/v1/drivers", body, format="json"), 400)
    )


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"driverType": "Astronaut"}, "driverType"),
        ({"dlType": "CDL Class Z"}, "dlType"),
        ({"dateOfBirth": "17-05-1984"}, "dateOfBirth"),
        ({"dateOfBirth": "1984/05/17"}, "dateOfBirth"),
        ({"state": "TX", "city": "Springfield Gardens Nowhere"}, "city"),
        ({"dateOfBirth": "01-01-2000", "hireDate": "01-01-1999"}, "hireDate"),
        ({"status": "asleep"}, "status"),
    ],
)
def test_create_rejects_bad_values(api, carrier, extra, field):
    assert field in field_errors(
        assert_problem(api.post("/v1/drivers", payload(carrier, **extra), format="json"), 400)
    )
    assert not Driver.objects.exists()


def future_days():
    tomorrow = today() + dt.timedelta(days=1)
    return [us_text(tomorrow), tomorrow.isoformat(), "12-31-9999"]


def test_a_date_of_birth_after_today_is_400_on_create(api, carrier):
    for born in future_days():
        body = payload(carrier, dateOfBirth=born)
        refused = assert_problem(api.post("/v1/drivers", body, format="json"), 400)
        assert field_errors(refused) == {"dateOfBirth": "Cannot be after today."}
    assert not Driver.objects.exists()


def test_a_date_of_birth_after_today_is_400_on_update(api, carrier):
    driver = DriverFactory(client=carrier, date_of_birth=dt.date(1990, 5, 1))
    for born in future_days():
        sent = api.put(f"/v1/drivers/{driver.id}", {"dateOfBirth": born}, format="json")
        assert field_errors(assert_problem(sent, 400)) == {"dateOfBirth": "Cannot be after today."}
    driver.refresh_from_db()
    assert driver.date_of_birth == dt.date(1990, 5, 1)


def test_a_future_date_of_birth_stored_before_the_rule_does_not_block_other_changes(api, carrier):
    """Stored while it was accepted: an update of another field goes through and keeps it; a
    new future date is refused as on any driver."""
    stored = today() + dt.timedelta(days=400)
    driver = DriverFactory(client=carrier, date_of_birth=stored)
    changed = api.put(f"/v1/drivers/{driver.id}", {"phone": "5555551234"}, format="json")
    assert changed.status_code == 200, changed.content
    driver.refresh_from_db()
    assert driver.phone == "5555551234" and driver.date_of_birth == stored
    later = us_text(stored + dt.timedelta(days=1))
    refused = api.put(f"/v1/drivers/{driver.id}", {"dateOfBirth": later}, format="json")
    assert field_errors(assert_problem(refused, 400)) == {"dateOfBirth": "Cannot be after today."}


def test_a_date_of_birth_of_today_is_accepted(api, carrier):
    # Today is the service's (contract section 6), as every date rule reads it.
    born = us_text(today())
    created = api.post("/v1/drivers", payload(carrier, dateOfBirth=born), format="json")
    assert created.status_code == 201, created.content
    assert created.json()["dateOfBirth"] == born


def test_filters_and_legacy_search_agree(api, carrier, agency):
    from apps.masterdata.models import State

    maria = DriverFactory(
        client=carrier,
        first_name="Maria",
        last_name="Gonzalez",
        license_number="TX1",
        license_state=State.objects.get(code="TX"),
    )
    james = DriverFactory(client=carrier, first_name="James", last_name="Walker", status="INACTIVE")
    other = DriverFactory(client=ClientFactory(agency=agency))

    def ids(query):
        return sorted(d["id"] for d in api.get(f"/v1/drivers?{query}").json()["results"])

    assert ids("q=maria gonz") == [maria.id]
    assert ids("licenseNumber=tx1") == [maria.id]
    assert ids("licenseState=texas") == [maria.id]
    assert ids("status=inactive") == [james.id]
    assert ids(f"clientId={carrier.id}") == sorted([maria.id, james.id])
    assert other.id in ids("")
    assert_problem(api.get("/v1/drivers?licenseState=Narnia"), 400)
    assert_problem(api.get("/v1/drivers?status=x"), 400)

    listed = api.get(f"/v1/drivers?clientId={carrier.id}&sort=firstName").json()
    searched = api.post(
        "/v1/drivers/search",
        {"sortBy": "firstName", "filter": {"clientId": carrier.id}},
        format="json",
    ).json()
    assert searched["items"] == listed["results"]
    assert searched["totalCount"] == 2


def city(name: str, state: str) -> City:
    return City.objects.get(name=name, state__code=state)


def test_create_refuses_a_city_id_of_another_state(api, carrier):
    nebraska = State.objects.get(code="NE")
    body = payload(carrier, stateId=nebraska.id, cityId=city("Dallas", "TX").id)
    refused = assert_problem(api.post("/v1/drivers", body, format="json"), 400)
    assert field_errors(refused) == {"cityId": "Dallas, TX is not in Nebraska."}
    assert not Driver.objects.exists()


def test_put_keeps_the_city_in_the_state(api, carrier):
    dallas = city("Dallas", "TX")
    driver = DriverFactory(client=carrier, state=dallas.state, city=dallas)
    omaha = city("Omaha", "NE")
    for body, errors in (
        ({"cityId": omaha.id}, {"cityId": "Omaha, NE is not in Texas."}),
        ({"state": "Nebraska"}, {"state": "Dallas, TX is not in Nebraska."}),
        ({"stateId": omaha.state_id}, {"state": "Dallas, TX is not in Nebraska."}),
    ):
        refused = assert_problem(api.put(f"/v1/drivers/{driver.id}", body, format="json"), 400)
        assert field_errors(refused) == errors
    driver.refresh_from_db()
    assert (driver.state_id, driver.city_id) == (dallas.state_id, dallas.id)
    moved = api.put(f"/v1/drivers/{driver.id}", {"state": "NE", "cityId": omaha.id}, format="json")
    assert moved.status_code == 200, moved.content
    assert (moved.json()["state"], moved.json()["city"]) == ("Nebraska", "Omaha")
    assert api.put(f"/v1/drivers/{driver.id}", {"city": None}, format="json").status_code == 200
    assert api.put(f"/v1/drivers/{driver.id}", {"state": "TX"}, format="json").status_code == 200


def test_legacy_search_refuses_several_values_of_a_single_value_filter(api, carrier):
    # As the GET list refuses the parameter sent twice (contract 13), never the last value.
    active = DriverFactory(client=carrier, status="ACTIVE")
    DriverFactory(client=carrier, status="TERMINATED")
    repeated = assert_problem(api.get("/v1/drivers?status=TERMINATED&status=ACTIVE"), 400)
    assert field_errors(repeated) == {"status": "Send this parameter once."}
    body = {"filter": {"status": ["TERMINATED", "ACTIVE"], "clientId": [carrier.id, carrier.id]}}
    refused = assert_problem(api.post("/v1/drivers/search", body, format="json"), 400)
    assert field_errors(refused) == {
        "filter.status": "Send this parameter once.",
        "filter.clientId": "Send this parameter once.",
    }
    one = api.post("/v1/drivers/search", {"filter": {"status": ["ACTIVE"]}}, format="json")
    assert [d["id"] for d in one.json()["items"]] == [active.id]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("q", {"x": 1}, "Expected a string."),
        ("q", 123, "Expected a string."),
        ("q", True, "Expected a string."),
        ("q", [{"x": 1}], "Expected a string."),
        ("q", [["maria"]], "Expected a string."),
        ("licenseNumber", 12345678, "Expected a string."),
        ("status", {"value": "ACTIVE"}, "Expected a string."),
        ("licenseState", {"code": "TX"}, "Expected a string."),
        ("licenseState", 43, "Expected a string."),  # the GET parameter is a name or code
        ("clientId", {"id": 1}, "Expected a number."),
        ("clientId", True, "Expected a number."),
        ("clientId", [[1]], "Expected a number."),
    ],
)
def test_legacy_search_refuses_a_filter_value_of_another_json_type(
    api, carrier, name, value, message
):
    # The filter takes what its GET parameter does: text where the parameter is text (an object
    # or a number was searched for as its Python text, "{'x': 1}", and answered no rows).
    DriverFactory(client=carrier, first_name="Maria")
    body = {"filter": {name: value}}
    refused = assert_problem(api.post("/v1/drivers/search", body, format="json"), 400)
    assert field_errors(refused) == {f"filter.{name}": message}


def test_legacy_search_takes_each_filter_in_its_json_type(api, carrier, agency):
    maria = DriverFactory(
        client=carrier,
        first_name="Maria",
        license_number="TX1",
        license_state=State.objects.get(code="TX"),
    )
    DriverFactory(client=ClientFactory(agency=agency), first_name="James")
    for body_filter in (
        {"clientId": carrier.id},
        {"clientId": str(carrier.id)},  # as the GET parameter is written
        {"q": "maria"},
        {"q": ["maria"]},
        {"licenseNumber": "tx1"},
        {"licenseState": "TX"},
        {"licenseState": "texas"},
        {"status": "active", "q": None},
    ):
        found = api.post("/v1/drivers/search", {"filter": body_filter}, format="json")
        assert found.status_code == 200, (body_filter, found.content)
        ids = [d["id"] for d in found.json()["items"]]
        assert maria.id in ids, body_filter


def test_legacy_search_desc_without_sort_by_reverses_the_default_order(api, carrier):
    for last, first in (("Baker", "Zoe"), ("Adams", "Yan"), ("Baker", "Amy"), ("Adams", "Yan")):
        DriverFactory(client=carrier, last_name=last, first_name=first)
    default = [d["id"] for d in api.get("/v1/drivers").json()["results"]]
    for order in ("desc", "DESC"):
        body = {"sortOrder": order}
        reversed_ = api.post("/v1/drivers/search", body, format="json").json()["items"]
        assert [d["id"] for d in reversed_] == default[::-1]
    ascending = api.post("/v1/drivers/search", {"sortOrder": "asc"}, format="json").json()
    assert [d["id"] for d in ascending["items"]] == default


def test_legacy_search_desc_of_a_descending_key_is_ascending(api, carrier):
    # sortBy "-lastName" with sortOrder "desc": each reverses the other (documented).
    adams = DriverFactory(client=carrier, last_name="Adams")
    baker = DriverFactory(client=carrier, last_name="Baker")
    body = {"sortBy": "-lastName", "sortOrder": "desc"}
    items = api.post("/v1/drivers/search", body, format="json").json()["items"]
    assert [d["id"] for d in items] == [adams.id, baker.id]


@pytest.mark.parametrize("sort_by", ["+lastName", "lastName, firstName", " lastName ,firstName"])
def test_legacy_search_desc_reverses_every_key_as_get_reads_it(api, carrier, sort_by):
    """`sortOrder: desc` reverses the order GET's `sort` gives for the same keys, the id that
    breaks ties included: "+lastName" was read "-+lastName" (400), and the second key of
    "lastName, firstName" was "- firstName" (400)."""
    for last, first in (("Baker", "Zoe"), ("Adams", "Yan"), ("Baker", "Amy"), ("Adams", "Yan")):
        DriverFactory(client=carrier, last_name=last, first_name=first)
    ascending = api.get("/v1/drivers", {"sort": sort_by.replace(" ", "")}).json()["results"]
    body = {"sortBy": sort_by, "sortOrder": "desc"}
    answer = api.post("/v1/drivers/search", body, format="json")
    assert answer.status_code == 200, answer.content
    assert [d["id"] for d in answer.json()["items"]] == [d["id"] for d in ascending][::-1]


def test_put_is_partial(api, carrier):
    driver = DriverFactory(client=carrier, first_name="Ana")
    body = api.put(f"/v1/drivers/{driver.id}", {"hireDate": "02-03-2020"}, format="json").json()
    assert body["hireDate"] == "02-03-2020" and body["firstName"] == "Ana"


def test_other_agency_driver_is_404(api, rival):
    driver = DriverFactory(client=rival)
    assert_problem(api.get(f"/v1/drivers/{driver.id}"), 404)
    assert_problem(api.put(f"/v1/drivers/{driver.id}", {"firstName": "x"}, format="json"), 404)
    assert api.post("/v1/drivers/search", {}, format="json").json()["totalCount"] == 0


def test_create_for_other_agency_client_is_400(api, rival):
    assert "clientId" in field_errors(
        assert_problem(api.post("/v1/drivers", payload(rival), format="json"), 400)
    )


def test_permissions(viewer_api, make_api, powerless, carrier):
    driver = DriverFactory(client=carrier)
    assert viewer_api.get(f"/v1/drivers/{driver.id}").status_code == 200
    assert viewer_api.post("/v1/drivers/search", {}, format="json").status_code == 200
    assert_problem(viewer_api.post("/v1/drivers", payload(carrier), format="json"), 403)
    assert_problem(make_api(powerless).get("/v1/drivers"), 403)


def test_list_query_count_is_constant(api, carrier, django_assert_max_num_queries):
    for _ in range(12):
        DriverFactory(client=carrier)
    api.get("/v1/drivers?limit=1")
    with django_assert_max_num_queries(9) as small:
        api.get("/v1/drivers?limit=2")
    with django_assert_max_num_queries(9) as large:
        api.get("/v1/drivers?limit=200")
    assert len(small.captured_queries) == len(large.captured_queries)


# --- POST /v1/drivers/vehicles ------------------------------------------------------------


def test_link_existing_driver(api, carrier):
    driver, vehicle = DriverFactory(client=carrier), VehicleFactory(client=carrier)
    response = api.post(
        "/v1/drivers/vehicles", {"vehicleId": vehicle.id, "driverId": driver.id}, format="json"
    )
    assert response.status_code == 201
    assert response.json()["driverId"] == driver.id
    assert_problem(
        api.post(
            "/v1/drivers/vehicles", {"vehicleId": vehicle.id, "driverId": driver.id}, format="json"
        ),
        409,
    )


def test_driver_id_zero_creates_the_driver(api, carrier):
    vehicle = VehicleFactory(client=carrier)
    response = api.post(
        "/v1/drivers/vehicles",
        {
            "vehicleId": vehicle.id,
            "driverId": 0,
            "firstName": "New",
            "lastName": "Driver",
            "dateOfBirth": "01-02-1990",
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["driver"]["driverType"] == "Company Driver"
    assert body["driver"]["clientId"] == carrier.id
    assert body["driver"]["dateOfBirth"] == "01-02-1990"
    assert DriverVehicle.objects.filter(vehicle=vehicle, driver_id=body["driverId"]).exists()


def test_a_link_points_location_at_the_driver(api, carrier):
    # The link has no URL of its own: the driver's detail lists its vehicles (a new one too).
    driver, vehicle = DriverFactory(client=carrier), VehicleFactory(client=carrier)
    for body in (
        {"vehicleId": vehicle.id, "driverId": driver.id},
        {"vehicleId": vehicle.id, "driverId": 0, "firstName": "New", "lastName": "Driver"},
    ):
        response = api.post("/v1/drivers/vehicles", body, format="json")
        assert response.status_code == 201, response.content
        driver_id = response.json()["driverId"]
        assert response["Location"].endswith(f"/v1/drivers/{driver_id}")
        shown = api.get(response["Location"]).json()
        assert [v["vehicleId"] for v in shown["vehicles"]] == [vehicle.id]
    assert driver_id != driver.id


@pytest.mark.parametrize("missing", ["firstName", "lastName"])
def test_driver_id_zero_requires_names(api, carrier, missing):
    vehicle = VehicleFactory(client=carrier)
    body = {"vehicleId": vehicle.id, "driverId": 0, "firstName": "A", "lastName": "B"}
    del body[missing]
    assert missing in field_errors(
        assert_problem(api.post("/v1/drivers/vehicles", body, format="json"), 400)
    )
    assert not Driver.objects.exists()


def test_link_rejects_hidden_missing_and_cross_client_references(api, carrier, rival, agency):
    vehicle = VehicleFactory(client=carrier)
    hidden_driver = DriverFactory(client=rival)
    other_client_driver = DriverFactory(client=ClientFactory(agency=agency))
    for body, field in (
        ({"vehicleId": vehicle.id, "driverId": hidden_driver.id}, "driverId"),
        ({"vehicleId": vehicle.id, "driverId": 999999}, "driverId"),
        ({"vehicleId": vehicle.id, "driverId": other_client_driver.id}, "driverId"),
        (
            {
                "vehicleId": VehicleFactory(client=rival).id,
                "driverId": 0,
                "firstName": "a",
                "lastName": "b",
            },
            "vehicleId",
        ),
        ({"vehicleId": vehicle.id, "driverId": -1}, "driverId"),
    ):
        assert field in field_errors(
            assert_problem(api.post("/v1/drivers/vehicles", body, format="json"), 400)
        )


def test_link_refuses_a_client_id_other_than_the_vehicles(api, carrier, rival, agency):
    # Contract section 4: a clientId the caller cannot see is a 400 as if it did not exist; a
    # visible one that is not the vehicle's client would put the driver under a client the
    # caller did not name. Neither writes anything.
    vehicle = VehicleFactory(client=carrier)
    driver = DriverFactory(client=carrier)
    own_other = ClientFactory(agency=agency)
    new_driver = {"vehicleId": vehicle.id, "driverId": 0, "firstName": "New", "lastName": "Guy"}
    for body, message in (
        ({**new_driver, "clientId": rival.id}, "No client with this id."),
        ({**new_driver, "clientId": 999999}, "No client with this id."),
        ({**new_driver, "clientId": own_other.id}, "Must be the vehicle's client."),
        (
            {"vehicleId": vehicle.id, "driverId": driver.id, "clientId": own_other.id},
            "Must be the vehicle's client.",
        ),
    ):
        refused = assert_problem(api.post("/v1/drivers/vehicles", body, format="json"), 400)
        assert field_errors(refused) == {"clientId": message}
    assert list(Driver.objects.all()) == [driver]
    assert not DriverVehicle.objects.exists()


def test_link_takes_the_vehicles_client_id(api, carrier):
    vehicle = VehicleFactory(client=carrier)
    body = {
        "vehicleId": vehicle.id,
        "driverId": 0,
        "firstName": "New",
        "lastName": "Guy",
        "clientId": carrier.id,
    }
    response = api.post("/v1/drivers/vehicles", body, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["driver"]["clientId"] == carrier.id


def test_link_needs_change_driver(viewer_api, carrier):
    driver, vehicle = DriverFactory(client=carrier), VehicleFactory(client=carrier)
    assert_problem(
        viewer_api.post(
            "/v1/drivers/vehicles", {"vehicleId": vehicle.id, "driverId": driver.id}, format="json"
        ),
        403,
    )


def test_a_search_of_more_words_than_a_name_has_is_400_not_a_database_error(api, carrier):
    # Each word is one more condition; about a thousand overflowed SQLite's expression depth
    # and answered 503 "database unavailable", which no retry could cure.
    maria = DriverFactory(client=carrier, first_name="Maria", last_name="Gonzalez")
    words = " ".join(["maria"] * 20)
    assert [d["id"] for d in api.get(f"/v1/drivers?q={words}").json()["results"]] == [maria.id]
    for many in (21, 1000):
        words = " ".join(["maria"] * many)
        body = assert_problem(api.get(f"/v1/drivers?q={words}"), 400)
        assert [e["field"] for e in body["errors"]] == ["q"]
        legacy = api.post("/v1/drivers/search", {"filter": {"q": words}}, format="json")
        assert [e["field"] for e in assert_problem(legacy, 400)["errors"]] == ["filter.q"]


def test_link_refuses_a_deleted_vehicle(api, carrier):
    # As scheduling it answers: a soft-deleted unit is gone for the writes that name it.
    driver, vehicle = DriverFactory(client=carrier), VehicleFactory(client=carrier)
    deleted = api.put(f"/v1/vehicles/{vehicle.id}", {"deleted": True}, format="json")
    assert deleted.status_code == 200, deleted.content
    for body in (
        {"vehicleId": vehicle.id, "driverId": driver.id},
        {"vehicleId": vehicle.id, "driverId": 0, "firstName": "Ghost", "lastName": "Rider"},
    ):
        refused = assert_problem(api.post("/v1/drivers/vehicles", body, format="json"), 400)
        assert field_errors(refused) == {"vehicleId": "No vehicle with this id."}
    assert list(Driver.objects.all()) == [driver]
    assert not DriverVehicle.objects.exists()


def test_link_refuses_a_deleted_clients_vehicle_and_driver(api, carrier, agency):
    driver, vehicle = DriverFactory(client=carrier), VehicleFactory(client=carrier)
    live_vehicle = VehicleFactory(client=ClientFactory(agency=agency))
    deleted = api.put(f"/v1/clients/{carrier.id}", {"deleted": True}, format="json")
    assert deleted.status_code == 200, deleted.content
    for body, field in (
        ({"vehicleId": vehicle.id, "driverId": driver.id}, "vehicleId"),
        ({"vehicleId": vehicle.id, "driverId": 0, "firstName": "A", "lastName": "B"}, "vehicleId"),
        ({"vehicleId": live_vehicle.id, "driverId": driver.id}, "driverId"),
    ):
        refused = assert_problem(api.post("/v1/drivers/vehicles", body, format="json"), 400)
        noun = "vehicle" if field == "vehicleId" else "driver"
        assert field_errors(refused) == {field: f"No {noun} with this id."}
    assert list(Driver.objects.all()) == [driver]
    assert not DriverVehicle.objects.exists()


def test_a_date_in_another_scripts_digits_is_400(api, carrier):
    body = payload(carrier, dateOfBirth="05-17-\uff11984")
    errors = field_errors(assert_problem(api.post("/v1/drivers", body, format="json"), 400))
    assert "dateOfBirth" in errors


@pytest.mark.parametrize("written", ["5-17-1984", "05-7-1984", "1984-5-17", "05-17-84"])
def test_a_date_without_all_its_digits_is_400(api, carrier, written):
    body = payload(carrier, dateOfBirth=written)
    errors = field_errors(assert_problem(api.post("/v1/drivers", body, format="json"), 400))
    assert "dateOfBirth" in errors
