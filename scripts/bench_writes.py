#!/usr/bin/env python3
"""The write figures of scripts/bench.sh (WRITES=1), against one running microblog server and
its twin started with ETAGS=off on the same data; bench.sh starts both, on SQLite (plover) and
on PostgreSQL (plover_pg), and calls this once per engine.

  1. import: 10,000 messages (IMPORT_ROWS) in bulk requests of 1,000 (a POST of a JSON array
     to /api/message/, one keep-alive connection, one request after the other), then 10,000
     single POSTs over 1 connection (sequential) and over 4 connections (each sequential,
     2,500 each); wall time and rows/s, the rows counted in the database (`?count=exact`
     before and after). The client is this script (raw sockets for the single POSTs, the
     requests built before the clock starts); the user's password is checked once before
     (an empty bulk create), as a running client's would have been.
  2. the ETag's cost: detail_message and list_message on the server (ETags on, the default)
     and on its twin (ETAGS=off), interleaved, req/s and p99 of each, ratio on/off.
  3. reads under a bulk import: detail_message and list_message on an idle server, and while
     one client posts bulk requests of 1,000 messages back to back (the rows it wrote and
     their rate during the reads are shown).

Reads run through ../shared/peer/bench.sh (wrk, the same workloads as bench.sh's table).
Every figure of 2 and 3 is taken ROUNDS times, the order of the two sides swapped every other
round; medians are shown, with the range over the rounds.

usage: bench_writes.py NAME BASE_URL NO_ETAG_BASE_URL PEER_BENCH_SH
env:   AUTH_USER AUTH_PASS AUTH_USER_ID (default user0 / password / 1), ROUNDS (default 2),
       DURATION WARMUP THREADS CONNS (passed to the peer's bench.sh), IMPORT_ROWS (10000),
       BULK_ROWS (1000)
Prints Markdown on stdout (scripts/bench.sh adds it to its report).
"""

import base64
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

from harness import read_response


def env_int(name, default):
    return int(os.environ.get(name, default))


class Client:
    """One keep-alive HTTP connection to the server."""

    def __init__(self, base, auth):
        url = urllib.parse.urlsplit(base)
        self.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
        self.auth = auth

    def request(self, method, path, body=None):
        headers = {"Authorization": self.auth}
        if body is not None:
            headers["Content-Type"] = "application/json"
        self.conn.request(method, path, body=body, headers=headers)
        resp = self.conn.getresponse()
        return resp.status, resp.read()

    def close(self):
        self.conn.close()


def count(base, auth):
    """The messages in the database (on a connection of its own: the server closes idle ones)."""
    client = Client(base, auth)
    status, body = client.request("GET", "/api/message/?count=exact&limit=1")
    client.close()
    if status != 200:
        raise SystemExit("bench_writes.py: count answered %d: %s" % (status, body[:200]))
    return json.loads(body)["meta"]["count"]


def bulk_body(user_id, tag, start, n):
    return json.dumps(
        [{"user_id": user_id, "content": "bulk import %s %d" % (tag, start + i)} for i in range(n)]
    ).encode()


def post_bulk(client, body, n):
    status, answer = client.request("POST", "/api/message/", body)
    if status != 201:
        raise SystemExit("bench_writes.py: bulk create answered %d: %s" % (status, answer[:300]))
    created = json.loads(answer)
    if len(created) != n:
        raise SystemExit("bench_writes.py: bulk create made %d objects, not %d" % (len(created), n))


def warm_credentials(base, auth):
    """An empty bulk create (201, nothing written): the server checks the password once
    (bcrypt, cost 12: a quarter of a second) and keeps it verified, so that no import's time
    includes that first check."""
    client = Client(base, auth)
    post_bulk(client, b"[]", 0)
    client.close()


def import_bulk(base, auth, user_id, rows, per_request):
    """Posts `rows` messages in bulk requests of `per_request`; (seconds, rows written)."""
    before = count(base, auth)
    bodies = []
    for start in range(0, rows, per_request):
        n = min(per_request, rows - start)
        bodies.append((bulk_body(user_id, "a", start, n), n))   # built before the clock starts
    client = Client(base, auth)
    t0 = time.monotonic()
    for body, n in bodies:
        post_bulk(client, body, n)
    secs = time.monotonic() - t0
    client.close()
    return secs, count(base, auth) - before


