"""The targets of issue 18, measured from outside with wrk against gunicorn (run by `make bench`).

Every case is a short wrk run (a Lua script sets the apiKey and bearer headers, the method and
the body); the cases are interleaved round by round and each figure is the median over the
rounds. Throughput is measured at 8 connections (and one-DOT verification again at 64);
latencies at one connection, so they are the cost of a request, not of a queue. wrk counts
every non-2xx answer as an error; any error fails the run.

A throughput case runs `--draws` times a round, each time with fresh connections, and its
figure is the median of every run. wrk opens its connections in one burst and keep-alive keeps
each on the gunicorn worker that accepted it, so one run measures one split of the connections
over the workers. With gthread's own worker the split moved a run's throughput by up to a
quarter, or half when one worker took every connection (docs/performance.md, twelfth and
fourteenth stops); the project's worker spreads them (config/workers.py), and the median of
several splits is still the figure the code earns, not one draw's.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _client import Api

BIG_DOT, MEDIUM_DOT, FLEET_25_DOT = "90000001", "90000002", "10000002"
ONE_DOT = "10000500"
VEHICLE_SORTS = [
    "unit",
    "vin",
    "make",
    "owner",
    "garagingAddress",
    "statedValue",
    "status",
    "clientId",
    "modelYear",
    "licensePlate",
    "id",
    "createdAt",
    "updatedAt",
]
LUA = """
wrk.method = "{method}"
wrk.headers["apiKey"] = "{key}"
{auth}
{body}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRKJSON {{\\"requests\\": %d, \\"us\\": %d, \\"errors\\": %d, "
    .. "\\"p50\\": %d, \\"p99\\": %d}}\\n",
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
"""


class Case:
    def __init__(
        self, name, api, path, *, method="GET", body=None, connections=1, seconds=1.0, draws=1
    ):
        self.name, self.api, self.path = name, api, path
        self.method, self.body = method, body
        self.connections, self.seconds, self.draws = connections, seconds, draws
        self.samples: list[dict] = []

    def script(self, directory: str) -> str:
        auth = self.api.headers.get("Authorization")
        body = ""
        if self.body is not None:
            body = (
                'wrk.headers["Content-Type"] = "application/json"\n'
                f"wrk.body = [[{json.dumps(self.body)}]]"
            )
        text = LUA.format(
            method=self.method,
            key=self.api.headers["apiKey"],
            auth=f'wrk.headers["Authorization"] = "{auth}"' if auth else "",
            body=body,
        )
        path = Path(directory) / f"case-{abs(hash(self.name))}.lua"
        path.write_text(text)
        return str(path)

    def run(self, base: str, directory: str) -> None:
        for _ in range(self.draws):  # each wrk run opens its own connections
            self._run_once(base, directory)

    def _run_once(self, base: str, directory: str) -> None:
        threads = min(2, self.connections)
        out = subprocess.run(
            [
                "wrk",
                f"-t{threads}",
                f"-c{self.connections}",
                f"-d{max(1, round(self.seconds))}s",
                "--timeout",
                "30s",
                "-s",
                self.script(directory),
                base + self.path,
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        line = next(x for x in out.splitlines() if x.startswith("WRKJSON "))
        result = json.loads(line[len("WRKJSON ") :])
        if result["errors"]:
            raise SystemExit(f"{self.name}: {result['errors']} errors of {result['requests']}")
        if not result["requests"]:  # one request outlasted the run (a stall): run longer
            self.seconds *= 3
            return self._run_once(base, directory)
        result["rps"] = result["requests"] / (result["us"] / 1e6)
        self.samples.append(result)
        if self.connections > 8:
            # wrk leaves with up to `connections` requests queued in gunicorn, which still serves
            # them (about 50 one-DOT requests, 0.3-0.5 s of CPU, after a 64-connection run): let
            # them finish before the next case is timed. They drain within about the longest
            # wait of this run.
            time.sleep(min(30.0, result["p99"] / 1e6))

    def median(self, key: str) -> float:
        return statistics.median(sample[key] for sample in self.samples)

    @property
    def ms(self) -> float:
        return self.median("p50") / 1000


def login(base: str, user: str) -> Api:
    api = Api(base, "bench-api-key")
    api.login(user, "bench-password")
    return api


def get_json(api: Api, path: str) -> dict:
    status, body = api.call("GET", path)
    assert status == 200, (path, status, body[:300])
    return json.loads(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", default="http://127.0.0.1:8765")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.0, help="per latency case and round")
    parser.add_argument(
        "--load-seconds", type=float, default=2.0, help="per run of a throughput case"
    )
    parser.add_argument("--draws", type=int, default=3, help="runs of each throughput case a round")
    args = parser.parse_args()

    large, small = login(args.base, "bench-large"), login(args.base, "bench-small")
    anonymous = Api(args.base, "bench-api-key")
    big = get_json(large, f"/v1/clients?dot={BIG_DOT}")["results"][0]
    fleet_25 = get_json(large, f"/v1/clients?dot={FLEET_25_DOT}")["results"][0]
    fleet_25_units = get_json(large, f"/v1/vehicles?clientId={fleet_25['id']}&limit=1")["count"]
    vins = []
    for page in range(1, 6):
        rows = get_json(large, f"/v1/vehicles?clientId={big['id']}&limit=200&page={page}")
        vins += [v["vin"] for v in rows["results"]]
    dots_200 = "&".join(f"dots={10_000_000 + n}" for n in range(3, 203))
    print(
        f"dataset: big fleet client {big['id']}, {fleet_25_units}-unit fleet client "
        f"{fleet_25['id']}; {get_json(large, '/v1/vehicles?limit=1')['count']} live units "
        f"in the big agency"
    )

    load = dict(seconds=args.load_seconds, draws=args.draws)
    cases: dict[str, Case] = {}

    def add(name, api, path, **kw):
        kw.setdefault("seconds", args.seconds)
        cases[name] = Case(name, api, path, **kw)

    # 1. The cost of being a caller: throughput at 8 connections.
    add("healthz @8", anonymous, "/healthz", connections=8, **load)
    add("/v1/me @8", large, "/v1/me", connections=8, **load)
    add("one DOT @8", large, f"/v1/coverages/clients?dot={ONE_DOT}", connections=8, **load)
    add("one VIN @8", large, f"/v1/coverages/vehicles?vin={vins[0]}", connections=8, **load)
    # 5. One DOT at 64 connections.
    add("one DOT @64", large, f"/v1/coverages/clients?dot={ONE_DOT}", connections=64, **load)
    # 2. Certificates.
    for fmt in ("json", "pdf"):
        add(
            f"certificate {fmt} 250,000",
            large,
            f"/v1/certificates/clients?dot={BIG_DOT}&format={fmt}",
        )
        add(
            f"certificate {fmt} 25",
            large,
            f"/v1/certificates/clients?dot={FLEET_25_DOT}&format={fmt}",
        )
    # 3. The agency-wide vehicle list, every sortable field, page 1 and the last page.
    add("clients p1", large, "/v1/clients?limit=25")
    for sort in VEHICLE_SORTS:
        pages = get_json(large, f"/v1/vehicles?limit=25&sort={sort}")["totalPages"]
        add(f"vehicles p1 sort={sort}", large, f"/v1/vehicles?limit=25&sort={sort}")
        add(f"vehicles last sort={sort}", large, f"/v1/vehicles?limit=25&sort={sort}&page={pages}")
    # 4. Many DOTs and a batch against one.
    add("one DOT", large, f"/v1/coverages/clients?dot={ONE_DOT}")
    add("200 DOTs", large, f"/v1/coverages/clients?{dots_200}")
    add("one VIN", large, f"/v1/coverages/vehicles?vin={vins[0]}")
    add(
        "batch 1,000",
        large,
        "/v1/coverages/vehicles/batch",
        method="POST",
        body={"vins": vins},
        seconds=max(2.0, args.seconds),
    )
    # 6. Every list and detail at the big agency against the small one.
    endpoints = []
    for resource in ("clients", "policies", "vehicles", "drivers", "requirement-profiles"):
        endpoints.append((f"GET /v1/{resource}", f"/v1/{resource}?limit=25"))
        endpoints.append((f"GET /v1/{resource}/{{id}}", f"/v1/{resource}/{{{resource}}}"))
    endpoints.append(("GET /v1/policies/{id}/vehicles", "/v1/policies/{policies}/vehicles"))
    endpoints.append(("GET /v1/documents/clients", "/v1/documents/clients?clientId={clients}"))
    endpoints.append(("GET /v1/coverages/clients (DOT)", "/v1/coverages/clients?dot={dot}"))
    per_agency = {}
    for label, api in (("big", large), ("small", small)):
        ids = {
            resource: get_json(api, f"/v1/{resource}?limit=1")["results"][0]["id"]
            for resource in ("clients", "policies", "vehicles", "drivers", "requirement-profiles")
        }
        ids["dot"] = get_json(api, f"/v1/clients/{ids['clients']}")["dot"]
        for name, template in endpoints:
            add(f"{name} [{label}]", api, template.format(**ids))
        per_agency[label] = ids

    with tempfile.TemporaryDirectory() as directory:
        for case in cases.values():  # warm-up: caches, connection pools, plans, counts
            took = []
            for _ in range(3):
                started = time.perf_counter()
                status, body = case.api.call(case.method, case.path, case.body)
                took.append(time.perf_counter() - started)
                assert status == 200, (case.name, status, body[:300])
            # At least ten requests per run, whatever one costs.
            case.seconds = max(case.seconds, math.ceil(10 * statistics.median(took)))
        for number in range(args.rounds):
            for case in cases.values():
                case.run(args.base, directory)
            print(f"round {number + 1} of {args.rounds} done", flush=True)

    print(f"\n{'case':<46}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}")
    for case in cases.values():
        print(
            f"  {case.name:<44}{case.median('rps'):>9.0f}{case.ms:>9.2f}"
            f"{case.median('p99') / 1000:>9.2f}"
        )

    results: list[tuple[str, float, float, str]] = []

    def check(name: str, value: float, target: float, op: str = "<=") -> None:
        results.append((name, value, target, op))

    c = cases
    floor = c["healthz @8"].median("rps")
    check("1. /v1/me throughput / healthz", c["/v1/me @8"].median("rps") / floor, 0.5, ">=")
    check("1. one-DOT throughput / healthz", c["one DOT @8"].median("rps") / floor, 0.35, ">=")
    check("1. one-VIN throughput / healthz", c["one VIN @8"].median("rps") / floor, 0.35, ">=")
    for fmt in ("json", "pdf"):
        check(
            f"2. certificate {fmt}: 250,000 / 25 units",
            c[f"certificate {fmt} 250,000"].ms / c[f"certificate {fmt} 25"].ms,
            1.5,
        )
    clients_p1 = c["clients p1"].ms
    for sort in VEHICLE_SORTS:
        for where in ("p1", "last"):
            check(
                f"3. vehicles {where} sort={sort} / clients p1",
                c[f"vehicles {where} sort={sort}"].ms / clients_p1,
                1.5,
            )
    check("4. 200 DOTs / one DOT", c["200 DOTs"].ms / c["one DOT"].ms, 4)
    check("4. batch 1,000 / one VIN", c["batch 1,000"].ms / c["one VIN"].ms, 15)
    at64 = c["one DOT @64"]
    check("5. one DOT @64: p99 / p50", at64.median("p99") / at64.median("p50"), 10)
    check(
        "5. one DOT: throughput @64 / @8",
        at64.median("rps") / c["one DOT @8"].median("rps"),
        1.0,
        ">=",
    )
    for name, _template in endpoints:
        check(
            f"6. {name}: big / small agency",
            c[f"{name} [big]"].ms / c[f"{name} [small]"].ms,
            1.5,
        )

    print(f"\n{'target':<58}{'value':>8}{'target':>10}  verdict")
    missed = 0
    for name, value, target, op in results:
        met = value >= target if op == ">=" else value <= target
        missed += not met
        print(f"  {name:<56}{value:>8.2f}{op:>4}{target:>6.2f}  {'met' if met else 'NOT met'}")
    print(f"\n{len(results) - missed} of {len(results)} targets met; no request failed.")


if __name__ == "__main__":
    main()
