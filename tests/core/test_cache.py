"""The Redis cache back-end keeps one client per connection pool (issue 18) and still behaves
as Django's: the values, the expiry, the many-key calls, across threads."""

from __future__ import annotations

import threading

from apps.core.cache import RedisCache
from tests.processes import needs_redis


@needs_redis
def test_one_client_per_pool_and_the_cache_api_unchanged(redis_url):
    cache = RedisCache(redis_url, {})
    first = cache._cache.get_client(write=True)
    assert cache._cache.get_client("any") is first
    assert cache._cache.get_client(write=False) is first  # one server: one pool

    cache.set("a", {"x": 1}, 60)
    cache.set("n", 5, 60)
    assert cache.get("a") == {"x": 1} and cache.incr("n", 2) == 7
    assert cache.add("a", "other", 60) is False and cache.add("b", "new", 60) is True
    assert cache.get_many(["a", "b", "missing"]) == {"a": {"x": 1}, "b": "new"}
    cache.set("gone", 1, 0)  # a zero timeout deletes
    assert cache.get("gone") is None
    cache.delete("a")
    assert cache.get("a", "default") == "default"

    seen = []

    def worker(n: int) -> None:
        for i in range(50):
            cache.set(f"t{n}:{i}", i, 60)
            seen.append(cache.get(f"t{n}:{i}") == i)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 200 and all(seen)
    assert cache._cache.get_client() is first
