#!/usr/bin/env python3
"""Soak test: a steady mixed load on the conformance app for N minutes, watching for leaks.

usage: scripts/soak.py [--minutes N] [--pg POSTGRES_ADMIN_URL] [--app BINARY]
                       [--procs P] [--threads T]

The app runs on a fresh SQLite database (default) or on a new database created on the given
PostgreSQL server (dropped at the end). At start the --admin user creates a user through
POST /api/user/; the data is made through HTTP. Then P processes of T threads each (keep-alive
connections, no pause between requests) send: lists with filters, joins, ordering and pages;
details; POST, PUT and DELETE of amodel rows (each thread deletes only rows it made, so the
tables stay the same size); POST and DELETE of messages with the user's Basic credentials.

Every 30 s it prints: elapsed time, requests/s in that window, p50 and p99 latency, errors
(any status other than the expected one, or a failed connection), and the app's RSS (VmRSS of
/proc/PID/status) and open descriptors (/proc/PID/fd). At the end it compares the end of the run
with the end of the warm-up (the first 2 minutes or the first third, whichever is shorter):
RSS growth under 20 %, descriptors within 5, p99 of the last window within 2x of the first
window after warm-up, and no 5xx and no other error in the whole run. Exit status 1 when any of
these fails. `--minutes 1` is a smoke run. Python standard library only (and psql with --pg).
"""
import argparse
import base64
import http.client
import json
import multiprocessing as mp
import os
import queue
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

import harness
from harness import App

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WINDOW = 30.0
ADMIN = ("root", "soak-admin-pw")
USER = ("soaker", "soak-user-pw:with-colon")
RSS_GROWTH = 0.20
FD_SLACK = 5
P99_FACTOR = 2.0


def basic(creds):
    return "Basic " + base64.b64encode(("%s:%s" % creds).encode()).decode()


class Client:
    """One keep-alive connection; request() returns (status or 0 on failure, json)."""

    def __init__(self, base):
        parts = urllib.parse.urlsplit(base)
        self.host, self.port = parts.hostname, parts.port
        self.conn = None

    def request(self, method, path, body=None, auth=None):
        headers = {"Content-Type": "application/json"}
        if auth:
            headers["Authorization"] = basic(auth)
        data = json.dumps(body).encode() if body is not None else None
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
            self.conn.request(method, path, body=data, headers=headers)
            resp = self.conn.getresponse()
            raw = resp.read()
            if resp.will_close:
                self.close()
        except (OSError, http.client.HTTPException) as e:
            self.close()
            return 0, "%s: %s" % (type(e).__name__, e)
        try:
            return resp.status, json.loads(raw) if raw else None
        except ValueError:
            return resp.status, raw[:200]

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def proc_status(pid):
    """(RSS in KiB, open descriptors, CPU seconds used) of a process."""
    rss = harness.proc_status(pid, "VmRSS")
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return rss, len(os.listdir("/proc/%d/fd" % pid)), cpu


# --- the load, in worker processes -----------------------------------------------------------

LISTS = [
    "/api/amodel/?ordering=-id&limit=10",
    "/api/amodel/?a_field__like=seed-1%25&ordering=a_field",
    "/api/amodel/?a_field__ilike=SEED-2%25&ordering=-a_field,id&page=2&limit=5",
    "/api/amodel/?id__in=1,2,3,5,8,13&ordering=-id",
    "/api/sample/?qty__gte={n}&ordering=-qty,name&limit=20",
    "/api/sample/?flag=false&qty__lt={n}&ordering=name&page=2",
    "/api/sample/?name__ilike=S-1%25&ratio__gte=0&ordering=-big,id",
    "/api/message/?user__username=soaker&ordering=-id&limit=10",
    "/api/message/?content__ilike=%25SEED%25&ordering=-pub_date&limit=5",
    "/api/bmodel/?a__a_field__like=seed-%25&ordering=-id",
]


def load_thread(base, seeds, stop, out, out_lock, proc_no, thread_no):
    rnd = random.Random(proc_no * 1000 + thread_no)
    client = Client(base)
    rows, messages = [], []
    n = 0
    while not stop.is_set():
        n += 1
        pick = rnd.random()
        auth, body, expect = None, None, 200
        if pick < 0.40:
            kind, method = "list", "GET"
            path = rnd.choice(LISTS).format(n=rnd.randrange(200))
        elif pick < 0.62:
            kind, method = "detail", "GET"
            name, ids = rnd.choice(seeds)
            path = "/api/%s/%d/" % (name, rnd.choice(ids))
        elif pick < 0.88:
            # amodel writes: the thread's own rows stay between 5 and 20
            if len(rows) < 5 or (len(rows) < 20 and rnd.random() < 0.4):
                kind, method, path, expect = "post", "POST", "/api/amodel/", 201
                body = {"a_field": "soak-%d-%d-%d" % (proc_no, thread_no, n)}
            elif len(rows) >= 20 or rnd.random() < 0.5:
                kind, method, path = "delete", "DELETE", "/api/amodel/%d/" % rows.pop(0)
            else:
                kind, method = "put", "PUT"
                path = "/api/amodel/%d/" % rnd.choice(rows)
                body = {"a_field": "soak-put-%d-%d-%d" % (proc_no, thread_no, n)}
        else:
            auth = USER
            if len(messages) < 10:
                kind, method, path, expect = "message", "POST", "/api/message/", 201
                body = {"content": "soak message %d-%d-%d" % (proc_no, thread_no, n)}
            else:
                kind, method = "message-delete", "DELETE"
                path = "/api/message/%d/" % messages.pop(0)
        t0 = time.monotonic()
        status, parsed = client.request(method, path, body, auth)
        t1 = time.monotonic()
        if status == 201 and isinstance(parsed, dict) and "id" in parsed:
            (rows if kind == "post" else messages).append(parsed["id"])
        detail = None
        if status != expect:
            detail = "%s %s -> %s %s" % (method, path, status, json.dumps(parsed)[:200])
        with out_lock:
            out.append((t1, t1 - t0, status, detail))
    client.close()


