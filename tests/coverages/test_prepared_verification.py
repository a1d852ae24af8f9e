"""Verification's queries are compiled once per process and shape (apps.core.prepared, issue 18):
each call's values still decide the answer (the DOT, the VIN, the date, the caller's agencies)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.db import DatabaseError, connection
from django.db.models import QuerySet
from django.db.models.sql.compiler import SQLCompiler
from django.test.utils import CaptureQueriesContext

from apps.clients.models import Client
from apps.core import lookups
from apps.core.dates import today
from apps.core.prepared import PreparedQuery
from apps.coverages.models import VehicleCoverage
from apps.policies.models import Policy, PolicyLimit
from apps.vehicles.models import Vehicle
from tests.conftest import assert_problem
from tests.coverages.conftest import VIN
from tests.factories import ClientFactory, PolicyFactory, VehicleCoverageFactory, VehicleFactory

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)
VERIFICATION_MODELS = (Client, Policy, PolicyLimit, Vehicle, VehicleCoverage)


def _verification_compiles(seen) -> list:
    return [model for model in seen if model in VERIFICATION_MODELS]


def test_a_dot_and_a_vin_asked_again_compile_no_verification_query(api, covered, compiled):
    for _ in range(3):  # first sighting, then prepared
        assert api.get("/v1/coverages/clients?dot=1234567").json()["results"][0]["verified"]
        assert api.get(f"/v1/coverages/vehicles?vin={VIN}").json()["results"][0]["verified"]
    compiled.clear()
    body = api.get("/v1/coverages/clients?dot=1234567").json()
    assert body["results"][0]["coverages"][0]["limits"][0]["amount"] == "1000000.00"
    assert api.get(f"/v1/coverages/vehicles?vin={VIN}").json()["results"][0]["verified"]
    assert _verification_compiles(compiled) == []


def test_each_call_answers_for_its_own_dot_and_date(api, agency, carrier, covered):
    lapsed = ClientFactory(agency=agency, client_name="Lapsed", dot="2222222")
    PolicyFactory(client=lapsed, effective_date=today() - 400 * DAY, expiration_date=today() - DAY)
    for _ in range(3):
        [one] = api.get("/v1/coverages/clients?dot=1234567").json()["results"]
        [two] = api.get("/v1/coverages/clients?dot=2222222").json()["results"]
        assert (one["client"]["clientName"], one["status"]) == ("Lone Star Freight", "ACTIVE")
        assert (two["client"]["clientName"], two["status"]) == ("Lapsed", "INACTIVE")
        yesterday = (today() - 2 * DAY).isoformat()
        [before] = api.get(f"/v1/coverages/clients?dot=2222222&asOf={yesterday}").json()["results"]
        assert before["status"] == "ACTIVE"
        assert_problem(api.get("/v1/coverages/clients?dot=3333333"), 404)


def test_another_agencys_caller_of_the_same_shape_sees_only_its_own(api, other_api, covered, rival):
    PolicyFactory(client=rival)
    for _ in range(3):
        assert api.get("/v1/coverages/clients?dot=1234567").status_code == 200
        assert api.get(f"/v1/coverages/vehicles?vin={VIN}").status_code == 200
        assert_problem(other_api.get("/v1/coverages/clients?dot=1234567"), 404)
        assert_problem(other_api.get(f"/v1/coverages/vehicles?vin={VIN}"), 404)
        assert_problem(api.get("/v1/coverages/clients?dot=7654321"), 404)
        [own] = other_api.get("/v1/coverages/clients?dot=7654321").json()["results"]
        assert own["client"]["clientName"] == "Rival Transport"


def test_a_removed_unit_and_a_cancelled_policy_are_seen_at_once(api, carrier, covered):
    policy, unit = covered
    for _ in range(3):
        assert api.get(f"/v1/coverages/vehicles?vin={VIN}").json()["results"][0]["verified"]
    other = VehicleFactory(client=carrier, serial_number="1FUJGLDR7CLBP8835")
    VehicleCoverageFactory(vehicle=other, policy=policy, policy_removed_date=today())
    [removed] = api.get("/v1/coverages/vehicles?vin=1FUJGLDR7CLBP8835").json()["results"]
    assert removed["status"] == "INACTIVE"
    Policy.objects.filter(pk=policy.pk).update(cancellation_date=today())
    [cancelled] = api.get(f"/v1/coverages/vehicles?vin={VIN}").json()["results"]
    assert cancelled["status"] == "INACTIVE" and cancelled["coverages"] == []
    [client] = api.get("/v1/coverages/clients?dot=1234567").json()["results"]
    assert client["status"] == "INACTIVE"


# --- the helper itself ---------------------------------------------------------------------


def test_prepared_rows_equal_the_builders_for_every_call(agency, carrier, rival):
    query = PreparedQuery(
        lambda dots, agencies: (
            Client.objects.for_agencies(agencies).filter(dot__in=dots).order_by("id")
        )
    )
    calls = [
        ({"dots": ["1234567"], "agencies": [agency.id]}, [carrier]),
        ({"dots": ["7654321"], "agencies": [agency.id]}, []),
        ({"dots": ["7654321"], "agencies": None}, [rival]),
        ({"dots": ["7654321", "1234567"], "agencies": None}, [carrier, rival]),
        ({"dots": ["1234567"], "agencies": []}, []),
    ]
    for _ in range(3):
        for values, expected in calls:
            assert query.fetch(**values) == expected
    # Four shapes (the first two calls share one); the agency-less one never runs a query.
    prepared = [t for t in query.templates.values() if hasattr(t, "sql")]
    assert len(query.templates) == 4 and len(prepared) == 3


def test_a_builder_whose_sql_depends_on_a_value_is_never_prepared(carrier):
    # The SQL changes with the date itself, not only with its shape: the check on the first
    # prepared call sees it and the shape keeps compiling on every call, answering right.
    def build(on):
        if on < today():
            return Client.objects.filter(pk=carrier.pk)
        return Client.objects.none() if on > today() else Client.objects.filter(dot="1234567")

    query = PreparedQuery(build)
    for _ in range(3):
        assert query.fetch(on=today() - DAY) == [carrier]
        assert query.fetch(on=today() + DAY) == []
        assert query.fetch(on=today()) == [carrier]
    assert all(not hasattr(t, "sql") for t in query.templates.values())


def test_a_call_with_more_values_than_kept_compiles_every_time(carrier, compiled):
    query = PreparedQuery(lambda dots: Client.objects.filter(dot__in=dots), most_values=3)
    many = ["1234567", "1", "2", "3"]
    for _ in range(3):
        assert query.fetch(dots=many) == [carrier]
        assert query.fetch(dots=many[:3]) == [carrier]
    compiled.clear()
    query.fetch(dots=many), query.fetch(dots=many[:3])
    assert compiled == [Client] and len(query.templates) == 1


def test_prepared_value_rows_run_without_a_compiler_or_converters_per_call(
    covered, monkeypatch, django_assert_num_queries
):
    # A values_list() of columns with converters on some backend (a decimal, dates, a boolean,
    # a NULL date): after its shape is prepared, each call runs the SQL on the cursor and
    # applies the converters found once, with the answer the queryset gives.
    policy, _ = covered
    PolicyLimit.objects.create(policy=policy, name="Cargo", amount="100000.50", position=1)

    def build(policies, on):
        return (
            PolicyLimit.objects.filter(policy_id__in_list=policies, policy__effective_date__lte=on)
            .order_by("position", "id")
            .values_list(
                "name",
                "amount",
                "policy__effective_date",
                "policy__cancellation_date",
                "policy__additional_insured",
            )
        )

    query = PreparedQuery(build, arrays=("policies",))
    expected = list(build([policy.id], today()))
    assert [row[:2] for row in expected] == [
        ("Combined Single Limit", Decimal("1000000.00")),
        ("Cargo", Decimal("100000.50")),
    ]
    query.fetch(policies=[policy.id], on=today()), query.fetch(policies=[policy.id], on=today())
    calls = []
    original = SQLCompiler.get_converters
    monkeypatch.setattr(SQLCompiler, "get_converters", lambda *a: calls.append(a) or original(*a))
    monkeypatch.setattr(QuerySet, "_chain", lambda *a: calls.append(a))
    for _ in range(3):
        with django_assert_num_queries(1):  # still run on Django's cursor, and counted
            rows = query.fetch(policies=[policy.id], on=today())
        assert rows == expected and all(type(row) is tuple for row in rows)
        assert [type(v) for v in rows[0]] == [type(v) for v in expected[0]]
        assert query.fetch(policies=[policy.id], on=policy.effective_date - DAY) == []
    assert calls == []


# --- lists sent as one array (apps.core.lookups.InList) ------------------------------------


def test_in_list_answers_as_in_for_every_length(agency, carrier, rival):
    other = ClientFactory(agency=agency, dot="2222222")
    cases = [
        ([], []),
        (["1234567"], [carrier]),
        (["1234567", "1234567"], [carrier]),
        (["7654321", "0000000", "2222222"], [rival, other]),
        (["2222222", "1234567", "7654321"], [carrier, rival, other]),
    ]
    for dots, expected in cases:
        assert list(Client.objects.filter(dot__in_list=dots).order_by("id")) == expected
    # A foreign key's column too, and a value of None is never equal to anything.
    ids = [carrier.id, None, other.id]
    assert list(Client.objects.filter(agency_id__in_list=[agency.id]).order_by("id")) == [
        carrier,
        other,
    ]
    assert list(Client.objects.filter(pk__in_list=ids).order_by("id")) == [carrier, other]


def test_a_list_longer_than_sqlite_takes_as_parameters_is_one_parameter(
    agency, carrier, rival, monkeypatch
):
    # A client's whole fleet (a status watch, the calendar) may pass SQLite's limit on a
    # statement's parameters: past LONG_LIST values, the list is sent as one parameter.
    other = ClientFactory(agency=agency, dot="2222222")
    monkeypatch.setattr(lookups, "LONG_LIST", 2)
    dots = ["2222222", "1234567", "0000000", "1234567"]
    ids = [other.id, carrier.id, 0, None, carrier.id]
    with CaptureQueriesContext(connection) as seen:
        assert list(Client.objects.filter(dot__in_list=dots).order_by("id")) == [carrier, other]
        assert list(Client.objects.filter(pk__in_list=ids).order_by("id")) == [carrier, other]
        assert not Client.objects.filter(pk__in_list=[0, -1, 10**6]).exists()
    if connection.vendor == "sqlite":
        assert all(query["sql"].count("json_each") == 1 for query in seen.captured_queries)


def test_array_values_of_every_length_answer_for_themselves(agency, carrier, compiled):
    others = [ClientFactory(agency=agency, dot=str(2_000_000 + n)) for n in range(6)]
    query = PreparedQuery(
        lambda dots: Client.objects.filter(dot__in_list=dots).order_by("id"), arrays=("dots",)
    )
    for size in (2, 3, 4, 2, 5, 7, 1, 0):
        found = [carrier, *others[: size - 1]] if size else []
        dots = [c.dot for c in reversed(found)]
        assert query.fetch(dots=dots) == sorted(found, key=lambda c: c.id)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="arrays are PostgreSQL's")
def test_on_postgresql_a_list_of_any_length_is_one_prepared_shape(api, agency, compiled):
    clients = [ClientFactory(agency=agency, dot=str(2_000_000 + n)) for n in range(9)]
    for client in clients:
        PolicyFactory(client=client)

    def ask(size):
        dots = "&".join(f"dots={c.dot}" for c in clients[:size])
        body = api.get(f"/v1/coverages/clients?{dots}").json()
        assert [r["client"]["id"] for r in body["results"]] == [c.id for c in clients[:size]]
        assert all(r["status"] == "ACTIVE" for r in body["results"])

    ask(2), ask(3)  # the shape "more than one" seen, then prepared
    compiled.clear()
    for size in (4, 9, 5):
        ask(size)
    assert _verification_compiles(compiled) == []


def test_rows_sent_ahead_are_the_rows_fetched_for_every_call(agency, carrier, rival):
    # `sent`: the statement goes on entering, its rows are read later; on PostgreSQL a prepared
    # values_list() waits in psycopg's pipeline meanwhile. The same rows as `fetch`, first
    # sighting of a shape (fetched on entering), prepared shapes, models and no row at all.
    rows = PreparedQuery(
        lambda dots: (
            Client.objects.filter(dot__in_list=dots).order_by("id").values_list("id", "dot")
        ),
        arrays=("dots",),
    )
    models = PreparedQuery(lambda dots: Client.objects.filter(dot__in=dots).order_by("id"))
    calls = [["1234567"], ["7654321", "1234567"], ["0000000", "1111111"]]
    for _ in range(3):
        for dots in calls:
            for query in (rows, models):
                with query.sent(dots=dots) as read:
                    got = read()
                assert got == query.fetch(dots=dots)
                assert not _in_pipeline()
    assert [r for r in rows.templates.values() if hasattr(r, "sql")]
    expected = [(carrier.id, "1234567"), (rival.id, "7654321")]
    with rows.sent(dots=["7654321", "1234567"]) as read:
        pipelined = _in_pipeline()
        assert read() == expected
    assert pipelined == (connection.vendor == "postgresql")


def _in_pipeline() -> bool:
    raw = connection.connection
    return connection.vendor == "postgresql" and raw.pgconn.pipeline_status != 0


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only")
@pytest.mark.django_db(transaction=True)
def test_rows_sent_ahead_whose_type_changed_underneath_are_asked_again(monkeypatch):
    # A deploy's migration, run from another connection, changes the type of a column a
    # prepared statement returns: PostgreSQL refuses the statement ("cached plan must not
    # change result type") when its rows are read. Outside a transaction the statement is
    # prepared afresh within the call; inside one the call fails, as `fetch` does.
    from django.db import transaction

    from apps.agencies.models import Agency
    from apps.core import prepared

    kept = Agency.objects.create(name="Sent Ahead").pk
    rows = PreparedQuery(
        lambda names: Agency.objects.filter(name__in_list=names).values_list("id", "name"),
        arrays=("names",),
    )
    stale, original = [], prepared._stale_statement
    monkeypatch.setattr(
        prepared,
        "_stale_statement",
        lambda connection, exc: stale.append(exc) or original(connection, exc),
    )

    def ask():
        with rows.sent(names=["Sent Ahead", "Nobody"]) as read:
            return read()

    other = connection.get_new_connection(connection.get_connection_params())
    other.autocommit = True
    try:
        assert ask() == ask() == [(kept, "Sent Ahead")]  # the second prepared on the server
        other.execute("ALTER TABLE agencies_agency ALTER COLUMN name TYPE text")
        assert ask() == ask() == [(kept, "Sent Ahead")]
        assert len(stale) == 1
        other.execute("ALTER TABLE agencies_agency ALTER COLUMN name TYPE varchar(200)")
        with pytest.raises(DatabaseError), transaction.atomic():
            ask()
        assert len(stale) == 2
        assert ask() == [(kept, "Sent Ahead")]
    finally:
        other.execute("ALTER TABLE agencies_agency ALTER COLUMN name TYPE varchar(200)")
        other.close()


@pytest.mark.parametrize("prepared", [True, False])
def test_many_dots_read_their_limits_ahead_and_answer_each_call(
    api, agency, carrier, covered, settings, prepared
):
    # 200 DOTs read the limits of their policies by a statement of their own, sent before the
    # clients' rows become records: every call gives each policy its own limits, in order;
    # without prepared statements (a pooler in transaction mode) too.
    settings.DATABASE_PREPARED_STATEMENTS = prepared
    policy, _unit = covered
    PolicyLimit.objects.create(policy=policy, name="Medical Payments", amount=5_000, position=2)
    other = ClientFactory(agency=agency, dot="2222222")
    cargo = PolicyFactory(client=other, policy_number="MTC-1")
    PolicyLimit.objects.create(policy=cargo, name="Cargo", amount=100_000)
    bare = ClientFactory(agency=agency, dot="3333333")
    PolicyFactory(client=bare, policy_number="AL-NO-LIMITS")
    for _ in range(3):  # first sighting of the shape, then prepared
        results = api.get(
            "/v1/coverages/clients?dots=1234567&dots=2222222&dots=3333333&dots=4444444"
        ).json()["results"]
        limits = [
            [[(x["name"], x["amount"]) for x in c["limits"]] for c in r["coverages"]]
            for r in results
        ]
        assert limits == [
            [[("Combined Single Limit", "1000000.00"), ("Medical Payments", "5000.00")]],
            [[("Cargo", "100000.00")]],
            [[]],
            [],
        ]
    assert not _in_pipeline()


def test_rows_sent_ahead_leave_the_connection_clean_on_every_way_out(agency):
    # The block fails before reading the rows, or the rows fail (on PostgreSQL a division by
    # zero, at execution): the error is the caller's, and the connection leaves pipeline mode
    # with nothing pending, ready for the next statement. The rows are read once.
    from django.db import transaction
    from django.db.models import ExpressionWrapper, IntegerField, Value

    from apps.agencies.models import Agency

    names = PreparedQuery(
        lambda names: Agency.objects.filter(name__in_list=names).values_list("id", flat=True),
        arrays=("names",),
    )
    broken = PreparedQuery(
        lambda names: (
            Agency.objects.filter(name__in_list=names)
            .annotate(z=ExpressionWrapper(Value(1) / Value(0), output_field=IntegerField()))
            .values_list("id", "z")
        ),
        arrays=("names",),
    )
    asked = ["Demo Agency", "Nobody"]
    for _ in range(2):  # first sighting of each shape, then prepared
        names.fetch(names=asked)
        if connection.vendor != "postgresql":
            broken.fetch(names=asked)
    with pytest.raises(ZeroDivisionError), names.sent(names=asked) as read:
        1 / 0  # noqa: B018
    assert not _in_pipeline() and Agency.objects.count() == 1
    if connection.vendor == "postgresql":
        for _ in range(3):
            with (
                pytest.raises(DatabaseError),
                transaction.atomic(),
                broken.sent(names=asked) as read,
            ):
                read()  # a savepoint's: the test runs in a transaction the error aborts
            assert not _in_pipeline() and Agency.objects.count() == 1
    with names.sent(names=asked) as read:
        assert read() == [agency.id]
        with pytest.raises(RuntimeError):
            read()
    assert not _in_pipeline() and names.fetch(names=asked) == [agency.id]
