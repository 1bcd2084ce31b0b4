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
# keep-alive connection, each sent in one write PAUSE=0.005 s after the previous response
# (the server idle when a request comes); PLOVER_BIN, LIMIT_BIN (default: this workspace's
# release builds); OUT=target/instructions (callgrind's files: `callgrind_annotate FILE` shows
# where they go); CPU=0, the one CPU the server runs on, under the FIFO real-time policy:
# valgrind runs one thread at a time, and so a thread woken by another (the blocking pool's,
# given a query) runs only once the waking one waits, at the same point of every request (left
# to the machine's load, the number of times a request's future is polled, and with it the
# count, moved by a tenth between runs; CPU= leaves the server unpinned, at normal priority).
# Requires valgrind (Debian package `valgrind`), curl, python3, chrt and taskset (util-linux),
# and the right to set a real-time policy (root or CAP_SYS_NICE) unless CPU= is given.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,23p' "$0"; exit 2; }
plover_db=$(realpath "$1"); limit_db=$(realpath "$2"); shift 2
cd "$(dirname "$0")/.."
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(list_message list_message_page detail_message filter_join filter_ops list_user)
N=${N:-1000}; WARM=${WARM:-300}; PAUSE=${PAUSE:-0.005}; CPU=${CPU-0}
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

# requests PATH COUNT: COUNT GETs on one keep-alive connection, each answered 200. Each
# request goes out in one write (http.client sends its lines in several, which makes the
# server parse partial buffers a varying number of times: a cost of the client, not of the
# server); the response is read by its Content-Length.
requests() {
  python3 - "$PORT" "$1" "$2" "$PAUSE" <<'EOF'
import socket, sys, time
port, path, count, pause = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
sock = socket.create_connection(("127.0.0.1", port))
sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
buffer = b""

def fill():
    global buffer
    chunk = sock.recv(65536)
    if not chunk:
        sys.exit(f"{path}: connection closed")
    buffer += chunk

for _ in range(count):
    time.sleep(pause)
    sock.sendall(request)
    while b"\r\n\r\n" not in buffer:
        fill()
    head, _, buffer = buffer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status, length = int(lines[0].split(" ")[1]), None
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    if length is None:
        sys.exit(f"{path}: status {status} without a Content-Length")
    while len(buffer) < length:
        fill()
    buffer = buffer[length:]
    if status != 200:
        sys.exit(f"{path}: status {status}")
sock.close()
EOF
}

# measure NAME PATH COMMAND...: the instructions of N requests, the server started under
# callgrind with instrumentation off, switched on after the warm-up.
measure() {
  local name=$1 path=$2; shift 2
  local file="$OUT/$name.callgrind"
  rm -f "$file" "$file".*
  local pin=()
  [ -z "$CPU" ] || pin=(chrt --fifo 1 taskset -c "$CPU")
  "${pin[@]}" valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$file" "$@" \
    >"$OUT/$name.log" 2>&1 &
  local pid=$!
  for _ in $(seq 120); do
    curl -s -o /dev/null "http://127.0.0.1:$PORT/api/message/" && break
    sleep 0.5
  done
  requests "$path" "$WARM" || { kill "$pid"; exit 1; }
  callgrind_control -i on "$pid" >/dev/null 2>&1
  requests "$path" "$N" || { kill "$pid"; exit 1; }
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
