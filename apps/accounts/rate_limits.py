"""Request rate limits per API key and per user, counted in the shared cache (every node).

Both limits are decided together, in ONE atomic round trip to Redis (a Lua script run by a
client built once per process on the cache's connection pool): DRF's SimpleRateThrottle costs
two round trips per limit (read the history list, write it back) and is not atomic across
nodes. The semantics are DRF's: "N/minute" is at most N requests in any 60 seconds, kept as a
sorted set of the request times in the window (memory grows with the traffic of the last
window, not with the rate). Times come from Redis's clock, so nodes with skewed clocks agree.
A refused request is not counted. Without Redis (tests, local development on the database
cache) the same rule runs on the cache API, under the lock of apps.core.shared_counters.

The round trip itself is lean (issue 18): the script's EVALSHA, packed once per caller, is sent
on the request thread's own connection (apps.core.cache.send_packed, which says what happens
when Redis drops it). A script flushed from Redis did not run: redis-py's path loads it again.
A script whose answer was lost may have run, so it is not run again: the request fails as when
Redis is down, and no request is counted twice.
"""

from __future__ import annotations

import hashlib
import math
import time

from django.conf import settings
from django.core.cache import cache
from redis.exceptions import NoScriptError
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from apps.core.cache import packed_command, send_packed
from apps.core.memo import BoundedMemo
from apps.core.shared_counters import locked

# KEYS: one per limit. ARGV: for each limit, its period in seconds and its request count.
# Returns 0 when every limit allows the request (and counts it), else the seconds to wait.
_SCRIPT = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local wait = 0
for i = 1, #KEYS do
  local period = tonumber(ARGV[2 * i - 1])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - period)
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[2 * i]) then
    local oldest = tonumber(redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')[2])
    wait = math.max(wait, math.ceil(oldest + period - now), 1)
  end
end
if wait > 0 then return wait end
local member = clock[1] .. '.' .. clock[2]
for i = 1, #KEYS do
  local period = tonumber(ARGV[2 * i - 1])
  redis.call('ZADD', KEYS[i], now, member .. ':' .. redis.call('ZCARD', KEYS[i]))
  redis.call('PEXPIRE', KEYS[i], math.ceil(period * 1000))
end
return 0
"""

_DURATIONS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_redis_script = None  # (client, script), built once per process
# (keys, args) -> the packed EVALSHA command of a caller.
_PACKED: BoundedMemo[tuple[tuple[str, ...], tuple[int, ...]], bytes] = BoundedMemo(4096)


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


def _run_script(script, keys: list[str], args: list[int]) -> int:
    """The script's answer: its EVALSHA, packed once per caller, on this thread's connection."""
    signature = (tuple(keys), tuple(args))
    client = script.registered_client
    packed = _PACKED.get(signature)
    if packed is None:
        packed = packed_command(client, "EVALSHA", script.sha, len(keys), *keys, *args)
        _PACKED.remember(signature, packed)
    answer = send_packed(
        client,
        packed,
        fallback=lambda: script(keys=keys, args=args),  # loads the script again, or reconnects
        not_run=(NoScriptError,),
    )
    return int(answer)


def _hit_cache_api(keys: list[str], args: list[float]) -> int:
    """The script's rule on the cache API, for back-ends other than Redis: read and written
    under the counters' lock (apps.core.shared_counters), or every request of a burst read the
    same history and passed."""
    with locked(keys):
        return _hit_histories(keys, args)


def _hit_histories(keys: list[str], args: list[float]) -> int:
    now = time.time()
    wait, histories = 0, []
    for i, key in enumerate(keys):
        period, count = args[2 * i], args[2 * i + 1]
        history = [moment for moment in cache.get(key) or [] if moment > now - period]
        if len(history) >= count:
            wait = max(wait, math.ceil(history[0] + period - now), 1)
        histories.append((key, history, period))
    if wait:
        return wait
    for key, history, period in histories:
        cache.set(key, [*history, now], math.ceil(period))
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
        key_rate, user_rate = (parse_rate(rate) for rate in self._rates())
        keys: list[str] = []
        args: list[int] = []

        def add(scope: str, ident: str, rate: tuple[int, int]) -> None:
            count, seconds = rate
            keys.append(f"throttle:{scope}:{ident}")
            args.extend((seconds, count))

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
            wait = _run_script(script, [cache.make_key(key) for key in keys], args)
        else:
            wait = _hit_cache_api(keys, args)
        if wait:
            self._wait = wait
            return False
        return True

    def wait(self):
        return self._wait
