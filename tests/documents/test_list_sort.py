"""The document lists take `sort` as every list does (contract section 7): the fields the
OpenAPI document names, an unsortable one a 400; newest upload first by default. They ignored
it: `?sort=bogus` answered 200 and `?sort=fileName` did not sort."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from apps.documents.models import Document
from tests.conftest import assert_problem, page_ids
from tests.documents.test_api import PDF, upload
from tests.factories import PolicyFactory

pytestmark = pytest.mark.django_db
ITEM_PATH = {"clients": "client", "policies": "policy"}


@pytest.fixture
def policy(carrier):
    return PolicyFactory(client=carrier)


@pytest.fixture(params=["clients", "policies"])
def listed(request, api, carrier, policy):
    """Three documents of one owner, uploaded a day apart ("b.pdf" first, "c.pdf" last), and
    the list's address."""
    module = request.param
    owner = carrier if module == "clients" else policy
    names = ["b.pdf", "a.pdf", "c.pdf"]
    contents = [PDF + b"%" * 20, PDF, PDF + b"%" * 10]
    ids = [
        upload(api, owner, content=content, name=name, module=module).json()["id"]
        for name, content in zip(names, contents, strict=True)
    ]
    start = timezone.now() - dt.timedelta(days=10)
    for day, pk in enumerate(ids):
        Document.objects.filter(pk=pk).update(uploaded_at=start + dt.timedelta(days=day))
    owner_param = "clientId" if module == "clients" else "policyId"
    return f"/v1/documents/{module}?{owner_param}={owner.id}", ids, module


def test_default_order_is_newest_upload_first(api, listed):
    url, (b, a, c), _ = listed
    assert page_ids(api.get(url)) == [c, a, b]


@pytest.mark.parametrize(
    "sort,order",
    [
        ("fileName", "abc"),  # uploaded b, a, c: "b.pdf" first
        ("-fileName", "cba"),
        ("size", "acb"),  # a (smallest), c, b
        ("-size", "bca"),
        ("uploadedAt", "bac"),
        ("createdAt", "bac"),
        ("-id", "cab"),
    ],
)
def test_sort_by_a_field(api, listed, sort, order):
    url, (b, a, c), _ = listed
    by_letter = {"a": a, "b": b, "c": c}
    assert page_ids(api.get(f"{url}&sort={sort}")) == [by_letter[x] for x in order]


@pytest.mark.parametrize("sort", ["bogus", "fileName,bogus", "-"])
def test_an_unsortable_field_is_400(api, listed, sort):
    url, _, _ = listed
    body = assert_problem(api.get(f"{url}&sort={sort}"), 400)
    assert body["errors"][0]["field"] == "sort"


def test_created_at_is_the_first_upload_and_outlives_a_replacement(api, listed):
    # A replacement is a new upload (uploadedAt moves, updatedAt too), not a new document.
    url, (b, a, c), module = listed
    replaced = api.put(
        f"/v1/documents/{b}/{ITEM_PATH[module]}",
        {"file": SimpleUploadedFile("b2.pdf", PDF)},
        format="multipart",
    )
    assert replaced.status_code == 200, replaced.content
    assert page_ids(api.get(f"{url}&sort=createdAt")) == [b, a, c]
    assert page_ids(api.get(f"{url}&sort=-uploadedAt")) == [b, c, a]
    assert page_ids(api.get(f"{url}&sort=-updatedAt"))[0] == b