def post_singles(base, requests, results, slot):
    """Sends `requests` (raw HTTP/1.1 bytes) one after the other on one keep-alive socket and
    stores the count of answers that are not 201 in results[slot]. A raw socket, so that the
    client's own time per request (a few microseconds) stays small beside the server's."""
    url = urllib.parse.urlsplit(base)
    sock = socket.create_connection((url.hostname, url.port), timeout=60)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    failed, buf = 0, b""
    try:
        for request in requests:
            sock.sendall(request)
            head, _, buf = read_response(sock, buf)
            if head[9:12] != b"201":
                failed += 1
    finally:
        sock.close()
    results[slot] = failed


def import_single(base, auth, user_id, rows, conns):
    """`rows` single POSTs, split evenly over `conns` connections, each sending one request
    after the other; (seconds, rows written, answers that are not 201)."""
    url = urllib.parse.urlsplit(base)
    requests = [[] for _ in range(conns)]
    for i in range(rows):
        body = json.dumps({"user_id": user_id, "content": "single import %d" % i}).encode()
        requests[i % conns].append(
            b"POST /api/message/ HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: %s\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
            % (url.hostname.encode(), url.port, auth.encode(), len(body), body))
    before = count(base, auth)
    results = [None] * conns
    threads = [threading.Thread(target=post_singles, args=(base, requests[k], results, k))
               for k in range(conns)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    secs = time.monotonic() - t0
    if any(r is None for r in results):
        raise SystemExit("bench_writes.py: a connection of the single POSTs failed")
    return secs, count(base, auth) - before, sum(results)


def read_run(peer_bench, base, workload):
    """One run of the peer's bench.sh: (req/s, p99 ms, non-2xx + socket errors)."""
    out = subprocess.run([peer_bench, base, workload], capture_output=True, text=True, check=False)
    for line in out.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] == workload and len(parts) >= 6:
            return float(parts[1]), float(parts[3]), int(parts[4]) + int(parts[5])
    raise SystemExit("bench_writes.py: %s on %s failed: %s %s" % (workload, base, out.stdout, out.stderr))


class BulkLoop(threading.Thread):
    """Posts bulk requests back to back until stopped; counts the rows and the time."""

    def __init__(self, base, auth, user_id, per_request):
        super().__init__(daemon=True)
        self.client = Client(base, auth)
        self.body = bulk_body(user_id, "loop", 0, per_request)
        self.per_request = per_request
        self.stop = threading.Event()
        self.rows = 0
        self.error = None

    def run(self):
        try:
            while not self.stop.is_set():
                post_bulk(self.client, self.body, self.per_request)
                self.rows += self.per_request
        except BaseException as e:   # reported by the main thread
            self.error = e
        finally:
            self.client.close()


def loaded_run(peer_bench, base, auth, user_id, per_request, workload):
    """`workload` while a bulk import runs: (req/s, p99, errors, rows/s imported meanwhile)."""
    loop = BulkLoop(base, auth, user_id, per_request)
    loop.start()
    time.sleep(1.0)   # the import is under way before the reads start
    rows0, t0 = loop.rows, time.monotonic()
    result = read_run(peer_bench, base, workload)
    rows1, t1 = loop.rows, time.monotonic()
    loop.stop.set()
    loop.join()
    if loop.error is not None:
        raise SystemExit("bench_writes.py: the bulk import failed: %s" % loop.error)
    return result + ((rows1 - rows0) / (t1 - t0),)


def med(values):
    return statistics.median(values)


def spread(values, fmt):
    if len(values) < 2:
        return fmt % values[0]
    return (fmt + " (" + fmt + "-" + fmt + ")") % (med(values), min(values), max(values))


