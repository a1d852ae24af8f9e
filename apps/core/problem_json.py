"""The shape of an RFC 9457 problem+json answer, without Django: the application's errors
(apps.core.problems) and the ones gunicorn writes itself before the application sees a request
(config/workers.py) share it, so every error of the service has the same keys (contract
section 5)."""

from __future__ import annotations

from http import HTTPStatus

PROBLEM_CONTENT_TYPE = "application/problem+json"


def problem_body(status: int, detail: str, errors: list[dict] | None = None) -> dict:
    return {
        "type": "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        "errors": errors or [],
    }
