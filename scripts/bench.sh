#!/usr/bin/env bash
# Side-by-side benchmark: the flask-peewee peer, Plover's microblog example and the hand-written
# actix-web + diesel handler (bench-limit), on one SQLite data set, with ../shared/peer/bench.sh.
#
# usage: scripts/bench.sh
#
# Env (all optional):
#   ROUNDS=1            interleaved rounds (peer, Plover, limit; the start rotates per round);
#                       the table shows medians over the rounds
#   SCALE=1             data-set scale for the peer's seed.py (1 = 1,000 users, 100,000 messages)
#   WORKLOADS="..."     workloads for the peer and Plover (default: bench.sh's whole set);
#                       bench-limit runs only list_message list_message_page detail_message
#   SERVERS="peer plover limit"   which servers to run
#   DURATION WARMUP THREADS CONNS TIMEOUT ...   passed through to bench.sh
#   PLOVER_SHARED=../shared       the shared folder (peer, bench-limit)
#   CARGO_TARGET_DIR=./target     build dir; bench-limit builds in $CARGO_TARGET_DIR/bench-limit,
#                                 venvs live in $CARGO_TARGET_DIR/bench
#   PEER_VENV=$CARGO_TARGET_DIR/bench/peer-venv   the peer's virtualenv (made if missing)
#   SKIP_BUILD=1        use the existing release binaries
#   PORT_BASE=18100     peer on PORT_BASE, Plover on +1, limit on +2 (127.0.0.1)
#   KEEP_TMP=1          keep the temp dir (databases, logs, raw bench.sh output)
#
# Plover's copy of the database gets a bcrypt hash (cost 12) of $AUTH_PASS (default `password`)
# for $AUTH_USER (default user0, the user bench.sh's create_message authenticates as); the
# peer's seed writes werkzeug scrypt hashes, which Plover does not read.
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
SERVERS="${SERVERS:-peer plover limit}"
PORT_BASE="${PORT_BASE:-18100}"
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
cleanup() {
  if [ -n "$SRV_PID" ] && kill -0 "$SRV_PID" 2>/dev/null; then
    kill "$SRV_PID" 2>/dev/null || true; wait "$SRV_PID" 2>/dev/null || true
  fi
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

# --- servers ------------------------------------------------------------------------------
port_of() { case "$1" in peer) echo "$PORT_BASE";; plover) echo $((PORT_BASE + 1));; limit) echo $((PORT_BASE + 2));; esac; }

start_server() {  # name db -> sets SRV_PID
  local name="$1" db="$2" port; port="$(port_of "$name")"
  if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/"; then
    echo "bench.sh: port $port is already in use" >&2; exit 2
  fi
  case "$name" in
    peer)
      PEER_SEED=0 PEER_DB="$db" PORT="$port" PEER_VENV="$PEER_VENV" \
        "$PEER_APP/run.sh" >"$WORK/$name.log" 2>&1 &
      ;;
    plover)
      DATABASE_URL="sqlite://$db" BIND="127.0.0.1:$port" "$PLOVER_BIN" >"$WORK/$name.log" 2>&1 &
      ;;
    limit)
      "$LIMIT_BIN" "$db" "127.0.0.1:$port" >"$WORK/$name.log" 2>&1 &
      ;;
  esac
  SRV_PID=$!
  local i
  for i in $(seq 1 600); do
    if ! kill -0 "$SRV_PID" 2>/dev/null; then
      echo "bench.sh: $name exited during start:" >&2; tail -20 "$WORK/$name.log" >&2; exit 1
    fi
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/api/message/1/" || true)"
    [ "$code" != "000" ] && return 0
    sleep 0.1
  done
  echo "bench.sh: $name did not answer on port $port within 60 s" >&2; exit 1
}

stop_server() {
  local i
  kill -TERM "$SRV_PID" 2>/dev/null || true
  for i in $(seq 1 150); do kill -0 "$SRV_PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$SRV_PID" 2>/dev/null || true
  wait "$SRV_PID" 2>/dev/null || true
  SRV_PID=""
}

