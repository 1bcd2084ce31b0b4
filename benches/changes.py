#!/usr/bin/env python3
"""What the outbox, the change feed and webhooks cost (docs/performance.md, "Changes: outbox,
feed, webhooks"), side by side in one run, on SQLite and PostgreSQL.

The server is benches/changes (`plover-bench-changes`, release build): two identical models,
`plain` (records nothing) and `fed` (serves a feed, so each write records its events). Per
engine, each phase on a fresh database and a fresh server process:

  writes    single creates (wrk, 1 thread, 8 connections, one object a POST) and bulk creates
            (wrk, 1 thread, 2 connections, 500 objects a POST), `plain` and `fed` alternated,
            the first of the pair swapped each round; rows/s per point
  latency   one live subscriber of /api/fed/changes/ and one writer posting one object at a
            time: from just before the POST, and from its response, to the event on the stream
  memory    the server's resident memory (VmRSS) before and after opening 1,000 idle streams
  replay    100,000 events (bulk creates of 1,000), then one stream with ?after= before them:
            events/s until the last arrives
  webhooks  the server with an endpoint to a receiver in this script (204 to every POST):
            2,000 events (bulk creates of 500), deliveries/s from the first to the last

Usage:
  python3 benches/changes.py [--engines sqlite,pg] [--pg-url URL] [--rounds 3]
                             [--duration 10] [--phases writes,latency,memory,replay,webhooks]
                             [--bin PATH] [--skip-build]

  --pg-url     an administrator URL of a throw-away PostgreSQL server (for example the one
               `bash scripts/pg.sh start /tmp/pg-bench 55471` prints); the script creates and
               drops its database `plover_bench_changes` there (needs `psql`). Without it, or
               with PLOVER_BENCH_PG_URL unset, PostgreSQL is skipped.
  --skip-build uses the binary as built (default: `cargo build --release -p plover-bench-changes`)

Needs wrk and python3 (standard library only). The report (Markdown) goes to standard output
and to $CARGO_TARGET_DIR/bench/changes-report.md, the raw figures to changes-results.json
beside it. Never part of the test suite: it takes minutes and loads both cores.
"""

import argparse
import http.client
import json
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, urlunsplit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
PORT = 8017
PG_DB = "plover_bench_changes"
BULK_ROWS = 500
STREAMS = 1000
REPLAY_EVENTS = 100_000
WEBHOOK_EVENTS = 2000
LATENCY_WRITES = 500


def obj(n):
    """One row's body: the same for both models."""
    return {"title": f"row {n}", "body": "lorem ipsum dolor sit amet " * 4, "score": n, "done": False}


def log(*args):
    print(*args, file=sys.stderr, flush=True)


# --- the server ---------------------------------------------------------------------------


