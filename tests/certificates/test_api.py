"""ACORD 25 certificates: spec section 4, contract section 9."""

from __future__ import annotations

import datetime as dt
import io
import shutil
import subprocess
from decimal import Decimal

import pytest
from PIL import Image
from pypdf import PdfReader

from apps.core.dates import today
from apps.masterdata.models import CoverageType, Insurer, State
from apps.policies.models import PolicyLimit
from tests.conftest import assert_problem, staff_member
from tests.factories import (
    ClientFactory,
    PolicyFactory,
    ProducerFactory,
    VehicleCoverageFactory,
    VehicleFactory,
)

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)
VIN = "1FUJGLDR7CLBP8834"


@pytest.fixture
def world(agency):
    producer = ProducerFactory(
        agency=agency,
        name="Demo Producer",
        contact_name="Dana",
        phone="214-555-0101",
        email="dana@example.com",
    )
    carrier = ClientFactory(
        agency=agency,
        client_name="Lone Star Freight LLC",
        dot="1234567",
        producer=producer,
        address="2500 Logistics Pkwy",
    )
    auto = PolicyFactory(client=carrier, policy_number="GWC-AL-1", covered_autos="SCHEDULED")
    PolicyLimit.objects.create(policy=auto, name="Combined Single Limit", amount=1_000_000)
    northland = Insurer.objects.create(name="Northland Insurance Company", naic="24015")
    general = PolicyFactory(
        client=carrier,
        policy_number="NL-GL-1",
        insurer=northland,
        coverage_type=CoverageType.objects.get(code="GL"),
        additional_insured=True,
    )
    for name, amount in (("Each Occurrence", 1_000_000), ("General Aggregate", 2_000_000)):
        PolicyLimit.objects.create(policy=general, name=name, amount=amount)
    PolicyFactory(
        client=carrier,
        policy_number="OLD-1",
        effective_date=today() - 500 * DAY,
        expiration_date=today() - 100 * DAY,
    )
    PolicyFactory(client=carrier, policy_number="NEXT-1", effective_date=today() + 10 * DAY)
    unit = VehicleFactory(client=carrier, serial_number=VIN, unit="101", model_year=2021)
    VehicleCoverageFactory(vehicle=unit, policy=auto)
    return carrier, auto, general, unit


def test_client_certificate_json(api, world):
    carrier, _auto, _general, _unit = world
    response = api.get(
        "/v1/certificates/clients?dot=1234567&holderName=Acme Shipper&holderAddress=1 Main St"
    )
    assert response.status_code == 200, response.content
    cert = response.json()
    assert cert["form"] == "ACORD 25" and cert["formEdition"] == "2016/03"
    assert cert["asOf"] == today().isoformat() and cert["dateIssued"] == today().isoformat()
    assert cert["certificateNumber"].startswith(f"C-{carrier.id}-{today():%Y%m%d}-")
    assert cert["verifyAt"] == f"/v1/certificates/{cert['certificateNumber']}"
    assert cert["producer"]["name"] == "Demo Agency"
    assert cert["producer"]["contactName"] == "Dana"
    assert cert["insured"] == {
        "name": "Lone Star Freight LLC",
        "address": "2500 Logistics Pkwy\nTX",
        "dot": "1234567",
    }
    assert cert["insurers"] == [
        {"letter": "A", "name": "Northland Insurance Company", "naic": "24015"},
        {"letter": "B", "name": "Great West Casualty Company", "naic": "11371"},
    ]
    rows = {row["policyNumber"]: row for row in cert["coverages"]}
    assert list(rows) == ["NL-GL-1", "GWC-AL-1"]  # the form's order: GL, then auto
    assert rows["NL-GL-1"]["typeOfInsurance"] == "COMMERCIAL GENERAL LIABILITY"
    assert rows["NL-GL-1"]["additionalInsured"] is True
    assert rows["GWC-AL-1"]["insurerLetter"] == "B"
    assert rows["GWC-AL-1"]["coveredAutos"] == "Scheduled autos"
    assert rows["GWC-AL-1"]["limits"] == [{"name": "Combined Single Limit", "amount": "1000000.00"}]
    assert cert["vehicles"] == [{"year": 2021, "make": "Kenworth", "unit": "101", "vin": VIN}]
    assert cert["certificateHolder"] == {"name": "Acme Shipper", "address": "1 Main St"}
    assert "CANCELLED BEFORE THE EXPIRATION DATE" in cert["cancellation"]


