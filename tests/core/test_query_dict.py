"""`request.GET` built without Django's cost per value is Django's `QueryDict`, value for value
(apps.core.query_params.query_dict, issue 18), and the API reads it so."""

from __future__ import annotations

import pytest
from django.http import QueryDict
from django.test import RequestFactory, override_settings

from apps.core.query_params import query_dict
from tests.conftest import assert_problem

AWKWARD = [
    "",
    "a=1",
    "a=1&a=2&b=3",
    "a",
    "a&b=",
    "=1",
    "=",
    "&&a=1&&",
    "a==b=c",
    "dots=1&dots=2&dots=3&dot=4",
    "a=b;c=d",
    "a=\x01&\t=\x7f",  # control characters: ASCII, kept as they are
    "a=%20b&c=d",
    "a+b=c+d",
    "a=%E2%82%AC",
    "a=%ZZ&b=%",
    "a=\u00e9",  # a byte past ASCII, as PEP 3333 hands it over (latin-1)
    "a=\u00c3\u00a9",  # UTF-8 for é, as PEP 3333 hands it over
    "a=\u00ff\u00fe",  # not UTF-8: Django falls back to latin-1
    "sort=-make&limit=25&page=3&clientId=7",
    "x=" + "9" * 5000,
    "&".join(f"dots={10_000_000 + n}" for n in range(200)),
]


def _django(raw: str, encoding: str | None = None) -> QueryDict:
    return QueryDict(raw.encode("iso-8859-1"), encoding=encoding)


def _request(raw: str):
    request = RequestFactory().get("/v1/me")
    request.environ["QUERY_STRING"] = raw
    return request


@pytest.mark.parametrize("raw", AWKWARD)
def test_the_same_lists_as_django(raw):
    built, expected = query_dict(_request(raw)), _django(raw)
    assert list(built.lists()) == list(expected.lists())
    assert built.encoding == expected.encoding
    assert built.urlencode() == expected.urlencode()
    with pytest.raises(AttributeError):  # immutable, as request.GET is
        built["a"] = "x"


def test_a_missing_query_string_is_empty():
    request = RequestFactory().get("/v1/me")
    request.environ.pop("QUERY_STRING", None)
    built = query_dict(request)
    assert not built and isinstance(built, QueryDict)


def test_a_request_with_its_own_encoding_is_decoded_with_it():
    request = _request("a=%E9")
    request.encoding = "iso-8859-1"
    assert query_dict(request).getlist("a") == ["\u00e9"]
    assert query_dict(_request("a=%E9")).getlist("a") == ["\ufffd"]  # UTF-8, replaced


@override_settings(DATA_UPLOAD_MAX_NUMBER_FIELDS=3)
@pytest.mark.parametrize("raw", ["a=1&b=2&c=3&d=4", "a&b&c&d", "&&&"])
def test_too_many_fields_is_djangos_error(raw):
    from django.core.exceptions import TooManyFieldsSent

    with pytest.raises(TooManyFieldsSent):
        _django(raw)
    with pytest.raises(TooManyFieldsSent):
        query_dict(_request(raw))


@override_settings(DEFAULT_CHARSET="utf-16")
def test_a_charset_other_than_utf8_is_djangos_build():
    request = _request("abcd")
    assert list(query_dict(request).lists()) == list(_django("abcd").lists())
    assert list(query_dict(request).lists()) != [("abcd", [""])]


@override_settings(DATA_UPLOAD_MAX_NUMBER_FIELDS=3)
def test_as_many_fields_as_allowed_is_fine():
    assert list(query_dict(_request("a=1&b=2&a=3")).lists()) == [("a", ["1", "3"]), ("b", ["2"])]


@pytest.mark.django_db
def test_the_api_reads_it(api, carrier):
    """A repeated single-valued parameter is still refused, a list parameter read as a list,
    and an escaped value unescaped, through the middleware that builds `request.GET`."""
    repeated = api.get(f"/v1/coverages/clients?dot={carrier.dot}&dot={carrier.dot}")
    assert assert_problem(repeated, 400)["errors"][0]["field"] == "dot"
    many = api.get(f"/v1/coverages/clients?dots={carrier.dot}&dots=99999999")
    assert many.status_code == 200, many.content
    assert [r["dot"] for r in many.json()["results"]] == [carrier.dot, "99999999"]
    assert [r["found"] for r in many.json()["results"]] == [True, False]
    escaped = "".join(f"%{ord(c):X}" for c in carrier.dot)
    one = api.get(f"/v1/coverages/clients?dot={escaped}")
    assert one.status_code == 200, one.content
    assert one.json()["results"][0]["client"]["id"] == carrier.id


@pytest.mark.django_db(transaction=True)
def test_an_asgi_request_reads_its_own_query(master_data_back, api_key, make_api, manager, carrier):
    """ASGI's request has no WSGI environ (its query comes from META): `request.GET` is
    Django's own there, and the answer is WSGI's."""
    from asgiref.sync import async_to_sync
    from django.test import AsyncClient

    from tests.conftest import bearer_for

    path = f"/v1/coverages/clients?dots={carrier.dot}&dots=99999999"
    synchronous = make_api(manager).get(path)
    assert synchronous.status_code == 200, synchronous.content
    headers = {"apiKey": api_key, "Authorization": f"Bearer {bearer_for(manager)}"}
    answer = async_to_sync(AsyncClient().get)(path, headers=headers)
    assert answer.status_code == 200, answer.content
    assert answer.json() == synchronous.json()
    repeated = async_to_sync(AsyncClient().get)(
        "/v1/coverages/clients?dot=1&dot=2", headers=headers
    )
    assert assert_problem(repeated, 400)["errors"][0]["field"] == "dot"
