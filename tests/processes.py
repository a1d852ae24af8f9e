"""Helpers for tests that start real servers (gunicorn, Redis, S3) on loopback ports."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
MANAGE = [sys.executable, str(ROOT / "manage.py")]
# A gunicorn worker imports Django on its first request: on a loaded machine that takes
# seconds, so the first call waits long and every call gets a generous timeout.
HTTP_TIMEOUT = 60
needs_redis = pytest.mark.skipif(
    shutil.which("redis-server") is None, reason="Debian's redis-server is needed"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, seconds: float = 30) -> None:
    """Return once something listens on `port`; fail if `process` exits or time runs out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the process meant to listen on {port} exited")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


def stop(process: subprocess.Popen, seconds: float = 30) -> None:
    """Terminate a process and wait for it; kill it if it will not go (never leave orphans)."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(seconds)


@dataclass
class Nodes:
    """gunicorn nodes of one production-settings deployment sharing one Redis and database."""

    env: dict[str, str]
    ports: list[int] = field(default_factory=list)

    def manage(self, *args: str) -> str:
        """Run a management command against the nodes' database; its standard output."""
        done = subprocess.run(
            [*MANAGE, *args], env=self.env, check=True, cwd=ROOT, capture_output=True, text=True
        )
        return done.stdout.strip()

    def call(self, node: int, path: str, headers: dict, json: dict | None = None) -> httpx.Response:
        """GET `path` on node `node` (0-based), or POST `json` when given."""
        url = f"http://127.0.0.1:{self.ports[node]}{path}"
        if json is None:
            return httpx.get(url, headers=headers, timeout=HTTP_TIMEOUT)
        return httpx.post(url, headers=headers, json=json, timeout=HTTP_TIMEOUT)


def local_env(database: Path) -> dict[str, str]:
    """The environment of `make run` (local settings, the database cache, debug off) on the
    SQLite file `database`, with media beside it."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"CACHE_URL", "DJANGO_SETTINGS_MODULE", "DATABASE_URL"}
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DJANGO_DEBUG="0",
        DATABASE_URL=f"sqlite:///{database}",
        MEDIA_ROOT=str(database.parent / "media"),
    )
    return env


def migrate_sqlite(path: Path) -> None:
    """Migrate a new SQLite file at `path` as `make run` would (local settings, whose database
    cache has its table), in a process of its own."""
    env = local_env(path)
    done = subprocess.run(
        [*MANAGE, "migrate", "-v0"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]


@contextlib.contextmanager
def gunicorn_nodes(tmp_path: Path, migrated: Path, count: int = 2, **env: str) -> Iterator[Nodes]:
    """`count` gunicorn processes (one worker each) on one Redis and one SQLite database.

    The database is a copy of `migrated` (the `migrated_sqlite` fixture); `env` adds or
    overrides environment variables (rates, for example). Every process is stopped on the way
    out.
    """
    redis_port = free_port()
    nodes = Nodes(
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DJANGO_SECRET_KEY": "nodes-test-secret-key-0123456789abcdefghijklmnopqrs",
            "SECURE_SSL_REDIRECT": "0",
            "ALLOWED_HOSTS": "127.0.0.1",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'nodes.sqlite3'}",
            "CACHE_URL": f"redis://127.0.0.1:{redis_port}/0",
            "MEDIA_ROOT": str(tmp_path / "media"),
            **env,
        },
        ports=[free_port() for _ in range(count)],
    )
    shutil.copyfile(migrated, tmp_path / "nodes.sqlite3")
    redis = ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1"]
    processes = [
        subprocess.Popen(
            [*redis, "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        wait_for_port(redis_port, processes[0])
        gunicorn = [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "config" / "gunicorn.py")]
        for port in nodes.ports:
            processes.append(
                subprocess.Popen(
                    [*gunicorn, "--bind", f"127.0.0.1:{port}", "--workers", "1", "config.wsgi"],
                    env=nodes.env,
                    cwd=ROOT,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        for port, process in zip(nodes.ports, processes[1:], strict=True):
            wait_for_port(port, process)
        yield nodes
    finally:
        for process in reversed(processes):
            stop(process)
