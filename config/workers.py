"""gunicorn's threaded worker, leaving a new connection first to a worker with a free thread.

gunicorn's gthread worker accepts every connection its main loop sees and queues its requests
on its own thread pool, however busy that pool is. All workers wait on one listening socket,
and the one the kernel happens to run takes the burst: with 5 workers, 64 keep-alive
connections opened at once landed 63/1, 38/25/1 or 61/3 on the workers, 8 connections 7/1 or
5/3, and a run whose 64 connections all landed on one worker served half as many requests
(one process, so one core under its GIL; issue 18, docs/performance.md). A worker whose
threads are all busy now waits a moment (`ACCEPT_DELAY`) before accepting, so that a worker
with a free thread takes the connection first; if none has, it accepts after the wait as
before, so no connection is left waiting in the backlog while the workers are busy.
"""

from __future__ import annotations

import json
import time

from gunicorn import util
from gunicorn.workers.gthread import ThreadWorker

from apps.core import request_id
from apps.core.problem_json import PROBLEM_CONTENT_TYPE, problem_body

ACCEPT_DELAY = 0.002  # seconds; the main loop's other events wait as long, once per new connection


class BalancedThreadWorker(ThreadWorker):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.in_flight = 0  # requests handed to the thread pool and not finished

    def accept(self, listener):
        if self.in_flight >= self.cfg.threads:
            time.sleep(ACCEPT_DELAY)  # a worker with a free thread may take it meanwhile
        super().accept(listener)

    def enqueue_req(self, conn):
        self.in_flight += 1
        super().enqueue_req(conn)

    def finish_request(self, conn, fs):
        self.in_flight -= 1
        super().finish_request(conn, fs)

    def handle_error(self, req, client, addr, exc):
        """gunicorn's answer to a request it could not handle, under a request id of its own:
        its log line and its answer (`write_problem`) carry the same one."""
        token = request_id.bind(request_id.request_id_from(None))
        try:
            super().handle_error(req, client, addr, exc)
        finally:
            request_id.unbind(token)


def write_problem(sock, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's own answer to a request it refuses before the application sees it (a request
    line past `limit_request_line`: 414; too many or too large headers: 431; a malformed line or
    header: 400; ...), as the application answers every error (contract sections 5 and 13):
    the same problem+json body (`errors` empty: nothing field-level can be named), `Cache-Control:
    no-store`, and an `X-Request-ID`. The id is new (the request's own `X-Request-ID` is not
    read: its headers are what failed, or were never parsed) and is the one gunicorn's warning
    line about the request carries (`BalancedThreadWorker.handle_error`).
    Installed in place of `gunicorn.util.write_error`, which the worker calls by that name."""
    problem = problem_body(status_int, mesg or reason)  # gunicorn's statuses all have a name
    reason = problem["title"]  # the status line says what the title says, as the app's do
    body = json.dumps(problem).encode()
    rid = request_id.current() or request_id.request_id_from(None)
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        f"Content-Type: {PROBLEM_CONTENT_TYPE}\r\n"
        "Cache-Control: no-store\r\n"
        f"{request_id.HEADER}: {rid}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode("latin-1")
    util.write_nonblock(sock, head + body)


util.write_error = write_problem