def main():
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    name, base, base_off, peer_bench = sys.argv[1:5]
    user = os.environ.get("AUTH_USER", "user0")
    password = os.environ.get("AUTH_PASS", "password")
    user_id = env_int("AUTH_USER_ID", 1)
    auth = "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()
    rounds = env_int("ROUNDS", 2)
    rows = env_int("IMPORT_ROWS", 10000)
    per_request = env_int("BULK_ROWS", 1000)
    log = lambda msg: print("[bench_writes %s] %s" % (name, msg), file=sys.stderr, flush=True)

    # 1. import
    warm_credentials(base, auth)
    log("import: %d rows in bulk requests of %d" % (rows, per_request))
    bulk_secs, bulk_rows = import_bulk(base, auth, user_id, rows, per_request)
    singles = []
    for conns in (1, 4):
        log("import: %d single POSTs over %d connection(s)" % (rows, conns))
        singles.append((conns,) + import_single(base, auth, user_id, rows, conns))

    # 2. ETags on and off, 3. reads idle and under a bulk import
    etag = {w: {"on": [], "off": [], "ratio": []} for w in ("detail_message", "list_message")}
    load = {w: {"idle": [], "loaded": [], "import": []} for w in ("detail_message", "list_message")}
    errors = 0
    for r in range(rounds):
        for w in ("detail_message", "list_message"):
            log("round %d/%d: %s, ETags on and off" % (r + 1, rounds, w))
            sides = [("on", base), ("off", base_off)]
            if r % 2:
                sides.reverse()
            got = {}
            for side, url in sides:
                got[side] = read_run(peer_bench, url, w)
                etag[w][side].append(got[side])
                errors += got[side][2]
            etag[w]["ratio"].append(got["on"][0] / got["off"][0])
        for w in ("detail_message", "list_message"):
            log("round %d/%d: %s, idle and under a bulk import" % (r + 1, rounds, w))
            order = ["idle", "loaded"] if r % 2 == 0 else ["loaded", "idle"]
            for side in order:
                if side == "idle":
                    res = read_run(peer_bench, base, w)
                else:
                    res = loaded_run(peer_bench, base, auth, user_id, per_request, w)
                    load[w]["import"].append(res[3])
                load[w][side].append(res[:3])
                errors += res[2]

    # the report
    print("### Write figures: %s (issue 33)" % name)
    print()
    print("| import of %s messages | wall s | rows written | rows/s | errors |" % format(rows, ","))
    print("|---|---|---|---|---|")
    print("| bulk, %d requests of %s, 1 connection, sequential | %.2f | %s | %s | 0 |"
          % (-(-rows // per_request), format(per_request, ","), bulk_secs, format(bulk_rows, ","),
             format(round(bulk_rows / bulk_secs), ",")))
    for conns, secs, written, errs in singles:
        how = "1 connection, sequential" if conns == 1 else "%d connections" % conns
        print("| single POSTs, %s | %.2f | %s | %s | %d |"
              % (how, secs, format(written, ","), format(round(written / secs), ","), errs))
    print()
    print("| ETag cost | req/s on | p99 ms on | req/s off | p99 ms off | req/s on / off |")
    print("|---|---|---|---|---|---|")
    for w, d in etag.items():
        print("| %s | %s | %s | %s | %s | %s |" % (
            w, format(round(med([x[0] for x in d["on"]])), ","), "%.2f" % med([x[1] for x in d["on"]]),
            format(round(med([x[0] for x in d["off"]])), ","), "%.2f" % med([x[1] for x in d["off"]]),
            spread(d["ratio"], "%.2f")))
    print()
    print("| reads | req/s idle | p99 ms idle | req/s under import | p99 ms under import "
          "| req/s loaded / idle | rows/s imported meanwhile |")
    print("|---|---|---|---|---|---|---|")
    for w, d in load.items():
        ri, rl = med([x[0] for x in d["idle"]]), med([x[0] for x in d["loaded"]])
        print("| %s | %s | %s | %s | %s | %.2f | %s |" % (
            w, format(round(ri), ","), spread([x[1] for x in d["idle"]], "%.2f"),
            format(round(rl), ","), spread([x[1] for x in d["loaded"]], "%.2f"), rl / ri,
            format(round(med(d["import"])), ",")))
    print()
    print("Medians over %d rounds (range in brackets); read errors (non-2xx and socket errors): %d."
          % (rounds, errors))


if __name__ == "__main__":
    main()
