#!/usr/bin/env bash
# Side-by-side benchmark: the flask-peewee peer, Plover's microblog example (on SQLite and on
# PostgreSQL) and the hand-written actix-web + diesel ceilings (../shared/bench-limit, the SQLite
# read ceiling, and our own benches/ceiling for create_message and for PostgreSQL), on one data
# set, with ../shared/peer/bench.sh (wrk).
#
# usage: scripts/bench.sh
#        ROUNDS=1 DURATION=2 WARMUP=1 WORKLOADS="list_message detail_message" SERVERS="plover limit" \
#          scripts/bench.sh          # a quick check that everything starts and answers
#
# How a run goes: all servers of $SERVERS are started at the beginning of a round and stay up
# for the whole round; then for each workload, each server that serves it runs that workload
# in turn (one ../shared/peer/bench.sh call: warm-up, then the measured run), so the figures of
# one workload are taken minutes apart at most, not a whole sitting apart (sequential sittings
# drift by up to a quarter on a shared 2-core machine). The server that goes first rotates per
# round. The idle servers wait on their sockets meanwhile (no CPU to speak of).
# Data: every server gets a fresh copy of the data set at the start of each round, and keeps
# that copy for the whole round. One copy per server is needed because all servers are up at
# once (the SQLite servers must not share a file: create_message writes, and the ceilings add
# their indexes and statistics to their file at start), and one copy per round because a copy
# cannot be renewed under a running server. So within a round a server's later workloads see
# the rows its own create_message added, as before: only list_user follows it in the default
# order, and the other lists read the first pages by id.
#
# Env (all optional):
#   ROUNDS=1            interleaved rounds; the table shows medians over the rounds; the
#                       ratios are medians of the per-round ratios (each round pairs runs taken
#                       minutes apart), with their range over the rounds when ROUNDS > 1
#   SCALE=1             data-set scale for the peer's seed.py (1 = 1,000 users, 100,000 messages)
#   WORKLOADS="..."     workloads, in this order (default: bench.sh's whole set; the list
#                       features count_exact count_estimated count_auto fields order_join order_text search_common
#                       search_rare filter_or aggregate, which only plover and plover_pg serve; `plain` too,
#                       which only the ceilings serve)
#   SERVERS="peer plover plover_pg limit own own_pg"   which servers to run; plover =
#                       microblog on a SQLite file, plover_pg = the same binary on PostgreSQL
#                       (scripts/pg.sh), limit = ../shared/bench-limit (SQLite, reads only),
#                       own = benches/ceiling (plover-ceiling) on a SQLite file, own_pg = the
#                       same binary on PostgreSQL. The ceiling of a table row: limit for
#                       Plover's SQLite reads, own for its SQLite create_message, own_pg for
#                       every plover_pg row (scripts/bench_table.py)
#   LIMIT_WORKLOADS="list_message list_message_page detail_message filter_join filter_ops
#                   list_user plain"   the workloads bench-limit serves (its routes, see
#                       ../shared/bench-limit/src/main.rs); it has no write route
#   OWN_WORKLOADS="create_message"   the workloads own runs: bench-limit is the SQLite read
#                       ceiling, own is there for the write (it has the read routes too)
#   OWN_PG_WORKLOADS="list_message list_message_page detail_message filter_join filter_ops
#                   create_message list_user plain"   the workloads own_pg runs (all its routes)
#   PEER_INDEXES=1      give the peer's copy the indexes bench-limit creates for its queries
#                       (user(username) unique, message(user_id, pub_date),
#                       message(pub_date, id)); 0 = the peer's own schema (peewee's FK indexes)
#   DURATION WARMUP THREADS CONNS TIMEOUT ...   passed through to bench.sh (wrk settings)
#   RATE_LIMIT=N | db:N  passed to the microblog (plover, plover_pg): a rate limit of N
#                       requests a minute per client on its REST API, counted in the process or
#                       in the database; set N above what a run sends to measure the cost of
#                       counting
#   ETAGS=off           passed to the microblog (plover, plover_pg): no ETag on its REST
#                       answers (the default sends them); two runs, with and without, give what
#                       hashing the bodies costs (WRITES=1 measures it side by side itself)
#   WRITES=1            after the rounds, the write figures of issue 33 for plover and plover_pg
#                       (those of $SERVERS), each on a fresh copy of the data with a twin
#                       process started with ETAGS=off on the same database (port PORT_BASE+7):
#                       an import of 10,000 messages in bulk requests of 1,000 against single
#                       POSTs (1 connection, then 4), detail_message and list_message with ETags
#                       on and off, and the same reads on an idle server and under a bulk import
#                       (scripts/bench_writes.py, which says exactly how). WRITES_ROUNDS
#                       (default 2) rounds of its read figures; IMPORT_ROWS, BULK_ROWS change the
#                       import. WORKLOADS=none with WRITES=1 runs only these figures:
#                         WRITES=1 WORKLOADS=none SERVERS="plover plover_pg" scripts/bench.sh
#   PLOVER_SHARED=../shared       the shared folder (peer, bench-limit)
#   CARGO_TARGET_DIR=./target     build dir (microblog and plover-ceiling, both of this
#                                 workspace); bench-limit builds in $CARGO_TARGET_DIR/bench-limit,
#                                 venvs live in $CARGO_TARGET_DIR/bench
#   PEER_VENV=$CARGO_TARGET_DIR/bench/peer-venv   the peer's virtualenv (made if missing)
#   PEER_WORKERS=2      gunicorn sync workers of the peer (its run.sh's WORKERS; the peer gets
#                       THREADS=1 whatever THREADS, wrk's thread count, is set to)
#   SKIP_BUILD=1        use the existing release binaries (builds run under nice -n 19)
#   PLOVER_BIN=path     the microblog binary to measure (default: this workspace's release
#                       build), e.g. a branch's build copied aside, for a before/after
#   PORT_BASE=18100     peer on PORT_BASE, plover on +1, limit on +2, plover_pg on +3, own on
#                       +5, own_pg on +6, the ETAGS=off twin of WRITES=1 on +7 (127.0.0.1)
#   PG_PORT=PORT_BASE+4 the throw-away PostgreSQL server (plover_pg and own_pg only)
#   KEEP_TMP=1          keep the temp dir (databases, logs, raw bench.sh output)
#
# Output: a Markdown table on stdout (also $CARGO_TARGET_DIR/bench/last-report.md), per workload:
# req/s and p99 of each server (medians over rounds), Plover / ceiling req/s, Plover p99 /
# ceiling p99, Plover / peer req/s, the same three for plover_pg (against own_pg), and which
# targets of the performance issue Plover and Plover on PostgreSQL miss; then errors, peak
# RSS/PSS and CPU per server and the load average before each workload. The raw figures are
# kept in $CARGO_TARGET_DIR/bench/last-results.txt;
# `python3 scripts/bench_table.py target/bench/last-results.txt` prints the table again.
# RSS is sampled by bench.sh during each measured run (not the warm-ups); the peak is the max
# over all workloads and rounds, with the server up for the whole round.
# bench-limit is SQLite only and has no write route; benches/ceiling is our own ceiling, written
# the same way, for what it lacks: PostgreSQL and create_message (see its src/main.rs).
#
# Requires wrk (Debian package `wrk`; installed with apt-get when the script runs as root or
# with password-less sudo, otherwise it stops and says so), curl, python3, psql for plover_pg and own_pg.
#
# Plover's copy of the database gets a bcrypt hash (cost 12) of $AUTH_PASS (default `password`)
# for $AUTH_USER (default user0, the user bench.sh's create_message authenticates as); the
# peer's seed writes werkzeug scrypt hashes, which Plover does not read. It also gets the unique
# index on user(username) that Plover's own DDL makes (the seed's table has none). own serves a copy of
# Plover's copy (plover-base.db, for that hash); limit serves a copy of the seed.
# The ceilings create their indexes (IF NOT EXISTS) and run ANALYZE on their copy at start
# (sqlite_stat1); Plover and the peer do not. On PostgreSQL plover_base is analyzed when it is
# loaded, so every copy of it starts with statistics.
#
# plover_pg and own_pg: a PostgreSQL 15 started with scripts/pg.sh (stopped on exit) gets the
# database plover_base: tables made by the microblog binary itself (Plover's DDL), then emptied
# and loaded with the rows of Plover's SQLite copy (same ids, same bcrypt hash; booleans 0/1 ->
# f/t), SERIAL sequences set past the max ids, ANALYZE. Each round, each of the two serves its own
# fresh CREATE DATABASE ... TEMPLATE plover_base (plover_ROUND, own_pg_ROUND), on the same
# PostgreSQL server. The PostgreSQL processes are not in their RSS/CPU columns (only the
# microblog or plover-ceiling process tree is); their CPU (during that server's measured runs)
# and memory are on a note line per server.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
SHARED="${PLOVER_SHARED:-$(cd "$ROOT/.." && pwd)/shared}"
SHARED="$(cd "$SHARED" && pwd)"
PEER_DIR="$SHARED/peer"
PEER_APP="$PEER_DIR/flask_peewee_app"
LIMIT_DIR="$SHARED/bench-limit"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
mkdir -p "$CARGO_TARGET_DIR"
CARGO_TARGET_DIR="$(cd "$CARGO_TARGET_DIR" && pwd)"
LIMIT_TARGET="$CARGO_TARGET_DIR/bench-limit"
BENCH_STATE="$CARGO_TARGET_DIR/bench"
mkdir -p "$BENCH_STATE"

