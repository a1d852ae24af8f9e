"""Without CACHE_URL (`make run`, a first machine) the counters that must hold across the
service's processes (failed logins, rate limits; contract section 1: never in one process's
memory) live in the database's cache table: what one process counts, another sees. Before,
the default cache was each process's memory, and `make run`'s three workers let a user try
ten wrong passwords (five per worker seen) and a locked user log in on another worker."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

RECORD = """
import django; django.setup()
from apps.accounts.login_failures import record_login_failure
for _ in range(5):
    record_login_failure(username="demo-viewer", address="10.0.0.1")
"""
CHECK = """
import django; django.setup()
from rest_framework.exceptions import Throttled
from django.conf import settings
from apps.accounts.login_failures import check_login_allowed
print(settings.CACHES["default"]["BACKEND"])
try:
    check_login_allowed(username="demo-viewer", address="10.0.0.2")
    print("allowed")
except Throttled:
    print("refused")
"""


def _run(code: str, env: dict) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_a_failed_login_counted_in_one_process_is_seen_by_another(tmp_path):
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"CACHE_URL", "DJANGO_SETTINGS_MODULE", "DATABASE_URL"}
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DJANGO_DEBUG="0",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        MEDIA_ROOT=str(tmp_path / "media"),
    )
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert migrate.returncode == 0, migrate.stderr[-2000:]
    assert _run(CHECK, env).splitlines() == [
        "django.core.cache.backends.db.DatabaseCache",
        "allowed",
    ]
    _run(RECORD, env)  # one process counts five failures for the user
    assert _run(CHECK, env).splitlines()[-1] == "refused"  # another refuses the sixth
