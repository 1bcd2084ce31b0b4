#!/usr/bin/env bash
# Side-by-side benchmark: the flask-peewee peer, Plover's microblog example (on SQLite and on
# PostgreSQL) and the hand-written actix-web + diesel handler (bench-limit), on one data set,
# with ../shared/peer/bench.sh.
#
# usage: scripts/bench.sh
#
# Env (all optional):
#   ROUNDS=1            interleaved rounds (peer, plover, plover_pg, limit; the start rotates
#                       per round); every server starts each round on a fresh copy of the data;
#                       the table shows medians over the rounds
#   SCALE=1             data-set scale for the peer's seed.py (1 = 1,000 users, 100,000 messages)
#   WORKLOADS="..."     workloads for the peer and Plover (default: bench.sh's whole set);
#                       bench-limit runs only list_message list_message_page detail_message
#   SERVERS="peer plover plover_pg limit"   which servers to run; plover = microblog on a
#                       SQLite file, plover_pg = the same binary on PostgreSQL (scripts/pg.sh)
#   DURATION WARMUP THREADS CONNS TIMEOUT ...   passed through to bench.sh
#   PLOVER_SHARED=../shared       the shared folder (peer, bench-limit)
#   CARGO_TARGET_DIR=./target     build dir; bench-limit builds in $CARGO_TARGET_DIR/bench-limit,
#                                 venvs live in $CARGO_TARGET_DIR/bench
#   PEER_VENV=$CARGO_TARGET_DIR/bench/peer-venv   the peer's virtualenv (made if missing)
#   SKIP_BUILD=1        use the existing release binaries
#   PORT_BASE=18100     peer on PORT_BASE, plover on +1, limit on +2, plover_pg on +3 (127.0.0.1)
#   PG_PORT=PORT_BASE+4 the throw-away PostgreSQL server (plover_pg only)
#   KEEP_TMP=1          keep the temp dir (databases, logs, raw bench.sh output)
#
# Plover's copy of the database gets a bcrypt hash (cost 12) of $AUTH_PASS (default `password`)
# for $AUTH_USER (default user0, the user bench.sh's create_message authenticates as); the
# peer's seed writes werkzeug scrypt hashes, which Plover does not read.
#
# plover_pg: a PostgreSQL 15 started with scripts/pg.sh (stopped on exit) gets the database
# plover_base: tables made by the microblog binary itself (Plover's DDL), then emptied and loaded
# with the rows of Plover's SQLite copy (same ids, same bcrypt hash; booleans 0/1 -> f/t), SERIAL
# sequences set past the max ids, ANALYZE. Each round serves a fresh CREATE DATABASE ... TEMPLATE
# plover_base. The PostgreSQL processes are not in plover_pg's RSS/CPU columns (only the microblog
# process tree is); their CPU and memory over the plover_pg run are reported on a note line.
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
SERVERS="${SERVERS:-peer plover plover_pg limit}"
PORT_BASE="${PORT_BASE:-18100}"
PG_PORT="${PG_PORT:-$((PORT_BASE + 4))}"
PY="${PYTHON:-python3}"
AUTH_USER="${AUTH_USER:-user0}"
AUTH_PASS="${AUTH_PASS:-password}"
PEER_VENV="${PEER_VENV:-$BENCH_STATE/peer-venv}"
TOOLS_VENV="$BENCH_STATE/tools-venv"
LIMIT_WLS=(list_message list_message_page detail_message)
read -r -a ALL_WLS <<<"${WORKLOADS:-list_message list_message_page detail_message filter_join filter_ops create_message list_user}"

log() { echo "[bench] $*" >&2; }

# --- prerequisites ------------------------------------------------------------------------
if ! command -v wrk >/dev/null; then
  log "installing wrk"
  apt-get install -y wrk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y wrk >/dev/null; }
fi
command -v curl >/dev/null || { echo "bench.sh: curl is required" >&2; exit 2; }

PLOVER_BIN="$CARGO_TARGET_DIR/release/microblog"
LIMIT_BIN="$LIMIT_TARGET/release/bench-limit"
if [ "${SKIP_BUILD:-0}" != "1" ]; then
  log "building Plover's microblog example (release, $CARGO_TARGET_DIR)"
  (cd "$ROOT" && cargo build --release -q -p microblog)
  log "building bench-limit (release, $LIMIT_TARGET)"
  (cd "$LIMIT_DIR" && CARGO_TARGET_DIR="$LIMIT_TARGET" cargo build --release -q --locked)
