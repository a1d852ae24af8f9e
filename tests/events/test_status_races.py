"""Two writes that change one unit's or client's verification status at the same moment each
announce the change they made (contract section 14: the last status event of each client and
unit is its current status). The first holds the watched row until it commits; the second
reads the status after it. Before, both read the status before either committed: two
removals of a unit from its two policies announced nothing (the unit ended INACTIVE with its
last event ACTIVE), and a new policy created while the only one was being cancelled left the
client ACTIVE with its last event ACTIVE→INACTIVE.

PostgreSQL (CI's second pass): each thread has its own connection and the database
arbitrates, as between two server processes; SQLite serialises writers instead."""

from __future__ import annotations

import datetime as dt

from apps.core.dates import today
from apps.coverages.services import VEHICLE, coverage_update
from apps.events.models import Event
from apps.masterdata.models import CoverageType
from apps.policies.services import policy_update
from tests.conftest import CONCURRENT_WRITERS
from tests.events.races import while_holding
from tests.factories import PolicyFactory, VehicleCoverageFactory, VehicleFactory

pytestmark = CONCURRENT_WRITERS


def _statuses(type_, **data) -> list[tuple[str, str]]:
    events = Event.objects.filter(type=type_).order_by("id")
    return [
        (e.data["from"], e.data["to"])
        for e in events
        if all(e.data.get(k) == v for k, v in data.items())
    ]


def test_two_removals_of_a_unit_at_once_announce_that_it_is_no_longer_covered(
    master_data_back, make_api, manager, carrier
):
    unit = VehicleFactory(client=carrier)
    al = PolicyFactory(client=carrier, coverage_type=CoverageType.objects.get(code="AL"))
    apd = PolicyFactory(client=carrier, coverage_type=CoverageType.objects.get(code="APD"))
    for policy in (al, apd):
        VehicleCoverageFactory(vehicle=unit, policy=policy)
    api = make_api(manager)

    [answer] = while_holding(
        lambda: coverage_update(
            user=manager, subject=VEHICLE, target_id=unit.id, policy_id=al.id, coverage_status=1
        ),
        lambda: api.put(
            "/v1/vehicles/coverages",
            {"vehicleId": unit.id, "policyId": apd.id, "coverageStatus": 1},
            format="json",
        ),
    )
    assert answer.status_code == 200, answer.content
    verified = api.get(f"/v1/coverages/vehicles?vin={unit.serial_number}").json()["results"][0]
    assert verified["status"] == "INACTIVE"
    assert _statuses("vehicle.status_changed", vehicleId=unit.id) == [("ACTIVE", "INACTIVE")]


def test_a_policy_created_while_the_only_one_is_cancelled_leaves_the_client_announced_active(
    master_data_back, make_api, manager, carrier
):
    only = PolicyFactory(client=carrier)
    api = make_api(manager)
    created = {
        "clientId": carrier.id,
        "effectiveDate": (today() - dt.timedelta(days=1)).isoformat(),
        "expirationDate": (today() + dt.timedelta(days=365)).isoformat(),
        "coverageType": "AL",
    }

    [answer] = while_holding(
        lambda: policy_update(user=manager, instance=only, cancellation_date=today()),
        lambda: api.post("/v1/policies", created, format="json"),
    )
    assert answer.status_code == 201, answer.content
    verified = api.get(f"/v1/coverages/clients?dot={carrier.dot}").json()["results"][0]
    assert verified["status"] == "ACTIVE"
    assert _statuses("carrier.status_changed", clientId=carrier.id) == [
        ("ACTIVE", "INACTIVE"),
        ("INACTIVE", "ACTIVE"),
    ]