RESULTS="$WORK/results.txt"   # round server workload rps p50 p99 non2xx sockerr reqs cpu rss pss
: > "$RESULTS"
LOADS="$WORK/loads.txt"
: > "$LOADS"
read -r -a SRV_LIST <<<"$SERVERS"
NSRV=${#SRV_LIST[@]}

for round in $(seq 1 "$ROUNDS"); do
  for k in $(seq 0 $((NSRV - 1))); do
    name="${SRV_LIST[$(( (k + round - 1) % NSRV ))]}"
    db="$WORK/$name-$round.db"
    case "$name" in plover) cp "$WORK/plover-base.db" "$db" ;; *) cp "$WORK/seed.db" "$db" ;; esac
    if [ "$name" = limit ]; then wls=(); for w in "${ALL_WLS[@]}"; do
        for l in "${LIMIT_WLS[@]}"; do [ "$w" = "$l" ] && wls+=("$w"); done; done
    else wls=("${ALL_WLS[@]}"); fi
    [ ${#wls[@]} -eq 0 ] && continue
    load="$(uptime | sed 's/.*load average: //')"
    busy="$(ps -eo comm= | grep -cE '^(rustc|cc1|cc1plus|cargo|clippy-driver|ld|rust-lld)$' || true)"
    load="$load; compiler processes running: $busy"
    echo "round $round $name: load average $load" >> "$LOADS"
    log "round $round/$ROUNDS: $name (load average $load)"
    start_server "$name" "$db"
    SERVER_PID="$SRV_PID" AUTH_USER="$AUTH_USER" AUTH_PASS="$AUTH_PASS" \
      "$PEER_DIR/bench.sh" "http://127.0.0.1:$(port_of "$name")" "${wls[@]}" \
      | tee "$WORK/out-$name-$round.txt" >&2
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
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }
peak() {  # server column -> max over everything
  awk -v s="$1" -v c="$2" '$2 == s && NF >= c { if ($c > m) m = $c; n++ } END { if (n) printf "%.1f", m; else print "-" }' "$RESULTS"
}

{
  echo
  echo "# Plover vs flask-peewee peer vs actix-web+diesel limit: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# rounds=$ROUNDS scale=$SCALE duration=${DURATION:-10s} warmup=${WARMUP:-2s} threads=${THREADS:-2} conns=${CONNS:-32}; $(nproc) cores; medians over rounds; p99 in ms"
  printf '%-18s %9s %8s %9s %8s %9s %8s %8s %8s %10s\n' workload peer_rps peer_p99 plover_rps \
    plov_p99 limit_rps lim_p99 P/peer P/limit plov_err
  for w in "${ALL_WLS[@]}"; do
    pr="$(median peer "$w" 4)"; pp="$(median peer "$w" 6)"
    vr="$(median plover "$w" 4)"; vp="$(median plover "$w" 6)"
    lr="$(median limit "$w" 4)"; lp="$(median limit "$w" 6)"
    ne="$(colsum plover "$w" 7)"; se="$(colsum plover "$w" 8)"
    err="-"; [ "$ne" != "-" ] && err="$ne/$se"
    printf '%-18s %9s %8s %9s %8s %9s %8s %8s %8s %10s\n' "$w" "$pr" "$pp" "$vr" "$vp" "$lr" "$lp" \
      "$(ratio "$vr" "$pr")" "$(ratio "$vr" "$lr")" "$err"
  done
  echo "# plov_err = Plover's non2xx/socket errors, summed over rounds"
  echo "# peak server RSS / PSS (MiB, whole process tree, max over workloads and rounds):"
  for s in "${SRV_LIST[@]}"; do echo "#   $s: RSS $(peak "$s" 11) / PSS $(peak "$s" 12); CPU% median per workload:" \
    "$(for w in "${ALL_WLS[@]}"; do m="$(median "$s" "$w" 10)"; [ "$m" != "-" ] && printf '%s=%s ' "$w" "$m"; done)"; done
  echo "# load average before each server run:"
  sed 's/^/#   /' "$LOADS"
  if [ -s "$WORK/warnings.txt" ]; then echo "# preflight warnings:"; sed 's/^/#   /' "$WORK/warnings.txt"; fi
} | tee "$BENCH_STATE/last-report.txt"
