"""Production settings pass Django's deployment checks; responses carry security headers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_check_deploy_is_clean_with_production_settings():
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "x7#kq2!vP0-production-like-secret-for-the-check-zR9u$Lw3mN8b&Tq1",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SECRET_KEY"}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings.production"
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode != 0 and "DJANGO_SECRET_KEY" in result.stderr


@pytest.mark.django_db
def test_security_headers(client):
    response = client.get("/healthz")
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] in ("DENY", "SAMEORIGIN")
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"


def test_nginx_answers_its_own_errors_as_the_service_does():
    # nginx answers long lines, big headers, broken requests and a down upstream itself: each
    # page it serves is a problem like every other error of the service (contract section 5),
    # and every error_page names one of them.
    import json
    import re
    from http import HTTPStatus

    pages = ROOT / "deploy/nginx/errors"
    site = (ROOT / "deploy/nginx/insurance.conf").read_text()
    named = set(re.findall(r"error_page \d+ (?:=\d+ )?/_problem/(\d+\.json);", site))
    assert named == {page.name for page in pages.glob("*.json")}
    assert {"501.json", "505.json"} <= named
    for page in pages.glob("*.json"):
        problem = json.loads(page.read_text())
        assert set(problem) == {"type", "title", "status", "detail", "errors"}, page.name
        assert problem["errors"] == [] and problem["detail"], page.name
        assert problem["title"] == HTTPStatus(problem["status"]).phrase, page.name
    location = site[site.index("location ^~ /_problem/") :]
    location = location[: location.index("\n    }")]
    assert 'add_header Cache-Control "no-store" always;' in location
    assert "add_header X-Request-ID $insurance_request_id always;" in location
