"""Counters in the shared cache, each counted atomically on every back-end the settings select.

A count that limits something (failed logins, apps.accounts.login_failures) must be taken before
what it limits runs, and no two processes may take the same count: a read, then a write, lets
every request of a burst read the same count. Django's cache API has no such counter for every
back-end: `incr` is a read and a write on the database cache (BaseCache.incr), and on Redis an
EXISTS then an INCR, which recreates a key that expired in between without its expiry. So:

- Redis (production): one Lua script, INCR and the key's expiry, atomic in Redis;
- the database cache (the default, shared by every process of `make run`): the read and the
  write in one transaction that holds a lock on the counter's key (PostgreSQL: an advisory
  lock; SQLite: the write lock its IMMEDIATE transactions take, config/settings/base.py);
- any other back-end (the tests' in-memory cache, one process): under a lock of this process.

A counter's window starts at its first hit and does not move with later ones; it ends with the
window, when the count starts again from nothing.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from django.core.cache import caches
from django.core.cache.backends.db import DatabaseCache
from django.core.cache.backends.redis import RedisCache
from django.db import connections, router, transaction

_HIT = """
local answer = {}
for i = 1, #KEYS do
  local count = redis.call('INCR', KEYS[i])
  local left = redis.call('TTL', KEYS[i])
  if count == 1 or left < 0 then
    left = tonumber(ARGV[i])
    redis.call('EXPIRE', KEYS[i], left)
  end
  answer[2 * i - 1] = count
  answer[2 * i] = left
end
return answer
"""
_FORGET = """
if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('DECRBY', KEYS[1], ARGV[1]) <= 0 then
  redis.call('DEL', KEYS[1])
end
return 0
"""
_PROCESS_LOCK = threading.Lock()


def count_hits(windows: Sequence[tuple[str, int]]) -> list[tuple[int, int]]:
    """Count one hit on each `(key, window seconds)`, all at once; for each, its count with
    this hit and the seconds left in its window (at least 1)."""
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        client = backend._cache.get_client(write=True)
        flat = client.register_script(_HIT)(
            keys=[backend.make_key(key) for key, _ in windows],
            args=[window for _, window in windows],
        )
        return [(int(flat[i]), max(1, int(flat[i + 1]))) for i in range(0, len(flat), 2)]
    answers = []
    with locked([key for key, _ in windows]):
        now = time.time()
        for key, window in windows:
            entry = backend.get(key)
            if not entry:
                entry = {"count": 0, "reset_at": now + window}
            entry["count"] += 1
            left = max(1, math.ceil(entry["reset_at"] - now))
            backend.set(key, entry, left)
            answers.append((entry["count"], left))
    return answers


def forget_hits(key: str, hits: int) -> None:
    """Take `hits` back from `key`'s count, in its window; at zero the counter is gone."""
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        client = backend._cache.get_client(write=True)
        client.register_script(_FORGET)(keys=[backend.make_key(key)], args=[hits])
        return
    with locked([key]):
        entry = backend.get(key)
        if not entry:
            return
        entry["count"] -= hits
        left = math.ceil(entry["reset_at"] - time.time())
        if entry["count"] <= 0 or left <= 0:
            backend.delete(key)
        else:
            backend.set(key, entry, left)


@contextmanager
def locked(keys: Sequence[str]) -> Iterator[None]:
    """While held, no other process or thread reads or writes the counters of `keys` in the
    shared cache (not Redis: what runs on Redis is atomic there, in one script)."""
    backend = caches["default"]
    if not isinstance(backend, DatabaseCache):
        with _PROCESS_LOCK:
            yield
        return
    db = router.db_for_write(backend.cache_model_class)
    with transaction.atomic(using=db):
        connection = connections[db]
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                for key in sorted(keys):  # one order: no two wait on each other
                    cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_lock_id(key)])
        yield


def _lock_id(key: str) -> int:
    """A PostgreSQL advisory lock's 64-bit id for a counter's key."""
    digest = hashlib.blake2b(f"shared-counter:{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)