class Server:
    """The bench app on a fresh database, for one phase."""

    def __init__(self, binary, engine, pg_url, tmp, webhook=None):
        self.url = fresh_database(engine, pg_url, tmp)
        args = [binary, "--database", self.url, "--bind", f"127.0.0.1:{PORT}"]
        if webhook:
            args += ["--webhook", webhook]
        self.log = open(os.path.join(tmp, "server.log"), "ab")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=self.log)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                status, _ = request("GET", "/api/plain/?limit=1")
                if status == 200:
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise SystemExit(f"the bench app exited ({self.proc.returncode}); see {tmp}/server.log")
            time.sleep(0.1)
        raise SystemExit("the bench app did not answer within 30 s")

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise SystemExit("no VmRSS")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def fresh_database(engine, pg_url, tmp):
    """The URL of an empty database of `engine`."""
    if engine == "sqlite":
        path = os.path.join(tmp, "bench.db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        return f"sqlite://{path}"
    for sql in (f"DROP DATABASE IF EXISTS {PG_DB}", f"CREATE DATABASE {PG_DB}"):
        subprocess.run(["psql", "-q", pg_url, "-c", sql], check=True, stdout=subprocess.DEVNULL)
    parts = urlsplit(pg_url)
    return urlunsplit(parts._replace(path="/" + PG_DB))


def request(method, path, body=None, conn=None):
    """(status, parsed JSON body) of one request, on `conn` when given."""
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", PORT, timeout=60)
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if data else {}
    conn.request(method, path, body=data, headers=headers)
    resp = conn.getresponse()
    raw = resp.read()
    if own:
        conn.close()
    return resp.status, (json.loads(raw) if raw else None)


def bulk_create(model, count, per_request, conn=None):
    n = 0
    while n < count:
        size = min(per_request, count - n)
        status, body = request("POST", f"/api/{model}/", [obj(n + i) for i in range(size)], conn)
        if status != 201:
            raise SystemExit(f"bulk create: {status} {body}")
        n += size


def cursor():
    """The newest event id (`changes=cursor` of the feed's list)."""
    status, body = request("GET", "/api/fed/?changes=cursor&limit=1")
    if status != 200:
        raise SystemExit(f"changes=cursor: {status} {body}")
    return body["meta"]["changes_cursor"]


# --- streams ------------------------------------------------------------------------------


def open_stream(query=""):
    """A socket with a feed's response started (headers and the opening comment read)."""
    sock = socket.create_connection(("127.0.0.1", PORT), timeout=60)
    sock.sendall(
        f"GET /api/fed/changes/{query} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode()
    )
    head = b""
    while b": ok\n\n" not in head:
        chunk = sock.recv(65536)
        if not chunk:
            raise SystemExit(f"the stream closed: {head[:300]!r}")
        head += chunk
        if head.startswith(b"HTTP/1.1 ") and not head.startswith(b"HTTP/1.1 200"):
            raise SystemExit(f"the stream was refused: {head[:300]!r}")
    return sock, head[head.index(b": ok\n\n") + 6 :]


EVENT = re.compile(rb"\nid: (\d+)\n")
OBJECT_ID = re.compile(rb'data: \{"id":(\d+),')


# --- phases -------------------------------------------------------------------------------


def wrk(path, lua, duration, connections):
    """Requests/s of one wrk run; fails on any non-2xx answer or socket error."""
    out = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--timeout", "30s", "-s", lua, f"http://127.0.0.1:{PORT}{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    if "Non-2xx" in out or "Socket errors" in out:
        raise SystemExit(f"wrk reported errors:\n{out}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))


def lua_scripts(tmp):
    """wrk scripts: one object a POST, and BULK_ROWS."""
    paths = {}
    for name, body in (("single", obj(1)), ("bulk", [obj(i) for i in range(BULK_ROWS)])):
        path = os.path.join(tmp, f"{name}.lua")
        text = json.dumps(json.dumps(body))  # a Lua string literal is a JSON string here
        with open(path, "w") as f:
            f.write(f'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = {text}\n')
        paths[name] = path
    return paths


def phase_writes(server, opts, tmp):
    """Rows/s, per kind and model, one figure per round."""
    lua = lua_scripts(tmp)
    kinds = (("single", 8, 1), ("bulk", 2, BULK_ROWS))
    for kind, conns, _ in kinds:  # warm-up, unmeasured
        for model in ("plain", "fed"):
            wrk(f"/api/{model}/", lua[kind], 2, conns)
    out = {f"{kind}_{model}": [] for kind, _, _ in kinds for model in ("plain", "fed")}
    for r in range(opts.rounds):
        for kind, conns, rows in kinds:
            order = ("plain", "fed") if r % 2 == 0 else ("fed", "plain")
            for model in order:
                rate = wrk(f"/api/{model}/", lua[kind], opts.duration, conns) * rows
                out[f"{kind}_{model}"].append(rate)
                log(f"  round {r + 1} {kind} {model}: {rate:,.0f} rows/s")
    return out


def phase_latency(server, opts, tmp):
    """Milliseconds from before the POST and from its response to the event, per write."""
    sock, rest = open_stream()
    arrived = {}
    stop = threading.Event()

    def read():
        buf = rest
        sock.settimeout(1)
        while not stop.is_set():
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                return
            now = time.perf_counter()
            buf += chunk
            for m in OBJECT_ID.finditer(buf):
                arrived.setdefault(int(m.group(1)), now)
            buf = buf[buf.rfind(b"\n\n") + 2 :] if b"\n\n" in buf else buf

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=60)
    sent = []
    for n in range(LATENCY_WRITES):
        t0 = time.perf_counter()
        status, body = request("POST", "/api/fed/", obj(n), conn)
        t1 = time.perf_counter()
        if status != 201:
            raise SystemExit(f"latency write: {status} {body}")
        sent.append((body["id"], t0, t1))
        time.sleep(0.01)
    deadline = time.time() + 10
    while len(arrived) < len(sent) and time.time() < deadline:
        time.sleep(0.05)
    stop.set()
    reader.join()
    sock.close()
    conn.close()
    missing = [i for i, _, _ in sent if i not in arrived]
    if missing:
        raise SystemExit(f"{len(missing)} events never reached the subscriber")
    return {
        "from_request": [(arrived[i] - t0) * 1000 for i, t0, _ in sent],
        "from_response": [(arrived[i] - t1) * 1000 for i, _, t1 in sent],
    }


def phase_memory(server, opts, tmp):
    """KiB of resident memory per STREAMS idle streams, one figure per round."""
    for sock, _ in [open_stream() for _ in range(20)]:  # the feed's first use, unmeasured
        sock.close()
    time.sleep(2)
    out = []
    for r in range(opts.rounds):
        before = server.rss_kib()
        socks = [open_stream()[0] for _ in range(STREAMS)]
        time.sleep(3)
        after = server.rss_kib()
        out.append(after - before)
        log(f"  round {r + 1}: {before} KiB -> {after} KiB with {STREAMS} streams")
        for s in socks:
            s.close()
        time.sleep(3)
    return out


def phase_replay(server, opts, tmp):
    """Events/s of one stream replaying REPLAY_EVENTS, one figure per round."""
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)
    start = cursor()
    t = time.perf_counter()
    bulk_create("fed", REPLAY_EVENTS, 1000, conn)
    log(f"  {REPLAY_EVENTS:,} events written in {time.perf_counter() - t:.1f} s")
    conn.close()
    last = cursor()
    out = []
    for r in range(opts.rounds):
        t0 = time.perf_counter()
        sock, buf = open_stream(f"?after={start}")
        seen, newest = 0, start
        while newest < last:
            chunk = sock.recv(1 << 20)
            if not chunk:
                raise SystemExit("the replaying stream closed")
            buf += chunk
            cut = buf.rfind(b"\n\n")
            if cut < 0:
                continue
            ids = EVENT.findall(b"\n" + buf[: cut + 2])
            seen += len(ids)
            if ids:
                newest = int(ids[-1])
            buf = buf[cut + 2 :]
        elapsed = time.perf_counter() - t0
        sock.close()
        if seen != last - start:
            raise SystemExit(f"replay: {seen} events, expected {last - start}")
        out.append(seen / elapsed)
        log(f"  round {r + 1}: {seen:,} events in {elapsed:.2f} s")
    return out