ROUNDS="${ROUNDS:-1}"
SCALE="${SCALE:-1}"
SERVERS="${SERVERS:-peer plover plover_pg limit own own_pg}"
PORT_BASE="${PORT_BASE:-18100}"
PG_PORT="${PG_PORT:-$((PORT_BASE + 4))}"
PY="${PYTHON:-python3}"
AUTH_USER="${AUTH_USER:-user0}"
AUTH_PASS="${AUTH_PASS:-password}"
PEER_VENV="${PEER_VENV:-$BENCH_STATE/peer-venv}"
TOOLS_VENV="$BENCH_STATE/tools-venv"
PEER_WORKERS="${PEER_WORKERS:-2}"
PEER_INDEXES="${PEER_INDEXES:-1}"
read -r -a LIMIT_WLS <<<"${LIMIT_WORKLOADS:-list_message list_message_page detail_message filter_join filter_ops list_user plain}"
read -r -a OWN_WLS <<<"${OWN_WORKLOADS:-create_message}"
read -r -a OWN_PG_WLS <<<"${OWN_PG_WORKLOADS:-list_message list_message_page detail_message filter_join filter_ops create_message list_user plain}"
read -r -a ALL_WLS <<<"${WORKLOADS:-list_message list_message_page detail_message filter_join filter_ops create_message list_user}"
WRITES="${WRITES:-0}"
WRITES_ROUNDS="${WRITES_ROUNDS:-2}"
if [ "${ALL_WLS[*]}" = none ]; then
  [ "$WRITES" = 1 ] || die "WORKLOADS=none runs nothing without WRITES=1"
  ALL_WLS=()
