"""Profile the hot path of an authenticated request in-process (cProfile), for issue 18.

Run with the benchmark's environment (bench/run.sh sets it; BENCH_PROFILE=1 runs this too):
    python bench/profile_caller.py [path] [--requests N]
It logs in as bench-large, warms up, then profiles N requests through Django's WSGI handler
(no network, no gunicorn) and prints the functions with the most cumulative time, and the SQL
queries and cache round trips of one request.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path", nargs="?", default="/v1/me")
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1", HTTP_APIKEY="bench-api-key")
    token = client.post(
        "/v1/auth/token",
        {"username": "bench-large", "password": "bench-password"},
        content_type="application/json",
    ).json()["access"]
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    for _ in range(20):
        assert client.get(args.path, **headers).status_code == 200

    calls = []
    backend = cache._cache if hasattr(cache, "_cache") else None
    client_of = getattr(backend, "get_client", None)
    if client_of is not None:
        redis = client_of(write=True)
        original = redis.execute_command

        def counted(*a, **kw):
            calls.append(a[0])
            return original(*a, **kw)

        redis.execute_command = counted
        backend.get_client = lambda *a, **kw: redis
    with CaptureQueriesContext(connection) as queries:
        client.get(args.path, **headers)
    print(f"{args.path}: {len(queries)} SQL queries, cache commands: {calls or 'not counted'}")
    for query in queries:
        print("  SQL:", query["sql"][:160])

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(args.requests):
        client.get(args.path, **headers)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(args.top)
    total = stats.total_tt
    print(
        f"{args.requests} requests in {total:.2f} s of profiled time: "
        f"{total / args.requests * 1000:.2f} ms each (profiler overhead included)"
    )
    print(out.getvalue())


if __name__ == "__main__":
    main()
