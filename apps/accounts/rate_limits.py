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
from typing import NamedTuple

from django.conf import settings
from django.core.cache import cache
from redis.exceptions import NoScriptError
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from apps.core.cache import packed_command, send_packed
from apps.core.memo import BoundedMemo
from apps.core.shared_counters import locked

# KEYS: one per limit. ARGV: for each limit, its period in seconds and its request count.
# Returns {wait, limit, period, remaining, reset}: `wait` 0 when every limit allows the request
# (and counts it), else the seconds to wait; then the limit the caller is closest to (the one
# that refused, or the one with the fewest requests left), its requests left after this one,
# and the seconds until its oldest counted request leaves the window (one more is allowed).
_SCRIPT = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local function reset_of(key, period)
  local oldest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
  return math.max(math.ceil(oldest + period - now), 1)
end
local wait, shown = 0, 1
local counts = {}
for i = 1, #KEYS do
  local period = tonumber(ARGV[2 * i - 1])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - period)
  counts[i] = redis.call('ZCARD', KEYS[i])
  if counts[i] >= tonumber(ARGV[2 * i]) then
    local refused = reset_of(KEYS[i], period)
    if refused > wait then wait, shown = refused, i end
  end
end
if wait > 0 then
  return {wait, tonumber(ARGV[2 * shown]), tonumber(ARGV[2 * shown - 1]), 0, wait}
end
local member = clock[1] .. '.' .. clock[2]
local remaining
for i = 1, #KEYS do
  local period = tonumber(ARGV[2 * i - 1])
  redis.call('ZADD', KEYS[i], now, member .. ':' .. counts[i])
  redis.call('PEXPIRE', KEYS[i], math.ceil(period * 1000))
  local left = tonumber(ARGV[2 * i]) - counts[i] - 1
  if remaining == nil or left < remaining then remaining, shown = left, i end
end
local period = tonumber(ARGV[2 * shown - 1])
return {0, tonumber(ARGV[2 * shown]), period, remaining, reset_of(KEYS[shown], period)}
"""


class Allowance(NamedTuple):
    """What one request left of the caller's limits: `wait` 0 when it was allowed, else the
    seconds before it would be; the limit shown to the caller (`limit` requests in `period`
    seconds), the requests `remaining` in it after this one, and the seconds until `reset`,
    when its oldest counted request leaves the window (the `RateLimit-*` headers)."""

    wait: int
    limit: int
    period: int
    remaining: int
    reset: int


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


def _run_script(script, keys: list[str], args: list[int]) -> Allowance:
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
    return Allowance(*(int(part) for part in answer))


def _hit_cache_api(keys: list[str], args: list[float]) -> Allowance:
    """The script's rule on the cache API, for back-ends other than Redis: read and written
    under the counters' lock (apps.core.shared_counters), or every request of a burst read the
    same history and passed."""
    with locked(keys):
        return _hit_histories(keys, args)


def _hit_histories(keys: list[str], args: list[float]) -> Allowance:
    now = time.time()
    refused: Allowance | None = None
    histories = []
    for i, key in enumerate(keys):
        period, count = args[2 * i], args[2 * i + 1]
        history = [moment for moment in cache.get(key) or [] if moment > now - period]
        if len(history) >= count:
            wait = max(math.ceil(history[0] + period - now), 1)
            if refused is None or wait > refused.wait:
                refused = Allowance(wait, count, period, 0, wait)
        histories.append((key, history, period, count))
    if refused is not None:
        return refused
    shown: Allowance | None = None
    for key, history, period, count in histories:
        history.append(now)
        cache.set(key, history, math.ceil(period))
        remaining = count - len(history)
        if shown is None or remaining < shown.remaining:
            reset = max(math.ceil(history[0] + period - now), 1)
            shown = Allowance(0, count, period, remaining, reset)
    assert shown is not None  # at least one limit
    return shown


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
            allowance = _run_script(script, [cache.make_key(key) for key in keys], args)
        else:
            allowance = _hit_cache_api(keys, args)
        # For the answer's RateLimit-* headers (apps.core.middleware.rate_limit_headers).
        getattr(request, "_request", request).rate_limit = allowance
        if allowance.wait:
            self._wait = allowance.wait
            return False
        return True

    def wait(self):
        return self._wait