fi

log() { echo "[bench] $*" >&2; }
die() { echo "bench.sh: $*" >&2; exit 2; }

# The list features that only Plover serves (plover and plover_pg run them; their ratio to the
# peer is against the peer's list_message): path of each.
list_feature() {
  case "$1" in
    count_exact) echo "/api/message/?count=exact" ;;
    count_estimated) echo "/api/message/?count=estimated" ;;
    count_auto) echo "/api/message/?count=auto" ;;
    order_text) echo "/api/user/?ordering=-username" ;;
    fields) echo "/api/message/?fields=id,content" ;;
    order_join) echo "/api/message/?ordering=user__username" ;;
    search_common) echo "/api/message/?q=lorem" ;;
    search_rare) echo "/api/message/?q=4242" ;;
    filter_or) echo "/api/message/?or=(user=42,id__lt=100)" ;;
    aggregate) echo "/api/message/aggregate/?group=user&count&max=pub_date" ;;
    *) return 1 ;;
  esac
}
for w in "${ALL_WLS[@]}" "${LIMIT_WLS[@]}" "${OWN_WLS[@]}" "${OWN_PG_WLS[@]}"; do
  case "$w" in list_message|list_message_page|detail_message|filter_join|filter_ops|create_message|list_user|plain) ;;
    *) list_feature "$w" >/dev/null || die "unknown workload $w (see ../shared/peer/bench.sh and list_feature)" ;; esac
done
[ ${#ALL_WLS[@]} -gt 0 ] || [ "$WRITES" = 1 ] || die "WORKLOADS is empty"
if [ "$WRITES" = 1 ]; then
  [ -z "${ETAGS:-}" ] || die "WRITES=1 runs ETags on and off side by side itself: leave ETAGS unset"
  case " $SERVERS " in *" plover "*|*" plover_pg "*) ;; *) die "WRITES=1 needs plover or plover_pg in SERVERS" ;; esac
  [[ "$WRITES_ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "WRITES_ROUNDS must be a positive integer"
fi
read -r -a SRV_LIST <<<"$SERVERS"
NSRV=${#SRV_LIST[@]}
[ "$NSRV" -gt 0 ] || die "SERVERS is empty"
for s in "${SRV_LIST[@]}"; do
  case "$s" in peer|plover|plover_pg|limit|own|own_pg) ;; *) die "unknown server $s (peer plover plover_pg limit own own_pg)" ;; esac
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer"

# --- prerequisites ------------------------------------------------------------------------
if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ]; then asroot=()
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then asroot=(sudo -n)
  else die "wrk is not installed, and installing it needs root: run \`apt-get install -y wrk\` as root (Debian/Ubuntu package wrk) and start again"
  fi
  if command -v apt-get >/dev/null; then
    log "installing wrk (apt-get install -y wrk)"
    "${asroot[@]}" apt-get install -y wrk >/dev/null 2>&1 \
      || { "${asroot[@]}" apt-get update -qq >/dev/null 2>&1 && "${asroot[@]}" apt-get install -y wrk >/dev/null 2>&1; } || true
  fi
  command -v wrk >/dev/null \
    || die "wrk is required and is still not on PATH after trying \`apt-get install -y wrk\`; install wrk (4.x, Debian package wrk) and start again"
fi
command -v curl >/dev/null || die "curl is required"
command -v "$PY" >/dev/null || die "$PY is required"

PLOVER_BIN="${PLOVER_BIN:-$CARGO_TARGET_DIR/release/microblog}"
LIMIT_BIN="$LIMIT_TARGET/release/bench-limit"
CEILING_BIN="$CARGO_TARGET_DIR/release/plover-ceiling"
if [ "${SKIP_BUILD:-0}" != "1" ]; then
  log "building Plover's microblog example and our ceiling, plover-ceiling (release, $CARGO_TARGET_DIR)"
  (cd "$ROOT" && nice -n 19 cargo build --release -q -p microblog -p plover-ceiling)
  log "building bench-limit (release, $LIMIT_TARGET)"
  (cd "$LIMIT_DIR" && CARGO_TARGET_DIR="$LIMIT_TARGET" nice -n 19 cargo build --release -q --locked)
fi
for b in "$PLOVER_BIN" "$LIMIT_BIN" "$CEILING_BIN"; do
  [ -x "$b" ] || die "missing binary $b"
done

