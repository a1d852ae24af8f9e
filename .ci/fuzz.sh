#!/usr/bin/env bash
# Schema fuzzing: schemathesis against /v1/schema of a freshly seeded demo behind gunicorn,
# with real credentials and every check (settings in schemathesis.toml). Bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d /tmp/fuzz.XXXXXX)
PORT=${FUZZ_PORT:-8799}
export DJANGO_SETTINGS_MODULE=config.settings.production
export DJANGO_SECRET_KEY=fuzz-only-secret-key-0123456789abcdefghijklmnopqrstuvwxyz
export SECURE_SSL_REDIRECT=0 ALLOWED_HOSTS=127.0.0.1,localhost
export DATABASE_URL=sqlite:///$WORK/fuzz.sqlite3 MEDIA_ROOT=$WORK/media
export JWT_ACCESS_MINUTES=120 THROTTLE_API_KEY_RATE=10000000/minute THROTTLE_USER_RATE=10000000/minute
PY=.venv/bin/python
$PY manage.py migrate --noinput -v0
$PY manage.py seed_demo --force >/dev/null
.venv/bin/gunicorn -c config/gunicorn.py --bind 127.0.0.1:$PORT --workers 1 --threads 4 \
  config.wsgi >"$WORK/gunicorn.log" 2>&1 &
GPID=$!
trap 'kill $GPID 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.2; done
TOKEN=$(curl -s -X POST "http://127.0.0.1:$PORT/v1/auth/token" -H 'apiKey: demo-api-key' \
  -H 'Content-Type: application/json' -d '{"username":"demo-admin","password":"demo-password"}' \
  | $PY -c 'import json,sys; print(json.load(sys.stdin)["access"])')
timeout "${FUZZ_SECONDS:-600}" .venv/bin/schemathesis run "http://127.0.0.1:$PORT/v1/schema" \
  -H "apiKey: demo-api-key" -H "Authorization: Bearer $TOKEN" \
  --checks all -n "${FUZZ_EXAMPLES:-20}" --request-timeout 30 --generation-deterministic
