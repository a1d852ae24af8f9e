"""CPU cost of requests through Django's WSGI handler, in-process (issue 18).

Measures what a loaded machine does not distort much: the process CPU time per request
(time.process_time, so time spent waiting for the CPU, PostgreSQL or Redis is not counted),
the CPU time of the PostgreSQL backend serving it (read from /proc when the server is on this
machine, as the bench's is), the SQL queries and the response size; optionally a cProfile of
one path. Run with the
benchmark's environment (bench/run.sh's variables, the bench dataset seeded):

    python bench/profile_hot.py /healthz /v1/me "/v1/coverages/clients?dot=10000500" \
        [--requests N] [--profile PATH] [--top 30]

A path may be "POST /path @file.json" for a JSON body. Every path is checked for 200 first.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", default=None, help="one of the paths to cProfile")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--save", default=None, help="write the profile's pstats to this file")
    parser.add_argument("--user", default="bench-large")
    parser.add_argument("--dump", default=None, help="a directory to write each answer to")
    parser.add_argument(
        "--gunicorn-gc",
        action="store_true",
        help="collect garbage as a gunicorn worker does (config/gunicorn.py's post_worker_init:"
        " the loaded app frozen, the youngest generation collected every 10,000 allocations);"
        " by default Python's own thresholds, which cost a 200-DOT request ~2.5 ms more",
    )
    args = parser.parse_args()

    import django

    django.setup()
    if args.gunicorn_gc:
        from config.gunicorn import post_worker_init

        post_worker_init(None)
    from django.core.handlers.wsgi import WSGIHandler
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    app = WSGIHandler()

    def database_cpu() -> float | None:
        """Seconds of CPU the PostgreSQL backend of this process's connection has used."""
        if connection.vendor != "postgresql":
            return None
        connection.ensure_connection()
        try:
            stat = Path(f"/proc/{connection.connection.info.backend_pid}/stat").read_text()
        except OSError:  # the server is elsewhere
            return None
        fields = stat.rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def call(method: str, path: str, body: bytes = b"", token: str | None = None):
        from io import BytesIO

        route, _, query = path.partition("?")
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": route,
            "QUERY_STRING": query,
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "HTTP_HOST": "127.0.0.1",
            "REMOTE_ADDR": "127.0.0.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_APIKEY": "bench-api-key",
            "wsgi.input": BytesIO(body),
            "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            "wsgi.version": (1, 0),
        }
        if body:
            environ["CONTENT_TYPE"] = "application/json"
            environ["CONTENT_LENGTH"] = str(len(body))
        if token:
            environ["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        status = []
        chunks = app(environ, lambda s, h, *a: status.append(s))
        data = b"".join(chunks)
        if hasattr(chunks, "close"):
            chunks.close()
        return int(status[0].split()[0]), data

    import json

    code, body = call(
        "POST",
        "/v1/auth/token",
        json.dumps({"username": args.user, "password": "bench-password"}).encode(),
    )
    assert code == 200, body[:300]
    token = json.loads(body)["access"]

    cases = []
    for spec in args.paths:
        method, path, payload = "GET", spec, b""
        if " " in spec:
            method, path, *rest = spec.split(" ")
            if rest and rest[0].startswith("@"):
                payload = Path(rest[0][1:]).read_bytes()
        cases.append((spec, method, path, payload))

    for spec, method, path, payload in cases:
        for _ in range(5):
            code, body = call(method, path, payload, token)
            assert code == 200, (spec, code, body[:300])

    costs: dict[str, list[float]] = {spec: [] for spec, *_ in cases}
    database: dict[str, list[float]] = {spec: [] for spec, *_ in cases}
    for _ in range(args.rounds):
        for spec, method, path, payload in cases:
            started, database_started = time.process_time(), database_cpu()
            for _ in range(args.requests):
                call(method, path, payload, token)
            costs[spec].append((time.process_time() - started) / args.requests * 1000)
            if database_started is not None:
                used = database_cpu() - database_started
                database[spec].append(used / args.requests * 1000)

    # Python function calls per request: deterministic, whatever the machine's load.
    calls: dict[str, int] = {}
    for spec, method, path, payload in cases:
        profiler = cProfile.Profile()
        profiler.enable()
        call(method, path, payload, token)
        profiler.disable()
        calls[spec] = pstats.Stats(profiler).total_calls

    print(f"{'request':<52}{'CPU ms':>8}{'PG ms':>7}{'calls':>9}{'SQL':>5}{'bytes':>9}")
    floor = None
    for spec, method, path, payload in cases:
        with CaptureQueriesContext(connection) as queries:
            code, body = call(method, path, payload, token)
        if args.dump:
            # The spec's start and a hash of all of it: specs that differ late (a long query
            # string's last parameters) must not overwrite each other's answer.
            digest = hashlib.sha1(spec.encode()).hexdigest()[:8]
            name = "".join(c if c.isalnum() else "_" for c in spec)[:60] + "_" + digest
            Path(args.dump, name).write_bytes(body)
        ms = statistics.median(costs[spec])
        floor = floor or ms
        pg = f"{statistics.median(database[spec]):>7.2f}" if database[spec] else f"{'-':>7}"
        print(
            f"{spec[:50]:<52}{ms:>8.2f}{pg}{calls[spec]:>9}{len(queries):>5}{len(body):>9}"
            f"   ({ms / floor:.2f}x the first)"
        )

    if args.profile:
        spec, method, path, payload = next(c for c in cases if c[0] == args.profile)
        # CPU time, not wall time: waiting for PostgreSQL, Redis or a busy CPU is not counted.
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        for _ in range(args.requests):
            call(method, path, payload, token)
        profiler.disable()
        if args.save:
            profiler.dump_stats(args.save)
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("cumulative").print_stats(args.top)
        stats.sort_stats("tottime").print_stats(args.top)
        print(out.getvalue())


if __name__ == "__main__":
    main()
