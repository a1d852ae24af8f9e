"""A cursor the feed could not have given, a position past its head, is refused as the feed's
documented 400 (docs/api.md, "A cursor this feed never gave out"): a forged one was accepted and
echoed back, and its caller then got no event, ever, new ones included (contract section 14,
"never skips an event"). A cursor the feed gave out is never refused: one echoed by an empty
page, and one whose events were purged since, keep answering. Runs on SQLite and on PostgreSQL
(tests/events/test_feed_postgres.py holds the cases only concurrent writers can make)."""

from __future__ import annotations

import base64

import pytest
from django.db import connection

from apps.clients.services import client_update
from apps.events.models import Event
from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db

REFUSED = {
    "type": "about:blank",
    "title": "Bad Request",
    "status": 400,
    "detail": "after: Not a cursor of this feed.",
    "errors": [{"field": "after", "message": "Not a cursor of this feed.", "code": "invalid"}],
}


def encode(txid: int, pk: int) -> str:
    return base64.urlsafe_b64encode(f"{txid}.{pk}".encode()).decode().rstrip("=")


def decode(cursor: str) -> tuple[int, int]:
    txid, pk = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode().split(".")
    return int(txid), int(pk)


def feed(api, **params) -> dict:
    response = api.get("/v1/events", params)
    assert response.status_code == 200, response.content
    return response.json()


def rename(manager, carrier, times: int) -> None:
    for n in range(times):
        client_update(user=manager, instance=carrier, client_name=f"Renamed {n}")


def past_the_head(cursor: str) -> str:
    """A position after every event the feed holds or will hold soon: a transaction that has
    not begun (PostgreSQL), ids far beyond the last one (SQLite, where every event's
    transaction id is 0)."""
    txid, pk = decode(cursor)
    if connection.vendor == "postgresql":
        return encode(txid + 2**40, pk)
    return encode(txid, pk + 100_000)


def test_a_cursor_past_the_head_is_400_also_once_events_follow(api, manager, carrier):
    rename(manager, carrier, 2)
    forged = past_the_head(feed(api)["next"])

    assert assert_problem(api.get("/v1/events", {"after": forged}), 400) == REFUSED
    rename(manager, carrier, 1)
    assert assert_problem(api.get("/v1/events", {"after": forged}), 400) == REFUSED


def test_the_probe_of_the_demo_server_is_400(api, manager, carrier):
    """`MC4xMDAwMDA`, base64 of `0.100000`, against a feed of a few events on SQLite."""
    if connection.vendor == "postgresql":
        pytest.skip("on PostgreSQL transaction id 0 is before every event: the whole feed")
    rename(manager, carrier, 2)

    assert assert_problem(api.get("/v1/events", {"after": "MC4xMDAwMDA"}), 400) == REFUSED


NINETEEN_NINES = 10**19 - 1  # the longest number a cursor may carry, past any column's


@pytest.mark.parametrize(
    ("txid", "pk"), [(NINETEEN_NINES, NINETEEN_NINES), (NINETEEN_NINES, 1), (0, NINETEEN_NINES)]
)
def test_numbers_past_what_a_column_holds_are_the_400_never_a_500(api, manager, carrier, txid, pk):
    rename(manager, carrier, 1)
    response = api.get("/v1/events", {"after": encode(txid, pk)})

    if connection.vendor == "postgresql" and txid == 0:
        assert len(feed(api, after=encode(txid, pk))["results"]) == 1  # before every event
    else:
        assert assert_problem(response, 400) == REFUSED


def test_a_transaction_id_no_event_has_on_sqlite_is_400(api, manager, carrier):
    if connection.vendor != "sqlite":
        pytest.skip("SQLite: every event's transaction id is 0")
    rename(manager, carrier, 1)
    _, pk = decode(feed(api)["next"])

    assert assert_problem(api.get("/v1/events", {"after": encode(7, pk)}), 400) == REFUSED


def test_a_genuine_cursor_at_the_head_keeps_answering_and_sees_what_follows(api, manager, carrier):
    rename(manager, carrier, 2)
    head = feed(api)["next"]

    for _ in range(2):  # the echoed cursor is as good as the one the page gave
        assert feed(api, after=head) == {"results": [], "next": head}
    assert feed(api, after=head, type="policy.created") == {"results": [], "next": head}
    rename(manager, carrier, 1)
    assert [e["data"]["clientName"] for e in feed(api, after=head)["results"]] == ["Renamed 0"]


def test_a_cursor_whose_events_were_purged_keeps_answering(api, manager, carrier):
    rename(manager, carrier, 3)
    head = feed(api)["next"]
    Event.objects.all().delete()  # as the retention's prune does, after 35 quiet days

    assert feed(api, after=head) == {"results": [], "next": head}
    rename(manager, carrier, 1)
    assert len(feed(api, after=head)["results"]) == 1


def test_a_cursor_of_another_agencys_feed_position_is_not_refused(
    api, other_api, manager, carrier, rival, other_manager
):
    """A position is the feed's, not the caller's: the other agency's later events move the
    head for everyone, and a cursor before them is no secret."""
    rename(manager, carrier, 1)
    client_update(user=other_manager, instance=rival, client_name="Theirs")
    theirs = feed(other_api)["next"]

    assert feed(api, after=theirs) == {"results": [], "next": theirs}


@pytest.mark.parametrize("extra", ["!!", "===", "*", "+", "/"])
def test_a_cursor_with_characters_a_cursor_never_has_is_400(api, manager, carrier, extra):
    """A cursor is URL-safe base64 (base64's padding allowed, tests/events/test_feed_params.py):
    anything more (characters outside that alphabet, more padding than base64 has) makes it one
    the feed could not have given, not the cursor it would be without."""
    rename(manager, carrier, 2)
    genuine = feed(api, limit=1)["next"]
    assert feed(api, after=genuine)["results"]  # the cursor itself is good

    assert assert_problem(api.get("/v1/events", {"after": genuine + extra}), 400) == REFUSED
    middle = len(genuine) // 2
    mangled = genuine[:middle] + extra + genuine[middle:]
    assert assert_problem(api.get("/v1/events", {"after": mangled}), 400) == REFUSED


def test_the_probes_with_characters_past_a_cursor_are_400(api, manager, carrier):
    """`MC41` is `0.5`, a position the feed could have given (five events on SQLite; transaction
    0 on PostgreSQL); `MC41!!` and `MC41===` are not cursors, not `0.5`."""
    rename(manager, carrier, 5)
    feed(api, after="MC41")  # 200

    assert assert_problem(api.get("/v1/events", {"after": "MC41!!"}), 400) == REFUSED
    assert assert_problem(api.get("/v1/events", {"after": "MC41==="}), 400) == REFUSED


def test_a_cursor_spelt_otherwise_than_the_feed_spells_it_is_400(api, manager, carrier):
    """The last character of a cursor whose length is not a multiple of 4 has unused low bits:
    set, it decodes to the same numbers, but the feed never spells a cursor so."""
    rename(manager, carrier, 12)
    genuine = encode(0, 10)  # `MC4xMA`: before the 10th event (SQLite), every event (PostgreSQL)
    feed(api, after=genuine)  # 200
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    other = genuine[:-1] + alphabet[alphabet.index(genuine[-1]) | 1]
    assert other != genuine and decode(other) == decode(genuine)

    assert assert_problem(api.get("/v1/events", {"after": other}), 400) == REFUSED
