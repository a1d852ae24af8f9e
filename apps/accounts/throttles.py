"""Request rate limits per API key and per user, counted in the shared cache (every node).

Both limits are decided together, in ONE atomic round trip to Redis (a Lua script run by a
client built once per process on the cache's connection pool): DRF's SimpleRateThrottle costs
two round trips per limit (read the history list, write it back) and is not atomic across
nodes. Each limit is a sliding window approximated from two fixed windows (the current count
plus the previous one weighted by how much of it still overlaps the window), so a burst at a
window's edge cannot double the rate. A refused request is not counted. Without Redis (tests,
local development on the in-memory cache) the same arithmetic runs on the cache API.
"""

from __future__ import annotations

import hashlib
import math
import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

# KEYS: current-window key, previous-window key, for each limit.
# ARGV: for each limit: its maximum, the weight of the previous window, the window's seconds.
# Returns 0 when every limit allows the request (and counts it), else the seconds to wait.
_SCRIPT = """
local wait = 0
local n = #KEYS / 2
for i = 1, n do
  local limit = tonumber(ARGV[3 * i - 2])
  local weight = tonumber(ARGV[3 * i - 1])
  local current = tonumber(redis.call('GET', KEYS[2 * i - 1]) or '0')
  local previous = tonumber(redis.call('GET', KEYS[2 * i]) or '0')
  if current + previous * weight + 1 > limit then
    local seconds = tonumber(ARGV[3 * i])
    local retry = math.ceil(seconds * (1 - weight))
    if retry < 1 then retry = 1 end
    if retry > wait then wait = retry end
  end
end
if wait > 0 then return wait end
for i = 1, n do
  redis.call('INCR', KEYS[2 * i - 1])
  redis.call('EXPIRE', KEYS[2 * i - 1], tonumber(ARGV[3 * i]) * 2)
end
return 0
"""

_DURATIONS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_redis_script = None  # (client, script), built once per process


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """'100/minute' -> (100, 60)."""
    if not rate:
        return None
    number, period = rate.split("/")
    return int(number), _DURATIONS[period.strip()[0]]


def _redis():
    """The Redis client and registered script of the shared cache, or None without Redis."""
    global _redis_script
    if _redis_script is None:
        from django.core.cache import caches
        from django.core.cache.backends.redis import RedisCache

        backend = caches["default"]
        if isinstance(backend, RedisCache):
            # The client shares the cache's connection pool; redis-py reopens it after a fork.
            client = backend._cache.get_client(write=True)
            _redis_script = (client, client.register_script(_SCRIPT))
        else:
            _redis_script = (None, None)
    return _redis_script[1]


def _hit_cache_api(keys: list[str], args: list[float]) -> int:
    """The script's arithmetic on the cache API: for back-ends other than Redis."""
    wait = 0
    limits = []
    for i in range(len(keys) // 2):
        limit, weight, seconds = args[3 * i : 3 * i + 3]
        current = cache.get(keys[2 * i]) or 0
        previous = cache.get(keys[2 * i + 1]) or 0
        if current + previous * weight + 1 > limit:
            wait = max(wait, max(1, math.ceil(seconds * (1 - weight))))
        limits.append((keys[2 * i], int(seconds)))
    if wait:
        return wait
    for key, seconds in limits:
        cache.add(key, 0, seconds * 2)
        try:
            cache.incr(key)
        except ValueError:  # expired between add() and incr()
            cache.set(key, 1, seconds * 2)
    return 0


class CallerRateThrottle(BaseThrottle):
    """The API key's limit and the user's limit, in one atomic round trip.

    Rates come from REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] ("api_key", "user"); tests may set
    ``api_key_rate`` / ``user_rate`` on the class.
    """

    api_key_rate: str | None = None
    user_rate: str | None = None

    def _rates(self) -> tuple[str | None, str | None]:
        rates = api_settings.DEFAULT_THROTTLE_RATES
        return (self.api_key_rate or rates.get("api_key"), self.user_rate or rates.get("user"))

    def allow_request(self, request, view) -> bool:
        self._wait = None
        now = time.time()
        key_rate, user_rate = (parse_rate(rate) for rate in self._rates())
        keys: list[str] = []
        args: list[float] = []

        def add(scope: str, ident: str, rate: tuple[int, int]) -> None:
            limit, seconds = rate
            window = int(now // seconds)
            weight = 1 - (now - window * seconds) / seconds
            keys.append(f"throttle:{scope}:{ident}:{window}")
            keys.append(f"throttle:{scope}:{ident}:{window - 1}")
            args.extend((limit, weight, seconds))

        raw = request.headers.get(settings.API_KEY_HEADER, "").strip()
        if raw and key_rate:
            add("api_key", hashlib.sha256(raw.encode()).hexdigest()[:32], key_rate)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and user_rate:
            add("user", str(user.pk), user_rate)
        if not keys:
            return True
        script = _redis()
        if script is not None:
            wait = int(script(keys=[cache.make_key(key) for key in keys], args=args))
        else:
            wait = _hit_cache_api(keys, args)
        if wait:
            self._wait = wait
            return False
        return True

    def wait(self):
        return self._wait
