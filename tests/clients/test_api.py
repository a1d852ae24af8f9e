"""The clients API of spec section 4, contract sections 4 to 7."""

from __future__ import annotations

import pytest

from apps.clients.models import Client
from apps.masterdata.models import City, ClientType
from tests.conftest import assert_problem
from tests.factories import ClientFactory, ProducerFactory

pytestmark = pytest.mark.django_db


def field_errors(body: dict) -> dict[str, str]:
    return {e["field"]: e["message"] for e in body["errors"]}


# --- list ------------------------------------------------------------------------------


def test_list_shows_only_the_callers_agency(api, carrier, rival):
    body = api.get("/v1/clients").json()
    assert body["count"] == 1
    assert [c["id"] for c in body["results"]] == [carrier.id]
    assert set(body) == {"count", "page", "limit", "totalPages", "results"}


def test_list_filter_naming_another_agency_is_empty(api, carrier, rival, other_agency):
    body = api.get(f"/v1/clients?agencyId={other_agency.id}").json()
    assert body == {"count": 0, "page": 1, "limit": 25, "totalPages": 0, "results": []}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("name=lone", ["Lone Star Freight"]),
        ("dot=2222222", ["Second Carrier"]),
        ("acordEnabled=false", ["Second Carrier"]),
        ("deleted=true", ["Gone Carrier"]),
        ("deleted=false", ["Lone Star Freight", "Second Carrier"]),
        ("", ["Lone Star Freight", "Second Carrier"]),
    ],
)
def test_list_filters(api, agency, carrier, query, expected):
    ClientFactory(agency=agency, client_name="Second Carrier", dot="2222222", acord_enabled=False)
    ClientFactory(agency=agency, client_name="Gone Carrier", dot="3333333", deleted=True)
    body = api.get(f"/v1/clients?{query}").json()
    assert [c["clientName"] for c in body["results"]] == expected


def test_list_filters_by_references(api, agency, carrier):
    producer = ProducerFactory(agency=agency)
    motor = ClientType.objects.get(name="Motor Carrier")
    child = ClientFactory(
        agency=agency, parent_client=carrier, producer=producer, client_type=motor
    )
    for query in (
        f"parentClientId={carrier.id}",
        f"producerId={producer.id}",
        f"clientTypeId={motor.id}",
        f"agencyId={agency.id}&producerId={producer.id}",
    ):
        assert [c["id"] for c in api.get(f"/v1/clients?{query}").json()["results"]] == [child.id]


@pytest.mark.parametrize(
    "query", ["dot=12ab", "dot=123456789", "acordEnabled=maybe", "agencyId=x", "deleted=2"]
)
def test_list_rejects_malformed_filters(api, query):
    assert_problem(api.get(f"/v1/clients?{query}"), 400)


@pytest.mark.parametrize(
    "query", ["page=0", "page=-1", "page=x", "limit=0", "limit=201", "limit=1.5", "sort=nope"]
)
def test_list_rejects_bad_paging_and_sorting(api, query):
    body = assert_problem(api.get(f"/v1/clients?{query}"), 400)
    assert body["errors"][0]["field"] == query.split("=")[0]


def test_paging_and_sorting(api, agency):
    for name in ["Bravo", "Alpha", "Charlie", "Alpha"]:
        ClientFactory(agency=agency, client_name=name)
    first = api.get("/v1/clients?sort=-clientName&limit=3").json()
    assert first["totalPages"] == 2
    assert [c["clientName"] for c in first["results"]] == ["Charlie", "Bravo", "Alpha"]
    second = api.get("/v1/clients?sort=-clientName&limit=3&page=2").json()
    assert [c["clientName"] for c in second["results"]] == ["Alpha"]
    ids = [c["id"] for c in first["results"] + second["results"]]
    assert len(set(ids)) == 4
    past = api.get("/v1/clients?page=9").json()
    assert past["results"] == [] and past["count"] == 4


def test_list_query_count_does_not_grow_with_page_size(api, agency, django_assert_max_num_queries):
    producer = ProducerFactory(agency=agency)
    for n in range(30):
        ClientFactory(agency=agency, producer=producer, client_name=f"C{n}")
    api.get("/v1/clients?limit=1")  # warm the API-key cache
    with django_assert_max_num_queries(7) as small:
        assert len(api.get("/v1/clients?limit=5").json()["results"]) == 5
    with django_assert_max_num_queries(7) as large:
        assert len(api.get("/v1/clients?limit=200").json()["results"]) == 30
    assert len(small.captured_queries) == len(large.captured_queries)


def test_viewer_may_list_but_a_user_without_view_permission_may_not(
    viewer_api, make_api, powerless, carrier
):
    assert viewer_api.get("/v1/clients").status_code == 200
    assert_problem(make_api(powerless).get("/v1/clients"), 403)