# The peer's venv, made the way its run.sh makes it (same stamp, so run.sh does not reinstall).
stamp="$PEER_VENV/.requirements.sha256"
want="$(sha256sum "$PEER_APP/requirements.txt" | cut -d' ' -f1)"
if [ ! -x "$PEER_VENV/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  log "making the peer's venv in $PEER_VENV"
  [ -x "$PEER_VENV/bin/python" ] || "$PY" -m venv "$PEER_VENV"
  "$PEER_VENV/bin/pip" install -q --disable-pip-version-check -r "$PEER_APP/requirements.txt"
  echo "$want" > "$stamp"
fi
# A venv with bcrypt, to give Plover's copy a hash it can check.
if [ ! -x "$TOOLS_VENV/bin/python" ] || ! "$TOOLS_VENV/bin/python" -c 'import bcrypt' 2>/dev/null; then
  log "making the tools venv (bcrypt) in $TOOLS_VENV"
  [ -x "$TOOLS_VENV/bin/python" ] || "$PY" -m venv "$TOOLS_VENV"
  "$TOOLS_VENV/bin/pip" install -q --disable-pip-version-check bcrypt
fi

# --- data set -----------------------------------------------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/plover-bench.XXXXXX")"
declare -A SRV_PID=()   # server name -> pid of the running server
PG_DIR=""       # the PostgreSQL server's directory, once started
PG_SAMPLER=""   # pid of the PostgreSQL memory sampler while plover_pg or own_pg runs
cleanup() {
  local n
  [ -n "$PG_SAMPLER" ] && { kill "$PG_SAMPLER" 2>/dev/null || true; }
  for n in "${!SRV_PID[@]}"; do stop_server "$n"; done
  if [ -n "$PG_DIR" ]; then log "stopping PostgreSQL"; "$HERE/pg.sh" stop "$PG_DIR" || true; fi
  if [ "${KEEP_TMP:-0}" = "1" ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

log "seeding scale $SCALE into $WORK/seed.db"
"$PEER_VENV/bin/python" "$PEER_APP/seed.py" --db "$WORK/seed.db" --scale "$SCALE" >&2
cp "$WORK/seed.db" "$WORK/plover-base.db"
cp "$WORK/seed.db" "$WORK/peer-base.db"
if [ "$PEER_INDEXES" = "1" ]; then
  log "giving the peer's copy the indexes of bench-limit"
  "$PY" - "$WORK/peer-base.db" <<'EOF'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
with con:
    con.execute('CREATE UNIQUE INDEX IF NOT EXISTS bench_user_username ON "user"(username)')
    con.execute('CREATE INDEX IF NOT EXISTS bench_message_user_pub ON message(user_id, pub_date)')
    con.execute('CREATE INDEX IF NOT EXISTS bench_message_pub_id ON message(pub_date, id)')
con.execute('PRAGMA wal_checkpoint(TRUNCATE)')
con.close()
EOF
fi
"$TOOLS_VENV/bin/python" - "$WORK/plover-base.db" "$AUTH_USER" "$AUTH_PASS" <<'EOF'
import sqlite3, sys
import bcrypt
db, user, raw = sys.argv[1:4]
h = bcrypt.hashpw(raw.encode(), bcrypt.gensalt(12)).decode()
con = sqlite3.connect(db)
with con:
    n = con.execute('UPDATE user SET password = ? WHERE username = ?', (h, user)).rowcount
    # Plover's own DDL declares username UNIQUE (#[rest(unique)]), which indexes it; the peer's
    # table, copied here, lacks that index, and CREATE TABLE IF NOT EXISTS cannot add it.
    # Plover's other indexes are created by the example at start.
    con.execute('CREATE UNIQUE INDEX IF NOT EXISTS user_username ON "user"(username)')
if n != 1:
    raise SystemExit('no user %r in %s' % (user, db))
con.execute('PRAGMA wal_checkpoint(TRUNCATE)')
con.close()
EOF

# --- PostgreSQL (plover_pg and own_pg only) ----------------------------------------------
PG_URL="postgres://postgres@127.0.0.1:$PG_PORT"   # + /DBNAME
pg_sql() {  # dbname [psql args...]: psql, stopping at the first error
  local db="$1"; shift
  psql -X -q -v ON_ERROR_STOP=1 -d "$PG_URL/$db" "$@"
}

# Starts PostgreSQL and makes the database plover_base: Plover's own DDL (the microblog binary
# creates its tables at start), emptied of the admin user the binary adds, then loaded with the
# rows of $1 (Plover's SQLite copy) and checked against it.
setup_pg() {
  local sqlite_db="$1" t
  PG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/plover-bench-pg.XXXXXX")"
  log "starting PostgreSQL on 127.0.0.1:$PG_PORT ($PG_DIR)"
  "$HERE/pg.sh" start "$PG_DIR" "$PG_PORT" >/dev/null
  command -v psql >/dev/null || { echo "bench.sh: psql is required for plover_pg and own_pg" >&2; exit 2; }
  pg_sql postgres -c "CREATE DATABASE plover_base"

  log "creating Plover's tables in plover_base (microblog binary)"
  DATABASE_URL="$PG_URL/plover_base" BIND="127.0.0.1:$(port_of plover_pg)" "$PLOVER_BIN" \
    >"$WORK/plover_pg-ddl.log" 2>&1 &
  SRV_PID[plover_pg-ddl]=$!
  wait_ready plover_pg-ddl "$(port_of plover_pg)"
  stop_server plover_pg-ddl
  pg_sql plover_base -c 'TRUNCATE "user", relationship, message, note RESTART IDENTITY CASCADE'

  log "loading $(basename "$sqlite_db") into plover_base"
  pg_sql plover_base -At -F $'\t' -c "SELECT table_name, column_name, data_type
      FROM information_schema.columns WHERE table_schema = 'public'
      ORDER BY table_name, ordinal_position" > "$WORK/pg-columns.tsv"
  # The rows of every table as COPY ... FROM STDIN (CSV) blocks, in the columns PostgreSQL has
  # (table, column, type in pg-columns.tsv); then each SERIAL sequence set past the max id.
  "$PY" - "$sqlite_db" "$WORK/pg-columns.tsv" > "$WORK/pg-load.sql" <<'PY'
import sqlite3, sys
db, columns = sys.argv[1:3]
cols = {}
for line in open(columns):
    table, col, typ = line.rstrip('\n').split('\t')
    cols.setdefault(table, []).append((col, typ))
order = ['user', 'relationship', 'message', 'note']   # referenced tables first
# Plover's own tables (history, outbox, jobs, permissions...) start empty: the peer's data set
# has none of them.
if sorted(t for t in cols if not t.startswith('plover_')) != sorted(order):
    raise SystemExit('unexpected PostgreSQL tables: %s' % sorted(cols))

def field(v, typ):
    if v is None:
        return ''                                  # unquoted empty field: NULL
    if typ == 'boolean':                           # peewee stores 0/1
        if v not in (0, 1):
            raise SystemExit('not a 0/1 boolean: %r' % (v,))
        return 't' if v else 'f'
    if typ == 'integer':
        return str(int(v))
    return '"' + str(v).replace('"', '""') + '"'   # text; timestamps as peewee's text

con = sqlite3.connect(db)
out = sys.stdout
for table in order:
    have = {r[1] for r in con.execute('PRAGMA table_info("%s")' % table)}
    missing = [c for c, _ in cols[table] if c not in have]
    if missing:
        raise SystemExit('SQLite table %s lacks %s' % (table, missing))
    names = ', '.join('"%s"' % c for c, _ in cols[table])
    out.write('COPY "%s" (%s) FROM STDIN WITH (FORMAT csv);\n' % (table, names))
    for row in con.execute('SELECT %s FROM "%s" ORDER BY id' % (names, table)):
        out.write(','.join(field(v, t) for v, (_, t) in zip(row, cols[table])) + '\n')
    out.write('\\.\n')
    out.write("SELECT setval(pg_get_serial_sequence('\"%s\"', 'id'), "
              "(SELECT COALESCE(MAX(id), 0) + 1 FROM \"%s\"), false);\n" % (table, table))
PY
  pg_sql plover_base -1 -f "$WORK/pg-load.sql" >/dev/null
  # The trigram indexes that serve `q` on the message resource's search fields (docs/reference.md#search-q).
  pg_sql plover_base -c 'CREATE EXTENSION IF NOT EXISTS pg_trgm' \
    -c 'CREATE INDEX message_content_trgm ON message USING gin (content COLLATE "default" gin_trgm_ops)' \
    -c 'CREATE INDEX user_username_trgm ON "user" USING gin (username COLLATE "default" gin_trgm_ops)' >/dev/null
  pg_sql plover_base -c 'ANALYZE'

  # the same rows: count and max id per table, and the bench user's bcrypt hash
  for t in user relationship message note; do
    local want got
    want="$("$PY" -c 'import sqlite3, sys; print("%d|%d" % sqlite3.connect(sys.argv[1]).execute(
      "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM \"%s\"" % sys.argv[2]).fetchone())' "$sqlite_db" "$t")"
    got="$(pg_sql plover_base -At -c "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM \"$t\"")"
    [ "$want" = "$got" ] || { echo "bench.sh: $t differs: SQLite $want, PostgreSQL $got" >&2; exit 1; }
  done
  local h1 h2
  h1="$("$PY" -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(
    "SELECT password FROM user WHERE username = ?", (sys.argv[2],)).fetchone()[0])' "$sqlite_db" "$AUTH_USER")"
  h2="$(pg_sql plover_base -At -c "SELECT password FROM \"user\" WHERE username = '$AUTH_USER'")"
  [ "$h1" = "$h2" ] || { echo "bench.sh: $AUTH_USER's hash differs between SQLite and PostgreSQL" >&2; exit 1; }
  log "plover_base: $(pg_sql plover_base -At -F ' ' -c 'SELECT (SELECT COUNT(*) FROM "user"),
      (SELECT COUNT(*) FROM message), (SELECT COUNT(*) FROM relationship), (SELECT COUNT(*) FROM note)' \
      | awk '{ printf "users=%s messages=%s relationships=%s notes=%s", $1, $2, $3, $4 }')"
}

