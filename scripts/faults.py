#!/usr/bin/env python3
"""Fault injection against the conformance app (docs/contract.md: errors, database, bounded cost).

usage: scripts/faults.py [--quick] [--pg-only | --sqlite-only] [--app BINARY] [--pg-port PORT]

Checks, each printing one line per measurement:
  1. PostgreSQL stopped and restarted under load (own throw-away server from scripts/pg.sh):
     several threads send GET lists and details and POST /api/amodel/ while PostgreSQL is
     stopped (pg_ctl -m immediate; the full run also -m fast) for about 5 s and started again on
     the same data directory and port. Every answer to a request in flight or sent while it
     stops or is down is a 503 with a JSON `{"error": ...}` body (a 2xx only for a request sent
     before the stop completed or served after the restart), never another status (a query
     cut off by the stop is a 503 too), and every request ends within connection_timeout (1 s)
     plus a margin (2 s); once it is back, requests succeed again within 5 s, from the same
     app process.
  2. Pool exhaustion, SQLite and PostgreSQL: the app runs with max_connections=1 and
     connection_timeout=1; the script holds a lock (SQLite: BEGIN EXCLUSIVE on the file;
     PostgreSQL: LOCK TABLE amodel IN ACCESS EXCLUSIVE MODE from psql) so that one request
     holds the only pooled connection; further requests must get a 503 JSON answer after about
     connection_timeout, never hang, and requests succeed again once the lock is released. The
     full run adds an SQLite write that waits out busy_timeout (5 s): 503, not 500.
  3. Clients that disconnect mid-body (Content-Length: 100000, half the body, then close or
     reset): the app stays up, answers a normal request afterwards, and its open descriptors
     (/proc/PID/fd) return to the baseline.

--quick is the CI-sized run (under 2 minutes). Runs as root or as a user that may run
PostgreSQL's initdb (see scripts/pg.sh). Python standard library only, plus psql and pg.sh.
Exit status: 0 when every check passed, 1 otherwise (each failure is printed as FAIL).
"""
import argparse
import base64
import glob
import http.client
import json
import os
import random
import socket
import sqlite3
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

from harness import FAILURES, App, check, free_port, psql, with_options

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PG_SH = os.path.join(ROOT, "scripts", "pg.sh")
CONNECTION_TIMEOUT = 1.0   # seconds, passed to the app as connection_timeout
MARGIN = 2.0               # seconds a request may take beyond connection_timeout


def say(line):
    print(line, flush=True)


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def is_json_error(body):
    return isinstance(body, dict) and isinstance(body.get("error"), str)


class Client:
    """One keep-alive HTTP/1.1 connection; every call returns (status, json, seconds).

    status is None when the connection failed (refused, reset, timed out): the text of the
    exception is returned in place of the JSON body."""

    def __init__(self, base, timeout=CONNECTION_TIMEOUT + MARGIN + 10):
        parts = urllib.parse.urlsplit(base)
        self.host, self.port, self.timeout = parts.hostname, parts.port, timeout
        self.conn = None

    def request(self, method, path, body=None, auth=None):
        headers = {"Content-Type": "application/json"}
        if auth:
            headers["Authorization"] = "Basic " + base64.b64encode(
                ("%s:%s" % auth).encode()).decode()
        data = json.dumps(body).encode() if body is not None else None
        start = time.monotonic()
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self.conn.request(method, path, body=data, headers=headers)
            resp = self.conn.getresponse()
            raw = resp.read()
            status = resp.status
            if resp.will_close:
                self.close()
        except (OSError, http.client.HTTPException) as e:
            self.close()
            return None, "%s: %s" % (type(e).__name__, e), time.monotonic() - start
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw[:200]
        return status, parsed, time.monotonic() - start

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def one(base, method, path, body=None, auth=None):
    """A request on a connection of its own, closed afterwards."""
    client = Client(base)
    try:
        return client.request(method, path, body, auth)
    finally:
        client.close()


def start(args, db_url, name):
    """The conformance app with an admin user, its log `<name>.log` in the log directory."""
    return App(args.app, db_url, os.path.join(args.logdir, name + ".log"),
               "--admin", "root:faults-pw")


