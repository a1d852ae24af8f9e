"""The production topology for the drills: nginx (deploy/nginx/insurance.conf) in front of the
gunicorn nodes, Redis, an S3-compatible store (moto's server), and the background worker; and
the drills that only make sense through nginx: slow clients, a 500-DOT request line, oversized
and chunked uploads.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_port(port: int, process: subprocess.Popen, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited before listening on {port}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


class Nginx:
    """deploy/nginx/insurance.conf as shipped, with the upstream ports, the listen address and
    the paths replaced; run in the foreground from a throwaway prefix."""

    def __init__(self, upstream_ports: list[int]):
        if not shutil.which("nginx"):
            raise RuntimeError("nginx is not installed (apt-get install nginx)")
        self.port = free_port()
        self.prefix = Path(tempfile.mkdtemp(prefix="reliability-nginx-"))
        site = (ROOT / "deploy/nginx/insurance.conf").read_text()
        servers = "\n".join(
            f"    server 127.0.0.1:{port} max_fails=3 fail_timeout=10s;" for port in upstream_ports
        )
        lines = [
            line
            for line in site.splitlines()
            if not line.strip().startswith("server 127.0.0.1:800")
        ]
        site = "\n".join(lines).replace("    least_conn;", "    least_conn;\n" + servers)
        site = site.replace("listen 80;", f"listen 127.0.0.1:{self.port};")
        site = site.replace("/var/log/nginx/insurance.access.log", str(self.prefix / "access.log"))
        site = site.replace("/srv/insurance/deploy/", f"{ROOT}/deploy/")
        site = site.replace("/srv/insurance/staticfiles/", f"{self.prefix}/static/")
        (self.prefix / "site.conf").write_text(site)
        user = "user root;\n" if os.geteuid() == 0 else ""
        temp = "\n".join(
            f"  {kind}_temp_path {self.prefix}/{kind};"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        (self.prefix / "nginx.conf").write_text(
            f"{user}worker_processes 1;\npid {self.prefix}/nginx.pid;\n"
            f"error_log {self.prefix}/error.log warn;\n"
            "events { worker_connections 4096; }\n"
            f"http {{\n  include /etc/nginx/mime.types;\n{temp}\n"
            f"  include {self.prefix}/site.conf;\n}}\n"
        )
        self.process = subprocess.Popen(
            [
                "nginx",
                "-p",
                str(self.prefix),
                "-c",
                str(self.prefix / "nginx.conf"),
                "-e",
                str(self.prefix / "error.log"),
                "-g",
                "daemon off;",
            ]
        )
        wait_port(self.port, self.process)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        shutil.rmtree(self.prefix, ignore_errors=True)


class Redis:
    def __init__(self):
        self.port = free_port()
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )
        wait_port(self.port, self.process)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


class S3:
    """moto's S3-compatible server (a development requirement) with one bucket."""

    bucket = "reliability-documents"

    def __init__(self):
        self.port = free_port()
        self.process = subprocess.Popen(
            [PY, "-m", "moto.server", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_port(self.port, self.process)
        self.client().create_bucket(Bucket=self.bucket)

    @property
    def env(self) -> dict:
        return {
            "DOCUMENTS_STORAGE": "s3",
            "AWS_STORAGE_BUCKET_NAME": self.bucket,
            "AWS_S3_ENDPOINT_URL": f"http://127.0.0.1:{self.port}",
            "AWS_S3_REGION_NAME": "us-east-1",
            "AWS_ACCESS_KEY_ID": "reliability",
            "AWS_SECRET_ACCESS_KEY": "reliability",
        }

    def client(self):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=f"http://127.0.0.1:{self.port}",
            region_name="us-east-1",
            aws_access_key_id="reliability",
            aws_secret_access_key="reliability",
        )

    def keys(self) -> set[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket)
        return {item["Key"] for page in pages for item in page.get("Contents", [])}

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


class Worker:
    """bin/worker, as systemd starts it."""

    def __init__(self, env: dict):
        self.process = subprocess.Popen(
            ["sh", str(ROOT / "bin/worker")],
            cwd=ROOT,
            env={**env, "PYTHON": PY},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()


# --- the drills through nginx -------------------------------------------------------------------


def _get(port: int, path: str, headers: dict | None = None, timeout: float = 10):
    """A refused, cut or timed-out connection raises ConnectionError (an OSError)."""
    try:
        response = httpx.get(
            f"http://127.0.0.1:{port}{path}",
            headers={"Connection": "close", **(headers or {})},
            timeout=timeout,
        )
    except httpx.TransportError as exc:
        raise ConnectionError(f"{type(exc).__name__}: {exc}") from exc
    return response.status_code, response.content, response.headers


class Prober:
    """GET /healthz every 0.25 s on each port, recording the slowest answer and any failure."""

    def __init__(self, ports: list[int]):
        self.ports = ports
        self.worst = 0.0
        self.failures: list[str] = []
        self.count = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            for port in self.ports:
                started = time.monotonic()
                try:
                    status = _get(port, "/healthz", timeout=10)[0]
                    if status != 200:
                        self.failures.append(f"{port}: {status}")
                except OSError as error:
                    self.failures.append(f"{port}: {error}")
                self.worst = max(self.worst, time.monotonic() - started)
                self.count += 1
            time.sleep(0.25)

    def stop(self):
        self._stop.set()
        self._thread.join()


def slowloris(port: int, connections: int, seconds: float, body: bool, auth: dict) -> dict:
    """Open `connections` sockets that trickle a request (headers, or a body) one piece every
    second for `seconds`; report how many the server cut off and what it answered."""
    socks = []
    for _ in range(connections):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        if body:
            head = (
                "POST /v1/clients HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "".join(f"{k}: {v}\r\n" for k, v in auth.items())
                + "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
            )
            sock.sendall(head.encode())
        else:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        socks.append(sock)
    closed, answers = 0, {}
    deadline = time.monotonic() + seconds
    alive = list(socks)
    while alive and time.monotonic() < deadline:
        for sock in list(alive):
            try:
                sock.sendall(b" " if body else f"X-Slow-{uuid.uuid4().hex[:6]}: 1\r\n".encode())
            except OSError:
                alive.remove(sock)
                closed += 1
        time.sleep(1)
    for sock in socks:
        try:
            sock.settimeout(0.5)
            data = sock.recv(200)
            if data:
                answers[data.split(b"\r\n", 1)[0].decode(errors="replace")] = (
                    answers.get(data.split(b"\r\n", 1)[0].decode(errors="replace"), 0) + 1
                )
        except OSError:
            pass
        sock.close()
    return {"cut_off": closed, "still_open": len(alive), "answers": answers}


def chunked_upload(port: int, auth: dict, size: int) -> tuple[int, bytes, dict]:
    """A multipart upload of `size` bytes sent with Transfer-Encoding: chunked (no length)."""
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="clientId"\r\n\r\n1'
        f'\r\n--{boundary}\r\nContent-Disposition: form-data; name="file"; '
        f'filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n'
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()

    def body():  # no length given: httpx sends it with Transfer-Encoding: chunked
        yield head
        block = b"0" * (1024 * 1024)
        sent = 0
        while sent < size:
            piece = block[: min(len(block), size - sent)]
            yield piece
            sent += len(piece)
        yield tail

    # nginx may answer 413 and close before the body ends: httpx still reads that answer.
    response = httpx.post(
        f"http://127.0.0.1:{port}/v1/documents/clients",
        content=body(),
        headers={**auth, "Content-Type": f"multipart/form-data; boundary={boundary}"},
        timeout=60,
    )
    return response.status_code, response.content, response.headers


def sized_upload(port: int, auth: dict, file_bytes: int) -> tuple[int, bytes, dict]:
    """A multipart upload with Content-Length whose file part is exactly `file_bytes`."""
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="clientId"\r\n\r\n1'
        f'\r\n--{boundary}\r\nContent-Disposition: form-data; name="file"; '
        f'filename="limit.pdf"\r\nContent-Type: application/pdf\r\n\r\n'
    ).encode()
    payload = b"%PDF-1.4\n" + b"0" * (file_bytes - 9)
    body = head + payload + f"\r\n--{boundary}--\r\n".encode()
    response = httpx.post(
        f"http://127.0.0.1:{port}/v1/documents/clients",
        content=body,
        headers={**auth, "Content-Type": f"multipart/form-data; boundary={boundary}"},
        timeout=60,
    )
    return response.status_code, response.content, response.headers


def is_problem(headers: dict) -> bool:
    return headers.get("Content-Type", "").startswith("application/problem+json")


def problem_status(data: bytes) -> int | None:
    try:
        return json.loads(data).get("status")
    except ValueError:
        return None
