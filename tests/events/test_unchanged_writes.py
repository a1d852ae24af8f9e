"""A write that changes nothing announces nothing: `client.updated`, `policy.updated` and
`vehicle.updated` mean the record's fields changed (docs/webhooks.md), so an empty body, a
body of unknown fields, a record sent back as it is, a repeated `{"deleted": true}` or an
admin Save with no change is neither an event nor a delivery."""

from __future__ import annotations

import pytest

from apps.events.models import Event
from apps.policies.models import PolicyLimit
from tests.admin.formdata import form_data
from tests.factories import PolicyFactory, VehicleFactory

pytestmark = pytest.mark.django_db

CHANGE_TYPES = ("updated", "deleted", "restored", "cancelled")


def announced(kind: str) -> list[str]:
    return list(
        Event.objects.filter(type__in=[f"{kind}.{t}" for t in CHANGE_TYPES])
        .order_by("id")
        .values_list("type", flat=True)
    )


def put(api, url: str, body: dict) -> dict:
    response = api.put(url, body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_client_writes_that_change_nothing_announce_nothing(api, carrier):
    url = f"/v1/clients/{carrier.id}"
    record = put(api, url, {})
    put(api, url, {"noSuchField": 1, "another": "x"})
    put(api, url, {"clientName": record["clientName"], "dot": record["dot"]})
    assert announced("client") == []
    put(api, url, {"deleted": True})
    put(api, url, {"deleted": True})
    assert announced("client") == ["client.deleted"]


def test_policy_writes_that_change_nothing_announce_nothing(api, carrier):
    policy = PolicyFactory(client=carrier)
    PolicyLimit.objects.create(policy=policy, name="Combined Single Limit", amount=1_000_000)
    url = f"/v1/policies/{policy.id}"
    record = put(api, url, {})
    put(api, url, {"limits": [{"name": "Combined Single Limit", "amount": "1000000.00"}]})
    put(api, url, {"expirationDate": record["expirationDate"], "limits": record["limits"]})
    assert announced("policy") == []
    put(api, url, {"limits": [{"name": "Combined Single Limit", "amount": "2000000.00"}]})
    assert announced("policy") == ["policy.updated"]
    put(api, url, {"deleted": True})
    put(api, url, {"deleted": True})
    assert announced("policy") == ["policy.updated", "policy.deleted"]


def test_vehicle_writes_that_change_nothing_announce_nothing(api, carrier):
    unit = VehicleFactory(client=carrier)
    url = f"/v1/vehicles/{unit.id}"
    record = put(api, url, {})
    put(api, url, {"unit": record["unit"], "noSuchField": True})
    assert announced("vehicle") == []


@pytest.mark.parametrize("kind", ["client", "policy", "vehicle"])
def test_an_admin_save_with_no_change_announces_nothing(staff_client, carrier, kind):
    obj = {
        "client": carrier,
        "policy": PolicyFactory(client=carrier),
        "vehicle": VehicleFactory(client=carrier),
    }[kind]
    url = f"/admin/{obj._meta.app_label}/{obj._meta.model_name}/{obj.pk}/change/"
    response = staff_client.post(url, form_data(staff_client.get(url).content.decode()))
    assert response.status_code == 302, response.content.decode()[:3000]
    assert announced(kind) == []