fi
for b in "$PLOVER_BIN" "$LIMIT_BIN"; do
  [ -x "$b" ] || { echo "bench.sh: missing binary $b" >&2; exit 2; }
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
SRV_PID=""
PG_DIR=""       # the PostgreSQL server's directory, once started
PG_SAMPLER=""   # pid of the PostgreSQL memory sampler while plover_pg runs
cleanup() {
  [ -n "$PG_SAMPLER" ] && { kill "$PG_SAMPLER" 2>/dev/null || true; }
  if [ -n "$SRV_PID" ] && kill -0 "$SRV_PID" 2>/dev/null; then
    kill "$SRV_PID" 2>/dev/null || true; wait "$SRV_PID" 2>/dev/null || true
  fi
  if [ -n "$PG_DIR" ]; then log "stopping PostgreSQL"; "$HERE/pg.sh" stop "$PG_DIR" || true; fi
  if [ "${KEEP_TMP:-0}" = "1" ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

log "seeding scale $SCALE into $WORK/seed.db"
"$PEER_VENV/bin/python" "$PEER_APP/seed.py" --db "$WORK/seed.db" --scale "$SCALE" >&2
cp "$WORK/seed.db" "$WORK/plover-base.db"
"$TOOLS_VENV/bin/python" - "$WORK/plover-base.db" "$AUTH_USER" "$AUTH_PASS" <<'EOF'
import sqlite3, sys
import bcrypt
db, user, raw = sys.argv[1:4]
h = bcrypt.hashpw(raw.encode(), bcrypt.gensalt(12)).decode()
con = sqlite3.connect(db)
with con:
    n = con.execute('UPDATE user SET password = ? WHERE username = ?', (h, user)).rowcount
if n != 1:
    raise SystemExit('no user %r in %s' % (user, db))
con.execute('PRAGMA wal_checkpoint(TRUNCATE)')
con.close()
EOF

# --- PostgreSQL (plover_pg only) ----------------------------------------------------------
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
  command -v psql >/dev/null || { echo "bench.sh: psql is required for plover_pg" >&2; exit 2; }
  pg_sql postgres -c "CREATE DATABASE plover_base"

  log "creating Plover's tables in plover_base (microblog binary)"
  DATABASE_URL="$PG_URL/plover_base" BIND="127.0.0.1:$(port_of plover_pg)" "$PLOVER_BIN" \
    >"$WORK/plover_pg-ddl.log" 2>&1 &
  SRV_PID=$!
  wait_ready plover_pg-ddl "$(port_of plover_pg)"
  stop_server
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
if sorted(cols) != sorted(order):
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
pg_sampler() {  # writes "peak_rss_kib peak_pss_kib" to $1 every 0.25 s until killed
  local r s p a b pr=0 ps_=0
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
    limit) echo $((PORT_BASE + 2));; plover_pg) echo $((PORT_BASE + 3));; esac
}

# One function per server: serve_NAME ROUND PORT makes that round's fresh copy of the data set
# and starts the server in the background (log in $WORK/NAME.log); start_server takes its pid.
serve_peer() {
  local db="$WORK/peer-$1.db"; cp "$WORK/seed.db" "$db"
  PEER_SEED=0 PEER_DB="$db" PORT="$2" PEER_VENV="$PEER_VENV" "$PEER_APP/run.sh" >"$WORK/peer.log" 2>&1 &
}
serve_plover() {
  local db="$WORK/plover-$1.db"; cp "$WORK/plover-base.db" "$db"
  DATABASE_URL="sqlite://$db" BIND="127.0.0.1:$2" "$PLOVER_BIN" >"$WORK/plover.log" 2>&1 &
}
serve_plover_pg() {
  pg_sql postgres -c "CREATE DATABASE plover_$1 TEMPLATE plover_base"
  DATABASE_URL="$PG_URL/plover_$1" BIND="127.0.0.1:$2" "$PLOVER_BIN" >"$WORK/plover_pg.log" 2>&1 &
}
serve_limit() {
  local db="$WORK/limit-$1.db"; cp "$WORK/seed.db" "$db"
  "$LIMIT_BIN" "$db" "127.0.0.1:$2" >"$WORK/limit.log" 2>&1 &
}

