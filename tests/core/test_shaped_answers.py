"""/v1/me, a document's download link and the legacy search page render what their serializers
declare (issue 14): each answer is built by its ShapedSerializer's `shape`, and the serializer's
fields are the schema drf-spectacular publishes; reading the answers back over HTTP and walking
them against those fields (tests/coverages/test_verification_shapes.py) keeps the two together."""

from __future__ import annotations

from collections import defaultdict
from unittest import mock

import pytest

from apps.accounts.api.serializers import AgencyRefSerializer, MeSerializer
from apps.core import renderers
from apps.core.serializers import ShapedSerializer
from apps.core.viewsets import LegacySearchPageSerializer, legacy_search_page
from apps.documents.api.serializers import DownloadSerializer
from apps.drivers.api.serializers import DriverSerializer
from apps.policies.api.serializers import PolicySerializer
from tests.coverages.test_verification_shapes import _check
from tests.documents.test_api import PNG, upload
from tests.factories import DriverFactory, PolicyFactory

pytestmark = pytest.mark.django_db


def test_me_renders_exactly_its_declared_fields(api, make_api, manager, agency, other_agency):
    seen: dict[type, set] = defaultdict(set)
    body = api.get("/v1/me").json()
    assert body["username"] == manager.username and body["agencies"]
    assert body["permissions"] == sorted(body["permissions"]) and body["permissions"]
    _check(api.get("/v1/me"), MeSerializer, seen)
    for serializer_class in (MeSerializer, AgencyRefSerializer):
        assert issubclass(serializer_class, ShapedSerializer)
        assert seen[serializer_class] == set(serializer_class().fields), serializer_class


def test_me_is_sent_without_the_renderers_walk(api, manager):
    # Built with its final keys (a CamelCased): the renderer looks at the answer once, not at
    # each of its permissions (issue 18); the keys are still the API's.
    with mock.patch.object(renderers, "camelize", wraps=renderers.camelize) as walk:
        response = api.get("/v1/me")
    assert response.status_code == 200, response.content
    assert walk.call_count == 1, walk.call_count
    body = response.json()
    assert list(body) == ["username", "isSuperuser", "agencies", "permissions"]
    assert body["isSuperuser"] is False and list(body["agencies"][0]) == ["id", "name"]
    assert "clients.view_client" in body["permissions"]


def test_download_link_renders_exactly_its_declared_fields(api, carrier):
    seen: dict[type, set] = defaultdict(set)
    document = upload(api, carrier, content=PNG).json()
    response = api.get(f"/v1/documents/{document['id']}/client/download")
    _check(response, DownloadSerializer, seen)
    assert seen[DownloadSerializer] == set(DownloadSerializer().fields)
    link = response.json()
    assert link["documentId"] == document["id"]
    assert link["downloadUrl"].startswith("http://testserver/downloads/")
    assert link["expiresAtUtc"].endswith("Z")


@pytest.mark.parametrize(
    ("path", "item_serializer", "factory"),
    [("drivers", DriverSerializer, DriverFactory), ("policies", PolicySerializer, PolicyFactory)],
)
def test_legacy_search_page_renders_exactly_its_declared_fields(
    api, carrier, path, item_serializer, factory
):
    factory(client=carrier)
    seen: dict[type, set] = defaultdict(set)
    page_class = legacy_search_page(item_serializer, "Page")
    response = api.post(f"/v1/{path}/search", {"pageSize": 5}, format="json")
    _check(response, page_class, seen)
    assert issubclass(page_class, LegacySearchPageSerializer)
    assert seen[page_class] == set(page_class().fields)
    assert response.json()["items"]