# --- create ----------------------------------------------------------------------------


def test_create_resolves_master_data_and_answers_201_with_location(api, agency):
    response = api.post(
        "/v1/clients",
        {
            "clientName": "Austin Movers",
            "agencyId": agency.id,
            "dot": "5550001",
            "state": " texas ",
            "city": "AUSTIN",
            "mailingState": "ok",
            "mailingCity": "Tulsa",
            "clientType": "broker",
            "unknownField": "ignored",
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert response["Location"].endswith(f"/v1/clients/{body['id']}")
    assert body["state"] == "Texas" and isinstance(body["stateId"], int)
    assert body["city"] == "Austin" and body["mailingCity"] == "Tulsa"
    assert body["mailingState"] == "Oklahoma"
    assert body["clientType"] == "Broker"
    assert body["agencyName"] == "Demo Agency"
    assert body["createdBy"] == "manager"
    assert body["createdAt"].endswith("Z")
    assert api.get(response["Location"]).json() == body


def test_create_does_not_copy_the_agency_to_records_a_new_client_cannot_have(
    api, agency, django_assert_num_queries
):
    # Client.save copies a moved client's agency to its policies, vehicles and drivers; a new
    # client has none, so its creation runs none of those three UPDATEs.
    api.get("/v1/me")  # the caller's permissions and agencies remembered, as after any request
    with django_assert_num_queries(16) as captured:
        response = api.post(
            "/v1/clients", {"clientName": "New", "agencyId": agency.id}, format="json"
        )
    assert response.status_code == 201, response.content
    assert not [query for query in captured.captured_queries if query["sql"].startswith("UPDATE")]


@pytest.mark.parametrize("missing", ["clientName", "agencyId"])
def test_create_requires_fields(api, agency, missing):
    payload = {"clientName": "X", "agencyId": agency.id}
    del payload[missing]
    body = assert_problem(api.post("/v1/clients", payload, format="json"), 400)
    assert missing in field_errors(body)


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"state": "Narnia"}, "state"),
        ({"state": "TX", "city": "Atlantis"}, "city"),
        ({"city": "Austin"}, "city"),
        ({"clientType": "Pirate"}, "clientType"),
        ({"stateId": 999999}, "stateId"),
        ({"dot": "12a"}, "dot"),
        ({"dot": "123456789"}, "dot"),
        ({"email": "not-an-email"}, "email"),
    ],
)
def test_create_rejects_bad_values_naming_the_field(api, agency, payload, field):
    body = assert_problem(
        api.post(
            "/v1/clients", {"clientName": "X", "agencyId": agency.id, **payload}, format="json"
        ),
        400,
    )
    assert field in field_errors(body)
    assert not Client.objects.filter(client_name="X").exists()


@pytest.mark.parametrize("dot", ["123456789", "1234567890123", "12a"])
def test_a_dot_that_is_not_one_is_one_error(api, agency, carrier, dot):
    # Nine digits were two errors on dot: "1 to 8 digits" and "no more than 8 characters".
    message = "A DOT number is 1 to 8 digits, not all zeros (leading zeros are not counted)."
    for response in (
        api.post(
            "/v1/clients", {"clientName": "X", "agencyId": agency.id, "dot": dot}, format="json"
        ),
        api.put(f"/v1/clients/{carrier.id}", {"dot": dot}, format="json"),
    ):
        body = assert_problem(response, 400)
        assert [(e["field"], e["message"]) for e in body["errors"]] == [("dot", message)]


def test_unknown_master_data_name_is_named_in_the_message(api, agency):
    body = assert_problem(
        api.post(
            "/v1/clients",
            {"clientName": "X", "agencyId": agency.id, "state": "Narnia"},
            format="json",
        ),
        400,
    )
    assert "Narnia" in field_errors(body)["state"]


@pytest.mark.parametrize("agency_id", ["other", 987654])
def test_create_in_an_agency_not_authorized_is_403(api, other_agency, agency_id):
    agency_id = other_agency.id if agency_id == "other" else agency_id
    response = api.post("/v1/clients", {"clientName": "X", "agencyId": agency_id}, format="json")
    assert_problem(response, 403)
    assert not Client.objects.exists()


def test_create_with_duplicate_live_dot_is_409(api, agency, carrier):
    response = api.post(
        "/v1/clients",
        {"clientName": "Copy", "agencyId": agency.id, "dot": "1234567"},
        format="json",
    )
    assert_problem(response, 409)


def test_a_deleted_clients_dot_may_be_reused(api, agency, carrier):
    assert api.put(f"/v1/clients/{carrier.id}", {"deleted": True}, format="json").status_code == 200
    response = api.post(
        "/v1/clients",
        {"clientName": "Reborn", "agencyId": agency.id, "dot": "1234567"},
        format="json",
    )
    assert response.status_code == 201
    restore = api.put(f"/v1/clients/{carrier.id}", {"deleted": False}, format="json")
    assert_problem(restore, 409)


