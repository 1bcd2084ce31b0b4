#!/usr/bin/env bash
# Instructions per request, Plover's microblog against bench-limit, under valgrind's callgrind:
# a count that does not move with the machine's load or speed, unlike req/s (a shared 2-core
# machine moves those by a tenth between runs). It leaves out the kernel, the caches and the
# branch predictor; wrk (scripts/bench.sh) measures those.
#
# usage: scripts/instructions.sh PLOVER_DB LIMIT_DB [WORKLOAD...]
#   PLOVER_DB   a copy of the benchmark's SQLite file with Plover's schema (KEEP_TMP=1
#               scripts/bench.sh leaves one in its temp dir: plover-1.db)
#   LIMIT_DB    a copy of the seed for bench-limit (seed.db there)
#   WORKLOAD    list_message list_message_page detail_message filter_join filter_ops list_user
#               (default: all six)
# Env: N=1000 requests measured per workload, after WARM=300 unmeasured ones, on one
# keep-alive connection; PLOVER_BIN, LIMIT_BIN (default: this workspace's release builds);
# OUT=target/instructions (callgrind's files: `callgrind_annotate FILE` shows where they go).
# Requires valgrind (Debian package `valgrind`), curl and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,18p' "$0"; exit 2; }
plover_db=$(realpath "$1"); limit_db=$(realpath "$2"); shift 2
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(list_message list_message_page detail_message filter_join filter_ops list_user)
N=${N:-1000}; WARM=${WARM:-300}
PLOVER_BIN=${PLOVER_BIN:-target/release/microblog}
LIMIT_BIN=${LIMIT_BIN:-target/bench-limit/release/bench-limit}
OUT=${OUT:-target/instructions}
PORT=${PORT:-19301}
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
mkdir -p "$OUT"

path_of() {
  case "$1" in
    list_message) echo "/api/message/" ;;
    list_message_page) echo "/api/message/?page=50&limit=20" ;;
    detail_message) echo "/api/message/4321/" ;;
    filter_join) echo "/api/message/?user__username=user42&ordering=-pub_date" ;;
    filter_ops) echo "/api/message/?id__lt=5000&id__gte=100&ordering=-id" ;;
    list_user) echo "/api/user/" ;;
    *) echo "instructions.sh: unknown workload $1" >&2; exit 2 ;;
  esac
}

# requests PATH COUNT: COUNT GETs on one keep-alive connection, each answered 200.
requests() {
  python3 - "$PORT" "$1" "$2" <<'EOF'
import http.client, sys
port, path, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
conn = http.client.HTTPConnection("127.0.0.1", port)
for _ in range(count):
    conn.request("GET", path)
    response = conn.getresponse()
    response.read()
    if response.status != 200:
        sys.exit(f"{path}: status {response.status}")
EOF
}

# measure NAME PATH COMMAND...: the instructions of N requests, the server started under
# callgrind with instrumentation off, switched on after the warm-up.
measure() {
  local name=$1 path=$2; shift 2
  local file="$OUT/$name.callgrind"
  rm -f "$file" "$file".*
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$file" "$@" \
    >"$OUT/$name.log" 2>&1 &
  local pid=$!
  for _ in $(seq 120); do
    curl -s -o /dev/null "http://127.0.0.1:$PORT/api/message/" && break
    sleep 0.5
  done
  requests "$path" "$WARM"
  callgrind_control -i on "$pid" >/dev/null 2>&1
  requests "$path" "$N"
  callgrind_control -i off "$pid" >/dev/null 2>&1
  callgrind_control -d "$pid" >/dev/null 2>&1
  kill "$pid"; wait "$pid" 2>/dev/null || true
  local dump; dump=$(ls "$file".* | head -1)
  callgrind_annotate "$dump" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
}

printf '| workload | Plover | bench-limit | bench-limit / Plover |\n|---|---|---|---|\n'
for w in "${workloads[@]}"; do
  p=$(path_of "$w")
  ours=$(export DATABASE_URL="sqlite://$plover_db" BIND="127.0.0.1:$PORT"; measure "plover-$w" "$p" "$PLOVER_BIN")
  theirs=$(measure "limit-$w" "$p" "$LIMIT_BIN" "$limit_db" "127.0.0.1:$PORT")
  python3 -c "import sys; o, t, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]); print(f'| $w | {o / n:,.0f} | {t / n:,.0f} | {t / o:.2f} |')" "$ours" "$theirs" "$N"
done