def test_client_certificate_by_id_is_the_one_by_dot(api, world):
    carrier, _auto, _general, _unit = world
    by_dot = api.get("/v1/certificates/clients?dot=1234567").json()
    by_id = api.get(f"/v1/certificates/clients?id={carrier.id}").json()
    assert by_id == by_dot


def test_vehicle_certificate_lists_only_the_coverages_it_is_scheduled_on(api, world):
    carrier, _auto, _general, unit = world
    for query in (
        f"vin={VIN}",
        f"id={unit.id}",
        f"licensePlate={unit.license_plate}",
        f"vin={VIN}&clientId={carrier.id}",
    ):
        cert = api.get(f"/v1/certificates/vehicles?{query}").json()
        assert [row["policyNumber"] for row in cert["coverages"]] == ["GWC-AL-1"], query
        assert cert["certificateNumber"].startswith(f"V-{unit.id}-")
        assert VIN in cert["descriptionOfOperations"]
        assert "2021 Kenworth" in cert["descriptionOfOperations"]


def test_as_of_a_past_date_uses_the_policies_in_force_then(api, world):
    as_of = (today() - 200 * DAY).isoformat()
    cert = api.get(f"/v1/certificates/clients?dot=1234567&asOf={as_of}").json()
    assert [row["policyNumber"] for row in cert["coverages"]] == ["OLD-1"]


def test_nothing_in_force_is_404_saying_so(api, agency, world):
    idle = ClientFactory(agency=agency, dot="2345678")
    body = assert_problem(api.get("/v1/certificates/clients?dot=2345678"), 404)
    assert "in force" in body["detail"]
    lonely = VehicleFactory(client=idle)
    assert (
        "in force"
        in assert_problem(api.get(f"/v1/certificates/vehicles?id={lonely.id}"), 404)["detail"]
    )
    # The PDF flavour answers problem+json too, never a broken PDF.
    response = api.get("/v1/certificates/clients?dot=2345678&format=pdf")
    assert_problem(response, 404)


@pytest.mark.parametrize(
    "query",
    ["", "id=1&dot=1234567", "dot=12x", "id=abc", "dot=1&asOf=someday"],
)
def test_bad_client_queries_are_400(api, query):
    assert_problem(api.get(f"/v1/certificates/clients?{query}"), 400)


@pytest.mark.parametrize(
    "query",
    [
        "",
        f"id=1&vin={VIN}",
        f"vin={VIN}&licensePlate=X",
        "vin=SHORT",
        "id=x",
        f"vin={VIN}&clientId=x",
    ],
)
def test_bad_vehicle_queries_are_400(api, query):
    assert_problem(api.get(f"/v1/certificates/vehicles?{query}"), 400)


def test_other_agency_is_404(other_api, world):
    carrier, _, _, _unit = world
    assert_problem(other_api.get("/v1/certificates/clients?dot=1234567"), 404)
    assert_problem(other_api.get(f"/v1/certificates/clients?id={carrier.id}"), 404)
    assert_problem(other_api.get(f"/v1/certificates/vehicles?vin={VIN}"), 404)


def test_permissions(make_api, powerless, world):
    assert_problem(make_api(powerless).get("/v1/certificates/clients?dot=1234567"), 403)
    assert_problem(make_api(powerless).get(f"/v1/certificates/vehicles?vin={VIN}"), 403)


def _pdf_text(content: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


@pytest.mark.parametrize("how", ["accept", "format"])
def test_pdf_holds_the_insured_every_policy_number_and_every_limit(api, world, how):
    if how == "accept":
        response = api.get("/v1/certificates/clients?dot=1234567", HTTP_ACCEPT="application/pdf")
    else:
        response = api.get("/v1/certificates/clients?dot=1234567&format=pdf")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"].startswith("attachment; filename=")
    cert = api.get("/v1/certificates/clients?dot=1234567").json()
    reader = PdfReader(io.BytesIO(response.content))
    assert len(reader.pages) == 1
    text = _pdf_text(response.content)
    assert "Lone Star Freight LLC" in text
    assert cert["certificateNumber"] in text
    assert today().strftime("%m/%d/%Y") in text
    for row in cert["coverages"]:
        assert row["policyNumber"] in text
        for limit in row["limits"]:
            assert f"${Decimal(limit['amount']):,.0f}" in text
    assert f"/v1/certificates/{cert['certificateNumber']}" in text


@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="poppler-utils is not installed")
def test_pdf_first_page_renders_to_a_non_blank_png(api, world, tmp_path):
    pdf = tmp_path / "certificate.pdf"
    pdf.write_bytes(api.get("/v1/certificates/clients?dot=1234567&format=pdf").content)
    subprocess.run(
        ["pdftoppm", "-png", "-r", "50", "-f", "1", "-l", "1", str(pdf), str(tmp_path / "page")],
        check=True,
    )
    [png] = tmp_path.glob("page*.png")
    image = Image.open(png).convert("L")
    dark = sum(image.histogram()[:128])
    assert image.size[0] > 300 and dark > 2000  # lines and text, not an empty page


