"""The benchmark suite of issue 9, run by `make bench` against gunicorn on PostgreSQL.

Everything is measured in one run, interleaved, and reported as ratios with their targets.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _client import Api, interleaved

MIB = 1024 * 1024
BIG_DOT, MEDIUM_DOT = "90000001", "90000002"
RESULTS: list[tuple[str, float, float, str]] = []  # name, value, target, comparison


def check(name: str, value: float, target: float, higher_is_better: bool = False) -> None:
    RESULTS.append((name, value, target, ">=" if higher_is_better else "<="))


def login(base: str, user: str) -> Api:
    api = Api(base, "bench-api-key")
    api.login(user, "bench-password")
    return api


def get_json(api: Api, path: str) -> dict:
    status, body = api.call("GET", path)
    assert status == 200, (path, status, body[:300])
    return json.loads(body)


def timed_ok(api: Api, method: str, path: str, body=None, **headers):
    def run():
        status, content = api.call(method, path, body, headers=headers)
        assert status in (200, 201), (path[:120], status, content[:300])

    return run


# --- throughput ---------------------------------------------------------------------------


def throughput(api: Api, path: str, seconds: float, concurrency: int) -> float:
    stop = time.monotonic() + seconds
    counts = [0] * concurrency

    def worker(index):
        while time.monotonic() < stop:
            status, _ = api.call("GET", path)
            assert status == 200
            counts[index] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / seconds


# --- uploads and memory ------------------------------------------------------------------------


def multipart_file(size: int, client_id: int, directory: str) -> tuple[str, str]:
    boundary = uuid.uuid4().hex
    path = os.path.join(directory, f"upload-{size}.body")
    with open(path, "wb") as body:
        body.write(
            f'--{boundary}\r\nContent-Disposition: form-data; name="clientId"\r\n\r\n'
            f"{client_id}\r\n".encode()
        )
        body.write(
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="bench.bin"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode()
        )
        chunk = os.urandom(MIB)
        written = 0
        while written < size:
            part = chunk[: min(MIB, size - written)]
            body.write(part)
            written += len(part)
        body.write(f"\r\n--{boundary}--\r\n".encode())
    return path, f"multipart/form-data; boundary={boundary}"


def upload(api: Api, body_path: str, content_type: str) -> None:
    def chunks():
        with open(body_path, "rb") as body:
            while block := body.read(MIB):
                yield block

    response = api.request(
        "POST",
        "/v1/documents/clients",
        content=chunks(),
        headers={"Content-Type": content_type, "Content-Length": str(os.path.getsize(body_path))},
        timeout=120,
    )
    assert response.status_code == 201, response.content[:300]


def worker_pids(master: int) -> list[int]:
    children = Path(f"/proc/{master}/task/{master}/children")
    return [int(pid) for pid in children.read_text().split()] if children.exists() else []


def status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def peak_growth_mib(master: int, action) -> float:
    """How much the busiest worker's peak RSS rose above its RSS while `action` ran."""
    pids = worker_pids(master)
    before = {}
    for pid in pids:
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # reset the peak (VmHWM)
        before[pid] = status_kib(pid, "VmRSS")
    action()
    return max((status_kib(pid, "VmHWM") - before[pid]) / 1024 for pid in pids)


# --- query counts --------------------------------------------------------------------------------


def queries(api: Api, method: str, path: str, body=None) -> int:
    """The fewest queries of three calls (a worker may still have to look up the API key)."""
    return min(_queries(api, method, path, body) for _ in range(3))


