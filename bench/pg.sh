#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for benchmarks: bench/pg.sh start|stop DIR PORT
set -euo pipefail
action=$1 dir=$2 port=$3
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
fi
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
case $action in
  start)
    mkdir -p "$dir"; chown postgres "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      su postgres -c "$bin/initdb -D $dir/data -A trust -U postgres -E UTF8" >/dev/null
    fi
    su postgres -c "$bin/pg_ctl -D $dir/data -l $dir/log -w -o \"-c listen_addresses=127.0.0.1 \
      -p $port -k $dir -c shared_buffers=512MB -c max_connections=100 -c fsync=off \
      -c synchronous_commit=off -c full_page_writes=off\" start" >/dev/null ;;
  stop)
    su postgres -c "$bin/pg_ctl -D $dir/data -m fast stop" >/dev/null 2>&1 || true ;;
esac