# CPU and memory of the PostgreSQL server's process tree (the postmaster and its backends).
pg_pids() { local pm; pm="$(head -1 "$PG_DIR/data/postmaster.pid")"; echo "$pm $(ps -o pid= --ppid "$pm" | tr '\n' ' ')"; }
pg_ticks() {  # utime+stime of the live tree, plus the postmaster's reaped children (cutime+cstime)
  local pm t p v; pm="$(head -1 "$PG_DIR/data/postmaster.pid")"
  t="$(sed 's/^.*) //' "/proc/$pm/stat" | awk '{ print $14 + $15 }')"
  for p in $(pg_pids); do
    v="$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | awk '{ print $12 + $13 }' || true)"
    t=$((t + ${v:-0}))
  done
  echo "$t"
}
pg_sampler() {  # keeps "peak_rss_kib peak_pss_kib" in $1 (from its former peaks), every 0.25 s, until killed
  local r s p a b pr=0 ps_=0
  if [ -s "$1" ]; then read -r pr ps_ < "$1" || { pr=0; ps_=0; }; fi
  while :; do
    r=0; s=0
    for p in $(pg_pids); do
      a="$(awk '/^VmRSS:/{ print $2 }' "/proc/$p/status" 2>/dev/null || true)"
      b="$(awk '/^Pss:/{ print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null || true)"
      r=$((r + ${a:-0})); s=$((s + ${b:-0}))
    done
    [ "$r" -gt "$pr" ] && pr="$r"; [ "$s" -gt "$ps_" ] && ps_="$s"
    echo "$pr $ps_" > "$1.new"; mv "$1.new" "$1"; sleep 0.25
  done
}

