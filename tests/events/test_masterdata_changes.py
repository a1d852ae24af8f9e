"""Contract 14: a change of master data or of an agency's shared record (an insurer, an agency,
a make, a coverage line, a producer…) that changes how records are shown is announced for each
record it changes, live and visible to the agency the event is for: a rename of an insurer is a
`policy.updated` for each of its policies, of an agency a `client.updated` for each of its
clients. Whoever makes it (the admin, for staff and superusers; load_masterdata changes no row
that records name), in the same transaction, with a number of queries that does not grow with
the records."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.compliance.services import insurer_update
from apps.events.models import Event
from apps.masterdata.models import City, ClientType, CoverageType, Insurer, Make, State, UnitType
from apps.masterdata.services import masterdata_update
from apps.webhooks.models import Webhook
from tests.admin.formdata import form_data
from tests.factories import (
    ClientFactory,
    LienholderFactory,
    PolicyFactory,
    ProducerFactory,
    UserFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def root_client(client):
    client.force_login(UserFactory(username="root-md", is_staff=True, is_superuser=True))
    return client


def feed(api, after=None) -> list[dict]:
    url = "/v1/events?limit=500" + (f"&after={after}" if after else "")
    body = api.get(url).json()
    return body["results"]


def head(api) -> str:
    return api.get("/v1/events?limit=500").json()["next"]


def admin_save(web, url: str, **changes):
    data = form_data(web.get(url).content.decode(), **changes)
    response = web.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]


def insurer(name="Mutual of Testing", naic="12345") -> Insurer:
    return Insurer.objects.create(name=name, naic=naic)


def test_an_insurer_renamed_in_the_admin_announces_each_live_policy_to_its_agency(
    root_client, api, other_api, manager, agency, other_agency, carrier, rival
):
    mutual = insurer()
    mine = [PolicyFactory(client=carrier, insurer=mutual, created_by=manager) for _ in range(2)]
    PolicyFactory(client=carrier, insurer=mutual, deleted=True)  # not shown: not announced
    gone = ClientFactory(agency=agency, deleted=True)
    PolicyFactory(client=gone, insurer=mutual)  # of a deleted client: verification finds none
    PolicyFactory(client=carrier)  # another insurer's
    # Stamped by this agency's manager (as a policy that moved in keeps its stamps): the
    # other agency's event does not name them.
    theirs = PolicyFactory(client=rival, insurer=mutual, created_by=manager)
    mark, other_mark = head(api), head(other_api)

    url = f"/admin/masterdata/insurer/{mutual.pk}/change/"
    admin_save(root_client, url, name="Renamed Mutual", naic="54321")

    events = feed(api, mark)
    assert [(e["type"], e["clientId"], e["data"]["id"]) for e in events] == [
        ("policy.updated", carrier.pk, p.pk) for p in mine
    ]
    for event in events:
        assert event["agencyId"] == agency.pk
        assert (event["data"]["insurerName"], event["data"]["naic"]) == ("Renamed Mutual", "54321")
        assert event["data"]["agencyId"] == agency.pk
        assert event["data"]["createdBy"] == "manager"
    # As the policy's GET shows it, to that agency.
    assert events[0]["data"] == api.get(f"/v1/policies/{mine[0].pk}").json()
    (other,) = feed(other_api, other_mark)
    assert (other["type"], other["agencyId"], other["data"]["id"]) == (
        "policy.updated",
        other_agency.pk,
        theirs.pk,
    )
    assert other["data"]["createdBy"] is None
    # What verification answers changed with it.
    body = api.get(f"/v1/coverages/clients?dot={carrier.dot}").json()
    names = {c["insurerName"] for c in body["results"][0]["coverages"]}
    assert "Renamed Mutual" in names


def test_an_insurer_saved_unchanged_or_rerated_announces_no_policy(root_client, api, carrier):
    mutual = insurer()
    PolicyFactory(client=carrier, insurer=mutual)
    mark = head(api)
    url = f"/admin/masterdata/insurer/{mutual.pk}/change/"
    admin_save(root_client, url)  # a Save with no change
    admin_save(root_client, url, address="1 Main St")  # not shown in any record
    admin_save(root_client, url, am_best_rating="B")  # a verdict's matter (compliance.changed)
    assert [e["type"] for e in feed(api, mark) if e["type"] != "compliance.changed"] == []


def test_an_agency_renamed_by_its_staff_announces_each_live_client(
    client, groups, api, other_api, agency, carrier, rival
):
    staff = UserFactory(username="staff-md", agencies=[agency], groups=[groups[0]], is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="change_agency"))
    client.force_login(staff)
    second = ClientFactory(agency=agency)
    ClientFactory(agency=agency, deleted=True)
    mark, other_mark = head(api), head(other_api)

    admin_save(client, f"/admin/agencies/agency/{agency.pk}/change/", name="Renamed Agency")

    events = feed(api, mark)
    assert sorted((e["type"], e["clientId"]) for e in events) == sorted(
        [("client.updated", carrier.pk), ("client.updated", second.pk)]
    )
    assert {e["data"]["agencyName"] for e in events} == {"Renamed Agency"}
    by_client = {e["clientId"]: e["data"] for e in events}
    assert by_client[carrier.pk] == api.get(f"/v1/clients/{carrier.pk}").json()
    assert feed(other_api, other_mark) == []
    body = api.get(f"/v1/coverages/clients?dot={carrier.dot}").json()
    assert body["results"][0]["client"]["agencyName"] == "Renamed Agency"


def test_an_agency_saved_with_another_phone_announces_nothing(root_client, api, agency, carrier):
    mark = head(api)
    admin_save(root_client, f"/admin/agencies/agency/{agency.pk}/change/", phone="555-0100")
    assert feed(api, mark) == []


@pytest.mark.parametrize(
    ("admin_path", "make_row", "change", "shown"),
    [
        (
            "masterdata/make",
            lambda: Make.objects.create(name="Zeta"),
            {"name": "Zeta Trucks"},
            ("vehicle", "makes", "Zeta Trucks"),
        ),
        (
            "masterdata/unittype",
            lambda: UnitType.objects.create(name="Dolly", is_power_unit=False),
            {"name": "Converter Dolly"},
            ("vehicle", "unitTypeName", "Converter Dolly"),
        ),
        (
            "masterdata/coveragetype",
            lambda: CoverageType.objects.create(code="ZZ", name="Zed", schedules_units=True),
            {"name": "Zed Liability"},
            ("policy", "fullCoverageTypeName", "Zed Liability"),
        ),
        (
            "masterdata/clienttype",
            lambda: ClientType.objects.create(name="Hauler"),
            {"name": "Heavy Hauler"},
            ("client", "clientType", "Heavy Hauler"),
        ),
        (
            "masterdata/city",
            lambda: City.objects.create(name="Testville", state=State.objects.get(code="TX")),
            {"name": "Test City"},
            ("client", "city", "Test City"),
        ),
    ],
)
def test_a_master_data_row_renamed_in_the_admin_announces_the_records_showing_it(
    root_client, api, other_api, agency, carrier, rival, admin_path, make_row, change, shown
):
    row = make_row()
    kind, field, value = shown
    fk = {
        "masterdata/make": "make",
        "masterdata/unittype": "unit_type",
        "masterdata/coveragetype": "coverage_type",
        "masterdata/clienttype": "client_type",
        "masterdata/city": "city",
    }[admin_path]
    if kind == "client":
        for c in (carrier, rival):
            type(c).objects.filter(pk=c.pk).update(**{fk: row})  # both in Texas
        mine_ids = [carrier.pk]
    elif kind == "vehicle":
        mine_ids = [VehicleFactory(client=carrier, **{fk: row}).pk]
        VehicleFactory(client=carrier, **{fk: row}, deleted=True)
        VehicleFactory(client=rival, **{fk: row})
    else:
        mine_ids = [PolicyFactory(client=carrier, **{fk: row}).pk]
        PolicyFactory(client=carrier, **{fk: row}, deleted=True)
        PolicyFactory(client=rival, **{fk: row})
    mark, other_mark = head(api), head(other_api)

    admin_save(root_client, f"/admin/{admin_path}/{row.pk}/change/", **change)

    events = feed(api, mark)
    assert [(e["type"], e["data"]["id"]) for e in events] == [
        (f"{kind}.updated", pk) for pk in mine_ids
    ]
    assert events[0]["data"][field] == value
    assert {e["agencyId"] for e in events} == {agency.pk}
    others = feed(other_api, other_mark)
    assert len(others) == 1 and others[0]["clientId"] == rival.pk


def test_a_producer_renamed_announces_its_clients_and_policies(staff_client, api, agency, carrier):
    staff_client.user.user_permissions.add(Permission.objects.get(codename="change_producer"))
    producer = ProducerFactory(agency=agency, name="Pat Producer")
    carrier.__class__.objects.filter(pk=carrier.pk).update(producer=producer)
    policy = PolicyFactory(client=carrier, producer=producer)
    mark = head(api)
    admin_save(staff_client, f"/admin/agencies/producer/{producer.pk}/change/", name="Pat Renamed")
    events = feed(api, mark)
    assert sorted((e["type"], e["data"]["id"]) for e in events) == [
        ("client.updated", carrier.pk),
        ("policy.updated", policy.pk),
    ]
    assert {e["data"]["producerName"] for e in events} == {"Pat Renamed"}


def test_a_lienholder_renamed_announces_its_units(staff_client, api, agency, carrier):
    bank = LienholderFactory(agency=agency, name="First Bank")
    unit = VehicleFactory(client=carrier, lienholder=bank)
    mark = head(api)
    admin_save(staff_client, f"/admin/vehicles/lienholder/{bank.pk}/change/", name="Second Bank")
    (event,) = feed(api, mark)
    assert (event["type"], event["data"]["id"], event["data"]["lienholderName"]) == (
        "vehicle.updated",
        unit.pk,
        "Second Bank",
    )


def test_load_masterdata_changes_no_record_and_announces_nothing(api, carrier):
    PolicyFactory(client=carrier)
    VehicleFactory(client=carrier)
    count = Event.objects.count()
    call_command("load_masterdata", stdout=None)
    assert Event.objects.count() == count


def _rename_queries(n: int, name: str) -> int:
    mutual = insurer(name=f"Counted {name}", naic="")
    clients = [ClientFactory() for _ in range(3)]  # three agencies
    members = [UserFactory(agencies=[c.agency]) for c in clients]
    for i in range(n):
        PolicyFactory(client=clients[i % 3], insurer=mutual, created_by=members[i % 3])
    root = UserFactory(username=f"root-{name}", is_superuser=True)
    with CaptureQueriesContext(connection) as queries:
        insurer_update(user=root, instance=mutual, name=f"Recounted {name}")
    assert (
        Event.objects.filter(type="policy.updated", data__insurerName=f"Recounted {name}").count()
        == n
    )
    return len(queries)


def test_the_queries_of_an_insurer_rename_do_not_grow_with_its_policies(db):
    assert _rename_queries(3, "few") == _rename_queries(30, "many")


def test_the_queries_of_a_make_rename_do_not_grow_with_its_units(db):
    def queries(n, name):
        make = Make.objects.create(name=name)
        for _ in range(n):  # each of another agency, stamped by one of its members
            unit = VehicleFactory(make=make)
            type(unit).objects.filter(pk=unit.pk).update(
                created_by=UserFactory(agencies=[unit.client.agency])
            )
        root = UserFactory(username=f"root-{name}", is_superuser=True)
        with CaptureQueriesContext(connection) as captured:
            masterdata_update(user=root, instance=make, name=f"{name} Renamed")
        assert Event.objects.filter(type="vehicle.updated").count() >= n
        return len(captured)

    assert queries(3, "Few") == queries(30, "Many")


def test_a_rename_with_a_new_rating_announces_the_policy_before_the_verdict(
    root_client, api, agency, carrier
):
    """The feed's order (docs/webhooks.md): the record's own event, then the verdict it moved."""
    profile = api.post(
        "/v1/requirement-profiles",
        {
            "name": "Rated",
            "rules": [
                {"kind": "coverage", "coverageType": "AL"},
                {"kind": "insurer_rating", "minimum": "A-"},
            ],
        },
        format="json",
    ).json()["id"]
    Webhook.objects.create(
        agency=agency, url="https://receiver.example/hook", profile_id=profile, secret="whsec_x"
    )
    mutual = insurer()
    Insurer.objects.filter(pk=mutual.pk).update(am_best_rating="A")
    policy = PolicyFactory(client=carrier, insurer=mutual)
    mark = head(api)
    url = f"/admin/masterdata/insurer/{mutual.pk}/change/"
    admin_save(root_client, url, name="Downgraded Mutual", am_best_rating="B")
    events = feed(api, mark)
    assert [(e["type"], e["clientId"]) for e in events] == [
        ("policy.updated", carrier.pk),
        ("compliance.changed", carrier.pk),
    ]
    assert events[0]["data"]["id"] == policy.pk
    assert (events[1]["data"]["from"], events[1]["data"]["to"]) == ("PASS", "CAUTION")