def test_more_than_six_insurers_continue_on_an_additional_remarks_page(api, agency):
    carrier = ClientFactory(agency=agency, dot="5550001")
    for n in range(8):
        insurer = Insurer.objects.create(name=f"Insurer {n}", naic=f"9{n:04d}")
        PolicyFactory(client=carrier, insurer=insurer, policy_number=f"MANY-{n}")
    cert = api.get("/v1/certificates/clients?dot=5550001").json()
    assert [i["letter"] for i in cert["insurers"]] == list("ABCDEF")
    assert len(cert["coverages"]) == 6
    [remarks] = cert["additionalRemarks"]
    assert len(remarks["coverages"]) == 2 and len(remarks["insurers"]) == 2
    pdf = api.get("/v1/certificates/clients?dot=5550001&format=pdf").content
    assert len(PdfReader(io.BytesIO(pdf)).pages) == 2
    text = _pdf_text(pdf)
    assert all(f"MANY-{n}" in text for n in range(8))


def test_certificate_number_looks_the_certificate_up_again(api, other_api, world):
    cert = api.get("/v1/certificates/clients?dot=1234567").json()
    again = api.get(f"/v1/certificates/{cert['certificateNumber']}").json()
    assert again["coverages"] == cert["coverages"]
    assert again["certificateNumber"] == cert["certificateNumber"]
    tampered = cert["certificateNumber"][:-1] + (
        "0" if cert["certificateNumber"][-1] != "0" else "1"
    )
    assert_problem(api.get(f"/v1/certificates/{tampered}"), 404)
    assert_problem(api.get("/v1/certificates/not-a-number"), 404)
    assert_problem(other_api.get(f"/v1/certificates/{cert['certificateNumber']}"), 404)
    vehicle_cert = api.get(f"/v1/certificates/vehicles?vin={VIN}").json()
    again = api.get(f"/v1/certificates/{vehicle_cert['certificateNumber']}?format=pdf")
    assert again["Content-Type"] == "application/pdf"


def test_query_count_does_not_grow_with_policies(api, agency, django_assert_max_num_queries):
    small, large = ClientFactory(agency=agency, dot="1"), ClientFactory(agency=agency, dot="2")
    only = PolicyFactory(client=small)
    PolicyLimit.objects.create(policy=only, name="Each Occurrence", amount=1)
    VehicleCoverageFactory(vehicle=VehicleFactory(client=small), policy=only)
    for _ in range(15):
        policy = PolicyFactory(client=large)
        PolicyLimit.objects.create(policy=policy, name="Each Occurrence", amount=1)
        VehicleCoverageFactory(vehicle=VehicleFactory(client=large), policy=policy)
    api.get("/v1/certificates/clients?dot=1")
    with django_assert_max_num_queries(14) as one:
        api.get("/v1/certificates/clients?dot=1")
    with django_assert_max_num_queries(14) as many:
        api.get("/v1/certificates/clients?dot=2")
    assert len(one.captured_queries) == len(many.captured_queries)


