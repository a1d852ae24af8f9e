"""gunicorn as deployed: `gunicorn config.wsgi` with no -c still runs the project's config.

Black-box: a real gunicorn started from the repository root the way the README says.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from http import HTTPStatus
from pathlib import Path

import httpx
import pytest

from tests.processes import HTTP_TIMEOUT, free_port, stop, wait_for_port

ROOT = Path(__file__).resolve().parents[2]


def test_gunicorn_reads_the_project_config_by_default():
    out = subprocess.run(
        [sys.executable, "-m", "gunicorn", "--print-config", "config.wsgi"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    settings = dict(
        (name.strip(), value.strip())
        for name, _, value in (line.partition("=") for line in out.splitlines())
    )
    assert settings["worker_class"] == "config.workers.BalancedThreadWorker"
    assert settings["limit_request_line"] == "8190"
    assert settings["control_socket_disable"] == "True"


def _get(port: int, path: str, headers: dict | None = None):
    response = httpx.get(
        f"http://127.0.0.1:{port}{path}",
        headers={"Connection": "close", **(headers or {})},
        timeout=HTTP_TIMEOUT,
    )
    return response.status_code, response.content, response.headers


@pytest.fixture
def gunicorn(tmp_path):
    port = free_port()
    log = tmp_path / "gunicorn.log"
    metrics_dir = tmp_path / "prometheus"
    metrics_dir.mkdir()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DJANGO_DEBUG": "0",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "MEDIA_ROOT": str(tmp_path / "media"),
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "2",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        "METRICS_TOKEN": "",
    }
    with log.open("w") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "config.wsgi"],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for_port(port, process)
            yield port, log, process.pid
        finally:
            stop(process)


def test_served_by_gunicorn_without_flags(gunicorn):
    port, log, _pid = gunicorn
    # 500 DOTs in the request line (contract section 8) reach the application: gunicorn's own
    # default (4094 bytes) would answer 414 in HTML.
    dots = "&".join(f"dots={1000000 + i}" for i in range(500))
    status, body, headers = _get(port, f"/v1/coverages/clients?{dots}")
    assert status == 401, body[:200]
    assert headers["Content-Type"] == "application/problem+json"

    # What gunicorn refuses before the application sees it is problem+json too: a request
    # line past limit_request_line (8190 bytes), a malformed header.
    for request, status in (
        (b"GET /v1/coverages/clients?dot=" + b"1" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header Name: x\r\n\r\n", 400),
    ):
        with socket.create_connection(("127.0.0.1", port), timeout=HTTP_TIMEOUT) as raw:
            raw.sendall(request)
            answer = b""
            while chunk := raw.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(f"HTTP/1.1 {status} ".encode()), answer[:200]
        assert b"Content-Type: application/problem+json" in head
        assert json.loads(body)["status"] == status and json.loads(body)["detail"]

    # JSON log lines, each with the request's id.
    status, _, headers = _get(port, "/healthz", {"X-Request-ID": "gunicorn-test-42"})
    assert status == 200 and headers["X-Request-ID"] == "gunicorn-test-42"

    # Prometheus multiprocess mode: /metrics adds up every worker's counters.
    for _ in range(12):
        assert _get(port, "/healthz")[0] == 200
    status, body, _ = _get(port, "/metrics")
    assert status == 200
    total = sum(
        float(line.rsplit(" ", 1)[1])
        for line in body.decode().splitlines()
        if line.startswith("django_http_responses_total_by_status_view_method_total{")
        and 'view="healthz"' in line
    )
    assert total == 13

    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    mine = [line for line in lines if line.get("request_id") == "gunicorn-test-42"]
    assert mine and mine[0]["logger"] == "apps.access" and mine[0]["status"] == 200
    # gunicorn's own lines are JSON as well.
    assert any(line["logger"] == "gunicorn.error" for line in lines)
    # One access line per request, Django's: gunicorn's only when GUNICORN_ACCESS_LOG asks.
    assert not any(line["logger"] == "gunicorn.access" for line in lines)
    assert sum(line["logger"] == "apps.access" for line in lines) == 15  # the requests above


def _raw(port: int, request: bytes) -> tuple[str, dict[str, str], bytes]:
    """`request` sent as bytes over a socket; the answer's status line, headers and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=HTTP_TIMEOUT) as raw:
        raw.sendall(request)
        answer = b""
        while chunk := raw.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (h.partition(":") for h in lines)}
    return status, headers, body


