"""A /v1 request body is read whether or not it announces a Content-Length: a body sent with
`Transfer-Encoding: chunked` (gunicorn de-chunks it into `wsgi.input` and passes no
CONTENT_LENGTH) behaves exactly as the same body with a Content-Length, its size limit
included (413 problem+json past it).

Before, Django read such a body as empty: a chunked PUT answered 200 with nothing changed, a
chunked POST a misleading 400 "field required", and a body of 40 MiB 200 or 400, never 413.
Only document uploads spooled a chunked body themselves.

Django's test client cannot send chunked, so most tests build the WSGI environ gunicorn builds
(HTTP_TRANSFER_ENCODING=chunked, no CONTENT_LENGTH, the body in `wsgi.input`); the last one
sends raw chunked requests to a real gunicorn.
"""

from __future__ import annotations

import io
import json
import socket

import pytest
from gunicorn.http.errors import InvalidChunkSize, NoMoreData
from rest_framework.test import APIClient

from apps.clients.models import Client
from tests.conftest import assert_problem
from tests.processes import HTTP_TIMEOUT, gunicorn_nodes, needs_redis

pytestmark = pytest.mark.django_db


def _send(client, method: str, path: str, body: bytes, *, chunked: bool, **extra):
    """`body` sent as gunicorn passes it on: with its Content-Length, or chunked without one."""
    headers = {"content_type": extra.pop("content_type", "application/json"), **extra}
    if not chunked:
        return client.generic(method, path, body, **headers)
    return client.generic(
        method,
        path,
        b"",
        CONTENT_LENGTH="",
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input": io.BytesIO(body)},
        **headers,
    )


def _json(data) -> bytes:
    return json.dumps(data).encode()


class Counting(io.RawIOBase):
    """40 MiB of bytes that counts how many were read."""

    def __init__(self):
        self.read_bytes = 0

    def readable(self):
        return True

    def readinto(self, buffer):
        n = min(len(buffer), 40 * 1024 * 1024 - self.read_bytes)
        buffer[:n] = b" " * n
        self.read_bytes += n
        return n


def _send_counting(client, method: str, path: str, content_type: str, **extra):
    source = Counting()
    response = client.generic(
        method,
        path,
        b"",
        content_type=content_type,
        CONTENT_LENGTH="",
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input": source},
        **extra,
    )
    return response, source.read_bytes


FORM = "multipart/form-data; boundary=x"


def test_a_chunked_put_changes_the_record(api, carrier):
    response = _send(
        api, "PUT", f"/v1/clients/{carrier.id}", _json({"clientName": "X"}), chunked=True
    )
    assert response.status_code == 200, response.content
    assert response.json()["clientName"] == "X"
    carrier.refresh_from_db()
    assert carrier.client_name == "X"


def test_a_chunked_post_creates_the_record(api, agency):
    body = _json({"clientName": "Chunked Freight", "agencyId": agency.id})
    response = _send(api, "POST", "/v1/clients", body, chunked=True)
    assert response.status_code == 201, response.content
    assert Client.objects.get(pk=response.json()["id"]).client_name == "Chunked Freight"


