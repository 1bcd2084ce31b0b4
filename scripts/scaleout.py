#!/usr/bin/env python3
"""Scale-out test: two conformance-app processes on two ports share one PostgreSQL database.

usage: scaleout.py APP_BINARY POSTGRES_ADMIN_URL

Concurrent creates and updates are spread over both processes (bounded loops, loopback only);
afterwards every acknowledged write must be present exactly once with its last acknowledged
value, and a unique-constraint race between the two processes must give one 201 and 409s,
never a 5xx. Python standard library only.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

from harness import App, psql

THREADS = 8
CREATES_PER_THREAD = 40
UPDATES_PER_ROW = 2
RACES = 30


def request(base, method, path, body=None, auth=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if auth:
        req.add_header("Authorization", "Basic " + base64.b64encode(
            ("%s:%s" % auth).encode()).decode())
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = 0
        self.statuses = {}

    def add(self, status):
        with self.lock:
            self.requests += 1
            self.statuses[status] = self.statuses.get(status, 0) + 1


def writer(bases, label, thread_no, tally, acked, failures):
    """Creates rows through alternating processes, then updates each one twice."""
    mine = {}
    for i in range(CREATES_PER_THREAD):
        base = bases[(thread_no + i) % 2]
        value = "%s-t%d-%d" % (label, thread_no, i)
        status, body = request(base, "POST", "/api/amodel/", {"a_field": value})
        tally.add(status)
        if status == 201:
            mine[body["id"]] = value
        else:
            failures.append(("create", status, body))
    for round_no in range(UPDATES_PER_ROW):
        for j, pk in enumerate(sorted(mine)):
            base = bases[(thread_no + j + round_no) % 2]
            value = "%s-u%d" % (mine[pk].split("-u")[0], round_no)
            status, body = request(base, "PUT", "/api/amodel/%d/" % pk, {"a_field": value})
            tally.add(status)
            if status == 200 and body.get("a_field") == value:
                mine[pk] = value
            else:
                failures.append(("update", status, body))
    with tally.lock:
        acked.update(mine)


def race(bases, label, tally, outcomes):
    """Both processes create a sample with the same unique name at the same moment."""
    for r in range(RACES):
        name = "%s-race-%d" % (label, r)
        barrier = threading.Barrier(2)
        results = [None, None]

        def post(k):
            barrier.wait()
            results[k] = request(bases[k], "POST", "/api/sample/", {"name": name, "qty": r})
            tally.add(results[k][0])

        threads = [threading.Thread(target=post, args=(k,)) for k in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        outcomes.append(sorted(res[0] for res in results))


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    app, admin_url = sys.argv[1], sys.argv[2]
    db_name = "plover_scaleout_" + uuid.uuid4().hex[:10]
    parts = urllib.parse.urlsplit(admin_url)
    db_url = urllib.parse.urlunsplit(parts._replace(path="/" + db_name))
    psql(admin_url, 'CREATE DATABASE "%s"' % db_name)
    logdir = tempfile.mkdtemp(prefix="plover-scaleout-")
    apps = []
    try:
        # Both processes start together: schema creation must not race.
        starters = []
        bases = [None, None]
        start_errors = []

        def start(k):
            try:
                started = App(app, db_url, os.path.join(logdir, "app%d.log" % k),
                              "--admin", "root:scale-out-pw")
            except SystemExit as e:
                start_errors.append("app %d: %s" % (k, e))
                return
            apps.append(started)
            bases[k] = started.base

        for k in (0, 1):
            starters.append(threading.Thread(target=start, args=(k,)))
            starters[-1].start()
        for t in starters:
            t.join()
        if None in bases:
            raise SystemExit("an app did not start:\n" + "\n".join(start_errors))

        label = "so" + uuid.uuid4().hex[:8]
        tally, acked, failures, outcomes = Tally(), {}, [], []
        started = time.monotonic()
        workers = [threading.Thread(target=writer, args=(bases, label, n, tally, acked, failures))
                   for n in range(THREADS)]
        workers.append(threading.Thread(target=race, args=(bases, label, tally, outcomes)))
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        elapsed = time.monotonic() - started

        rows = psql(db_url, "SELECT id, a_field FROM amodel WHERE a_field LIKE '%s-%%' ORDER BY id"
                    % label)
        found = {}
        duplicates = 0
        for line in rows.splitlines():
            pk, value = line.split("|", 1)
            if int(pk) in found:
                duplicates += 1
            found[int(pk)] = value
        values = sorted(found.values())
        server_errors = sum(n for s, n in tally.statuses.items() if s >= 500)
        race_ok = all(o == [201, 409] for o in outcomes)
        race_rows = int(psql(db_url, "SELECT COUNT(*) FROM sample WHERE name LIKE '%s-race-%%'"
                             % label))

        print("scale-out: 2 processes, %d writer threads + 1 racing pair, %.1f s" % (
            THREADS, elapsed))
        print("  requests: %d, statuses: %s" % (tally.requests, dict(sorted(tally.statuses.items()))))
        print("  acknowledged creates: %d, rows found: %d, duplicates: %d" % (
            len(acked), len(found), duplicates))
        print("  unique races: %d, outcomes 201+409: %d, sample rows: %d" % (
            len(outcomes), sum(o == [201, 409] for o in outcomes), race_rows))
        ok = (not failures and server_errors == 0 and duplicates == 0
              and found == acked and len(values) == len(set(values))
              and race_ok and race_rows == RACES)
        if not ok:
            print("  FAILED: failures=%r server_errors=%d missing=%d extra=%d races=%r" % (
                failures[:5], server_errors, len(set(acked) - set(found)),
                len(set(found) - set(acked)), outcomes), file=sys.stderr)
            raise SystemExit(1)
        print("  OK: every acknowledged write is present exactly once, with its last value")
    finally:
        for started in apps:
            started.stop()
        subprocess.run(["psql", admin_url, "-qc", 'DROP DATABASE IF EXISTS "%s" WITH (FORCE)'
                        % db_name], capture_output=True)


if __name__ == "__main__":
    main()
