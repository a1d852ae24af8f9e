"""Django's Redis cache back-end with one Redis client per connection pool, not one per call.

`django.core.cache.backends.redis.RedisCacheClient.get_client` builds a new `redis.Redis` on
every cache call; its constructor copies the table of ~150 response callbacks, which made it a
third of the cost of the permission `MGET` every authenticated request does (issue 18,
docs/performance.md). A `redis.Redis` holds no connection of its own (each command borrows one
from the pool) and is safe to share between threads, so one per pool is enough; the pool
reopens its connections after a fork, as before. Settings select this back-end for any
`redis://` CACHE_URL.

`send_packed` is the lean round trip that every /v1 request's Redis commands take (the
throttle's EVALSHA, apps.accounts.rate_limits; the caller's MGET, apps.accounts.principal):
redis-py's generic command path (a pool checkout that polls the socket, the retry wrapper,
metrics hooks, the arguments packed again) was most of their cost (issue 18). Each request
thread sends a command packed once per caller on a connection of its own, outside the pool.
What stops the command from being sent (the connection broken, or closed by Redis while it was
idle, which is looked for before sending) goes through redis-py's own path instead, which
reconnects, and raises when Redis is down: its rules (connecting again, its retry settings) stay
redis-py's instead of being copied here, and run only after a failure. A command that was sent
may have run: an error reading its answer (a timeout, a connection lost) is not retried, since
that could run a counting command twice; the request fails as it does when Redis is down
(docs/deploy.md), and the connection is made again on the next request.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from django.core.cache.backends import redis as django_redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from apps.core.sockets import has_input

_thread = threading.local()  # .connection, .pid: this thread's own Redis connection


class RedisCacheClient(django_redis.RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients: dict[int, object] = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class RedisCache(django_redis.RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = RedisCacheClient


def thread_connection(client):
    """A connection of this thread's own to `client`'s server, outside the pool (made again
    after a fork)."""
    connection = getattr(_thread, "connection", None)
    if connection is None or _thread.pid != os.getpid():
        pool = client.connection_pool
        connection = pool.connection_class(**pool.connection_kwargs)
        _thread.connection, _thread.pid = connection, os.getpid()
    return connection


def packed_command(client, *args) -> bytes:
    """A command's bytes as `send_packed` sends them, to be built once and kept per caller."""
    return b"".join(bytes(part) for part in thread_connection(client).pack_command(*args))


def closed_while_idle(connection) -> bool:
    """Whether Redis closed this idle connection (a restart, its idle `timeout`, CLIENT KILL)
    or left bytes on it that no command asked for: an idle connection has nothing to read, and a
    poll that does not wait (one system call) says so. Found after sending, the same close would
    fail the request (see the module's docstring)."""
    sock = connection._sock
    return sock is not None and has_input(sock)


def send_packed(
    client,
    packed: bytes,
    *,
    fallback: Callable[[], object],
    not_run: tuple[type[Exception], ...] = (),
):
    """The answer to one packed command, sent on this thread's connection to `client`'s server.

    `fallback` (the same command through redis-py's own path) answers when the command could
    not be sent, and when reading its answer raised one of `not_run`: errors that say the
    command did not run (a script flushed from Redis)."""
    connection = thread_connection(client)
    if closed_while_idle(connection):
        connection.disconnect()  # made again by the send
    try:
        connection.send_packed_command([packed], check_health=False)
    except (RedisConnectionError, RedisTimeoutError):
        # Not sent (redis-py has disconnected it; it reconnects on the next send).
        return fallback()
    try:
        return connection.read_response()
    except not_run:
        return fallback()
    except (RedisConnectionError, RedisTimeoutError):
        # Sent, so maybe run: not run again. redis-py has disconnected the connection (an
        # answer may still arrive on it); the next request connects again.
        connection.disconnect()
        raise
