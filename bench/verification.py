"""Verification latency against a running server, as ratios to /healthz in the same run.

    make run   # in another shell (or any server with the demo world)
    .venv/bin/python bench/verification.py [--base http://127.0.0.1:8000] [--rounds 50]

Prints the median latency of single-DOT verification, of a 500-DOT verification, of a single
VIN and of a 1,000-unit fleet batch, each as a ratio to /healthz, measured interleaved.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _client import Api, interleaved, print_table

DEMO_DOTS = ["1234567", "2345678", "3456789"]
DEMO_VINS = [
    "1FUJGLDR7CLBP8834",
    "1XKYDP9X5MJ441234",
    "1GRAA0621KB123456",
    "1JJV532D8KL654321",
    "3AKJHHDR5LSLA1234",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", default="http://127.0.0.1:8000")
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()

    api = Api(args.base)
    api.login()
    dots = DEMO_DOTS + [str(8_000_000 + n) for n in range(500 - len(DEMO_DOTS))]
    dots_query = "&".join(f"dots={d}" for d in dots)
    vins = DEMO_VINS + [f"1HGCM82633A{n:06d}" for n in range(1000 - len(DEMO_VINS))]

    def ok(status_body):
        status, body = status_body
        assert status == 200, body[:300]

    cases = {
        "GET /healthz": lambda: ok(api.call("GET", "/healthz")),
        "GET /v1/me (authenticated)": lambda: ok(api.call("GET", "/v1/me")),
        "verify 1 DOT": lambda: ok(api.call("GET", "/v1/coverages/clients?dot=1234567")),
        "verify 500 DOTs": lambda: ok(api.call("GET", f"/v1/coverages/clients?{dots_query}")),
        "verify 1 VIN": lambda: ok(api.call("GET", "/v1/coverages/vehicles?vin=1FUJGLDR7CLBP8834")),
        "batch 1,000 units": lambda: ok(
            api.call("POST", "/v1/coverages/vehicles/batch", {"vins": vins})
        ),
    }
    medians = interleaved(cases, args.rounds)
    print(f"{args.rounds} interleaved rounds against {args.base}")
    print_table(medians, "GET /healthz", targets={})
    one_dot, one_vin = medians["verify 1 DOT"], medians["verify 1 VIN"]
    print()
    print(f"500 DOTs / 1 DOT:       {medians['verify 500 DOTs'] / one_dot:6.2f}  (target <= 25)")
    print(f"1,000 units / 1 VIN:    {medians['batch 1,000 units'] / one_vin:6.2f}  (target <= 40)")
    print(f"1 DOT / authenticated:  {one_dot / medians['GET /v1/me (authenticated)']:6.2f}")


if __name__ == "__main__":
    main()
