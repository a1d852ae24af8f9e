"""Without CACHE_URL (`make run`, a first machine) the counters that must hold across the
service's processes (failed logins, rate limits; contract section 1: never in one process's
memory) live in the database's cache table: what one process counts, another sees. Before,
the default cache was each process's memory, and `make run`'s three workers let a user try
ten wrong passwords (five per worker seen) and a locked user log in on another worker."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.processes import local_env

ROOT = Path(__file__).resolve().parents[2]

RECORD = """
import django; django.setup()
from apps.accounts.login_failures import count_login_attempt
for _ in range(4):
    count_login_attempt(username="demo-viewer", address="10.0.0.1")
"""
CHECK = """
import django; django.setup()
from rest_framework.exceptions import Throttled
from django.conf import settings
from apps.accounts.login_failures import count_login_attempt
print(settings.CACHES["default"]["BACKEND"])
try:
    count_login_attempt(username="demo-viewer", address="10.0.0.2")
    print("allowed")
except Throttled:
    print("refused")
"""

BURST = """
import threading
import django; django.setup()
from django.db import connection
from rest_framework.exceptions import Throttled
from apps.accounts.login_failures import count_login_attempt
start, places = threading.Barrier(12), []
def attempt():
    start.wait()
    try:
        places.append(count_login_attempt(username="burst", address="10.0.0.3"))
    except Throttled:
        places.append(0)
    finally:
        connection.close()
threads = [threading.Thread(target=attempt) for _ in range(12)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(*sorted(places))
"""


def _run(code: str, env: dict) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def _migrated(tmp_path, migrated_sqlite) -> dict:
    """The environment of `make run` (the database cache) on a migrated SQLite file."""
    shutil.copyfile(migrated_sqlite, tmp_path / "db.sqlite3")
    return local_env(tmp_path / "db.sqlite3")


def test_a_failed_login_counted_in_one_process_is_seen_by_another(tmp_path, migrated_sqlite):
    env = _migrated(tmp_path, migrated_sqlite)
    assert _run(CHECK, env).splitlines() == [
        "django.core.cache.backends.db.DatabaseCache",
        "allowed",
    ]
    _run(RECORD, env)  # one process counts four more attempts of the user: five
    assert _run(CHECK, env).splitlines()[-1] == "refused"  # another refuses the sixth


def test_attempts_at_once_on_the_database_cache_each_take_their_own_place(
    tmp_path, migrated_sqlite
):
    # Twelve threads with connections of their own to the SQLite file, at the same moment: each
    # attempt is counted once (places 1 to 5), the other seven are refused (0), never two at
    # the same place, as a read then a write of the count let them be.
    env = _migrated(tmp_path, migrated_sqlite)
    assert _run(BURST, env).split() == ["0"] * 7 + ["1", "2", "3", "4", "5"]
