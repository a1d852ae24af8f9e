"""Django's Redis cache back-end with one Redis client per connection pool, not one per call.

`django.core.cache.backends.redis.RedisCacheClient.get_client` builds a new `redis.Redis` on
every cache call; its constructor copies the table of ~150 response callbacks, which made it a
third of the cost of the permission `MGET` every authenticated request does (issue 18,
docs/performance.md). A `redis.Redis` holds no connection of its own (each command borrows one
from the pool) and is safe to share between threads, so one per pool is enough; the pool
reopens its connections after a fork, as before. Settings select this back-end for any
`redis://` CACHE_URL.
"""

from __future__ import annotations

from django.core.cache.backends import redis as django_redis


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
