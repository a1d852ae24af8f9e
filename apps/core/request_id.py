"""The request id: one per HTTP request, in the response's X-Request-ID and every log line.

A caller's (or nginx's) `X-Request-ID` is kept when it is sane (1-128 letters, digits and
`-_.:`), so one id follows a request through the proxy, the application and the client's own
logs; anything else is replaced by a fresh uuid4 hex. The id lives in a context variable, so
threads of a gthread worker never see each other's.
"""

from __future__ import annotations

import contextvars
import logging
import re
import uuid

HEADER = "X-Request-ID"
_SANE = re.compile(r"[A-Za-z0-9._:\-]{1,128}")
_current: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


def request_id_from(value: str | None) -> str:
    """The caller's id if it is sane, else a new one."""
    if value and _SANE.fullmatch(value):
        return value
    return uuid.uuid4().hex


def current() -> str | None:
    """The id bound to what this thread is handling now, or None."""
    bound = _current.get()
    return None if bound == "-" else bound


def bind(request_id: str) -> contextvars.Token:
    return _current.set(request_id)


def unbind(token: contextvars.Token) -> None:
    _current.reset(token)


class RequestIdFilter(logging.Filter):
    """Adds `request_id` to every record (the formatters print it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = _current.get()
        return True