def test_parent_must_be_visible_and_of_the_same_agency(api, agency, carrier, rival):
    base = {"clientName": "Child", "agencyId": agency.id}
    hidden = api.post("/v1/clients", {**base, "parentClientId": rival.id}, format="json")
    assert "parentClientId" in field_errors(assert_problem(hidden, 400))
    missing = api.post("/v1/clients", {**base, "parentClientId": 999999}, format="json")
    assert "parentClientId" in field_errors(assert_problem(missing, 400))
    ok = api.post("/v1/clients", {**base, "parentClientId": carrier.id}, format="json")
    assert ok.status_code == 201 and ok.json()["parentClientId"] == carrier.id


def test_a_deleted_client_cannot_be_named_as_a_parent(api, agency, carrier):
    # As a missing client is refused: a deleted record is gone for the writes that name it.
    child = ClientFactory(agency=agency)
    gone = ClientFactory(agency=agency, client_name="Gone")
    assert api.put(f"/v1/clients/{gone.id}", {"deleted": True}, format="json").status_code == 200
    base = {"clientName": "Child", "agencyId": agency.id}
    missing = api.post("/v1/clients", {**base, "parentClientId": 999999}, format="json")
    expected = field_errors(assert_problem(missing, 400))
    assert expected == {"parentClientId": "No client with this id."}
    created = api.post("/v1/clients", {**base, "parentClientId": gone.id}, format="json")
    assert field_errors(assert_problem(created, 400)) == expected
    updated = api.put(f"/v1/clients/{child.id}", {"parentClientId": gone.id}, format="json")
    assert field_errors(assert_problem(updated, 400)) == expected
    assert api.get(f"/v1/clients/{child.id}").json()["parentClientId"] is None
    assert api.get("/v1/clients", {"name": "Child"}).json()["count"] == 0


def test_a_child_keeps_its_parent_deleted_later(api, agency, carrier):
    # Deleting a parent is not refused and leaves its children alone: a child's record sent
    # back with the same parent is accepted, and the parent may be restored.
    child = ClientFactory(agency=agency, parent_client=carrier)
    assert api.put(f"/v1/clients/{carrier.id}", {"deleted": True}, format="json").status_code == 200
    body = {"parentClientId": carrier.id, "phone": "555-0100"}
    kept = api.put(f"/v1/clients/{child.id}", body, format="json")
    assert kept.status_code == 200, kept.content
    assert (kept.json()["parentClientId"], kept.json()["phone"]) == (carrier.id, "555-0100")
    # Detached, it cannot be attached again while the parent is deleted; restored, it can.
    assert (
        api.put(f"/v1/clients/{child.id}", {"parentClientId": None}, format="json").status_code
        == 200
    )
    assert_problem(api.put(f"/v1/clients/{child.id}", body, format="json"), 400)
    assert (
        api.put(f"/v1/clients/{carrier.id}", {"deleted": False}, format="json").status_code == 200
    )
    assert api.put(f"/v1/clients/{child.id}", body, format="json").status_code == 200


def test_parent_of_another_agency_the_user_also_serves_is_400(
    make_api, manager, agency, other_agency, rival
):
    from apps.agencies.models import AgencyMembership

    AgencyMembership.objects.create(user=manager, agency=other_agency)
    response = make_api(manager).post(
        "/v1/clients",
        {"clientName": "Child", "agencyId": agency.id, "parentClientId": rival.id},
        format="json",
    )
    assert "parentClientId" in field_errors(assert_problem(response, 400))


def test_producer_must_belong_to_the_clients_agency(api, agency, other_agency):
    foreign = ProducerFactory(agency=other_agency)
    response = api.post(
        "/v1/clients",
        {"clientName": "X", "agencyId": agency.id, "producerId": foreign.id},
        format="json",
    )
    assert "producerId" in field_errors(assert_problem(response, 400))


def test_viewer_cannot_create(viewer_api, agency):
    assert_problem(
        viewer_api.post("/v1/clients", {"clientName": "X", "agencyId": agency.id}, format="json"),
        403,
    )


# --- detail and update -----------------------------------------------------------------


def test_other_agency_client_is_404_on_every_route(api, rival):
    assert_problem(api.get(f"/v1/clients/{rival.id}"), 404)
    assert_problem(api.put(f"/v1/clients/{rival.id}", {"clientName": "Mine"}, format="json"), 404)
    rival.refresh_from_db()
    assert rival.client_name == "Rival Transport"


def test_missing_client_is_404(api):
    assert_problem(api.get("/v1/clients/999999"), 404)


