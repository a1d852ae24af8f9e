"""Certificate cost: the PDF's median latency as a ratio to the JSON's, in the same run.

    make run   # in another shell
    .venv/bin/python bench/certificates.py [--base http://127.0.0.1:8000] [--rounds 50]

Target (issue 5 and 9): the PDF costs at most four times the JSON.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _client import Api, interleaved, print_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", default="http://127.0.0.1:8000")
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    api = Api(args.base)
    api.login()

    def fetch(path, **headers):
        status, body = api.call("GET", path, headers=headers)
        assert status == 200, body[:300]

    client = "/v1/certificates/clients?dot=1234567&holderName=Bench"
    vehicle = "/v1/certificates/vehicles?vin=1FUJGLDR7CLBP8834"
    medians = interleaved(
        {
            "GET /healthz": lambda: fetch("/healthz"),
            "client certificate JSON": lambda: fetch(client),
            "client certificate PDF": lambda: fetch(client, Accept="application/pdf"),
            "vehicle certificate JSON": lambda: fetch(vehicle),
            "vehicle certificate PDF": lambda: fetch(vehicle + "&format=pdf"),
        },
        args.rounds,
    )
    print(f"{args.rounds} interleaved rounds against {args.base}")
    print_table(medians, "GET /healthz", targets={})
    print()
    for kind in ("client", "vehicle"):
        ratio = medians[f"{kind} certificate PDF"] / medians[f"{kind} certificate JSON"]
        print(
            f"{kind} PDF / JSON: {ratio:5.2f}  (target <= 4: {'met' if ratio <= 4 else 'NOT met'})"
        )


if __name__ == "__main__":
    main()