def _queries(api: Api, method: str, path: str, body=None) -> int:
    response = api.request(method, path, body, timeout=120)
    assert response.status_code in (200, 201), (path, response.status_code)
    return int(response.headers.get("X-Query-Count", "-1"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", default="http://127.0.0.1:8765")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--master-pid", type=int, default=0)
    args = parser.parse_args()

    large, small = login(args.base, "bench-large"), login(args.base, "bench-small")
    big = get_json(large, f"/v1/clients?dot={BIG_DOT}")["results"][0]
    medium = get_json(large, f"/v1/clients?dot={MEDIUM_DOT}")["results"][0]
    small_client = get_json(small, "/v1/clients?limit=1")["results"][0]
    large_dot = "10000500"
    big_pages = get_json(large, f"/v1/vehicles?clientId={big['id']}&limit=25")["totalPages"]
    vins = []
    for page in range(1, 6):
        rows = get_json(large, f"/v1/vehicles?clientId={big['id']}&limit=200&page={page}")
        vins += [v["vin"] for v in rows["results"]]
    one_vin = vins[0]
    dots = [str(10_000_000 + n) for n in range(2, 502)]
    dots_query = "&".join(f"dots={d}" for d in dots)
    print(
        f"dataset: big fleet client {big['id']} ({big_pages} pages of 25), medium client "
        f"{medium['id']}, small-agency client {small_client['id']}"
    )

    # Throughput: authenticated minimal endpoint vs single-DOT verification, alternated.
    rates = {"me": [], "dot": []}
    for _ in range(3):
        rates["me"].append(throughput(large, "/v1/me", args.seconds, args.concurrency))
        rates["dot"].append(
            throughput(
                large, f"/v1/coverages/clients?dot={large_dot}", args.seconds, args.concurrency
            )
        )
    me_rate, dot_rate = statistics.median(rates["me"]), statistics.median(rates["dot"])

    # Latencies, interleaved.
    medians = interleaved(
        {
            "healthz": timed_ok(large, "GET", "/healthz"),
            "me": timed_ok(large, "GET", "/v1/me"),
            "dot 1 (20,000 clients)": timed_ok(
                large, "GET", f"/v1/coverages/clients?dot={large_dot}"
            ),
            "dot 1 (200 clients)": timed_ok(
                small, "GET", f"/v1/coverages/clients?dot={small_client['dot']}"
            ),
            "dots 500": timed_ok(large, "GET", f"/v1/coverages/clients?{dots_query}"),
            "vin 1": timed_ok(large, "GET", f"/v1/coverages/vehicles?vin={one_vin}"),
            "batch 1,000": timed_ok(large, "POST", "/v1/coverages/vehicles/batch", {"vins": vins}),
            "vehicles p1 (250,000)": timed_ok(
                large, "GET", f"/v1/vehicles?clientId={big['id']}&limit=25"
            ),
            "vehicles last (250,000)": timed_ok(
                large, "GET", f"/v1/vehicles?clientId={big['id']}&limit=25&page={big_pages}"
            ),
            "vehicles p1 (2,500)": timed_ok(
                large, "GET", f"/v1/vehicles?clientId={medium['id']}&limit=25"
            ),
            "certificate JSON": timed_ok(large, "GET", f"/v1/certificates/clients?dot={large_dot}"),
            "certificate PDF": timed_ok(
                large, "GET", f"/v1/certificates/clients?dot={large_dot}&format=pdf"
            ),
        },
        args.rounds,
    )

    with tempfile.TemporaryDirectory() as tmp:
        small_body = multipart_file(MIB, small_client["id"], tmp)
        large_body = multipart_file(25 * MIB, small_client["id"], tmp)
        upload_times = interleaved(
            {
                "upload 1 MiB": lambda: upload(small, *small_body),
                "upload 25 MiB": lambda: upload(small, *large_body),
            },
            max(5, args.rounds // 5),
            warmup=1,
        )
        growth = {}
        if args.master_pid:
            growth["1 MiB"] = peak_growth_mib(args.master_pid, lambda: upload(small, *small_body))
            growth["25 MiB"] = peak_growth_mib(args.master_pid, lambda: upload(small, *large_body))

    print(f"\n{'latency (median of ' + str(args.rounds) + ' interleaved rounds)':<46}{'ms':>9}")
    for name, value in {**medians, **upload_times}.items():
        print(f"  {name:<44}{value * 1000:>9.2f}")

    check("DOT throughput / authenticated minimal", dot_rate / me_rate, 0.5, True)
    check("500 DOTs / 1 DOT", medians["dots 500"] / medians["dot 1 (20,000 clients)"], 25)
    check("batch 1,000 / 1 VIN", medians["batch 1,000"] / medians["vin 1"], 40)
    check(
        "vehicles last page / page 1 (250,000 units)",
        medians["vehicles last (250,000)"] / medians["vehicles p1 (250,000)"],
        3,
    )
    check(
        "vehicles page 1: 250,000 / 2,500 units",
        medians["vehicles p1 (250,000)"] / medians["vehicles p1 (2,500)"],
        1.5,
    )
    check(
        "verification: 20,000 / 200 clients",
        medians["dot 1 (20,000 clients)"] / medians["dot 1 (200 clients)"],
        1.2,
    )
    check("certificate PDF / JSON", medians["certificate PDF"] / medians["certificate JSON"], 4)
    check("upload 25 MiB / 1 MiB", upload_times["upload 25 MiB"] / upload_times["upload 1 MiB"], 30)
    if growth:
        check("upload 25 MiB: worker peak memory growth (MiB)", growth["25 MiB"], 10)

    print(
        f"\nthroughput ({args.concurrency} concurrent, {args.seconds:.0f} s x 3 each): "
        f"/v1/me {me_rate:.0f} req/s, 1-DOT verification {dot_rate:.0f} req/s"
    )
    if growth:
        print(
            f"worker peak RSS growth: 1 MiB upload {growth['1 MiB']:.1f} MiB, "
            f"25 MiB upload {growth['25 MiB']:.1f} MiB"
        )

    print(f"\n{'target':<50}{'value':>9}{'target':>10}  verdict")
    for name, value, target, op in RESULTS:
        met = value >= target if op == ">=" else value <= target
        print(f"  {name:<48}{value:>9.2f}{op:>4}{target:>6.1f}  {'met' if met else 'NOT met'}")

    big_auto = get_json(large, f"/v1/policies?clientId={big['id']}&coverageType=AL")["results"]
    big_auto = big_auto[0]["id"]
    print(f"\n{'SQL queries per request':<58}{'small':>7}{'large':>7}")
    counts = [
        (
            "GET /v1/coverages/clients (1 vs 500 DOTs)",
            queries(large, "GET", f"/v1/coverages/clients?dot={large_dot}"),
            queries(large, "GET", f"/v1/coverages/clients?{dots_query}"),
        ),
        (
            "GET /v1/coverages/vehicles (VIN of a small vs the big fleet)",
            queries(
                small,
                "GET",
                "/v1/coverages/vehicles?vin="
                + get_json(small, f"/v1/vehicles?clientId={small_client['id']}&limit=1")["results"][
                    0
                ]["vin"],
            ),
            queries(large, "GET", f"/v1/coverages/vehicles?vin={one_vin}"),
        ),
        (
            "POST /v1/coverages/vehicles/batch (1 vs 1,000)",
            queries(large, "POST", "/v1/coverages/vehicles/batch", {"vins": vins[:1]}),
            queries(large, "POST", "/v1/coverages/vehicles/batch", {"vins": vins}),
        ),
    ]
    for label, path in (
        ("GET /v1/clients (limit 5 vs 200)", "/v1/clients?limit={n}"),
        ("GET /v1/policies (limit 5 vs 200)", "/v1/policies?limit={n}"),
        ("GET /v1/vehicles (limit 5 vs 200)", "/v1/vehicles?limit={n}"),
        ("GET /v1/drivers (limit 5 vs 200)", "/v1/drivers?limit={n}"),
        (
            "GET /v1/policies/{id}/vehicles (limit 5 vs 200)",
            f"/v1/policies/{big_auto}/vehicles?limit={{n}}",
        ),
    ):
        counts.append(
            (
                label,
                queries(large, "GET", path.format(n=5)),
                queries(large, "GET", path.format(n=200)),
            )
        )
    counts.append(
        (
            "GET /v1/certificates/clients (2,500 vs 250,000 units)",
            queries(large, "GET", f"/v1/certificates/clients?dot={MEDIUM_DOT}"),
            queries(large, "GET", f"/v1/certificates/clients?dot={BIG_DOT}"),
        )
    )
    counts.append(
        (
            "GET /v1/vehicles/{id} (small vs big fleet unit)",
            queries(
                small,
                "GET",
                "/v1/vehicles/"
                + str(
                    get_json(small, f"/v1/vehicles?clientId={small_client['id']}&limit=1")[
                        "results"
                    ][0]["id"]
                ),
            ),
            queries(
                large,
                "GET",
                "/v1/vehicles/"
                + str(
                    get_json(large, f"/v1/vehicles?clientId={big['id']}&limit=1")["results"][0][
                        "id"
                    ]
                ),
            ),
        )
    )
    for label, few, many in counts:
        print(f"  {label:<56}{few:>7}{many:>7}  {'constant' if few == many else 'GROWS'}")


if __name__ == "__main__":
    main()
