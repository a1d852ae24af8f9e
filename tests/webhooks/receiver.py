"""A webhook receiver as a customer would write one: it verifies every request with the
Standard Webhooks library and the secret it was given, and deduplicates on webhook-id.

Each receiver listens on a path of its own (`/hook-<random>`) and records only the requests
sent there: a port the system gave a finished test's receiver may be given to the next one,
and a delivery another test's process still makes to it (the suite runs on several workers)
answers 404 and is not this receiver's."""

from __future__ import annotations

import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook


class Receiver:
    """An HTTP server on 127.0.0.1; `answer` is the status it replies with."""

    def __init__(self, secret: str | None = None, answer: int = 204, delay: float = 0.0):
        self.secret = secret
        self.answer = answer
        self.delay = delay  # seconds before answering (a slow receiver)
        self.received: list[dict] = []  # verified payloads, in arrival order
        self.rejected: list[str] = []  # why a request failed verification
        self.headers: list[dict] = []
        self.paths: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0))).decode()
                if not self.path.startswith(receiver.path):
                    self.send_response(404)
                    self.end_headers()
                    return
                if receiver.delay:
                    time.sleep(receiver.delay)
                headers = {k.lower(): v for k, v in self.headers.items()}
                receiver.headers.append(headers)
                receiver.paths.append(self.path)
                try:
                    payload = Webhook(receiver.secret).verify(body, headers)
                    receiver.received.append(payload)
                except Exception as exc:
                    receiver.rejected.append(f"{type(exc).__name__}: {exc}")
                    self.send_response(400)
                    self.end_headers()
                    return
                self.send_response(receiver.answer)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.path = f"/hook-{secrets.token_hex(6)}"
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{self.path}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def unique_ids(self) -> list[str]:
        return list(dict.fromkeys(p["id"] for p in self.received))


def body_of(payload: dict) -> str:
    return json.dumps(payload)