def worker(base, seeds, go, stop, results, proc_no, threads):
    out, out_lock = [], threading.Lock()
    go.wait()
    pool = [threading.Thread(target=load_thread,
                             args=(base, seeds, stop, out, out_lock, proc_no, k))
            for k in range(threads)]
    for t in pool:
        t.start()
    while any(t.is_alive() for t in pool):
        time.sleep(0.5)
        with out_lock:
            batch, out[:] = list(out), []
        if batch:
            results.put(batch)
    with out_lock:
        if out:
            results.put(list(out))
    results.put(None)


# --- set-up and the monitor ------------------------------------------------------------------

def fixtures(base):
    """The user, and rows to read, all through HTTP (conformance/APP.md section 6)."""
    client = Client(base)

    def make(path, body, auth=None):
        status, parsed = client.request("POST", path, body, auth)
        if status != 201:
            raise SystemExit("fixture POST %s %r: %s %r" % (path, body, status, parsed))
        return parsed["id"]

    make("/api/user/", {"username": USER[0], "email": "soaker@example.com",
                        "password": USER[1]}, ADMIN)
    amodels = [make("/api/amodel/", {"a_field": "seed-%d" % i}) for i in range(200)]
    samples = [make("/api/sample/", {"name": "s-%d" % i, "qty": i, "big": i * 1000,
                                     "ratio": i / 7.0, "flag": i % 3 == 0})
               for i in range(200)]
    bmodels = [make("/api/bmodel/", {"a_id": amodels[i], "b_field": "b-%d" % i})
               for i in range(50)]
    messages = [make("/api/message/", {"content": "seed message %d" % i}, USER)
                for i in range(50)]
    client.close()
    return [("amodel", amodels), ("sample", samples), ("bmodel", bmodels),
            ("message", messages)]


