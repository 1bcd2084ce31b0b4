#!/usr/bin/env python3
"""Latency of the example's message list as its table grows, on SQLite and PostgreSQL.

usage: growth.py MICROBLOG_BINARY [--pg ADMIN_URL | --pg-port PORT] [--no-sqlite]
                 [--seconds S] [SIZES...]                (default sizes: 10000 100000)

For each engine and size: a fresh database with 1,000 users and SIZE messages (the tables made
by the example itself, then filled inside the database with one INSERT ... SELECT per table:
a recursive CTE on SQLite, generate_series on PostgreSQL, then ANALYZE), the example serving
it on a loopback port, and requests one at a time (no concurrency, so the figure is the
server's own latency). The reads (docs/performance.md#growth):

  page 1                 /api/message/
  deep page (number)     the last page by number: OFFSET, which reads every row before it
  deep page (cursor)     the same page by cursor (keyset pagination)
  filter through a join  ?user__username=user42&ordering=-pub_date
  ordering through join  ?ordering=user__username
  search, frequent word  ?q=message (every row)
  search, rare word      ?q=plover (20 rows at every size)
  search, middle word    ?q=heron (2,000 rows at every size: a word between rare and frequent)
  count exact            ?count=exact (a COUNT(*) of every row)
  count auto             ?count=auto (exact up to 10,000 rows, the planner's estimate past it)

Each read is sent up to 60 times or for --seconds (default 10), at least 5 times, after one
unmeasured request; prints the median and 90th percentile in ms, or the status of a read that
failed (a 503: past the database's statement_timeout, 10 s by default). PostgreSQL: --pg names
an admin URL (a database is created per size and dropped), --pg-port starts a server of its
own with scripts/pg.sh in a temporary folder. With a PostgreSQL option both engines run,
unless --no-sqlite. The search indexes of `q` are the example's own: build it with
`cargo build --release -p microblog --features search-index` (`#[rest(search_index)]` on the
message's text and the user's name: docs/reference.md#search-q); without them a search for a
rare word reads every message. Python standard library only (psql for PostgreSQL).
"""
import argparse
import base64
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import harness
from harness import free_port, psql

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_REQUESTS = 60
MIN_REQUESTS = 5
USERS = 1000
# Rows that hold the rare word: every (size // RARE)th message, RARE rows at every size.
RARE = 20
# The same for a word between rare and frequent.
MIDDLE = 2000


def serve(binary, url):
    port = free_port()
    env = dict(os.environ, DATABASE_URL=url, BIND="127.0.0.1:%d" % port, RUST_LOG="warn")
    proc = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    base = "http://127.0.0.1:%d" % port
    for _ in range(1200):
        try:
            urllib.request.urlopen(base + "/", timeout=1).read()
            return proc, base
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("microblog did not start")


def plover_lower(text):
    """The example's search indexes are kept by triggers that fold text with Plover's
    `plover_lower` (each character lower-cased to one character), which this connection
    must offer too."""
    if text is None:
        return None
    return "".join(c.lower()[:1] or c for c in text)


