#!/usr/bin/env python3
"""The change feed and the job queue across processes (docs/changes.md#across-processes):
three conformance-app processes, A, B and C, on one database (a new SQLite file, or with --pg a new
database on that PostgreSQL server, dropped at the end).

usage: feed_processes.py [--pg POSTGRES_ADMIN_URL] [--app BINARY] [--events N]

  1. latency: a subscriber of /api/hmodel/changes/ on A; N rows written one at a time through
     A (same process), then through B (across processes), each write waiting for its event:
     every event arrives within 1 s of its write's 201, in id order; the script prints the
     latency to the event's arrival (p50, p99, max) of each, from the write's 201 and from
     its request's start (the commit is between the two);
  2. a burst: 4 threads write 25 rows each through A, B and C at once; the subscriber on A
     gets every row's event, once, with increasing ids, each within 1 s of its 201;
  3. jobs: every process runs job workers (`--webhook` to a receiver in this script); tickets
     written through all three: each event is delivered exactly once, in id order, and the
     script prints which process sent how many (a delivery job is claimed by one worker).

The exit status is 1 when a check fails. Python standard library only (psql for PostgreSQL).
"""
import argparse
import http.server
import json
import os
import random
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.request

import harness
from harness import FAILURES, check

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FEED = "/api/hmodel/changes/"
WITHIN_S = 1.0  # the bound on delivery across processes (docs/changes.md)
BURST_THREADS, BURST_ROWS = 4, 25
NAMES = "ABC"  # the processes


def post(base, path, body):
    """POSTs JSON: (status, body, the monotonic time the response arrived, the time the
    request started)."""
    sent = time.monotonic()
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read()), time.monotonic(), sent
    except urllib.error.HTTPError as e:
        return e.code, e.read()[:200], time.monotonic(), sent


def percentile(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(round(p / 100.0 * (len(values) - 1))))]


def figures(lags):
    ms = [lag * 1000 for lag in lags]
    return "p50 %.1f ms, p99 %.1f ms, max %.1f ms" % (
        percentile(ms, 50), percentile(ms, 99), max(ms, default=float("nan")))


def next_created(stream, timeout):
    """The next `created` event of the stream: (event id, object id, arrival), or None."""
    deadline = time.monotonic() + timeout
    while True:
        event = stream.next_event(timeout=max(0.0, deadline - time.monotonic()))
        if event is None:
            return None
        if event.get("event") == "created":
            return int(event["id"]), json.loads(event["data"])["id"], event["at"]


def check_latency(stream, writer, label, n, seen_ids):
    """`n` rows through `writer`, one at a time, each waiting for its event on `stream` and
    then a random pause (so that writes do not fall in step with a poll). The commit is
    between the request's start and its 201: the latency is given from both."""
    lags, uppers, late = [], [], 0
    for i in range(n):
        time.sleep(random.uniform(0, 0.2))
        row = {"h_field": "%s %d" % (label, i)}
        status, body, acked, sent = post(writer.base, "/api/hmodel/", row)
        if not check(status == 201, "%s: create answered %s %r" % (label, status, body)):
            continue
        got = next_created(stream, timeout=5)
        if not check(got is not None, "%s: no event for row %s within 5 s" % (label, body["id"])):
            return
        event_id, object_id, arrived = got
        check(object_id == body["id"], "%s: event for row %s, expected %s"
              % (label, object_id, body["id"]))
        check(not seen_ids or event_id > seen_ids[-1], "%s: event id %d after %d"
              % (label, event_id, seen_ids[-1] if seen_ids else 0))
        seen_ids.append(event_id)
        lags.append(max(0.0, arrived - acked))
        uppers.append(arrived - sent)
        late += arrived - acked > WITHIN_S
    check(late == 0, "%s: %d of %d events later than %.0f s" % (label, late, n, WITHIN_S))
    print("  %-28s %d events, commit -> subscriber: from the 201 %s; from the request %s"
          % (label, len(lags), figures(lags), figures(uppers)), flush=True)


def check_burst(stream, apps, seen_ids):
    """Concurrent writers through every process; every event once, ids increasing."""
    acked, lock = {}, threading.Lock()

    def writer(k):
        for i in range(BURST_ROWS):
            status, body, at, _ = post(apps[(k + i) % len(apps)].base, "/api/hmodel/",
                                    {"h_field": "burst %d-%d" % (k, i)})
            if check(status == 201, "burst: create answered %s %r" % (status, body)):
                with lock:
                    acked[body["id"]] = at

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(BURST_THREADS)]
    for t in threads:
        t.start()
    arrived = {}
    deadline = time.monotonic() + 60
    while any(t.is_alive() for t in threads) or len(arrived) < len(acked):
        got = next_created(stream, timeout=max(0.1, min(5, deadline - time.monotonic())))
        if got is None:
            break
        event_id, object_id, at = got
        check(object_id not in arrived, "burst: row %d's event twice" % object_id)
        check(event_id > seen_ids[-1], "burst: event id %d after %d" % (event_id, seen_ids[-1]))
        seen_ids.append(event_id)
        arrived[object_id] = at
    for t in threads:
        t.join()
    missing = set(acked) - set(arrived)
    lags = [max(0.0, arrived[i] - acked[i]) for i in acked if i in arrived]
    check(not missing, "burst: %d of %d events never arrived" % (len(missing), len(acked)))
    check(max(lags, default=0) <= WITHIN_S, "burst: an event %.2f s after its write"
          % max(lags, default=0))
    print("  %-28s %d rows by %d threads, %d events in id order, %s"
          % ("burst through " + NAMES, len(acked), BURST_THREADS, len(arrived), figures(lags)),
          flush=True)