# --- PostgreSQL server control ---------------------------------------------------------------

def pg_bin(tool):
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/" + tool))
    if not found:
        raise SystemExit("no PostgreSQL %s found (scripts/pg.sh installs the server)" % tool)
    return found[-1]


def as_owner(cmd):
    """pg.sh runs the server as `postgres` when started as root; so must pg_ctl."""
    return (["runuser", "-u", "postgres", "--"] + cmd) if os.getuid() == 0 else cmd


class PgServer:
    def __init__(self, port):
        self.dir = tempfile.mkdtemp(prefix="plover-faults-pg-")
        self.port = port
        out = subprocess.run([PG_SH, "start", self.dir, str(port)], capture_output=True,
                             text=True)
        if out.returncode != 0:
            raise SystemExit("pg.sh start failed: " + out.stderr)
        self.admin_url = out.stdout.strip().splitlines()[-1]

    def stop(self, mode):
        """Stops the server and keeps its data directory (pg.sh stop would remove it)."""
        subprocess.run(as_owner([pg_bin("pg_ctl"), "-D", self.dir + "/data", "-m", mode, "-w",
                                 "stop"]), check=True, capture_output=True)

    def start(self):
        """Starts the same data directory on the same port, with pg.sh's options."""
        subprocess.run(as_owner([
            pg_bin("pg_ctl"), "-D", self.dir + "/data", "-l", self.dir + "/server.log", "-w",
            "-t", "60", "-o", "-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=200"
            " -c fsync=off" % (self.port, self.dir), "start"]), check=True, capture_output=True)

    def create_database(self):
        name = "plover_faults_" + uuid.uuid4().hex[:10]
        psql(self.admin_url, 'CREATE DATABASE "%s"' % name)
        parts = urllib.parse.urlsplit(self.admin_url)
        return urllib.parse.urlunsplit(parts._replace(path="/" + name))

    def destroy(self):
        subprocess.run([PG_SH, "stop", self.dir], capture_output=True)


def seed(base, count):
    ids = []
    for i in range(count):
        status, body, _ = one(base, "POST", "/api/amodel/", {"a_field": "seed-%d" % i})
        if status != 201:
            raise SystemExit("seeding failed: %s %r" % (status, body))
        ids.append(body["id"])
    return ids


# --- 1. PostgreSQL stopped and restarted under load ------------------------------------------

def load_worker(base, ids, stop, records, lock, seed_no):
    rnd = random.Random(seed_no)
    client = Client(base)
    n = 0
    while not stop.is_set():
        n += 1
        pick = rnd.random()
        if pick < 0.35:
            kind, method, path, body, ok = "list", "GET", "/api/amodel/?ordering=-id&limit=10", \
                None, 200
        elif pick < 0.5:
            kind, method, path, body, ok = "list", "GET", "/api/sample/?qty__gte=0", None, 200
        elif pick < 0.8:
            kind, method, path, body, ok = "detail", "GET", "/api/amodel/%d/" % rnd.choice(ids), \
                None, 200
        else:
            kind, method, path, body, ok = "post", "POST", "/api/amodel/", \
                {"a_field": "load-%d-%d" % (seed_no, n)}, 201
        t0 = time.monotonic()
        status, parsed, _ = client.request(method, path, body)
        t1 = time.monotonic()
        with lock:
            records.append((t0, t1, kind, status, ok, parsed, method + " " + path))
    client.close()