# --- servers ------------------------------------------------------------------------------
port_of() {
  case "$1" in peer) echo "$PORT_BASE";; plover) echo $((PORT_BASE + 1));;
    limit) echo $((PORT_BASE + 2));; plover_pg) echo $((PORT_BASE + 3));;
    own) echo $((PORT_BASE + 5));; own_pg) echo $((PORT_BASE + 6));; esac   # PG_PORT: +4
}

# One function per server: serve_NAME ROUND PORT makes that round's fresh copy of the data set
# and starts the server in the background (log in $WORK/NAME-ROUND.log); start_server takes its
# pid. The copy serves the server for the whole round (see the header).
serve_peer() {
  local db="$WORK/peer-$1.db"; cp "$WORK/peer-base.db" "$db"
  PEER_SEED=0 PEER_DB="$db" PORT="$2" PEER_VENV="$PEER_VENV" WORKERS="$PEER_WORKERS" THREADS=1 \
    WORKER_CLASS=sync "$PEER_APP/run.sh" >"$WORK/peer-$1.log" 2>&1 &
}
serve_plover() {
  local db="$WORK/plover-$1.db"; cp "$WORK/plover-base.db" "$db"
  DATABASE_URL="sqlite://$db" BIND="127.0.0.1:$2" "$PLOVER_BIN" >"$WORK/plover-$1.log" 2>&1 &
}
serve_plover_pg() {
  pg_sql postgres -c "CREATE DATABASE plover_$1 TEMPLATE plover_base"
  DATABASE_URL="$PG_URL/plover_$1" BIND="127.0.0.1:$2" "$PLOVER_BIN" >"$WORK/plover_pg-$1.log" 2>&1 &
}
serve_limit() {
  local db="$WORK/limit-$1.db"; cp "$WORK/seed.db" "$db"
  "$LIMIT_BIN" "$db" "127.0.0.1:$2" >"$WORK/limit-$1.log" 2>&1 &
}
serve_own() {  # Plover's copy: the bcrypt hash create_message needs
  local db="$WORK/own-$1.db"; cp "$WORK/plover-base.db" "$db"
  "$CEILING_BIN" "sqlite://$db" "127.0.0.1:$2" >"$WORK/own-$1.log" 2>&1 &
}
serve_own_pg() {
  pg_sql postgres -c "CREATE DATABASE own_pg_$1 TEMPLATE plover_base"
  "$CEILING_BIN" "$PG_URL/own_pg_$1" "127.0.0.1:$2" >"$WORK/own_pg-$1.log" 2>&1 &
}

serves() {  # server workload: whether that server runs that workload
  local w list
  case "$1" in
    limit) list=("${LIMIT_WLS[@]}") ;;
    own) list=("${OWN_WLS[@]}") ;;
    own_pg) list=("${OWN_PG_WLS[@]}") ;;
    peer) [ "$2" != plain ] && ! list_feature "$2" >/dev/null; return ;;
    *) [ "$2" != plain ]; return ;;   # /plain is a route of the ceilings only
  esac
  for w in "${list[@]}"; do [ "$w" = "$2" ] && return 0; done
  return 1
}
uses_pg() { [ "$1" = plover_pg ] || [ "$1" = own_pg ]; }   # server: whether it serves from PostgreSQL

wait_ready() {  # name port [log]: wait until ${SRV_PID[name]} answers HTTP on port
  local name="$1" port="$2" logf="${3:-$WORK/$1.log}" pid="${SRV_PID[$1]}" code
  for _ in $(seq 1 600); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "bench.sh: $name exited during start:" >&2; tail -20 "$logf" >&2; exit 1
    fi
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/api/message/1/" || true)"
    [ "$code" != "000" ] && return 0
    sleep 0.1
  done
  echo "bench.sh: $name did not answer on port $port within 60 s" >&2; exit 1
}

start_server() {  # name round -> sets SRV_PID[name]
  local name="$1" port; port="$(port_of "$name")"
  if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/"; then
    die "port $port is already in use"
  fi
  "serve_$name" "$2" "$port"
  SRV_PID[$name]=$!
  wait_ready "$name" "$port" "$WORK/$name-$2.log"
}