def test_a_chunked_body_past_the_limit_is_413(api, agency, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    padding = "x" * 4096
    body = _json({"clientName": "Big", "agencyId": agency.id, "notes": padding})
    assert_problem(_send(api, "POST", "/v1/clients", body, chunked=True), 413)
    assert not Client.objects.filter(client_name="Big").exists()


def test_a_chunked_body_of_40_mib_is_413_without_being_read_whole(api, carrier):
    response, read = _send_counting(api, "PUT", f"/v1/clients/{carrier.id}", "application/json")
    assert_problem(response, 413)
    assert read < 3 * 1024 * 1024  # the limit (2.5 MiB) and a step, not 40 MiB


@pytest.mark.parametrize(
    "method, path, content_type, status",
    [
        ("POST", "/v1/clients", FORM, 401),
        ("POST", "/v1/clients", "application/json", 401),
        ("POST", "/v1/auth/token", "application/json", 401),
        ("GET", "/v1/me", "application/json", 401),
        ("POST", "/v1/documents/clients", FORM, 401),
    ],
)
def test_no_body_is_read_for_a_caller_without_a_valid_api_key(method, path, content_type, status):
    # The review's case: before the gate, each of these read (and stored) 25 MiB first.
    for key in ({}, {"HTTP_APIKEY": "not-a-key"}):
        response, read = _send_counting(APIClient(), method, path, content_type, **key)
        assert_problem(response, status)
        assert read == 0


@pytest.mark.parametrize(
    "method, path, status",
    [("GET", "/v1/nowhere", 404), ("DELETE", "/v1/clients", 405), ("PUT", "/v1/me", 405)],
)
def test_no_body_is_read_for_a_route_that_would_not_read_it(api, method, path, status):
    response, read = _send_counting(api, method, path, FORM)
    assert_problem(response, status)
    assert read == 0


def test_a_form_to_a_route_that_takes_no_form_has_the_json_limit(api):
    # 25 MiB is an upload's allowance, on the routes that take uploads only: this route refuses
    # the form past the 2.5 MiB of any other body (413, the size judged before the type),
    # having read no more than that.
    response, read = _send_counting(api, "POST", "/v1/clients", FORM)
    assert_problem(response, 413)
    assert read < 3 * 1024 * 1024


@pytest.mark.parametrize("error", [InvalidChunkSize(b"zz"), NoMoreData()])
def test_a_broken_chunked_body_is_400_and_changes_nothing(api, carrier, error):
    # gunicorn raises while de-chunking: a chunk size that is not hexadecimal, or the client
    # gone before the last chunk.
    class Broken(io.RawIOBase):
        def readable(self):
            return True

        def readinto(self, buffer):
            raise error

    response = api.generic(
        "PUT",
        f"/v1/clients/{carrier.id}",
        b"",
        content_type="application/json",
        CONTENT_LENGTH="",
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input": Broken()},
    )
    assert_problem(response, 400)
    carrier.refresh_from_db()
    assert carrier.client_name == "Lone Star Freight"


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PUT", "/v1/clients/{id}", _json({"clientName": "Same"})),
        ("PUT", "/v1/clients/{id}", _json({"clientName": ""})),
        ("PUT", "/v1/clients/{id}", b"{not json"),
        ("PUT", "/v1/clients/{id}", b""),
        ("POST", "/v1/clients", _json({"clientName": "Same", "agencyId": "{agency}"})),
        ("POST", "/v1/clients", _json({"agencyId": "{agency}"})),
        ("POST", "/v1/clients/search", _json({"pageIndex": 1, "pageSize": 5})),
        ("POST", "/v1/clients", b"{" * 200_000),  # too deep, within the size limit
        ("POST", "/v1/clients", _json({"clientName": "x" * 3_000_000})),  # past the limit
    ],
)
@pytest.mark.parametrize("who", ["manager", "nobody"])
def test_a_chunked_body_answers_as_the_same_body_with_a_content_length(
    make_api, manager, agency, method, path, body, who
):
    answers = []
    for chunked in (False, True):
        carrier = Client.objects.create(agency=agency, client_name="Before")
        url = path.format(id=carrier.id)
        sent = body.replace(b'"{agency}"', str(agency.id).encode())
        client = make_api(manager if who == "manager" else None)
        response = _send(client, method, url, sent, chunked=chunked)
        carrier.refresh_from_db()
        shown = json.loads(response.content) if response.content else None
        if isinstance(shown, dict):
            for volatile in ("id", "createdAt", "updatedAt", "createdBy", "updatedBy"):
                shown.pop(volatile, None)
            if "results" in shown:  # a search page: the same rows but for their ids
                shown["results"] = len(shown["results"])
        answers.append((response.status_code, response["Content-Type"], shown, carrier.client_name))
        Client.objects.filter(client_name="Same").delete()
    assert answers[1] == answers[0]


