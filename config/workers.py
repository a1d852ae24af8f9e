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


def write_problem(sock, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's own answer to a request it refuses before the application sees it (a request
    line past `limit_request_line`: 414; a malformed header: 400; ...), as problem+json like
    every other error of the service (contract section 5) instead of gunicorn's HTML page.
    Installed in place of `gunicorn.util.write_error`, which the worker calls by that name."""
    body = json.dumps(
        {"type": "about:blank", "title": reason, "status": status_int, "detail": mesg or reason}
    ).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/problem+json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode("latin-1")
    util.write_nonblock(sock, head + body)


util.write_error = write_problem