stop_server() {  # name
  local pid="${SRV_PID[$1]:-}"
  unset "SRV_PID[$1]"
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

bench_path() {  # base name path: a list-feature workload, as ../shared/peer/bench.sh runs a static one
  local base=$1 name=$2 path=$3 code line
  code="$(curl -s -o /dev/null -w '%{http_code}' "$base$path" || true)"
  case "$code" in 2??) ;; *) echo "# warning: $name preflight answered HTTP $code" ;; esac
  export WL_MODE=static WL_PREFIX=/api/message/
  wrk -t"${THREADS:-2}" -c"${CONNS:-32}" -d"${WARMUP:-2s}" --timeout "${TIMEOUT:-10s}" \
    -s "$PEER_DIR/wrk/workload.lua" "$base$path" >/dev/null 2>&1 || true
  line="$(wrk -t"${THREADS:-2}" -c"${CONNS:-32}" -d"${DURATION:-10s}" --timeout "${TIMEOUT:-10s}" \
    -s "$PEER_DIR/wrk/workload.lua" "$base$path" 2>&1 | grep '^RESULT ' | head -1 || true)"
  if [ -z "$line" ]; then echo "$name: wrk failed"; return; fi
  read -r _ rps p50 p99 non2xx sockerr reqs <<<"$line"
  printf '%-18s %8s %9s %8s %8s %9s %9s\n' "$name" "$rps" "$p50" "$p99" "$non2xx" "$sockerr" "$reqs"
}

# --- runs ---------------------------------------------------------------------------------
RESULTS="$WORK/results.txt"   # round server workload rps p50 p99 non2xx sockerr reqs cpu rss pss
: > "$RESULTS"
LOADS="$WORK/loads.txt"
: > "$LOADS"
PG_USAGE="$WORK/pg-usage.txt"   # round server cpu% peak_rss_MiB peak_pss_MiB of PostgreSQL itself
: > "$PG_USAGE"
: > "$WORK/warnings.txt"
case " $SERVERS " in *" plover_pg "*|*" own_pg "*) setup_pg "$WORK/plover-base.db" ;; esac
T_START="$(date -u +%Y-%m-%dT%H:%M:%SZ)"

[ ${#ALL_WLS[@]} -gt 0 ] || ROUNDS=0   # WORKLOADS=none: the write figures only
for round in $(seq 1 "$ROUNDS"); do
  # this round's order: the list rotated by round - 1
  order=()
  for k in $(seq 0 $((NSRV - 1))); do order+=("${SRV_LIST[$(( (k + round - 1) % NSRV ))]}"); done
  log "round $round/$ROUNDS: starting ${order[*]} (fresh copies of the data)"
  for name in "${order[@]}"; do start_server "$name" "$round"; done
  declare -A pg_cpu=() pg_wall=()   # server -> PostgreSQL's CPU ticks and wall seconds during its runs
  rm -f "$WORK"/pg-peak-*
  for w in "${ALL_WLS[@]}"; do
    load="$(uptime | sed 's/.*load average: //')"
    # shellcheck disable=SC2009  # (pgrep warns on stderr for this pattern when nothing matches)
    busy="$(ps -eo comm= | grep -cE '^(rustc|cc1|cc1plus|cargo|clippy-driver|ld|rust-lld)$' || true)"
    echo "round $round $w: load average $load; compiler processes running: $busy" >> "$LOADS"
    for name in "${order[@]}"; do
      serves "$name" "$w" || continue
      log "round $round/$ROUNDS: $w on $name (load average $load)"
      if uses_pg "$name"; then
        pg_sampler "$WORK/pg-peak-$name" & PG_SAMPLER=$!
        pg_t0="$(pg_ticks)"; pg_w0="$(date +%s.%N)"
      fi
      out="$WORK/out-$round-$w-$name.txt"
      if path="$(list_feature "$w")"; then
        bench_path "http://127.0.0.1:$(port_of "$name")" "$w" "$path" | tee "$out" >&2
      else
        SERVER_PID="${SRV_PID[$name]}" AUTH_USER="$AUTH_USER" AUTH_PASS="$AUTH_PASS" \
          "$PEER_DIR/bench.sh" "http://127.0.0.1:$(port_of "$name")" "$w" | tee "$out" >&2
      fi
      if uses_pg "$name"; then
        pg_t1="$(pg_ticks)"; pg_w1="$(date +%s.%N)"
        kill "$PG_SAMPLER" 2>/dev/null || true; wait "$PG_SAMPLER" 2>/dev/null || true; PG_SAMPLER=""
        pg_cpu[$name]=$(( ${pg_cpu[$name]:-0} + pg_t1 - pg_t0 ))
        pg_wall[$name]="$(awk -v a="${pg_wall[$name]:-0}" -v w0="$pg_w0" -v w1="$pg_w1" 'BEGIN { printf "%.3f", a + w1 - w0 }')"
      fi
      kill -0 "${SRV_PID[$name]}" 2>/dev/null \
        || { echo "bench.sh: $name exited during $w:" >&2; tail -20 "$WORK/$name-$round.log" >&2; exit 1; }
      grep -v '^#' "$out" | grep -v '^workload ' | grep -v 'wrk failed' \
        | awk -v r="$round" -v s="$name" 'NF >= 7 { print r, s, $0 }' >> "$RESULTS" || true
      grep '^# warning' "$out" | sed "s/^/round $round $name: /" >> "$WORK/warnings.txt" || true
      if grep -q 'wrk failed' "$out"; then echo "round $round $name: $w: wrk failed" >> "$WORK/warnings.txt"; fi
    done
  done
  echo "round $round end: load average $(uptime | sed 's/.*load average: //')" >> "$LOADS"
  for name in plover_pg own_pg; do
    [ -s "$WORK/pg-peak-$name" ] || continue
    read -r pr ps_ < "$WORK/pg-peak-$name" || { pr=0; ps_=0; }
    awk -v r="$round" -v s="$name" -v t="${pg_cpu[$name]:-0}" -v hz="$(getconf CLK_TCK)" -v w="${pg_wall[$name]:-0}" \
      -v m="$pr" -v p="$ps_" \
      'BEGIN { printf "%s %s %.0f %.1f %.1f\n", r, s, (w > 0 ? t / hz / w * 100 : 0), m / 1024, p / 1024 }' >> "$PG_USAGE"
  done
  for name in "${order[@]}"; do stop_server "$name"; done
  case " $SERVERS " in *" plover_pg "*) pg_sql postgres -c "DROP DATABASE IF EXISTS plover_$round" ;; esac
  case " $SERVERS " in *" own_pg "*) pg_sql postgres -c "DROP DATABASE IF EXISTS own_pg_$round" ;; esac