wait_ready() {  # name port: wait until $SRV_PID answers HTTP on port
  local name="$1" port="$2" code
  for _ in $(seq 1 600); do
    if ! kill -0 "$SRV_PID" 2>/dev/null; then
      echo "bench.sh: $name exited during start:" >&2; tail -20 "$WORK/$name.log" >&2; exit 1
    fi
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/api/message/1/" || true)"
    [ "$code" != "000" ] && return 0
    sleep 0.1
  done
  echo "bench.sh: $name did not answer on port $port within 60 s" >&2; exit 1
}

start_server() {  # name round -> sets SRV_PID
  local name="$1" port; port="$(port_of "$name")"
  if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/"; then
    echo "bench.sh: port $port is already in use" >&2; exit 2
  fi
  "serve_$name" "$2" "$port"
  SRV_PID=$!
  wait_ready "$name" "$port"
}

stop_server() {
  kill -TERM "$SRV_PID" 2>/dev/null || true
  for _ in $(seq 1 150); do kill -0 "$SRV_PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$SRV_PID" 2>/dev/null || true
  wait "$SRV_PID" 2>/dev/null || true
  SRV_PID=""
}

# --- runs ---------------------------------------------------------------------------------
RESULTS="$WORK/results.txt"   # round server workload rps p50 p99 non2xx sockerr reqs cpu rss pss
: > "$RESULTS"
LOADS="$WORK/loads.txt"
: > "$LOADS"
PG_USAGE="$WORK/pg-usage.txt"   # round cpu% peak_rss_MiB peak_pss_MiB of PostgreSQL itself
: > "$PG_USAGE"
read -r -a SRV_LIST <<<"$SERVERS"
NSRV=${#SRV_LIST[@]}
for s in "${SRV_LIST[@]}"; do
  case "$s" in peer|plover|plover_pg|limit) ;; *) echo "bench.sh: unknown server $s" >&2; exit 2 ;; esac
done
case " $SERVERS " in *" plover_pg "*) setup_pg "$WORK/plover-base.db" ;; esac

