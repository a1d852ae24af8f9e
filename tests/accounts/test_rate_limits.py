"""Rate limits per API key and per user: 429 with Retry-After, counted in the shared cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from apps.accounts.rate_limits import CallerRateThrottle
from apps.accounts.services import api_key_create
from tests.accounts.test_auth import assert_problem
from tests.conftest import bearer_for
from tests.processes import free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_an_api_key_is_limited_across_users(monkeypatch, make_api, manager, viewer):
    monkeypatch.setattr(CallerRateThrottle, "api_key_rate", "3/minute")
    first, second = make_api(manager), make_api(viewer)
    for api in (first, second, first):
        assert api.get("/v1/me").status_code == 200
    response = second.get("/v1/me")
    assert_problem(response, 429)
    assert 0 < int(response["Retry-After"]) <= 60


@pytest.mark.django_db
def test_a_user_is_limited_across_api_keys(monkeypatch, api_key, manager):
    monkeypatch.setattr(CallerRateThrottle, "user_rate", "2/minute")
    _, other_key = api_key_create(name="second integration")
    token = bearer_for(manager)
    clients = []
    for key in (api_key, other_key, api_key):
        client = APIClient()
        client.credentials(HTTP_APIKEY=key, HTTP_AUTHORIZATION=f"Bearer {token}")
        clients.append(client)
    assert clients[0].get("/v1/me").status_code == 200
    assert clients[1].get("/v1/me").status_code == 200
    assert_problem(clients[2].get("/v1/me"), 429)


def _post(port: int, path: str, headers: dict, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=body,
        method="POST",
        headers={**headers, "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="Debian's redis-server is needed")
def test_the_limit_holds_across_two_gunicorn_processes_sharing_redis(tmp_path):
    redis_port, ports = free_port(), [free_port(), free_port()]
    database = tmp_path / "throttle.sqlite3"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "throttle-test-secret-key-0123456789abcdefghijklmnop",
        "SECURE_SSL_REDIRECT": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": f"sqlite:///{database}",
        "CACHE_URL": f"redis://127.0.0.1:{redis_port}/0",
        "THROTTLE_API_KEY_RATE": "6/minute",
        "THROTTLE_USER_RATE": "1000/minute",
        "MEDIA_ROOT": str(tmp_path / "media"),
    }
    python = sys.executable
    manage = [python, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, cwd=ROOT)
    key = subprocess.run(
        [*manage, "create_api_key", "throttle"],
        env=env,
        check=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    redis = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(redis_port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    servers = []
    try:
        wait_for_port(redis_port, redis)
        for port in ports:
            servers.append(
                subprocess.Popen(
                    [
                        python,
                        "-m",
                        "gunicorn",
                        "-c",
                        str(ROOT / "config" / "gunicorn.py"),
                        "--bind",
                        f"127.0.0.1:{port}",
                        "--workers",
                        "1",
                        "config.wsgi",
                    ],
                    env=env,
                    cwd=ROOT,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        for port, server in zip(ports, servers, strict=True):
            wait_for_port(port, server)

        # Token requests carry only the API key: six are allowed per minute, across both.
        def attempt(port, n):
            body = f'{{"username": "ghost{n}", "password": "wrong"}}'.encode()
            return _post(port, "/v1/auth/token", {"apiKey": key}, body)

        statuses = [attempt(ports[n % 2], n)[0] for n in range(6)]
        assert statuses == [401] * 6  # wrong passwords, counted against the key
        status, headers = attempt(ports[0], 6)
        assert status == 429
        assert int(headers["Retry-After"]) > 0
        assert headers["Content-Type"].startswith("application/problem+json")
        assert attempt(ports[1], 7)[0] == 429
    finally:
        for server in servers:
            server.terminate()
            server.wait(10)
        redis.terminate()
        redis.wait(10)
