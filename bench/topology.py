"""Gunicorn topologies side by side: issue 18's targets 1 and 5, interleaved, with wrk.

Run against gunicorns already serving the bench dataset (start the bench's PostgreSQL and Redis
and seed as bench/run.sh does, then one gunicorn per topology on its own port), for example:

    WEB_CONCURRENCY=3 GUNICORN_BIND=127.0.0.1:8766 .venv/bin/gunicorn -c config/gunicorn.py \
        config.wsgi &
    .venv/bin/python bench/topology.py --rounds 4 5x2=8765 3x2=8766

Each round runs, for every topology in turn and three times: `/healthz`, `/v1/me`, one DOT and
one VIN at 8 connections, then one DOT at 64 (`--only-dot`: one DOT at 8 and 64 only). Every
figure is the median of its runs; the 64 / 8 pairs are listed as measured, run by run.

`--pin` runs each round twice per topology: as it is, and with every gunicorn, PostgreSQL and
Redis process on CPU 0 and wrk alone on CPU 1 (`taskset`), the nearest this two-core box comes
to a load generator on another host (docs/performance.md, seventeenth stop).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _client import Api
from wrk_suite import BIG_DOT, LUA, ONE_DOT

SERVERS = "pgrep -f 'gunicorn -c config/gunicorn.py'; pgrep -u postgres; pgrep redis-server"


def pin_servers(cpus: str) -> None:
    pids = subprocess.run(SERVERS, shell=True, capture_output=True, text=True).stdout.split()
    for pid in pids:  # -a: every thread of the process
        subprocess.run(["taskset", "-a", "-p", "-c", cpus, pid], capture_output=True, check=False)


def wrk(url: str, script: str, connections: int, seconds: int, cpu: str | None) -> dict:
    command = ["wrk", f"-t{min(2, connections)}", f"-c{connections}", f"-d{seconds}s"]
    command += ["--timeout", "30s", "-s", script, url]
    if cpu is not None:
        command = ["taskset", "-c", cpu, *command]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("WRKJSON "))
    result = json.loads(line[len("WRKJSON ") :])
    if result["errors"]:
        raise SystemExit(f"{url} @{connections}: {result['errors']} errors")
    result["rps"] = result["requests"] / (result["us"] / 1e6)
    if connections > 8:  # let the requests wrk left queued drain (bench/wrk_suite.py)
        time.sleep(min(30.0, result["p99"] / 1e6))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("topologies", nargs="+", help="name=port, one per running gunicorn")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=2, help="per wrk run")
    parser.add_argument("--only-dot", action="store_true")
    parser.add_argument("--pin", action="store_true")
    args = parser.parse_args()
    ports = dict(item.split("=", 1) for item in args.topologies)

    api = Api(f"http://127.0.0.1:{next(iter(ports.values()))}", "bench-api-key")
    api.login("bench-large", "bench-password")
    _status, body = api.call("GET", f"/v1/clients?dot={BIG_DOT}")
    big = json.loads(body)["results"][0]["id"]
    _status, body = api.call("GET", f"/v1/vehicles?clientId={big}&limit=1")
    vin = json.loads(body)["results"][0]["vin"]
    paths = {"healthz": "/healthz", "/v1/me": "/v1/me"}
    paths |= {"one DOT": f"/v1/coverages/clients?dot={ONE_DOT}"}
    paths |= {"one VIN": f"/v1/coverages/vehicles?vin={vin}"}
    at_8 = ["one DOT"] if args.only_dot else list(paths)
    modes = {"": ("0-1", None)} | ({" pinned": ("0", "1")} if args.pin else {})

    samples: dict[tuple[str, str, int], list[dict]] = {}
    with tempfile.TemporaryDirectory() as directory:
        script = str(Path(directory) / "case.lua")
        Path(script).write_text(
            LUA.format(
                method="GET",
                key="bench-api-key",
                auth=f'wrk.headers["Authorization"] = "{api.headers["Authorization"]}"',
                body="",
            )
        )
        try:
            for number in range(args.rounds):
                for name, port in ports.items():
                    for mode, (servers, cpu) in modes.items():
                        pin_servers(servers)
                        for _ in range(3):
                            for case in at_8:
                                url = f"http://127.0.0.1:{port}{paths[case]}"
                                result = wrk(url, script, 8, args.seconds, cpu)
                                samples.setdefault((name + mode, case, 8), []).append(result)
                            url = f"http://127.0.0.1:{port}{paths['one DOT']}"
                            result = wrk(url, script, 64, args.seconds, cpu)
                            samples.setdefault((name + mode, "one DOT", 64), []).append(result)
                print(f"round {number + 1} of {args.rounds} done", flush=True)
        finally:
            pin_servers("0-1")

    for name in dict.fromkeys(key[0] for key in samples):

        def median(case: str, connections: int = 8, key: str = "rps", name: str = name) -> float:
            return statistics.median(r[key] for r in samples[(name, case, connections)])

        parts = []
        if not args.only_dot:
            floor = median("healthz")
            parts.append(f"healthz {floor:.0f}")
            for case in ("/v1/me", "one DOT", "one VIN"):
                parts.append(f"{case} {median(case):.0f} ({median(case) / floor:.3f})")
        dot_64 = median("one DOT", 64)
        parts.append(f"one DOT @64 {dot_64:.0f}, 64 / 8 {dot_64 / median('one DOT'):.3f}")
        parts.append(
            f"p99 / p50 @64 {median('one DOT', 64, 'p99') / median('one DOT', 64, 'p50'):.2f}"
        )
        print(f"{name}: " + ", ".join(parts))
        pairs = zip(samples[(name, "one DOT", 64)], samples[(name, "one DOT", 8)], strict=True)
        print("  64 / 8 run by run:", " ".join(f"{a['rps'] / b['rps']:.2f}" for a, b in pairs))


if __name__ == "__main__":
    main()