def pg_restart(args, pg, mode):
    db_url = pg.create_database()
    url = with_options(db_url, max_connections=8, connection_timeout=int(CONNECTION_TIMEOUT))
    app = start(args, url, "pg-restart-" + mode)
    try:
        ids = seed(app.base, 20)
        threads_n = 8
        down_for = 5.0
        after = 8.0 if args.quick else 15.0
        stop, lock, records = threading.Event(), threading.Lock(), []
        workers = [threading.Thread(target=load_worker,
                                    args=(app.base, ids, stop, records, lock, k))
                   for k in range(threads_n)]
        for w in workers:
            w.start()
        time.sleep(3.0)
        t_stop = time.monotonic()
        pg.stop(mode)
        t_down = time.monotonic()
        time.sleep(down_for)
        t_start = time.monotonic()
        pg.start()
        t_up = time.monotonic()
        time.sleep(after)
        stop.set()
        for w in workers:
            w.join()
        pid_same = app.alive()

        bound = CONNECTION_TIMEOUT + MARGIN
        before = [r for r in records if r[1] < t_stop]
        outage = [r for r in records if r[1] >= t_stop and r[0] < t_up]
        later = sorted((r for r in records if r[0] >= t_up), key=lambda r: r[0])

        def good(r):
            return r[3] == r[4]

        def unavailable(r):
            return r[3] == 503 and is_json_error(r[5])

        statuses = {}
        for r in records:
            statuses[r[3]] = statuses.get(r[3], 0) + 1
        n503 = statuses.get(503, 0)
        others = {s: n for s, n in statuses.items() if s not in (200, 201, 503)}
        slowest = max(r[1] - r[0] for r in records)
        outage_slowest = max((r[1] - r[0] for r in outage), default=0.0)
        failed_later = [i for i, r in enumerate(later) if not good(r)]
        first_ok = failed_later[-1] + 1 if failed_later else 0
        recovered_at = later[first_ok][1] if first_ok < len(later) else None
        recovery = recovered_at - t_up if recovered_at is not None else None
        ok_after = len(later) - first_ok

        say("pg restart (pg_ctl stop -m %s, down %.1f s, %d threads): requests %d, 2xx %d, "
            "503s %d, other statuses %s" % (
                mode, t_start - t_down, threads_n, len(records),
                statuses.get(200, 0) + statuses.get(201, 0), n503, others or "none"))
        served_before = sum(good(r) and r[0] < t_down for r in outage)
        served_after = sum(good(r) and r[0] >= t_down and r[1] >= t_start for r in outage)
        say("pg restart (%s): %d requests overlapped the outage: %d ok sent before the stop "
            "completed, %d ok sent while down and served once it was back (they waited in the "
            "pool), %d 503 JSON, %d other; slowest %.2f s (bound %.1f s), slowest overall %.2f s"
            % (mode, len(outage), served_before, served_after, sum(map(unavailable, outage)),
               len(outage) - served_before - served_after - sum(map(unavailable, outage)),
               outage_slowest, bound, slowest))
        say("pg restart (%s): time to recovery %s after PostgreSQL accepted connections "
            "(pg_ctl start took %.2f s); %d requests after it, all ok; same app process: %s" % (
                mode, "%.2f s" % recovery if recovery is not None else "NEVER",
                t_up - t_start, ok_after, "yes" if pid_same else "NO"))
        say("pg restart (%s): app log lines naming a 503: %d (%d of them a pool checkout), a "
            "500: %d" % (mode, app.log_lines("503 Service Unavailable")
                         + app.log_lines("database connection unavailable"),
                         app.log_lines("database connection unavailable"),
                         app.log_lines("500 Internal")))

        bad_before = [r for r in before if not good(r)]
        check(not bad_before, "pg restart (%s): before the stop, %d requests failed, e.g. %r"
              % (mode, len(bad_before), bad_before[:3]))
        # While PostgreSQL is down (pg_ctl stop returned, pg_ctl start not yet called), a 2xx
        # can only be an answer to a request sent before, or served after the restart.
        bad_outage = [r for r in outage if not (
            unavailable(r) or (good(r) and (r[0] < t_down or r[1] >= t_start)))]
        check(not bad_outage, "pg restart (%s): requests in flight or sent while PostgreSQL "
              "was stopping or down: expected 2xx or 503 with a JSON error body, got %d others: "
              "%s" % (mode, len(bad_outage), "; ".join(
                  "%s -> %s %s (sent %+.0f ms from the stop, answered after %.0f ms)" % (
                      r[6], r[3], json.dumps(r[5]), (r[0] - t_stop) * 1000,
                      (r[1] - r[0]) * 1000) for r in bad_outage[:6])))
        check(any(unavailable(r) for r in outage),
              "pg restart (%s): no 503 while PostgreSQL was down" % mode)
        slow = [r for r in records if r[1] - r[0] > bound]
        check(not slow, "pg restart (%s): %d requests took longer than %.1f s, e.g. %s" % (
            mode, len(slow), bound, [(r[2], r[3], round(r[1] - r[0], 2)) for r in slow[:5]]))
        bad_later = [r for r in later if not (good(r) or unavailable(r))]
        check(not bad_later, "pg restart (%s): after the restart expected 2xx or 503 JSON, "
              "got %s" % (mode, [(r[2], r[3], r[5]) for r in bad_later[:5]]))
        check(recovery is not None and recovery <= 5.0 and ok_after >= 20,
              "pg restart (%s): no recovery within 5 s of the restart (recovery %s, %d ok after)"
              % (mode, recovery, ok_after))
        check(pid_same, "pg restart (%s): the app process died" % mode)
        status, body, _ = one(app.base, "GET", "/api/amodel/?limit=1")
        check(status == 200, "pg restart (%s): a request after the run got %s %r" % (
            mode, status, body))
    finally:
        app.stop()