done
T_END="$(date -u +%Y-%m-%dT%H:%M:%SZ)"

# --- write figures (WRITES=1) -------------------------------------------------------------
# The server on a fresh copy of the data (round "w"), and its twin with ETAGS=off on the same
# database; scripts/bench_writes.py measures and writes its Markdown into $WORK/writes.md.
run_writes() {  # name (plover or plover_pg)
  local name="$1" port off_port url
  port="$(port_of "$name")"; off_port=$((PORT_BASE + 7))
  log "write figures on $name (load average $(uptime | sed 's/.*load average: //'))"
  start_server "$name" w
  case "$name" in
    plover) url="sqlite://$WORK/plover-w.db" ;;
    plover_pg) url="$PG_URL/plover_w" ;;
  esac
  ETAGS=off DATABASE_URL="$url" BIND="127.0.0.1:$off_port" "$PLOVER_BIN" >"$WORK/$name-etags-off.log" 2>&1 &
  SRV_PID[$name-etags-off]=$!
  wait_ready "$name-etags-off" "$off_port" "$WORK/$name-etags-off.log"
  echo "load average before the write figures of $name: $(uptime | sed 's/.*load average: //')" >> "$WORK/writes-loads.txt"
  ROUNDS="$WRITES_ROUNDS" AUTH_USER="$AUTH_USER" AUTH_PASS="$AUTH_PASS" \
    "$PY" "$HERE/bench_writes.py" "$name" "http://127.0.0.1:$port" "http://127.0.0.1:$off_port" \
    "$PEER_DIR/bench.sh" >> "$WORK/writes.md"
  echo >> "$WORK/writes.md"
  echo "load average after the write figures of $name: $(uptime | sed 's/.*load average: //')" >> "$WORK/writes-loads.txt"
  stop_server "$name-etags-off"
  stop_server "$name"
}
: > "$WORK/writes.md"
: > "$WORK/writes-loads.txt"
if [ "$WRITES" = 1 ]; then
  for name in "${SRV_LIST[@]}"; do
    case "$name" in plover|plover_pg) run_writes "$name" ;; esac
  done
fi

# --- table --------------------------------------------------------------------------------
cp "$RESULTS" "$BENCH_STATE/last-results.txt"
{
  if [ ${#ALL_WLS[@]} -gt 0 ]; then
    echo "## Plover vs the ceilings and the flask-peewee peer, $T_START to $T_END"
    echo
    echo "rounds=$ROUNDS (servers interleaved per workload, first server rotated per round), scale=$SCALE," \
      "wrk ${THREADS:-2} threads x ${CONNS:-32} connections, duration=${DURATION:-10s}, warmup=${WARMUP:-2s}," \
      "$(nproc) cores, peer indexes=$PEER_INDEXES, servers: $SERVERS"
    echo
    "$PY" "$HERE/bench_table.py" "$RESULTS" --servers "$SERVERS" --workloads "${ALL_WLS[*]}"
    if [ -s "$PG_USAGE" ]; then
      echo
      echo "PostgreSQL server itself (not in plover_pg's and own_pg's figures; CPU and peak memory over that server's runs, warm-ups included):"
      awk '{ printf "- round %s, %s: CPU %s%%, peak RSS %s MiB / PSS %s MiB\n", $1, $2, $3, $4, $5 }' "$PG_USAGE"
    fi
    echo
    echo "Load average before each workload (1, 5, 15 min):"
    sed 's/^/- /' "$LOADS"
    if [ -s "$WORK/warnings.txt" ]; then
      echo
      echo "Warnings:"
      sed 's/^/- /' "$WORK/warnings.txt"
    fi
  fi
  if [ -s "$WORK/writes.md" ]; then
    echo
    cat "$WORK/writes.md"
    echo "Load average around the write figures (1, 5, 15 min):"
    sed 's/^/- /' "$WORK/writes-loads.txt"
  fi
} | tee "$BENCH_STATE/last-report.md"