class Receiver(BaseHTTPRequestHandler):
    """A webhook receiver: 204 to every POST, its arrival time kept by webhook-id."""

    protocol_version = "HTTP/1.1"
    arrivals = {}
    lock = threading.Lock()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with self.lock:
            self.arrivals.setdefault(self.headers.get("webhook-id"), time.perf_counter())
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def phase_webhooks(binary, engine, opts, tmp):
    """Deliveries/s, one figure per round, each round WEBHOOK_EVENTS events."""
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    server = Server(binary, engine, opts.pg_url, tmp, webhook=url)
    out = []
    try:
        for r in range(opts.rounds):
            # A new connection each round: the server closes one left idle while deliveries run.
            conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)
            with Receiver.lock:
                Receiver.arrivals.clear()
            first = cursor() + 1
            t0 = time.perf_counter()
            bulk_create("fed", WEBHOOK_EVENTS, BULK_ROWS, conn)
            wanted = {str(i) for i in range(first, first + WEBHOOK_EVENTS)}
            deadline = time.time() + 300
            while time.time() < deadline:
                with Receiver.lock:
                    if wanted <= Receiver.arrivals.keys():
                        break
                time.sleep(0.05)
            with Receiver.lock:
                times = [Receiver.arrivals[i] for i in wanted if i in Receiver.arrivals]
            if len(times) < WEBHOOK_EVENTS:
                raise SystemExit(f"webhooks: {len(times)} of {WEBHOOK_EVENTS} delivered in 300 s")
            rate = WEBHOOK_EVENTS / (max(times) - t0)
            out.append(rate)
            log(f"  round {r + 1}: {WEBHOOK_EVENTS} deliveries in {max(times) - t0:.2f} s after the first write")
            conn.close()
    finally:
        server.stop()
        receiver.shutdown()
    return out