def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, int(round(p / 100.0 * (len(sorted_values) - 1))))
    return sorted_values[k]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=int, default=10)
    parser.add_argument("--pg", metavar="ADMIN_URL",
                        help="PostgreSQL admin URL (a database is created and dropped)")
    parser.add_argument("--app", default=os.path.join(
        ROOT, "target", "release", "plover-conformance-app"))
    parser.add_argument("--procs", type=int, default=os.cpu_count() or 2,
                        help="client processes (default: one per CPU)")
    parser.add_argument("--threads", type=int, default=4, help="threads per client process")
    args = parser.parse_args()
    if args.minutes < 1:
        raise SystemExit("--minutes must be at least 1")
    total = args.minutes * 60.0
    warmup = min(120.0, total / 3)
    logdir = tempfile.mkdtemp(prefix="plover-soak-")

    db_name = None
    if args.pg:
        db_name = "plover_soak_" + uuid.uuid4().hex[:10]
        subprocess.run(["psql", args.pg, "-v", "ON_ERROR_STOP=1", "-qc",
                        'CREATE DATABASE "%s"' % db_name], check=True, capture_output=True)
        parts = urllib.parse.urlsplit(args.pg)
        db_url = urllib.parse.urlunsplit(parts._replace(path="/" + db_name))
    else:
        db_url = "sqlite://" + os.path.join(logdir, "soak.db")

    app = App(args.app, db_url, os.path.join(logdir, "app.log"), "--admin", "%s:%s" % ADMIN)
    base = app.base
    ctx = mp.get_context("spawn")
    workers = []
    failures = []
    try:
        seeds = fixtures(base)
        go, stop, results = ctx.Event(), ctx.Event(), ctx.Queue()
        workers = [ctx.Process(target=worker, args=(base, seeds, go, stop, results, k,
                                                    args.threads))
                   for k in range(args.procs)]
        for w in workers:
            w.start()
        time.sleep(1.0)   # the spawned interpreters are up and waiting
        rss0, fds0, cpu0 = proc_status(app.pid)
        print("soak: %s, %d min, %d processes x %d threads, warm-up %.0f s, app pid %d, "
              "RSS %.1f MiB, fds %d before the load; logs in %s" % (
                  "PostgreSQL" if args.pg else "SQLite", args.minutes, args.procs,
                  args.threads, warmup, app.pid, rss0 / 1024.0, fds0, logdir), flush=True)
        t_start = time.monotonic()
        go.set()
        t_end = t_start + total
        windows = int(round(total / WINDOW))
        lat = [[] for _ in range(windows)]
        errs = [0] * windows
        fives = [0] * windows
        examples = []
        snaps = {0: (rss0, fds0, cpu0)}
        stats = []
        printed = 0
        done = 0
        stopping = False

        def drain(timeout):
            nonlocal done
            try:
                batch = results.get(timeout=timeout)
            except queue.Empty:
                return
            if batch is None:
                done += 1
                return
            for t1, seconds, status, detail in batch:
                k = int((t1 - t_start) // WINDOW)
                if t1 > t_end or k < 0 or k >= windows:
                    continue
                lat[k].append(seconds)
                if detail:
                    errs[k] += 1
                    if status >= 500:
                        fives[k] += 1
                    if len(examples) < 10:
                        examples.append(detail)

        while done < len(workers):
            drain(0.2)
            now = time.monotonic()
            k = int((now - t_start) // WINDOW)
            if k > len(snaps) - 1 and len(snaps) <= windows:
                snaps[len(snaps)] = proc_status(app.pid) if app.alive() else (0, 0, 0)
            if not stopping and now >= t_end:
                stop.set()
                stopping = True
            # A window is printed 1.5 s after it closes: its samples have arrived by then.
            while printed < windows and (now >= t_start + (printed + 1) * WINDOW + 1.5
                                         or done == len(workers)):
                w = sorted(lat[printed])
                rss, fds, cpu = snaps.get(printed + 1, (0, 0, 0))
                cpu = (cpu - snaps.get(printed, (0, 0, 0))[2]) / WINDOW * 100
                row = {"end": (printed + 1) * WINDOW, "n": len(w), "rps": len(w) / WINDOW,
                       "p50": percentile(w, 50) * 1000, "p99": percentile(w, 99) * 1000,
                       "errors": errs[printed], "5xx": fives[printed], "rss": rss, "fds": fds}
                stats.append(row)
                print("soak %5.0f s: %6.0f req/s, p50 %6.2f ms, p99 %6.2f ms, errors %d "
                      "(5xx %d), RSS %.1f MiB, fds %d, app CPU %.0f %%" % (
                          row["end"], row["rps"], row["p50"], row["p99"], row["errors"],
                          row["5xx"], rss / 1024.0, fds, cpu), flush=True)
                printed += 1
        for w in workers:
            w.join(timeout=30)

        alive = app.alive()
        requests = sum(r["n"] for r in stats)
        errors = sum(r["errors"] for r in stats)
        server_errors = sum(r["5xx"] for r in stats)
        first = next(i for i in range(windows) if i * WINDOW >= warmup)
        base_row, end_row = stats[first], stats[-1]
        rss_base, fds_base = snaps[first][:2]
        rss_end, fds_end = end_row["rss"], end_row["fds"]
        growth = (rss_end - rss_base) / float(rss_base) if rss_base else float("inf")
        print("soak: %d requests in %.0f s (%.0f req/s), errors %d, 5xx %d" % (
            requests, total, requests / total, errors, server_errors))
        print("soak: after warm-up (%.0f s): RSS %.1f MiB, fds %d, p99 %.2f ms (window "
              "%.0f-%.0f s)" % (first * WINDOW, rss_base / 1024.0, fds_base, base_row["p99"],
                               first * WINDOW, base_row["end"]))
        print("soak: end (%.0f s): RSS %.1f MiB (%+.1f %%), fds %d (%+d), p99 %.2f ms (%.2fx)"
              % (end_row["end"], rss_end / 1024.0, growth * 100, fds_end, fds_end - fds_base,
                 end_row["p99"], end_row["p99"] / base_row["p99"]))
        for e in examples:
            print("  error: " + e)
        if not alive:
            failures.append("the app exited with %s" % app.proc.returncode)
        if growth > RSS_GROWTH:
            failures.append("RSS grew %.1f %% after warm-up (bound %.0f %%)" % (
                growth * 100, RSS_GROWTH * 100))
        if abs(fds_end - fds_base) > FD_SLACK:
            failures.append("open descriptors went from %d to %d (bound +-%d)" % (
                fds_base, fds_end, FD_SLACK))
        if not end_row["p99"] <= P99_FACTOR * base_row["p99"]:
            failures.append("p99 went from %.2f ms to %.2f ms (bound %.1fx)" % (
                base_row["p99"], end_row["p99"], P99_FACTOR))
        if server_errors:
            failures.append("%d responses were 5xx" % server_errors)
        if errors - server_errors:
            failures.append("%d requests failed otherwise (unexpected status or connection)"
                            % (errors - server_errors))
        if requests == 0:
            failures.append("no request was answered")
    finally:
        for w in workers:
            if w.is_alive():
                w.terminate()
        app.stop()
        if db_name:
            subprocess.run(["psql", args.pg, "-qc", 'DROP DATABASE IF EXISTS "%s" WITH (FORCE)'
                            % db_name], capture_output=True)
    for f in failures:
        print("  FAIL: " + f)
    print("soak: %s" % ("FAILED" if failures else "OK"))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