def fill_sqlite(path, size):
    con = sqlite3.connect(path)
    con.create_function("plover_lower", 1, plover_lower, deterministic=True)
    con.executescript("""
        PRAGMA foreign_keys = OFF;
        DELETE FROM relationship; DELETE FROM note; DELETE FROM message; DELETE FROM "user";
        WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < %(users)d)
        INSERT INTO "user" (id, username, password, email, join_date, active, admin)
        SELECT i, 'user' || (i - 1), '', 'u' || i || '@example.com', '2020-01-01 00:00:00', 1, 0
        FROM seq;
        WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < %(size)d)
        INSERT INTO message (id, user_id, content, pub_date)
        SELECT i, ((i - 1) %% %(users)d) + 1,
               'message number ' || i || CASE WHEN i %% %(every)d = 0 THEN ' plover' ELSE '' END
                   || CASE WHEN i %% %(middle)d = 0 THEN ' heron' ELSE '' END,
               datetime('2020-01-01', '+' || i || ' seconds')
        FROM seq;
        ANALYZE;
    """ % {"users": USERS, "size": size, "every": size // RARE,
           "middle": max(1, size // MIDDLE)})
    con.commit()
    con.close()


def fill_pg(url, size):
    psql(url, """
        TRUNCATE relationship, note, message, "user" CASCADE;
        INSERT INTO "user" (id, username, password, email, join_date, active, admin)
        SELECT i, 'user' || (i - 1), '', 'u' || i || '@example.com', '2020-01-01', true, false
        FROM generate_series(1, %(users)d) AS i;
        INSERT INTO message (id, user_id, content, pub_date)
        SELECT i, ((i - 1) %% %(users)d) + 1,
               'message number ' || i || CASE WHEN i %% %(every)d = 0 THEN ' plover' ELSE '' END
                   || CASE WHEN i %% %(middle)d = 0 THEN ' heron' ELSE '' END,
               timestamp '2020-01-01' + i * interval '1 second'
        FROM generate_series(1, %(size)d) AS i;
        SELECT setval(pg_get_serial_sequence('"user"', 'id'), %(users)d);
        SELECT setval(pg_get_serial_sequence('message', 'id'), %(size)d);
    """ % {"users": USERS, "size": size, "every": size // RARE,
           "middle": max(1, size // MIDDLE)})
    psql(url, "VACUUM ANALYZE")  # not in the transaction of the statements above


def timed(url, seconds):
    urllib.request.urlopen(url, timeout=600).read()  # warm the caches
    samples = []
    start = time.monotonic()
    while len(samples) < MAX_REQUESTS and (
            len(samples) < MIN_REQUESTS or time.monotonic() - start < seconds):
        begin = time.perf_counter()
        with urllib.request.urlopen(url, timeout=600) as resp:
            body = json.loads(resp.read())
        samples.append((time.perf_counter() - begin) * 1000)
        assert body["objects"], url
    samples.sort()
    return statistics.median(samples), samples[max(0, int(len(samples) * 0.9) - 1)], len(samples)


def cursor(page, last_id):
    raw = json.dumps([page, [last_id]], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def reads(size):
    last = size // 20
    return [
        ("page 1", "/api/message/"),
        ("deep page %d (number)" % last, "/api/message/?page=%d" % last),
        ("deep page %d (cursor)" % last,
         "/api/message/?cursor=%s" % cursor(last, (last - 1) * 20)),
        ("filter through a join", "/api/message/?user__username=user42&ordering=-pub_date"),
        ("ordering through a join", "/api/message/?ordering=user__username"),
        ("search, frequent word", "/api/message/?q=message"),
        ("search, rare word", "/api/message/?q=plover"),
        ("search, middle word", "/api/message/?q=heron"),
        ("count exact", "/api/message/?count=exact"),
        ("count auto", "/api/message/?count=auto"),
    ]


def measure(binary, engine, url, size, seconds, fill):
    proc, _ = serve(binary, url)  # creates the tables (and the demo rows, removed by fill)
    harness.stop_process(proc)
    started = time.monotonic()
    fill(size)
    print("# %s, %d messages: filled in %.0f s" % (engine, size, time.monotonic() - started),
          flush=True)
    proc, base = serve(binary, url)
    try:
        for name, path in reads(size):
            try:
                p50, p90, n = timed(base + path, seconds)
            except urllib.error.HTTPError as e:
                # A 503: the statement ran past the database's statement_timeout (10 s).
                print("%-10s %-10d %-28s %10s" % (engine, size, name, e.code), flush=True)
                continue
            print("%-10s %-10d %-28s %10.2f %10.2f %4d" % (engine, size, name, p50, p90, n),
                  flush=True)
    finally:
        harness.stop_process(proc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary")
    ap.add_argument("sizes", nargs="*", type=int)
    ap.add_argument("--pg", metavar="ADMIN_URL", help="a PostgreSQL server to create databases on")
    ap.add_argument("--pg-port", type=int, help="start a PostgreSQL server of its own on this port")
    ap.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only")
    ap.add_argument("--seconds", type=float, default=10.0, help="time spent on each read")
    args = ap.parse_intermixed_args()
    sizes = args.sizes or [10_000, 100_000]
    if any(s < RARE for s in sizes):
        raise SystemExit("sizes start at %d messages" % RARE)
    # The server's folder is not inside `tmp`, which only its owner may enter (pg.sh gives
    # the folder to the postgres user when run as root).
    pg_dir = os.path.join(tempfile.gettempdir(), "plover-growth-pg-%d" % os.getpid())
    with tempfile.TemporaryDirectory(prefix="plover-growth-") as tmp:
        pg = args.pg
        if args.pg_port:
            out = subprocess.run(["bash", os.path.join(HERE, "pg.sh"), "start", pg_dir,
                                  str(args.pg_port)], capture_output=True, text=True, check=True)
            pg = out.stdout.strip().splitlines()[-1]
        try:
            print("%-10s %-10s %-28s %10s %10s %4s" % (
                "engine", "messages", "read", "p50_ms", "p90_ms", "n"), flush=True)
            for size in sizes:
                if not args.no_sqlite:
                    path = os.path.join(tmp, "growth-%d.db" % size)
                    measure(args.binary, "sqlite", "sqlite://" + path, size, args.seconds,
                            lambda n, path=path: fill_sqlite(path, n))
                    os.remove(path)
                if pg:
                    db = harness.Scratch(pg, tmp, "growth")
                    try:
                        measure(args.binary, "postgresql", db.url, size, args.seconds,
                                lambda n, url=db.url: fill_pg(url, n))
                    finally:
                        db.drop()
        finally:
            if args.pg_port:
                subprocess.run(["bash", os.path.join(HERE, "pg.sh"), "stop", pg_dir],
                               capture_output=True)


if __name__ == "__main__":
    sys.exit(main())
