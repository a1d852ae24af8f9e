#!/usr/bin/env bash
# make bench: PostgreSQL with the fleet-scale dataset, gunicorn in front, the suite driving it.
# The cluster and its data are kept in .cache/bench-pg between runs (seeding takes ~1 min).
# bench/wrk_suite.py (issue 18, wrk from outside) runs first, then bench/webhooks.py (issue 15,
# BENCH_WEBHOOKS=0 skips it); BENCH_LEGACY=1 also runs the
# thread-driven suite of issue 9 (uploads, memory, query counts); BENCH_PROFILE=1 adds a
# cProfile of the caller's hot path (bench/profile_caller.py).
set -euo pipefail
cd "$(dirname "$0")/.."
PGDIR=${BENCH_PGDIR:-$PWD/.cache/bench-pg}
PGPORT=${BENCH_PGPORT:-54331}
PORT=${BENCH_PORT:-8765}
export DATABASE_URL=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:$PGPORT/postgres}
export DJANGO_SETTINGS_MODULE=config.settings.production
export DJANGO_SECRET_KEY=bench-only-secret-key-0123456789abcdefghijklmnopqrstuvwxyz
# Production's database connections: one persistent connection per thread (not DATABASE_POOL).
export SECURE_SSL_REDIRECT=0 ALLOWED_HOSTS=127.0.0.1,localhost DATABASE_POOL=0
# X-Query-Count (a wrapper around every statement) only for the legacy suite, which reads it:
# the wrk suite measures the middleware and database path production runs.
export QUERY_COUNT_HEADER=${BENCH_LEGACY:+1}
export THROTTLE_API_KEY_RATE=10000000/minute THROTTLE_USER_RATE=10000000/minute MEDIA_ROOT=${BENCH_MEDIA_ROOT:-$(mktemp -d)}
export GUNICORN_BIND=127.0.0.1:$PORT JWT_ACCESS_MINUTES=240
# Cached list counts are exact (a data version moved by every write); the lifetime only bounds
# writes made outside Django. Production's default is 30 s; see docs/performance.md.
export LIST_COUNT_CACHE_SECONDS=${LIST_COUNT_CACHE_SECONDS:-600}
REDIS_PORT=${BENCH_REDIS_PORT:-63791}
export CACHE_URL=${BENCH_CACHE_URL:-redis://127.0.0.1:$REDIS_PORT/0}
PY=.venv/bin/python

if ! command -v wrk >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
# Production shares its cache between nodes through Redis; so does the benchmark.
if [ -z "${BENCH_CACHE_URL:-}" ]; then
  if ! command -v redis-server >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  fi
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize yes --pidfile /tmp/bench-redis-$REDIS_PORT.pid >/dev/null
fi

if [ -z "${BENCH_DATABASE_URL:-}" ]; then
  bash bench/pg.sh start "$PGDIR" "$PGPORT"
fi
cleanup() {
  kill "${GPID:-0}" 2>/dev/null || true
  [ -f /tmp/bench-redis-$REDIS_PORT.pid ] && kill "$(cat /tmp/bench-redis-$REDIS_PORT.pid)" 2>/dev/null || true
  [ -z "${BENCH_DATABASE_URL:-}" ] && bash bench/pg.sh stop "$PGDIR" "$PGPORT"
  return 0
}
trap cleanup EXIT
$PY manage.py migrate --noinput -v0
$PY manage.py load_masterdata >/dev/null
$PY manage.py seed_bench "$@"

.venv/bin/gunicorn -c config/gunicorn.py config.wsgi >/tmp/bench-gunicorn.log 2>&1 &
GPID=$!
for _ in $(seq 1 50); do
  curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  sleep 0.2
done
$PY bench/wrk_suite.py --base "http://127.0.0.1:$PORT" ${BENCH_WRK_ARGS:-}
# Change events and webhooks (issue 15): calendar job, write-path cost, commit-to-delivery
# latency, deliveries/s and CPU per delivery of one and two workers, in a database of its own
# on the same server (its dataset is built once and kept). BENCH_WEBHOOKS=0 skips it.
if [ "${BENCH_WEBHOOKS:-1}" = "1" ]; then
  $PY -c "import os, psycopg
c = psycopg.connect(os.environ['DATABASE_URL'], autocommit=True)
if not c.execute(\"SELECT 1 FROM pg_database WHERE datname = 'bench_webhooks'\").fetchone():
    c.execute('CREATE DATABASE bench_webhooks')"
  DJANGO_SETTINGS_MODULE=config.settings.test \
    $PY bench/webhooks.py --database-url "${DATABASE_URL%/*}/bench_webhooks" ${BENCH_WEBHOOKS_ARGS:-}
fi
if [ -n "${BENCH_PROFILE:-}" ]; then
  $PY bench/profile_caller.py /v1/me --top 25
fi
if [ -n "${BENCH_LEGACY:-}" ]; then
  $PY bench/suite.py --base "http://127.0.0.1:$PORT" --master-pid "$GPID" ${BENCH_ARGS:-}
fi
