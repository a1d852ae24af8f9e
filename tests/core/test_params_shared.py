"""Query parameters parse with fields bound once per class (issue 18): no per-request deep copy
of the declared fields, and threads sharing those fields each get their own values and their
own first bad parameter."""

from __future__ import annotations

import copy
import datetime as dt
import threading
from unittest import mock

import pytest
from django.test import RequestFactory
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

from apps.certificates.api.views import ClientCertificateParams


def _request(query: str) -> Request:
    return Request(RequestFactory().get(f"/v1/certificates/client?{query}"))


def test_parsing_does_not_copy_the_declared_fields():
    ClientCertificateParams.parse(_request("id=1"))
    with mock.patch("copy.deepcopy", wraps=copy.deepcopy) as deepcopy:
        for n in range(1, 4):
            assert ClientCertificateParams.parse(_request(f"id={n}"))["id"] == n
    assert deepcopy.call_count == 0


def test_threads_parse_their_own_values_and_errors():
    errors: list[str] = []
    start = threading.Barrier(8)

    def work(n: int) -> None:
        start.wait()
        for _ in range(200):
            day = dt.date(2020, 1, 1) + dt.timedelta(days=n)
            query = f"id={n}&asOf={day:%Y-%m-%d}&holderName=h{n}"
            values = ClientCertificateParams.parse(_request(query))
            if (values["id"], values["as_of"], values["holder_name"]) != (n, day, f"h{n}"):
                errors.append(f"thread {n} read {values}")
            bad = "dot=x" if n % 2 else f"id={n}&asOf=nope"
            try:
                ClientCertificateParams.parse(_request(bad))
            except ValidationError as exc:
                named = next(iter(exc.detail))
                if named != ("dot" if n % 2 else "asOf"):
                    errors.append(f"thread {n} got {exc.detail}")
            else:
                errors.append(f"thread {n}: {bad} parsed")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(1, 9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


@pytest.mark.parametrize(
    ("query", "body"),
    [
        ("", {"id": ["Send exactly one of 'id', 'dot'."]}),
        ("id=1&dot=2", {"id": ["Send exactly one of 'id', 'dot'."]}),
        (
            "id=x&asOf=nope",
            {"id": ["Expected an integer between 1 and 9223372036854775807, in ASCII digits."]},
        ),
        ("id=1&asOf=nope", {"asOf": ["Expected a date as YYYY-MM-DD or MM-dd-yyyy."]}),
        ("id=1&holderName=" + "n" * 201, {"holderName": ["At most 200 characters."]}),
        ("id=1&holderAddress=" + "a" * 501, {"holderAddress": ["At most 500 characters."]}),
    ],
)
def test_the_400_names_the_first_bad_parameter(query, body):
    with pytest.raises(ValidationError) as caught:
        ClientCertificateParams.parse(_request(query))
    assert caught.value.detail == body