GUNICORN_REFUSALS = [
    (b"GET /v1/me?dot=" + b"1" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    (b"GET /v1/me HTTP/1.1\r\nHost: x\r\n" + b"X-A: b\r\n" * 101 + b"\r\n", 431),
    (b"GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n", 431),
    (b"GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Nul: a\x00b\r\n\r\n", 400),
    (b"POST /v1/clients HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400),
    (b"GARBAGE\r\n\r\n", 400),
]


def test_what_gunicorn_refuses_itself_is_a_problem_like_every_other(gunicorn):
    # Contract section 5: {"type", "title", "status", "detail", "errors"}; section 13: no-store;
    # and a request id, as every answer of the application has one, which gunicorn's log line
    # about the request carries too.
    port, log, _pid = gunicorn
    seen_ids = set()
    for request, status in GUNICORN_REFUSALS:
        line, headers, body = _raw(port, request)
        assert line.startswith(f"HTTP/1.1 {status} "), (line, body[:200])
        assert headers["content-type"] == "application/problem+json"
        assert headers["cache-control"] == "no-store"
        assert re.fullmatch(r"[0-9a-f]{32}", headers["x-request-id"]), headers
        seen_ids.add(headers["x-request-id"])
        problem = json.loads(body)
        assert set(problem) == {"type", "title", "status", "detail", "errors"}
        assert problem["status"] == status and problem["errors"] == [] and problem["detail"]
        assert problem["title"] == HTTPStatus(status).phrase
        assert int(headers["content-length"]) == len(body)
    assert len(seen_ids) == len(GUNICORN_REFUSALS)
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    logged = {line.get("request_id") for line in lines if line["logger"] == "gunicorn.error"}
    assert seen_ids <= logged


def _connections_per_worker(master: int, port: int) -> list[int]:
    """How many established connections to `port` each worker of the `master` holds
    (Linux's /proc: the connections' socket inodes, then each worker's descriptors)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                inodes.add(fields[9])
    workers = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    counts = []
    for worker in workers:
        held = 0
        for fd in Path(f"/proc/{worker}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            held += target.startswith("socket:[") and target[8:-1] in inodes
        counts.append(held)
    return sorted(counts)


def _wait_until_every_worker_idles(master: int, count: int) -> None:
    """Until `count` workers are booted and waiting (their CPU time still for 0.3 s): the
    master listens before its workers are ready, and a burst then meets only the first."""
    import time

    def cpu(worker: str) -> int:
        fields = Path(f"/proc/{worker}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    deadline, before = time.monotonic() + 30, None
    while True:
        assert time.monotonic() < deadline, "the workers did not settle"
        workers = Path(f"/proc/{master}/task/{master}/children").read_text().split()
        now = {worker: cpu(worker) for worker in workers} if len(workers) == count else None
        if now is not None and now == before:
            return
        before = now
        time.sleep(0.3)


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux's /proc")
def test_a_burst_of_connections_spreads_over_the_workers(gunicorn):
    """gthread's workers accept whatever their main loop sees; the project's worker leaves a
    connection to a worker with a free thread first (config/workers.py). 8 connections opened
    at once on 2 workers of 2 threads: 4 and 4 in most runs (gthread alone: 0/8 or 1/7). A
    connection that sends nothing yet keeps its thread waiting for the request, so a worker
    with two is busy."""
    import socket
    import time

    port, _log, master = gunicorn
    _wait_until_every_worker_idles(master, count=2)
    sockets = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(8)]
    try:
        deadline = time.monotonic() + 10
        while sum(counts := _connections_per_worker(master, port)) < 8:
            assert time.monotonic() < deadline, counts
            time.sleep(0.05)
        # Each worker takes a connection per thread before the other waits for one; gthread
        # alone left one worker 0 or 1 of the 8 in most runs.
        assert len(counts) == 2 and min(counts) >= 2, counts
        for sock in sockets:  # every connection is served
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        for sock in sockets:
            assert sock.recv(64).startswith(b"HTTP/1.1 200")
    finally:
        for sock in sockets:
            sock.close()


def _probe(code: str, **env: str) -> list[str]:
    """What `code` prints, run in a fresh interpreter from the repository root."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()


def test_gunicorn_writes_its_own_access_log_when_asked(tmp_path):
    probe = (
        "import runpy\n"
        "from gunicorn.config import Config\n"
        "cfg = runpy.run_path('config/gunicorn.py')\n"
        "config = Config()\n"
        "for name in ('accesslog', 'logconfig_dict', 'logger_class'):\n"
        "    config.set(name, cfg[name])\n"
        "print(config.logger_class(config).access_log_enabled)\n"
    )
    enabled = {
        name: _probe(probe, GUNICORN_ACCESS_LOG=value)
        for name, value in (("off", ""), ("on", str(tmp_path / "access.log")))
    }
    assert enabled == {"off": ["False"], "on": ["True"]}


def test_a_worker_freezes_what_it_loaded_and_collects_young_objects_less_often():
    """config/gunicorn.py's post_worker_init, run in a fresh interpreter as a worker would."""
    probe = (
        "import gc, runpy\n"
        "cfg = runpy.run_path('config/gunicorn.py')\n"
        "assert gc.get_freeze_count() == 0\n"
        "cfg['post_worker_init'](None)\n"
        "print(gc.get_freeze_count() > 0, gc.get_threshold()[0])\n"
    )
    assert _probe(probe, GUNICORN_GC_THRESHOLD="12345") == ["True 12345"]


def test_a_worker_imports_what_its_first_requests_would_before_freezing():
    """post_worker_init with Django set up (as in a worker): the URLconf's views, the token
    backend and the cache backend are imported before the first request, and frozen."""
    probe = (
        "import gc, runpy, sys\n"
        "import django\n"
        "django.setup()\n"
        "cfg = runpy.run_path('config/gunicorn.py')\n"
        "names = ('apps.coverages.api.views', 'rest_framework_simplejwt.state', 'jwt.algorithms')\n"
        "print(*(name in sys.modules for name in names))\n"
        "cfg['post_worker_init'](None)\n"
        "print(*(name in sys.modules for name in names), gc.get_freeze_count() > 0)\n"
    )
    out = _probe(probe, DJANGO_SETTINGS_MODULE="config.settings.test")
    assert out == ["False False False", "True True True True"]
