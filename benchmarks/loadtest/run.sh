#!/usr/bin/env bash
# make loadtest: the participant flow under load against gunicorn + PostgreSQL on 127.0.0.1, bounded in users and
# time; prints locust's per-step figures (p50/p95/p99, req/s, failures) and then the database invariants.
# Settings: LOAD_USERS (300), LOAD_RATE (10 users/s), LOAD_TIME (180s), WEB_WORKERS (4), LOAD_DB (perseval_load),
# LOAD_PAUSE ("2,10": seconds between a participant's pages; "0,0" for a saturation burst), LOAD_CACHE_URL
# (redis://127.0.0.1:6379/9, the production CACHE_URL: rate limits and sessions read through Redis; empty: none);
# LOAD_RATERS (12 per questionnaire), LOAD_SETS_EACH (3 sets per participant);
# LOAD_SQLITE=1 uses the embedded SQLite database (a fresh file under LOAD_OUT) instead of PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/../.."
USERS=${LOAD_USERS:-300}; RATE=${LOAD_RATE:-10}; TIME=${LOAD_TIME:-180s}; WORKERS=${WEB_WORKERS:-4}
DB=${LOAD_DB:-perseval_load}; PORT=${LOAD_PORT:-8799}; OUT=${LOAD_OUT:-artifacts/loadtest}
mkdir -p "$OUT"; rm -f "$OUT/submitted.txt"
export DEBUG=0 SECRET_KEY="loadtest-only-$(date +%s)-key-xxxxxxxx"
export SECURE_COOKIES=0 ALLOWED_HOSTS=127.0.0.1 LOG_LEVEL=ERROR STATIC_ROOT="$PWD/$OUT/static"
export CACHE_URL="${LOAD_CACHE_URL-redis://127.0.0.1:6379/9}"
export PYTHONPATH="$PWD" LOAD_SUBMITTED="$PWD/$OUT/submitted.txt" LOAD_STUDY=load
if [ -n "${LOAD_SQLITE:-}" ]; then
  export DATABASE_URL="sqlite:///$PWD/$OUT/load.sqlite3"; rm -f "$OUT"/load.sqlite3*; ENGINE=SQLite
else
  export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$DB"; ENGINE=PostgreSQL
  dropdb -h 127.0.0.1 -U postgres --if-exists "$DB"; createdb -h 127.0.0.1 -U postgres "$DB"
fi
.venv/bin/python manage.py migrate --noinput -v0
.venv/bin/python manage.py collectstatic --noinput -v0
.venv/bin/python manage.py load_demo --participants 0 >/dev/null
.venv/bin/python benchmarks/loadtest/setup_study.py
.venv/bin/gunicorn config.wsgi --bind "127.0.0.1:$PORT" --workers "$WORKERS" --log-level warning &
SERVER=$!; trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.2; done
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; gunicorn $WORKERS workers; $ENGINE;" \
  "cache ${CACHE_URL:-none}; locust beside it"
.venv-load/bin/locust -f benchmarks/loadtest/locustfile.py --headless -u "$USERS" -r "$RATE" -t "$TIME" \
  --host "http://127.0.0.1:$PORT" --csv "$OUT/locust" --only-summary --stop-timeout 30 2>&1 | tail -30 || true
kill $SERVER; wait $SERVER 2>/dev/null || true
.venv/bin/python benchmarks/loadtest/check.py