# --- 2. Pool exhaustion ----------------------------------------------------------------------

PROBES = [("GET", "/api/amodel/", None), ("GET", "/api/sample/?qty__gte=1", None),
          ("POST", "/api/amodel/", {"a_field": "probe"})]


def probe_rounds(base, until, per_round=3):
    """Concurrent requests, round after round, while the pool's only connection is held."""
    results = []
    lock = threading.Lock()

    def send(method, path, body):
        r = one(base, method, path, body)
        with lock:
            results.append((method, path) + r)

    while time.monotonic() + CONNECTION_TIMEOUT + 0.5 < until:
        threads = [threading.Thread(target=send, args=PROBES[k % len(PROBES)])
                   for k in range(per_round)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return results


def report_probes(label, probes):
    waits = sorted(p[4] for p in probes)
    n503 = sum(p[2] == 503 and is_json_error(p[3]) for p in probes)
    say("%s: %d requests while the only connection was held, 503 JSON %d; wait min/median/max "
        "%.2f/%.2f/%.2f s (connection_timeout %.0f s)" % (
            label, len(probes), n503, waits[0], statistics.median(waits), waits[-1],
            CONNECTION_TIMEOUT))
    check(probes, "%s: no request was sent while the connection was held" % label)
    wrong = [p for p in probes if not (p[2] == 503 and is_json_error(p[3]))]
    check(not wrong, "%s: expected 503 with a JSON error body, got %s" % (
        label, [(p[0], p[1], p[2], p[3]) for p in wrong[:5]]))
    off = [p for p in probes if not (CONNECTION_TIMEOUT * 0.8 <= p[4]
                                     <= CONNECTION_TIMEOUT + MARGIN)]
    check(not off, "%s: expected the 503 after about %.1f s, got %s" % (
        label, CONNECTION_TIMEOUT, [(p[0], p[1], round(p[4], 2)) for p in off[:5]]))


def after_release(label, base):
    results = [one(base, "GET", "/api/amodel/?ordering=-id&limit=5"),
               one(base, "POST", "/api/amodel/", {"a_field": "after-release"}),
               one(base, "GET", "/api/sample/")]
    say("%s: after the lock was released: %s" % (label, [r[0] for r in results]))
    check([r[0] for r in results] == [200, 201, 200],
          "%s: after the release expected [200, 201, 200], got %s" % (
              label, [(r[0], r[1]) for r in results]))


def held_request(base, method, path, body, out):
    out.append(one(base, method, path, body))


def pool_sqlite(args):
    db = os.path.join(args.logdir, "pool.db")
    app = start(args, with_options("sqlite://" + db, max_connections=1,
                                   connection_timeout=int(CONNECTION_TIMEOUT)), "pool-sqlite")
    label = "sqlite pool exhaustion"
    try:
        seed(app.base, 5)
        hold = 3.5   # below SQLite's busy_timeout (5 s): the held write then succeeds
        locker = sqlite3.connect(db, isolation_level=None, timeout=5)
        locker.execute("BEGIN EXCLUSIVE")
        t_lock = time.monotonic()
        writer_out = []
        writer = threading.Thread(target=held_request, args=(
            app.base, "POST", "/api/amodel/", {"a_field": "held-writer"}, writer_out))
        writer.start()
        time.sleep(0.4)   # the write has the pool's only connection, waiting on the lock
        probes = probe_rounds(app.base, t_lock + hold)
        time.sleep(max(0.0, t_lock + hold - time.monotonic()))
        locker.execute("ROLLBACK")
        writer.join(timeout=30)
        report_probes(label, probes)
        w = writer_out[0] if writer_out else (None, "no answer", 0.0)
        say("%s: the write that held the connection: %s after %.2f s (lock held %.1f s, "
            "busy_timeout 5 s)" % (label, w[0], w[2], hold))
        check(w[0] == 201, "%s: the held write expected 201 once the lock was released, got "
              "%s %r" % (label, w[0], w[1]))
        after_release(label, app.base)

        if not args.quick:
            # A write that waits out busy_timeout: the database is unavailable past a timeout
            # (docs/contract.md#errors), which is a 503 to retry, not an internal error.
            locker.execute("BEGIN EXCLUSIVE")
            t0 = time.monotonic()
            r = one(app.base, "POST", "/api/amodel/", {"a_field": "past-busy-timeout"})
            locker.execute("ROLLBACK")
            say("%s: a write blocked past busy_timeout (lock held %.1f s): %s %s after %.2f s"
                % (label, time.monotonic() - t0, r[0], json.dumps(r[1]), r[2]))
            check(r[0] == 503 and is_json_error(r[1]),
                  "%s: POST /api/amodel/ while another process holds the SQLite write lock "
                  "past busy_timeout (5 s): expected 503 with a JSON error body, got %s %s" % (
                      label, r[0], json.dumps(r[1])))
            after_release(label, app.base)
        locker.close()
        check(app.alive(), "%s: the app died" % label)
    finally:
        app.stop()


def pool_pg(args, pg):
    label = "pg pool exhaustion"
    db_url = pg.create_database()
    app = start(args, with_options(db_url, max_connections=1,
                                   connection_timeout=int(CONNECTION_TIMEOUT)), "pool-pg")
    holder = None
    try:
        seed(app.base, 5)
        sleep_s = 5 if args.quick else 8
        holder = subprocess.Popen(
            ["psql", db_url, "-v", "ON_ERROR_STOP=1", "-q", "-c",
             "BEGIN; LOCK TABLE amodel IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(%d); COMMIT;"
             % sleep_s], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        granted = "0"
        while time.monotonic() < deadline and granted == "0":
            granted = psql(db_url, "SELECT count(*) FROM pg_locks l JOIN pg_class c ON "
                           "c.oid = l.relation WHERE c.relname = 'amodel' AND l.granted AND "
                           "l.mode = 'AccessExclusiveLock'")
        t_lock = time.monotonic()
        check(granted != "0", "%s: psql did not get the table lock" % label)
        held_out = []
        held = threading.Thread(target=held_request, args=(
            app.base, "GET", "/api/amodel/", None, held_out))
        held.start()
        waiting = "0"
        while time.monotonic() < t_lock + 3 and waiting == "0":
            waiting = psql(db_url, "SELECT count(*) FROM pg_stat_activity WHERE "
                           "wait_event_type = 'Lock' AND datname = current_database()")
        check(waiting != "0", "%s: no app request waited on the lock" % label)
        probes = probe_rounds(app.base, t_lock + sleep_s)
        holder.wait(timeout=30)
        held.join(timeout=30)
        report_probes(label, probes)
        h = held_out[0] if held_out else (None, "no answer", 0.0)
        say("%s: the request that held the connection: %s after %.2f s (lock held %d s)" % (
            label, h[0], h[2], sleep_s))
        check(h[0] == 200, "%s: the held GET expected 200 once the lock was released, got %s %r"
              % (label, h[0], h[1]))
        after_release(label, app.base)
        check(app.alive(), "%s: the app died" % label)
    finally:
        if holder is not None and holder.poll() is None:
            holder.kill()
        app.stop()


# --- 3. Clients that disconnect mid-body -----------------------------------------------------

def settle_fds(pid, target, seconds):
    """Polls the descriptor count until it is at most target (or the time is up)."""
    deadline = time.monotonic() + seconds
    count = fd_count(pid)
    while count > target and time.monotonic() < deadline:
        time.sleep(0.1)
        count = fd_count(pid)
    return count


def disconnects(args, label, db_url):
    app = start(args, db_url, "disconnect-" + label)
    try:
        seed(app.base, 5)
        # Warm the pool with concurrent requests, then let the server close those connections.
        warm = [threading.Thread(target=one, args=(app.base, "GET", "/api/amodel/"))
                for _ in range(8)]
        for t in warm:
            t.start()
        for t in warm:
            t.join()
        time.sleep(1.0)
        baseline = fd_count(app.pid)
        total = 200 if args.quick else 1000
        batch = 20
        head = ("POST /api/amodel/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: "
                "application/json\r\nContent-Length: 100000\r\n\r\n" % app.port).encode()
        half = b'{"a_field": "' + b"x" * (50000 - 14)
        peak = baseline
        sent = 0
        while sent < total:
            socks = []
            for _ in range(min(batch, total - sent)):
                s = socket.create_connection(("127.0.0.1", app.port), timeout=5)
                s.sendall(head + half)
                socks.append(s)
            time.sleep(0.05)
            peak = max(peak, fd_count(app.pid))
            for k, s in enumerate(socks):
                if (sent + k) % 2:   # every other one is reset instead of closed
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()
            sent += len(socks)
        t0 = time.monotonic()
        after = settle_fds(app.pid, baseline, 10)
        settle = time.monotonic() - t0
        status, body, _ = one(app.base, "GET", "/api/amodel/?limit=1")
        post = one(app.base, "POST", "/api/amodel/", {"a_field": "after-disconnects"})
        final = settle_fds(app.pid, baseline, 5)
        say("disconnect mid-body (%s): %d clients sent headers (Content-Length: 100000) and "
            "50000 bytes, then closed (half reset); open descriptors baseline %d, peak %d, "
            "after %d (settled in %.2f s), after a normal request %d; GET %s, POST %s" % (
                label, total, baseline, peak, after, settle, final, status, post[0]))
        check(app.alive(), "disconnect mid-body (%s): the app died" % label)
        check(status == 200 and post[0] == 201,
              "disconnect mid-body (%s): a normal request afterwards got GET %s %r, POST %s %r"
              % (label, status, body, post[0], post[1]))
        check(after <= baseline and final <= baseline,
              "disconnect mid-body (%s): open descriptors did not return to the baseline %d "
              "(after %d, after a normal request %d)" % (label, baseline, after, final))
    finally:
        app.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="CI-sized run, under 2 minutes")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--pg-only", action="store_true")
    only.add_argument("--sqlite-only", action="store_true")
    parser.add_argument("--app", default=os.path.join(
        ROOT, "target", "release", "plover-conformance-app"))
    parser.add_argument("--pg-port", type=int, default=0,
                        help="port of the throw-away PostgreSQL server (default: a free one)")
    args = parser.parse_args()
    if not os.access(args.app, os.X_OK):
        raise SystemExit("no app binary at %s (cargo build --release -p plover-conformance-app)"
                         % args.app)
    args.logdir = tempfile.mkdtemp(prefix="plover-faults-")
    started = time.monotonic()
    say("faults: %s run, app %s, logs in %s" % (
        "quick" if args.quick else "full", args.app, args.logdir))

    if not args.pg_only:
        pool_sqlite(args)
        disconnects(args, "sqlite", "sqlite://" + os.path.join(args.logdir, "disconnect.db"))
    if not args.sqlite_only:
        pg = PgServer(args.pg_port or free_port())
        try:
            for mode in (["immediate"] if args.quick else ["fast", "immediate"]):
                pg_restart(args, pg, mode)
            pool_pg(args, pg)
            disconnects(args, "pg", pg.create_database())
        finally:
            pg.destroy()

    outcome = "FAILED (%d)" % len(FAILURES) if FAILURES else "all checks passed"
    say("faults: %s in %.1f s" % (outcome, time.monotonic() - started))
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
