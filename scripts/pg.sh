#!/usr/bin/env bash
# A throw-away PostgreSQL 15 server on a loopback port, in a temporary directory.
#   scripts/pg.sh start DIR [PORT]   initdb (UTF-8, trust auth on loopback) and start; prints the URL
#   scripts/pg.sh stop DIR           stop it and remove DIR
# initdb refuses to run as root: as root, the server runs as the `postgres` user (created by the
# Debian packages, installed here when missing).
set -euo pipefail
cmd="${1:-}"; dir="${2:-}"; port="${3:-55432}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR [PORT]" >&2; exit 2; }

bin=""
for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && bin="$d"; done
if [ -z "$bin" ] && [ "$cmd" = start ]; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null
    fi
    for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && bin="$d"; done
fi
[ -n "$bin" ] || { echo "pg.sh: no PostgreSQL server binaries found" >&2; exit 1; }

as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
start)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off" start >/dev/null \
        || { cat "$dir/server.log" >&2; exit 1; }
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
stop)
    if [ -d "$dir/data" ]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
*) echo "usage: $0 start|stop DIR [PORT]" >&2; exit 2 ;;
esac