def test_a_chunked_upload_keeps_its_25_mib_limit(api, carrier):
    # The documents' own limit, not the 2.5 MiB of other bodies (tests/documents has the rest).
    boundary = "zzz"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="clientId"\r\n\r\n{carrier.id}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n'
        "Content-Type: application/pdf\r\n\r\n"
    ).encode()
    payload = head + b"%PDF-1.4\n" + b"0" * (4 * 1024 * 1024) + f"\r\n--{boundary}--\r\n".encode()
    response = _send(
        api,
        "POST",
        "/v1/documents/clients",
        payload,
        chunked=True,
        content_type=f"multipart/form-data; boundary={boundary}",
    )
    assert response.status_code == 201, response.content[:300]
    assert response.json()["size"] == 4 * 1024 * 1024 + 9


# --- through a real gunicorn ---------------------------------------------------------------

SETUP = """
from django.contrib.auth import get_user_model
from apps.agencies.models import Agency, AgencyMembership
from apps.clients.models import Client
from apps.demo.access import groups_ensure
manager, _ = groups_ensure()
user = get_user_model().objects.create_user("chunky", password="chunky-password-1")
user.groups.add(manager)
agency = Agency.objects.create(name="Chunk Agency")
AgencyMembership.objects.create(user=user, agency=agency)
print(agency.id, Client.objects.create(agency=agency, client_name="Before").id)
"""


def _raw_chunked(port: int, method: str, path: str, headers: dict, body: bytes):
    """`body` sent over a socket as HTTP/1.1 chunks of 64 KiB, no Content-Length; the answer's
    status, headers and body."""
    head = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Transfer-Encoding: chunked"]
    head += [f"{name}: {value}" for name, value in headers.items()]
    with socket.create_connection(("127.0.0.1", port), timeout=HTTP_TIMEOUT) as raw:
        raw.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        try:
            for start in range(0, len(body), 65536):
                piece = body[start : start + 65536]
                raw.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            raw.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered before the whole body was sent: the answer is read below
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += raw.recv(65536)
        head_bytes, _, rest = answer.partition(b"\r\n\r\n")
        lines = head_bytes.decode().split("\r\n")
        found = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        while len(rest) < int(found["content-length"]):
            rest += raw.recv(65536)
    return int(lines[0].split()[1]), found, rest


@needs_redis
def test_chunked_bodies_through_a_real_gunicorn(tmp_path, migrated_sqlite):
    with gunicorn_nodes(tmp_path, migrated_sqlite, count=1) as nodes:
        key = nodes.manage("create_api_key", "chunks")
        agency_id, client_id = nodes.manage("shell", "-c", SETUP).splitlines()[-1].split()
        login = {"username": "chunky", "password": "chunky-password-1"}
        token = nodes.call(0, "/v1/auth/token", {"apiKey": key}, json=login).json()["access"]
        headers = {
            "apiKey": key,
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
        }
        port = nodes.ports[0]

        status, _, body = _raw_chunked(
            port, "PUT", f"/v1/clients/{client_id}", headers, _json({"clientName": "X"})
        )
        assert status == 200, body
        assert json.loads(body)["clientName"] == "X"
        again = nodes.call(0, f"/v1/clients/{client_id}", headers).json()
        assert again["clientName"] == "X"

        created = _json({"clientName": "Chunked Freight", "agencyId": int(agency_id)})
        status, _, body = _raw_chunked(port, "POST", "/v1/clients", headers, created)
        assert status == 201, body

        big = _json({"clientName": "Big", "agencyId": int(agency_id), "notes": "x" * (40 << 20)})
        status, found, body = _raw_chunked(port, "POST", "/v1/clients", headers, big)
        assert status == 413, body[:300]
        assert found["content-type"] == "application/problem+json"
        assert json.loads(body)["status"] == 413