class Receiver(http.server.ThreadingHTTPServer):
    """Takes webhook deliveries: each one's webhook-id, body and the pid of the process that
    sent it (the owner of the connection's other end)."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Hook)
        self.lock = threading.Lock()
        self.deliveries = []
        self.pids = []

    def sender(self, port):
        """The pid among `pids` holding the TCP socket bound to loopback `port`."""
        inodes = set()
        for name in ("/proc/net/tcp", "/proc/net/tcp6"):
            try:
                with open(name) as f:
                    next(f)
                    for line in f:
                        cols = line.split()
                        if int(cols[1].rsplit(":", 1)[1], 16) == port:
                            inodes.add("socket:[%s]" % cols[9])
            except OSError:
                pass
        for pid in self.pids:
            fd_dir = "/proc/%d/fd" % pid
            for fd in os.listdir(fd_dir):
                try:
                    if os.readlink(os.path.join(fd_dir, fd)) in inodes:
                        return pid
                except OSError:
                    continue
        return None


class Hook(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        pid = self.server.sender(self.client_address[1])
        with self.server.lock:
            self.server.deliveries.append((self.headers.get("webhook-id"), body, pid))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def check_jobs(apps, receiver, n):
    """`n` tickets through every process: one delivery each, in event order."""
    written = set()
    for i in range(n):
        status, body, _, _ = post(apps[i % len(apps)].base, "/api/ticket/",
                                  {"title": "job %d" % i})
        if check(status == 201, "ticket create answered %s %r" % (status, body)):
            written.add(body["id"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with receiver.lock:
            if len(receiver.deliveries) >= len(written):
                break
        time.sleep(0.1)
    time.sleep(1.5)  # a second delivery of any of them would come within the workers' poll
    with receiver.lock:
        deliveries = list(receiver.deliveries)
    ids = [d[0] for d in deliveries]
    objects = [json.loads(d[1]).get("object", {}).get("id") for d in deliveries]
    by_pid = {}
    for _, _, pid in deliveries:
        by_pid[pid] = by_pid.get(pid, 0) + 1
    check(len(ids) == len(set(ids)), "jobs: %d deliveries, %d distinct webhook-ids"
          % (len(ids), len(set(ids))))
    check(set(objects) == written, "jobs: delivered %d of %d tickets"
          % (len(set(objects) & written), len(written)))
    check(ids == sorted(ids, key=int), "jobs: deliveries out of event order: %s" % ids[:20])
    names = {app.pid: name for name, app in zip(NAMES, apps)}
    print("  %-28s %d tickets, %d deliveries, %d distinct; sent by %s" % (
        "jobs: webhook deliveries", len(written), len(ids), len(set(ids)),
        ", ".join("%s %d" % (names.get(pid, "?"), k) for pid, k in sorted(
            by_pid.items(), key=lambda kv: names.get(kv[0], "?")))), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pg", metavar="URL", help="PostgreSQL admin URL (a database is created)")
    ap.add_argument("--app", default=os.path.join(ROOT, "target/release/plover-conformance-app"))
    ap.add_argument("--events", type=int, default=50, help="rows written per latency series")
    args = ap.parse_args()
    if not os.access(args.app, os.X_OK):
        raise SystemExit("no app binary at %s: cargo build --release -p plover-conformance-app"
                         % args.app)
    workdir = tempfile.mkdtemp(prefix="plover-feed-processes-")
    db = harness.Scratch(args.pg, workdir, "feeds")
    receiver = Receiver()
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    hook = "http://127.0.0.1:%d/hook" % receiver.server_address[1]
    engine = "PostgreSQL" if args.pg else "SQLite"
    print("change feed and jobs across %d processes, %s (%s)" % (len(NAMES), engine, workdir),
          flush=True)
    started = time.monotonic()
    apps = []
    try:
        for name in NAMES:
            apps.append(harness.App(args.app, db.url, os.path.join(workdir, name + ".log"),
                                    "--webhook", hook, "--webhook-retry-base-ms", "200"))
        receiver.pids = [app.pid for app in apps]
        stream = harness.EventStream(apps[0].port, FEED)
        status, _ = stream.head()
        if not check(status == 200, "the feed on A answered %s" % status):
            raise SystemExit(1)
        seen_ids = []
        check_latency(stream, apps[0], "same process (A -> A)", args.events, seen_ids)
        check_latency(stream, apps[1], "across processes (B -> A)", args.events, seen_ids)
        check_burst(stream, apps, seen_ids)
        stream.close()
        check_jobs(apps, receiver, 30)
    finally:
        for app in apps:
            app.stop()
        receiver.shutdown()
        db.drop()
    print("total: %d failed assertion(s), %.0f s" % (len(FAILURES), time.monotonic() - started))
    if FAILURES:
        raise SystemExit("%d check(s) failed; logs kept in %s" % (len(FAILURES), workdir))
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
