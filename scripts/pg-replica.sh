#!/usr/bin/env bash
# A throw-away PostgreSQL primary with one streaming replica, on loopback ports, in a temporary
# directory (the replication tests of docs/deployment.md#read-replicas).
#   scripts/pg-replica.sh start DIR PRIMARY_PORT REPLICA_PORT [DELAY_MS]
#       the primary (scripts/pg.sh), then a replica made by pg_basebackup -R that replays the
#       WAL DELAY_MS (default 0) after its commit; prints the primary's URL, then the replica's
#   scripts/pg-replica.sh stop-replica DIR     stops the replica (its data stays)
#   scripts/pg-replica.sh start-replica DIR    starts it again
#   scripts/pg-replica.sh stop DIR             stops both and removes DIR
# As root, the servers run as the `postgres` user (as scripts/pg.sh does).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cmd="${1:-}"; dir="${2:-}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|stop-replica|start-replica DIR ..." >&2; exit 2; }

bin=""
for d in /usr/lib/postgresql/*/bin; do [ -x "$d/pg_basebackup" ] && bin="$d"; done
as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
start_replica() {
    as_owner "$bin/pg_ctl" -D "$dir/replica" -l "$dir/replica.log" -w -t 60 \
        -o "-p $(cat "$dir/replica.port") -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off -c recovery_min_apply_delay=$(cat "$dir/replica.delay")ms" \
        start >/dev/null || { cat "$dir/replica.log" >&2; exit 1; }
}

case "$cmd" in
start)
    primary_port="${3:?primary port}"; replica_port="${4:?replica port}"; delay="${5:-0}"
    primary_url="$("$here/pg.sh" start "$dir" "$primary_port")"
    [ -n "$bin" ] || for d in /usr/lib/postgresql/*/bin; do [ -x "$d/pg_basebackup" ] && bin="$d"; done
    as_owner "$bin/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U postgres -D "$dir/replica" -R -X stream \
        >"$dir/basebackup.log" 2>&1 || { cat "$dir/basebackup.log" >&2; exit 1; }
    echo "$replica_port" >"$dir/replica.port"
    echo "$delay" >"$dir/replica.delay"
    start_replica
    echo "$primary_url"
    echo "postgres://postgres@127.0.0.1:$replica_port/postgres"
    ;;
stop-replica)
    as_owner "$bin/pg_ctl" -D "$dir/replica" -m fast -w stop >/dev/null
    ;;
start-replica)
    start_replica
    ;;
stop)
    if [ -d "$dir/replica" ] && [ -n "$bin" ]; then
        as_owner "$bin/pg_ctl" -D "$dir/replica" -m fast -w stop >/dev/null 2>&1 || true
    fi
    "$here/pg.sh" stop "$dir"
    ;;
*) echo "usage: $0 start|stop|stop-replica|start-replica DIR ..." >&2; exit 2 ;;
esac