for round in $(seq 1 "$ROUNDS"); do
  for k in $(seq 0 $((NSRV - 1))); do
    name="${SRV_LIST[$(( (k + round - 1) % NSRV ))]}"
    if [ "$name" = limit ]; then wls=(); for w in "${ALL_WLS[@]}"; do
        for l in "${LIMIT_WLS[@]}"; do [ "$w" = "$l" ] && wls+=("$w"); done; done
    else wls=("${ALL_WLS[@]}"); fi
    [ ${#wls[@]} -eq 0 ] && continue
    load="$(uptime | sed 's/.*load average: //')"
    # shellcheck disable=SC2009  # (pgrep warns on stderr for this pattern when nothing matches)
    busy="$(ps -eo comm= | grep -cE '^(rustc|cc1|cc1plus|cargo|clippy-driver|ld|rust-lld)$' || true)"
    load="$load; compiler processes running: $busy"
    echo "round $round $name: load average $load" >> "$LOADS"
    log "round $round/$ROUNDS: $name (load average $load)"
    start_server "$name" "$round"
    if [ "$name" = plover_pg ]; then
      pg_sampler "$WORK/pg-peak" & PG_SAMPLER=$!
      pg_t0="$(pg_ticks)"; pg_w0="$(date +%s.%N)"
    fi
    SERVER_PID="$SRV_PID" AUTH_USER="$AUTH_USER" AUTH_PASS="$AUTH_PASS" \
      "$PEER_DIR/bench.sh" "http://127.0.0.1:$(port_of "$name")" "${wls[@]}" \
      | tee "$WORK/out-$name-$round.txt" >&2
    if [ "$name" = plover_pg ]; then
      pg_t1="$(pg_ticks)"; pg_w1="$(date +%s.%N)"
      kill "$PG_SAMPLER" 2>/dev/null || true; wait "$PG_SAMPLER" 2>/dev/null || true; PG_SAMPLER=""
      read -r pr ps_ < "$WORK/pg-peak" || { pr=0; ps_=0; }
      awk -v r="$round" -v t="$((pg_t1 - pg_t0))" -v hz="$(getconf CLK_TCK)" -v w0="$pg_w0" -v w1="$pg_w1" \
        -v m="$pr" -v p="$ps_" 'BEGIN { printf "%s %.0f %.1f %.1f\n", r, t / hz / (w1 - w0) * 100, m / 1024, p / 1024 }' \
        >> "$PG_USAGE"
    fi
    echo "round $round $name: load average after its run $(uptime | sed 's/.*load average: //')" >> "$LOADS"
    stop_server
    grep -v '^#' "$WORK/out-$name-$round.txt" | grep -v '^workload ' | grep -v 'wrk failed' \
      | awk -v r="$round" -v s="$name" 'NF >= 7 { print r, s, $0 }' >> "$RESULTS" || true
    grep '^# warning' "$WORK/out-$name-$round.txt" | sed "s/^/round $round $name: /" \
      >> "$WORK/warnings.txt" || true
  done
done

# --- table --------------------------------------------------------------------------------
median() {  # server workload column(1-based in RESULTS) -> median or "-"
  awk -v s="$1" -v w="$2" -v c="$3" '$2 == s && $3 == w { print $c }' "$RESULTS" | sort -g \
    | awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit }
             if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
colsum() {  # server workload column -> sum over rounds or "-"
  awk -v s="$1" -v w="$2" -v c="$3" '$2 == s && $3 == w { t += $c; n++ } END { print n ? t : "-" }' "$RESULTS"
}
errs() {  # server workload -> "non2xx/sock_err" summed over rounds, or "-"
  local ne se; ne="$(colsum "$1" "$2" 7)"; se="$(colsum "$1" "$2" 8)"
  if [ "$ne" = "-" ]; then echo "-"; else echo "$ne/$se"; fi
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }
peak() {  # server column -> max over everything
  awk -v s="$1" -v c="$2" '$2 == s && NF >= c { if ($c > m) m = $c; n++ } END { if (n) printf "%.1f", m; else print "-" }' "$RESULTS"
}

{
  fmt='%-17s %8s %7s %8s %7s %8s %7s %8s %7s %6s %6s %6s %6s %6s %9s %9s\n'
  echo
  echo "# Plover (SQLite, PostgreSQL) vs flask-peewee peer vs actix-web+diesel limit: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# rounds=$ROUNDS scale=$SCALE duration=${DURATION:-10s} warmup=${WARMUP:-2s} threads=${THREADS:-2} conns=${CONNS:-32}; $(nproc) cores; medians over rounds; p99 in ms"
  # shellcheck disable=SC2059
  printf "$fmt" workload peer_rps peer_99 plov_rps plov_99 pg_rps pg_99 lim_rps lim_99 \
    P/peer P/lim G/peer G/lim G/P plov_err pg_err
  for w in "${ALL_WLS[@]}"; do
    pr="$(median peer "$w" 4)"; pp="$(median peer "$w" 6)"
    vr="$(median plover "$w" 4)"; vp="$(median plover "$w" 6)"
    gr="$(median plover_pg "$w" 4)"; gp="$(median plover_pg "$w" 6)"
    lr="$(median limit "$w" 4)"; lp="$(median limit "$w" 6)"
    # shellcheck disable=SC2059
    printf "$fmt" "$w" "$pr" "$pp" "$vr" "$vp" "$gr" "$gp" "$lr" "$lp" \
      "$(ratio "$vr" "$pr")" "$(ratio "$vr" "$lr")" "$(ratio "$gr" "$pr")" "$(ratio "$gr" "$lr")" \
      "$(ratio "$gr" "$vr")" "$(errs plover "$w")" "$(errs plover_pg "$w")"
  done
  echo "# plov = Plover on SQLite, pg = Plover on PostgreSQL; P/x = plov_rps / x_rps, G/x = pg_rps / x_rps"
  echo "# plov_err, pg_err = non2xx/socket errors, summed over rounds"
  echo "# peak server RSS / PSS (MiB, whole process tree, max over workloads and rounds):"
  for s in "${SRV_LIST[@]}"; do echo "#   $s: RSS $(peak "$s" 11) / PSS $(peak "$s" 12); CPU% median per workload:" \
    "$(for w in "${ALL_WLS[@]}"; do m="$(median "$s" "$w" 10)"; [ "$m" != "-" ] && printf '%s=%s ' "$w" "$m"; done)"; done
  if [ -s "$PG_USAGE" ]; then
    echo "# PostgreSQL server itself during plover_pg (not in the lines above; whole run incl. warm-ups):"
    awk '{ printf "#   round %s: CPU %s%%, peak RSS %s / PSS %s MiB\n", $1, $2, $3, $4 }' "$PG_USAGE"
  fi
  echo "# load average before each server run:"
  sed 's/^/#   /' "$LOADS"
  if [ -s "$WORK/warnings.txt" ]; then echo "# preflight warnings:"; sed 's/^/#   /' "$WORK/warnings.txt"; fi
} | tee "$BENCH_STATE/last-report.txt"