def test_admin_action_downloads_the_pdf(client, world, groups, agency):
    carrier = world[0]
    staff = staff_member([agency], groups, "staff")
    client.force_login(staff)
    response = client.post(
        "/admin/clients/client/",
        {"action": "download_client_certificates", "_selected_action": [carrier.pk]},
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert "Lone Star Freight LLC" in _pdf_text(response.content)
    vehicle = world[3]
    response = client.post(
        "/admin/vehicles/vehicle/",
        {"action": "download_vehicle_certificates", "_selected_action": [vehicle.pk]},
    )
    assert response["Content-Type"] == "application/pdf"


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


@pytest.fixture
def future_only(agency):
    """A client whose only policy starts in ten days: no certificate today."""
    future = ClientFactory(agency=agency, client_name="Future Freight", dot="3333333")
    PolicyFactory(client=future, policy_number="F-1", effective_date=today() + 10 * DAY)
    return future


def test_download_with_a_client_that_cannot_be_certified_downloads_nothing_and_says_which(
    staff_client, world, future_only, agency
):
    carrier = world[0]
    other = ClientFactory(agency=agency, client_name="Idle Haulers", dot="4444444")
    changelist = "/admin/clients/client/"
    response = staff_client.post(
        changelist,
        {
            "action": "download_client_certificates",
            "_selected_action": [carrier.pk, future_only.pk],
        },
    )
    assert response.status_code == 302 and response["Location"] == changelist
    assert _messages(staff_client.get(changelist)) == [
        "Nothing was downloaded: 1 of the 2 selected cannot be certified today; deselect it to "
        "download the others. Future Freight (DOT 3333333): No policy is in force for this "
        f"client on {today().isoformat()}."
    ]
    assert _messages(staff_client.get(changelist)) == []  # said once, on the list
    staff_client.post(
        changelist,
        {"action": "download_client_certificates", "_selected_action": [future_only.pk, other.pk]},
    )
    assert _messages(staff_client.get(changelist)) == [
        "Nothing was downloaded: none of the 2 selected can be certified today. "
        f"Future Freight (DOT 3333333): No policy is in force for this client on {today()}. "
        f"Idle Haulers (DOT 4444444): No policy is in force for this client on {today()}."
    ]


def test_download_of_clients_that_can_all_be_certified_queues_no_message(
    staff_client, world, future_only
):
    carrier = world[0]
    changelist = "/admin/clients/client/"
    response = staff_client.post(
        changelist, {"action": "download_client_certificates", "_selected_action": [carrier.pk]}
    )
    assert response["Content-Type"] == "application/pdf"
    assert _messages(staff_client.get(changelist)) == []
    # A client's own certificate button: the reason on its page, once, then never again.
    page = f"{changelist}{future_only.pk}/change/"
    answer = staff_client.get(f"{changelist}{future_only.pk}/certificate/")
    assert answer.status_code == 302 and answer["Location"] == page
    assert _messages(staff_client.get(page)) == [
        f"Future Freight (DOT 3333333): No policy is in force for this client on {today()}."
    ]
    assert _messages(staff_client.get(page)) == []


def test_a_big_fleet_lists_its_first_units_and_counts_them_all(api, agency):
    carrier = ClientFactory(agency=agency, dot="7770001")
    policy = PolicyFactory(client=carrier)
    for n in range(30):
        VehicleCoverageFactory(
            vehicle=VehicleFactory(client=carrier, unit=f"{n:03d}"), policy=policy
        )
    cert = api.get("/v1/certificates/clients?dot=7770001").json()
    assert cert["vehicleCount"] == 30
    assert [v["unit"] for v in cert["vehicles"]] == [f"{n:03d}" for n in range(25)]
    assert "30 scheduled unit(s)" in cert["descriptionOfOperations"]
    text = " ".join(
        _pdf_text(api.get("/v1/certificates/clients?dot=7770001&format=pdf").content).split()
    )
    assert "and 24 more on file" in text


def test_a_big_fleet_is_counted_once_until_a_record_changes(
    api, agency, settings, django_assert_num_queries, django_assert_max_num_queries
):
    """Issue 18: the count of a 250,000-unit fleet is not paid by every certificate; it is
    exact (kept under its SQL, the date included, and the data version every write moves)."""
    settings.LIST_COUNT_CACHE_SECONDS = 30
    carrier = ClientFactory(agency=agency, dot="7770002")
    policy = PolicyFactory(client=carrier)
    units = [VehicleFactory(client=carrier, unit=f"{n:03d}") for n in range(27)]
    for vehicle in units:
        VehicleCoverageFactory(vehicle=vehicle, policy=policy)
    url = "/v1/certificates/clients?dot=7770002"
    assert api.get("/v1/me").status_code == 200  # the caller's permissions are cached now
    with django_assert_max_num_queries(20) as first:
        assert api.get(url).json()["vehicleCount"] == 27
    with django_assert_num_queries(len(first) - 1):
        assert api.get(url).json()["vehicleCount"] == 27
    units[0].deleted = True
    units[0].save()
    assert api.get(url).json()["vehicleCount"] == 26


def test_a_certificate_number_of_a_kind_the_caller_may_not_see_is_403(api, make_api, agency, world):
    # Policies may be seen, vehicles not: a vehicle certificate's number is refused, a client's
    # is answered (the per-kind check of the lookup by number).
    from django.contrib.auth.models import Permission

    from tests.factories import UserFactory

    client_number = api.get("/v1/certificates/clients?dot=1234567").json()["certificateNumber"]
    vehicle_number = api.get(f"/v1/certificates/vehicles?vin={VIN}").json()["certificateNumber"]
    clerk = UserFactory(agencies=[agency])
    clerk.user_permissions.add(
        *Permission.objects.filter(codename__in=("view_policy", "view_client"))
    )
    body = assert_problem(make_api(clerk).get(f"/v1/certificates/{vehicle_number}"), 403)
    assert "kind of certificate" in body["detail"]
    assert make_api(clerk).get(f"/v1/certificates/{client_number}").status_code == 200
    # A forged number of that kind is refused alike: the answer does not tell a genuine
    # signature from a forged one (contract 13), for this agency's numbers or another's.
    forged = vehicle_number[:-1] + ("0" if vehicle_number[-1] != "0" else "1")
    assert (
        "kind of certificate"
        in assert_problem(make_api(clerk).get(f"/v1/certificates/{forged}"), 403)["detail"]
    )
    other_vehicle = "V-99999-20260101-0123456789"
    assert_problem(make_api(clerk).get(f"/v1/certificates/{other_vehicle}"), 403)


# --- the holder parameters, and the order in which bad parameters are named ---------------


def _holder_error(response, field="holderName", most=200) -> None:
    body = assert_problem(response, 400)
    message = f"At most {most} characters."
    assert body["errors"] == [{"field": field, "message": message, "code": "invalid"}]
    assert body["detail"] == f"{field}: {message}"


def test_holder_fields_are_bounded_on_every_certificate_route(api, world):
    number = api.get("/v1/certificates/clients?dot=1234567").json()["certificateNumber"]
    for route, record in (
        ("/v1/certificates/clients", {"dot": "1234567"}),
        ("/v1/certificates/vehicles", {"vin": VIN}),
        (f"/v1/certificates/{number}", {}),
    ):
        at_most = api.get(route, {**record, "holderName": "N" * 200, "holderAddress": "A" * 500})
        assert at_most.status_code == 200, at_most.content
        holder = at_most.json()["certificateHolder"]
        assert (len(holder["name"]), len(holder["address"])) == (200, 500)
        _holder_error(api.get(route, {**record, "holderName": "N" * 201}))
        _holder_error(api.get(route, {**record, "holderAddress": "A" * 501}), "holderAddress", 500)
        _holder_error(api.get(route, {**record, "holderName": "N" * 201, "format": "pdf"}))
        empty = api.get(route, {**record, "holderName": "", "holderAddress": ""}).json()
        assert empty["certificateHolder"] == {"name": "", "address": ""}
        spaced = api.get(route, {**record, "holderName": "  Acme  "}).json()
        assert spaced["certificateHolder"]["name"] == "Acme"


def test_a_bad_record_parameter_is_named_before_the_holder(api, world):
    long_name = "N" * 201
    query = {"dot": "1234567", "asOf": "x", "holderName": long_name}
    body = assert_problem(api.get("/v1/certificates/clients", query), 400)
    assert [e["field"] for e in body["errors"]] == ["asOf"]
    body = assert_problem(api.get("/v1/certificates/vehicles", {"holderName": long_name}), 400)
    assert [e["field"] for e in body["errors"]] == ["id"]
    # The check by number: an unknown number is 404 whatever the holder says.
    assert_problem(api.get("/v1/certificates/C-1-20260101-XXXX", {"holderName": long_name}), 404)


def test_a_bad_holder_parameter_answers_alike_for_a_genuine_and_a_forged_number(
    api, other_api, world
):
    # Another agency's genuine number and a forged one answer the same (contract 13): the
    # holder is checked before the number is, so a 400 tells nothing of the signature.
    numbers = [
        api.get(route).json()["certificateNumber"]
        for route in (
            "/v1/certificates/clients?dot=1234567",
            f"/v1/certificates/vehicles?vin={VIN}",
        )
    ]
    for number in numbers:
        forged = number[:-1] + ("0" if number[-1] != "0" else "1")
        for holder, field, most in (
            ({"holderName": "N" * 201}, "holderName", 200),
            ({"holderAddress": "A" * 501}, "holderAddress", 500),
            ({"holderName": "N" * 201, "format": "pdf"}, "holderName", 200),
        ):
            genuine = other_api.get(f"/v1/certificates/{number}", holder)
            fake = other_api.get(f"/v1/certificates/{forged}", holder)
            _holder_error(genuine, field, most)
            _holder_error(fake, field, most)
            assert genuine.json() == fake.json()
        # Without a bad parameter both are the 404 of a number the caller may not use.
        assert other_api.get(f"/v1/certificates/{number}").json() == (
            other_api.get(f"/v1/certificates/{forged}").json()
        )


def test_vehicle_certificate_by_plate_honours_its_state_as_verification_does(api, world):
    # One plate in two states: the state names the unit, as verification reads it; a state
    # with no such plate finds none, an unknown state is a 400, and a VIN lookup ignores it.
    carrier, auto, _general, _unit = world
    units = {}
    for code in ("TX", "OK"):
        units[code] = VehicleFactory(
            client=carrier,
            license_plate="TX-4821A",
            license_plate_state=State.objects.get(code=code),
        )
        VehicleCoverageFactory(vehicle=units[code], policy=auto)
    for state, unit in (("TX", "TX"), ("Texas", "TX"), ("ok", "OK"), ("Oklahoma", "OK")):
        query = {"licensePlate": "tx 4821a", "licensePlateState": state}
        [found] = api.get("/v1/coverages/vehicles", query).json()["results"]
        assert found["vehicle"]["id"] == units[unit].id
        certificate = api.get("/v1/certificates/vehicles", query)
        assert certificate.status_code == 200, certificate.content
        assert certificate.json()["vehicles"][0]["vin"] == units[unit].serial_number
    for state, status in (("Kansas", 404), ("KS", 404), ("Narnia", 400)):
        query = {"licensePlate": "TX4821A", "licensePlateState": state}
        verified = assert_problem(api.get("/v1/coverages/vehicles", query), status)
        assert assert_problem(api.get("/v1/certificates/vehicles", query), status) == verified
    ignored = api.get("/v1/certificates/vehicles", {"vin": VIN, "licensePlateState": "Narnia"})
    assert ignored.status_code == 200, ignored.content


def test_a_plate_of_units_in_several_states_needs_its_state_for_a_certificate(api, world):
    # A certificate certifies one truck: by a plate that units of two states carry, the first
    # covered one was certified, though the truck asked about may be the other (uncovered).
    # Verification lists both with their states; the certificate asks which one.
    carrier, auto, _general, _unit = world
    covered = VehicleFactory(
        client=carrier, license_plate="OK-7731", license_plate_state=State.objects.get(code="TX")
    )
    VehicleCoverageFactory(vehicle=covered, policy=auto)
    VehicleFactory(
        client=carrier, license_plate="OK 7731", license_plate_state=State.objects.get(code="OK")
    )
    assert len(api.get("/v1/coverages/vehicles", {"licensePlate": "OK7731"}).json()["results"]) == 2
    body = assert_problem(api.get("/v1/certificates/vehicles", {"licensePlate": "OK7731"}), 400)
    [error] = body["errors"]
    assert error["field"] == "licensePlateState"
    assert "Oklahoma" in error["message"] and "Texas" in error["message"]
    named = api.get(
        "/v1/certificates/vehicles", {"licensePlate": "OK7731", "licensePlateState": "TX"}
    )
    assert named.status_code == 200, named.content
    assert named.json()["vehicles"][0]["vin"] == covered.serial_number
    uncovered = {"licensePlate": "OK7731", "licensePlateState": "OK"}
    assert_problem(api.get("/v1/certificates/vehicles", uncovered), 404)


def test_pdf_prints_a_limit_with_cents_as_it_is_never_rounded_up(api, world):
    # `$750,000` for 749,999.50 would certify the federal minimum the policy does not meet.
    auto = PolicyLimit.objects.get(policy__policy_number="GWC-AL-1")
    auto.amount = Decimal("749999.50")
    auto.save()
    general = PolicyLimit.objects.get(name="Each Occurrence")
    general.amount = Decimal("999999.99")
    general.save()
    text = _pdf_text(api.get("/v1/certificates/clients?dot=1234567&format=pdf").content)
    assert "$749,999.50" in text and "$750,000" not in text
    assert "$999,999.99" in text
    assert "$2,000,000" in text and "$2,000,000.00" not in text  # whole dollars stay whole


def test_pdf_draws_names_beyond_latin_1_with_their_own_letters(api, world):
    # The standard Helvetica encodes Windows-1252 only; ReportLab drew every other letter as a
    # black square (ZapfDingbats "n"): "Łódź Trans № 1 运输" read "■ód■ Trans ■ 1 ■■".
    from apps.clients.models import Client

    Client.objects.filter(dot="1234567").update(client_name="Łódź Trans № 1 Ğüneş 运输 カ 한")
    pdf = api.get("/v1/certificates/clients?dot=1234567&format=pdf").content
    assert b"ZapfDingbats" not in pdf
    text = _pdf_text(pdf)
    assert "Łódź Trans № 1 Ğüneş" in text
    # The next line, drawn without choosing a font again, is in the standard font again.
    assert "2500 Logistics Pkwy" in text
    assert b"DejaVuSans" in pdf  # the embedded subset that has them
    for cid_font in (b"STSong-Light", b"HeiseiMin-W3", b"HYSMyeongJo-Medium"):
        assert cid_font in pdf  # Chinese, Japanese kana and Hangul: the viewer's CJK fonts
    # Latin-1 text stays in the standard fonts, with nothing embedded.
    Client.objects.filter(dot="1234567").update(client_name="Café Müller Freight")
    pdf = api.get("/v1/certificates/clients?dot=1234567&format=pdf").content
    assert "Café Müller Freight" in _pdf_text(pdf) and b"DejaVuSans" not in pdf


def _text_runs(pdf: bytes) -> list[tuple[str, float, float, float]]:
    """Each piece of text on page 1 with where it starts (x, y) and its font size."""
    runs: list[tuple[str, float, float, float]] = []

    def visit(text, cm, tm, font_dict, font_size):
        if text.strip():
            runs.append((text.strip(), tm[4], tm[5], font_size))

    PdfReader(io.BytesIO(pdf)).pages[0].extract_text(visitor_text=visit)
    return runs


def test_pdf_text_stays_in_its_boxes(api, world):
    # A 200-character name ran 741 points wide past the page's 612; a seven-line holder address
    # ran into the footer; a 60-character policy number ran into the date columns.
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from apps.certificates.pdf import COLUMNS, HOLDER_BOTTOM, MID
    from apps.clients.models import Client
    from apps.policies.models import Policy

    long_name = " ".join(["Transcontinental Freight Logistics"] * 6)[:200]
    Client.objects.filter(dot="1234567").update(client_name=long_name)
    Policy.objects.filter(policy_number="GWC-AL-1").update(policy_number="P" * 60)
    address = "\n".join(f"Line {n} of the holder's address" for n in range(1, 11))
    pdf = api.get(
        "/v1/certificates/clients",
        {"dot": "1234567", "format": "pdf", "holderName": "Holder", "holderAddress": address},
    ).content
    assert len(PdfReader(io.BytesIO(pdf)).pages) == 1
    text = _pdf_text(pdf).replace("\n", " ")
    assert "Transcontinental Freight Logistics" in text
    for piece, x, y, size in _text_runs(pdf):
        right = x + stringWidth(piece, "Helvetica", size)
        assert x >= 0 and right <= 612, piece
        if piece.startswith("Line "):
            assert y > HOLDER_BOTTOM, (piece, y)  # above the footer, inside the holder's box
            assert right < MID, piece
        if piece.startswith("PPPP"):
            assert right < COLUMNS[5], piece


def _many_lines(agency, dot: str, count: int) -> None:
    """A carrier with `count` policies of one insurer, each with three limits."""
    carrier = ClientFactory(agency=agency, dot=dot)
    general = CoverageType.objects.get(code="GL")
    for n in range(count):
        policy = PolicyFactory(client=carrier, policy_number=f"LINE-{n:02d}", coverage_type=general)
        for position, name in enumerate(("Each Occurrence", "Medical Expense", "Aggregate")):
            PolicyLimit.objects.create(
                policy=policy, name=name, amount=1_000_000 + n, position=position
            )


def test_pdf_keeps_a_dozen_coverage_lines_on_its_one_page(api, agency):
    # Nine lines of three limits went to a second page while the JSON had no additional
    # remarks; contract 9 says one page. The table takes the description's unused room and
    # smaller type, and every policy and limit stays on page 1, in order, inside the table.
    from apps.certificates.pdf import DESCRIPTION_BOTTOM, TABLE_HEAD_BOTTOM

    _many_lines(agency, "5550002", 12)
    cert = api.get("/v1/certificates/clients?dot=5550002").json()
    assert len(cert["coverages"]) == 12 and cert["additionalRemarks"] == []
    pdf = api.get("/v1/certificates/clients?dot=5550002&format=pdf").content
    assert len(PdfReader(io.BytesIO(pdf)).pages) == 1
    text = _pdf_text(pdf)
    assert "See the Additional Remarks page" not in text
    runs = _text_runs(pdf)
    numbers = [(piece, y) for piece, _x, y, _size in runs if piece.startswith("LINE-")]
    assert [piece for piece, _y in numbers] == [f"LINE-{n:02d}" for n in range(12)]
    amounts = [(piece, y) for piece, _x, y, _size in runs if piece.startswith("$1,000,0")]
    assert len(amounts) == 36
    description = [y for piece, _x, y, _size in runs if piece.startswith("Coverage as of")]
    assert description and description[0] > DESCRIPTION_BOTTOM
    for _piece, y in numbers + amounts:
        assert description[0] + 8 < y < TABLE_HEAD_BOTTOM  # in the table, above its bottom


def test_pdf_continues_rows_past_the_smallest_type_on_the_remarks_page(api, agency):
    _many_lines(agency, "5550003", 30)
    cert = api.get("/v1/certificates/clients?dot=5550003").json()
    assert len(cert["coverages"]) == 30
    pdf = api.get("/v1/certificates/clients?dot=5550003&format=pdf").content
    reader = PdfReader(io.BytesIO(pdf))
    assert len(reader.pages) == 2
    first, second = (page.extract_text() for page in reader.pages)
    assert "See the Additional Remarks page" in first
    on_first = [n for n in range(30) if f"LINE-{n:02d}" in first]
    assert on_first == list(range(len(on_first))) and 12 < len(on_first) < 30
    assert all(f"LINE-{n:02d}" in second for n in range(len(on_first), 30))


def test_a_certificate_as_of_a_date_before_the_year_1000_is_looked_up_again(api, agency):
    carrier = ClientFactory(agency=agency, dot="2345678")
    PolicyFactory(
        client=carrier,
        policy_number="OLD-1",
        effective_date=dt.date(1, 1, 1),
        expiration_date=dt.date(2, 1, 1),
    )
    cert = api.get(f"/v1/certificates/clients?id={carrier.id}&asOf=0001-01-01").json()
    assert cert["asOf"] == "0001-01-01"
    assert cert["certificateNumber"].startswith(f"C-{carrier.id}-00010101-")
    again = api.get(f"/v1/certificates/{cert['certificateNumber']}")
    assert again.status_code == 200, again.content
    assert again.json()["coverages"] == cert["coverages"]


@pytest.mark.parametrize("kind", ["clients?dot=1234567", f"vehicles?vin={VIN}"])
def test_a_genuine_number_whose_cover_ended_since_says_nothing_is_in_force(
    api, other_api, world, kind
):
    """Contract section 9: nothing in force is a 404 that says so, also when a certificate is
    looked up again by its number; to the record's own agency only: to another the number is
    unknown, as a forged one is."""
    cert = api.get(f"/v1/certificates/{kind}").json()
    number = cert["certificateNumber"]
    for policy in api.get(f"/v1/policies?clientId={world[0].pk}").json()["results"]:
        response = api.put(
            f"/v1/policies/{policy['id']}",
            {"cancellationDate": policy["effectiveDate"]},
            format="json",
        )
        assert response.status_code == 200, response.content
    record = "client" if kind.startswith("clients") else "vehicle"
    problem = assert_problem(api.get(f"/v1/certificates/{number}"), 404)
    assert problem["detail"] == f"No policy is in force for this {record} on {today()}."
    assert problem["detail"] == assert_problem(api.get(f"/v1/certificates/{kind}"), 404)["detail"]
    # Another agency's caller learns nothing from the genuine number.
    other = assert_problem(other_api.get(f"/v1/certificates/{number}"), 404)
    assert other["detail"] == "No certificate has this number."
