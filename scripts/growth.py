#!/usr/bin/env python3
"""Latency of the first page and of a deep page as the message table grows.

usage: growth.py MICROBLOG_BINARY [SIZES...]    (default sizes: 10000 100000 1000000)

For each size: a fresh SQLite database with 1,000 users and SIZE messages (made by the example
itself, then filled with one INSERT ... SELECT), the example serving it on a loopback port, and
sequential requests (no concurrency, so the figure is the server's own latency): page 1, the
last page by number (OFFSET), and the same page by cursor (keyset pagination). Prints the
median and p90 of each, in milliseconds. Python standard library only.
"""
import base64
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from harness import free_port

REQUESTS = 60
USERS = 1000


def serve(binary, db):
    port = free_port()
    env = dict(os.environ, DATABASE_URL="sqlite://" + db, BIND="127.0.0.1:%d" % port)
    proc = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    base = "http://127.0.0.1:%d" % port
    for _ in range(400):
        try:
            urllib.request.urlopen(base + "/", timeout=1).read()
            return proc, base
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("microblog did not start")


def fill(db, size):
    con = sqlite3.connect(db)
    con.executescript("""
        DELETE FROM message; DELETE FROM "user";
        WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < %d)
        INSERT INTO "user" (id, username, password, email, join_date, active, admin)
        SELECT i, 'user' || (i - 1), '', 'u' || i || '@example.com', '2020-01-01 00:00:00', 1, 0
        FROM seq;
        WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < %d)
        INSERT INTO message (id, user_id, content, pub_date)
        SELECT i, ((i - 1) %% %d) + 1, 'message number ' || i,
               datetime('2020-01-01', '+' || i || ' seconds')
        FROM seq;
        ANALYZE;
    """ % (USERS, size, USERS))
    con.commit()
    con.close()


def timed(url):
    samples = []
    for _ in range(REQUESTS):
        start = time.perf_counter()
        with urllib.request.urlopen(url, timeout=30) as resp:
            body = json.loads(resp.read())
        samples.append((time.perf_counter() - start) * 1000)
        assert body["objects"], url
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.9) - 1]


def cursor(page, last_id):
    raw = json.dumps([page, [last_id]], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    binary = sys.argv[1]
    sizes = [int(s) for s in sys.argv[2:]] or [10_000, 100_000, 1_000_000]
    print("%-10s %-28s %10s %10s" % ("messages", "request", "p50_ms", "p90_ms"))
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="plover-growth-") as tmp:
            db = os.path.join(tmp, "growth.db")
            proc, _ = serve(binary, db)  # creates the tables
            proc.terminate()
            proc.wait()
            fill(db, size)
            proc, base = serve(binary, db)
            try:
                last = size // 20
                cases = [
                    ("page 1", "/api/message/"),
                    ("page %d (offset)" % last, "/api/message/?page=%d" % last),
                    ("page %d (cursor)" % last,
                     "/api/message/?cursor=%s" % cursor(last, (last - 1) * 20)),
                ]
                for name, path in cases:
                    urllib.request.urlopen(base + path).read()  # warm the cache
                    p50, p90 = timed(base + path)
                    print("%-10d %-28s %10.2f %10.2f" % (size, name, p50, p90))
            finally:
                proc.terminate()
                proc.wait()


if __name__ == "__main__":
    main()