def test_put_is_a_partial_update(api, carrier):
    response = api.put(f"/v1/clients/{carrier.id}", {"phone": "214-555-0000"}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["phone"] == "214-555-0000"
    assert body["clientName"] == "Lone Star Freight" and body["dot"] == "1234567"
    assert body["updatedBy"] == "manager"


def test_put_city_uses_the_clients_current_state(api, carrier):
    response = api.put(f"/v1/clients/{carrier.id}", {"city": "El Paso"}, format="json")
    assert response.status_code == 200 and response.json()["city"] == "El Paso"


def test_put_keeps_each_address_city_in_its_state(api, carrier):
    omaha = City.objects.get(name="Omaha", state__code="NE")
    tulsa = City.objects.get(name="Tulsa", state__code="OK")
    api.put(
        f"/v1/clients/{carrier.id}", {"mailingState": "OK", "mailingCity": "Tulsa"}, format="json"
    )
    for body, errors in (
        ({"cityId": omaha.id}, {"cityId": "Omaha, NE is not in Texas."}),
        ({"mailingCityId": omaha.id}, {"mailingCityId": "Omaha, NE is not in Oklahoma."}),
        ({"mailingState": "KS"}, {"mailingState": "Tulsa, OK is not in Kansas."}),
        ({"mailingState": None}, {"mailingState": "A city needs its state."}),
    ):
        refused = assert_problem(api.put(f"/v1/clients/{carrier.id}", body, format="json"), 400)
        assert field_errors(refused) == errors
    carrier.refresh_from_db()
    assert (carrier.city_id, carrier.mailing_city_id) == (None, tulsa.id)
    assert api.put(f"/v1/clients/{carrier.id}", {"state": "KS"}, format="json").status_code == 200


def test_put_naming_an_unauthorized_agency_is_403(api, carrier, other_agency):
    response = api.put(f"/v1/clients/{carrier.id}", {"agencyId": other_agency.id}, format="json")
    assert_problem(response, 403)
    carrier.refresh_from_db()
    assert carrier.agency.name == "Demo Agency"


def test_put_rejects_self_parent_and_cycles(api, agency, carrier):
    child = ClientFactory(agency=agency, parent_client=carrier)
    assert_problem(
        api.put(f"/v1/clients/{carrier.id}", {"parentClientId": carrier.id}, format="json"), 400
    )
    assert_problem(
        api.put(f"/v1/clients/{carrier.id}", {"parentClientId": child.id}, format="json"), 400
    )


def test_soft_delete_and_restore(api, carrier):
    deleted = api.put(f"/v1/clients/{carrier.id}", {"deleted": True}, format="json").json()
    assert deleted["deleted"] is True and deleted["deletedAt"].endswith("Z")
    assert api.get("/v1/clients").json()["count"] == 0
    assert api.get("/v1/clients?deleted=true").json()["count"] == 1
    assert api.get(f"/v1/clients/{carrier.id}").status_code == 200
    restored = api.put(f"/v1/clients/{carrier.id}", {"deleted": False}, format="json").json()
    assert restored["deleted"] is False and restored["deletedAt"] is None


def test_put_with_blank_name_is_400(api, carrier):
    assert_problem(api.put(f"/v1/clients/{carrier.id}", {"clientName": ""}, format="json"), 400)


def test_viewer_cannot_update(viewer_api, carrier):
    assert_problem(viewer_api.put(f"/v1/clients/{carrier.id}", {"phone": "1"}, format="json"), 403)


def test_every_filtered_field_sorts(api, agency):
    # Contract section 7: id, createdAt, updatedAt and every field a list filters on.
    hazmat = ClientFactory(agency=agency, cargo_class="HAZMAT")
    general = ClientFactory(agency=agency, cargo_class="GENERAL_FREIGHT")
    listed = api.get("/v1/clients?sort=cargoClass").json()["results"]
    assert [c["id"] for c in listed] == [general.id, hazmat.id]
    assert [
        p["builtIn"] for p in api.get("/v1/requirement-profiles?sort=-builtIn").json()["results"]
    ][:1] == [True]
    for sort in ("minValue", "-maxValue"):
        assert api.get(f"/v1/vehicles?sort={sort}").status_code == 200


def test_a_city_by_id_and_by_another_citys_name_is_400(api, agency):
    from apps.masterdata.models import City

    austin = City.objects.get(state__code="TX", name="Austin")
    sent = {"clientName": "X", "agencyId": agency.id, "state": "TX", "cityId": austin.id}
    body = assert_problem(api.post("/v1/clients", {**sent, "city": "El Paso"}, format="json"), 400)
    assert set(field_errors(body)) == {"cityId", "city"}
    response = api.post("/v1/clients", {**sent, "city": "austin"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["city"] == "Austin"