# --- the run ------------------------------------------------------------------------------


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def report(results, opts, started):
    lines = [
        f"benches/changes.py, {started} UTC, rounds {opts.rounds}, {opts.duration} s per write point; "
        f"load average at the end {os.getloadavg()[0]:.1f}",
        "",
        "| measure | " + " | ".join(results) + " |",
        "|---|" + "---|" * len(results),
    ]

    def row(label, fn):
        cells = []
        for engine in results:
            try:
                cells.append(fn(results[engine]))
            except KeyError:
                cells.append("-")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    med = statistics.median
    for kind, label in (("single", "single creates"), ("bulk", f"bulk creates ({BULK_ROWS} a POST)")):
        row(f"{label}, outbox off, rows/s", lambda r: f"{med(r['writes'][f'{kind}_plain']):,.0f}")
        row(f"{label}, outbox on, rows/s", lambda r: f"{med(r['writes'][f'{kind}_fed']):,.0f}")

        def ratio(r, kind=kind):
            on, off = r["writes"][f"{kind}_fed"], r["writes"][f"{kind}_plain"]
            per_round = [a / b for a, b in zip(on, off)]
            return f"{med(per_round):.2f} ({min(per_round):.2f}-{max(per_round):.2f})"

        row(f"{label}, on / off (median of rounds, range)", ratio)
    for key, label in (("from_request", "before the POST"), ("from_response", "the POST's response")):
        row(
            f"commit to subscriber, from {label}, p50 / p99 ms",
            lambda r, key=key: f"{percentile(r['latency'][key], 50):.2f} / {percentile(r['latency'][key], 99):.2f}",
        )
    row(f"memory per {STREAMS:,} idle streams, MiB", lambda r: f"{med(r['memory']) / 1024:.1f}")
    row("replay of one stream, events/s", lambda r: f"{med(r['replay']):,.0f}")
    row("webhook deliveries/s", lambda r: f"{med(r['webhooks']):,.0f}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engines", default="sqlite,pg")
    parser.add_argument("--pg-url", default=os.environ.get("PLOVER_BENCH_PG_URL"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--phases", default="writes,latency,memory,replay,webhooks")
    parser.add_argument("--bin", default=os.path.join(TARGET, "release", "plover-bench-changes"))
    parser.add_argument("--skip-build", action="store_true")
    opts = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is needed (apt-get install wrk)")
    # A thousand streams, each a socket here and in the server (which inherits the limit).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    if not opts.skip_build:
        subprocess.run(["cargo", "build", "--release", "-p", "plover-bench-changes"], cwd=ROOT, check=True)
    engines = [e for e in opts.engines.split(",") if e]
    if "pg" in engines and not opts.pg_url:
        log("no --pg-url (or PLOVER_BENCH_PG_URL): PostgreSQL skipped")
        engines.remove("pg")
    phases = opts.phases.split(",")
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    results = {}
    for engine in engines:
        results[engine] = {}
        tmp = tempfile.mkdtemp(prefix=f"plover-changes-{engine}-")
        try:
            for phase in phases:
                log(f"{engine}: {phase}")
                if phase == "webhooks":
                    results[engine][phase] = phase_webhooks(opts.bin, engine, opts, tmp)
                    continue
                server = Server(opts.bin, engine, opts.pg_url, tmp)
                try:
                    results[engine][phase] = globals()[f"phase_{phase}"](server, opts, tmp)
                finally:
                    server.stop()
        finally:
            if engine == "pg":
                subprocess.run(["psql", "-q", opts.pg_url, "-c", f"DROP DATABASE IF EXISTS {PG_DB}"], check=False)
            shutil.rmtree(tmp, ignore_errors=True)
    text = report(results, opts, started)
    print(text)
    out_dir = os.path.join(TARGET, "bench")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "changes-report.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, "changes-results.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
