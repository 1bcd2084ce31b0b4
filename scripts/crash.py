#!/usr/bin/env python3
"""Crash durability: SIGKILL the conformance app in the middle of a write burst, restart it on
the same database, and check that nothing acknowledged was lost, doubled or half-written.

usage: crash.py [--quick] [--rounds N] [--pg POSTGRES_ADMIN_URL] [--app BINARY] [--seed S]

Runs on a new SQLite file, or with --pg on a new database it creates on that PostgreSQL server
(and drops at the end). Each round starts the app (default target/release/plover-conformance-app),
runs 16 writer threads against it (POST /api/amodel/ with unique `a_field` values; a chain:
POST /api/amodel/ then POST /api/bmodel/ referring to it; now and then DELETE /api/amodel/<id>/
of an earlier chain, a recursive delete of both rows), SIGKILLs the app at a random moment and
restarts it. Then, over HTTP (GET by filter):

  - every acknowledged write (201 with its id) is present exactly once, with its id;
  - a write that got no answer (in flight at the kill) is present at most once;
  - every acknowledged chain is whole and every acknowledged delete is complete;
  - no bmodel row refers to a missing amodel (the database itself), and on SQLite
    `PRAGMA integrity_check` and `PRAGMA foreign_key_check` are clean on the killed file.

A last check reads every row straight from the database and compares it with all the writes of
all rounds. --rounds defaults to 20 (3 with --quick). Prints one line per round (requests sent,
acknowledged, found) and a total line; the exit status is 1 when a check fails. Python standard
library only (psql for PostgreSQL).
"""
import argparse
import http.client
import json
import os
import random
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time
import urllib.parse
import uuid
from concurrent.futures import ThreadPoolExecutor

import harness
from harness import App, psql

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WRITERS = 16


class Client:
    """One keep-alive connection. Raises OSError/HTTPException when the app is gone."""

    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def request(self, method, path, body=None):
        headers = {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        self.conn.request(method, path, body=data, headers=headers)
        resp = self.conn.getresponse()
        raw = resp.read()
        if resp.will_close:
            self.conn.close()
        try:
            return resp.status, json.loads(raw or b"null")
        except ValueError:
            return resp.status, None

    def close(self):
        self.conn.close()


class Ledger:
    """Everything the writers sent and what the app acknowledged, over all rounds."""

    def __init__(self):
        self.lock = threading.Lock()
        self.a_acked = {}         # a_field -> id (201)
        self.a_unknown = set()    # a_field sent without a 201 (in flight, or refused)
        self.b_acked = {}         # b_field -> (id, a id)
        self.b_unknown = set()
        self.deleted = set()      # amodel ids whose DELETE answered 200
        self.delete_unknown = set()
        self.statuses = {}
        self.sent = 0

    def count(self, status):
        with self.lock:
            self.sent += 1
            self.statuses[status] = self.statuses.get(status, 0) + 1


def writer(port, label, n, ledger, stop):
    """Writes until the app dies: plain rows, chains, and recursive deletes of its chains."""
    try:
        client = Client(port)
    except OSError:
        return
    chains = []
    i = 0
    pending = None
    try:
        while not stop.is_set():
            i += 1
            value = "%s-t%d-%d" % (label, n, i)
            pending = ("a", value)
            status, body = client.request("POST", "/api/amodel/", {"a_field": value})
            ledger.count(status)
            with ledger.lock:
                if status == 201:
                    ledger.a_acked[value] = body["id"]
                else:
                    ledger.a_unknown.add(value)
            pending = None
            if status != 201 or i % 2:
                continue
            # The chain: an amodel, then a bmodel that refers to it.
            b_value = "%s-t%d-%d-b" % (label, n, i)
            pending = ("b", b_value)
            status, body2 = client.request("POST", "/api/bmodel/",
                                           {"a": body["id"], "b_field": b_value})
            ledger.count(status)
            with ledger.lock:
                if status == 201:
                    ledger.b_acked[b_value] = (body2["id"], body["id"])
                    chains.append(body["id"])
                else:
                    ledger.b_unknown.add(b_value)
            pending = None
            if i % 6 == 0 and len(chains) > 1:
                victim = chains.pop(0)
                pending = ("d", victim)
                status, _ = client.request("DELETE", "/api/amodel/%d/" % victim)
                ledger.count(status)
                with ledger.lock:
                    if status == 200:
                        ledger.deleted.add(victim)
                    else:
                        ledger.delete_unknown.add(victim)
                pending = None
    except (OSError, http.client.HTTPException):
        # The app was killed: the write in flight may or may not have been committed.
        with ledger.lock:
            if pending is not None:
                ledger.sent += 1
                kind, what = pending
                {"a": ledger.a_unknown, "b": ledger.b_unknown,
                 "d": ledger.delete_unknown}[kind].add(what)
    finally:
        client.close()


def get_all(port, path):
    """Every object of a filtered list, following `next`."""
    client = Client(port)
    out = []
    try:
        while path:
            status, body = client.request("GET", path)
            if status != 200:
                raise RuntimeError("GET %s answered %s %s" % (path, status, body))
            out += body["objects"]
            nxt = body["meta"].get("next") or ""
            path = urllib.parse.urlsplit(nxt)._replace(scheme="", netloc="").geturl() \
                if nxt else ""
    finally:
        client.close()
    return out


def verify_round(port, ledger, label, problems):
    """Checks the writes of one round over HTTP (GET by filter). Returns a dict of figures."""
    with ledger.lock:
        a_acked = {v: pk for v, pk in ledger.a_acked.items() if v.startswith(label + "-")}
        a_unknown = [v for v in ledger.a_unknown if v.startswith(label + "-")]
        b_acked = {v: x for v, x in ledger.b_acked.items() if v.startswith(label + "-")}
        b_unknown = [v for v in ledger.b_unknown if v.startswith(label + "-")]
        mine = set(a_acked.values())
        deleted = set(ledger.deleted) & mine
        maybe_deleted = set(ledger.delete_unknown) & mine

    def a_rows(value):
        return get_all(port, "/api/amodel/?" + urllib.parse.urlencode({"a_field": value}))

    def b_rows(value):
        return get_all(port, "/api/bmodel/?" + urllib.parse.urlencode({"b_field": value}))

    with ThreadPoolExecutor(8) as pool:
        a_results = dict(zip(a_acked, pool.map(a_rows, a_acked)))
        au_results = dict(zip(a_unknown, pool.map(a_rows, a_unknown)))
        b_results = dict(zip(b_acked, pool.map(b_rows, b_acked)))
        bu_results = dict(zip(b_unknown, pool.map(b_rows, b_unknown)))
        d_results = dict(zip(sorted(deleted), pool.map(
            lambda pk: get_all(port, "/api/bmodel/?a=%d" % pk), sorted(deleted))))
    f = dict(acked=len(a_acked) + len(b_acked), live=0, found=0, deleted=0, gone=0,
             unanswered=len(a_unknown) + len(b_unknown), unanswered_found=0,
             gets=len(a_results) + len(au_results) + len(b_results) + len(bu_results)
             + len(d_results))
    a_present = {}
    for value, pk in a_acked.items():
        ids = [r["id"] for r in a_results[value]]
        a_present[pk] = bool(ids)
        if pk in deleted:
            f["deleted"] += 1
            if ids:
                problems.append("amodel %d a_field=%s: its DELETE answered 200, GET "
                                "/api/amodel/?a_field= finds %s" % (pk, value, ids))
            else:
                f["gone"] += 1
        elif pk in maybe_deleted and not ids:
            f["deleted"] += 1  # its DELETE was in flight at the kill, and was committed
            f["gone"] += 1
        else:
            f["live"] += 1
            if ids == [pk]:
                f["found"] += 1
            else:
                problems.append("acknowledged amodel %d a_field=%s: GET /api/amodel/?a_field= "
                                "finds ids %s" % (pk, value, ids))
    for value, (pk, a_id) in b_acked.items():
        rows = b_results[value]
        ids = [r["id"] for r in rows]
        refs = [r["a"].get("id") if isinstance(r.get("a"), dict) else r.get("a_id", r.get("a"))
                for r in rows]
        if a_id in deleted or (a_id in maybe_deleted and not a_present.get(a_id)):
            # A recursive delete removes the chain whole.
            f["deleted"] += 1
            if ids:
                problems.append("bmodel %d survived the recursive delete of amodel %d"
                                % (pk, a_id))
            else:
                f["gone"] += 1
        else:
            f["live"] += 1
            if ids == [pk] and refs == [a_id]:
                f["found"] += 1
            else:
                problems.append("acknowledged bmodel %d -> amodel %d b_field=%s: GET "
                                "/api/bmodel/?b_field= finds %s" % (pk, a_id, value, rows))
    for results, model in ((au_results, "amodel"), (bu_results, "bmodel")):
        for value, rows in results.items():
            if len(rows) > 1:
                problems.append("%s write without an answer (%s) present %d times"
                                % (model, value, len(rows)))
            f["unanswered_found"] += len(rows)
    for pk, rows in d_results.items():
        if rows:
            problems.append("amodel %d deleted (200) but bmodel rows still refer to it: %s"
                            % (pk, [r["id"] for r in rows]))
    return f


def sqlite_checks(path, problems):
    con = sqlite3.connect(path)
    try:
        integrity = [r[0] for r in con.execute("PRAGMA integrity_check")]
        fk = con.execute("PRAGMA foreign_key_check").fetchall()
        orphans = con.execute("SELECT COUNT(*) FROM bmodel WHERE a_id NOT IN "
                              "(SELECT id FROM amodel)").fetchone()[0]
    finally:
        con.close()
    if integrity != ["ok"]:
        problems.append("PRAGMA integrity_check: %s" % integrity[:5])
    if fk:
        problems.append("PRAGMA foreign_key_check: %s" % fk[:5])
    if orphans:
        problems.append("%d bmodel rows refer to a missing amodel" % orphans)
    return "integrity %s, fk violations %d, orphans %d" % (
        integrity[0] if len(integrity) == 1 else "%d errors" % len(integrity), len(fk), orphans)


def pg_checks(db_url, problems):
    orphans = int(psql(db_url, "SELECT COUNT(*) FROM bmodel b LEFT JOIN amodel a ON a.id = "
                               "b.a_id WHERE a.id IS NULL"))
    if orphans:
        problems.append("%d bmodel rows refer to a missing amodel" % orphans)
    return "orphans %d" % orphans


def all_rows(engine, target):
    """(amodel rows, bmodel rows) straight from the database."""
    if engine == "sqlite":
        con = sqlite3.connect(target)
        try:
            a = con.execute("SELECT id, a_field FROM amodel").fetchall()
            b = con.execute("SELECT id, a_id, b_field FROM bmodel").fetchall()
        finally:
            con.close()
        return a, b
    a = [tuple(line.split("|", 1)) for line in
         psql(target, "SELECT id, a_field FROM amodel").splitlines() if line]
    b = [tuple(line.split("|", 2)) for line in
         psql(target, "SELECT id, a_id, b_field FROM bmodel").splitlines() if line]
    return ([(int(i), v) for i, v in a], [(int(i), int(x), v) for i, x, v in b])


def final_check(engine, target, ledger, problems):
    a_rows, b_rows = all_rows(engine, target)
    a_by_value, b_by_value = {}, {}
    for pk, value in a_rows:
        a_by_value.setdefault(value, []).append(pk)
    for pk, a_id, value in b_rows:
        b_by_value.setdefault(value, []).append((pk, a_id))
    a_ids = {pk for pk, _ in a_rows}
    lost = doubled = 0
    for value, pk in ledger.a_acked.items():
        want = [] if pk in ledger.deleted else [pk]
        if pk in ledger.delete_unknown and a_by_value.get(value, []) == []:
            want = []
        if a_by_value.get(value, []) != want:
            lost += 1
            problems.append("final: amodel a_field=%s acknowledged as %d (deleted: %s), rows %s"
                            % (value, pk, pk in ledger.deleted, a_by_value.get(value)))
    for value, (pk, a_id) in ledger.b_acked.items():
        want = [] if a_id in ledger.deleted else [(pk, a_id)]
        if a_id in ledger.delete_unknown and a_id not in a_ids:
            want = []
        if b_by_value.get(value, []) != want:
            lost += 1
            problems.append("final: bmodel b_field=%s acknowledged as %d->%d, rows %s"
                            % (value, pk, a_id, b_by_value.get(value)))
    for value in ledger.a_unknown:
        doubled += len(a_by_value.get(value, [])) > 1
    for value in ledger.b_unknown:
        doubled += len(b_by_value.get(value, [])) > 1
    if doubled:
        problems.append("final: %d writes in flight at a kill are present twice" % doubled)
    orphans = sum(1 for _, a_id, _ in b_rows if a_id not in a_ids)
    if orphans:
        problems.append("final: %d bmodel rows refer to a missing amodel" % orphans)
    return len(a_rows), len(b_rows), lost, doubled, orphans


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 rounds")
    ap.add_argument("--rounds", type=int, help="kill points (default 20, 3 with --quick)")
    ap.add_argument("--pg", metavar="URL", help="PostgreSQL admin URL (a database is created)")
    ap.add_argument("--app", default=os.path.join(ROOT, "target/release/plover-conformance-app"))
    ap.add_argument("--seed", type=int, help="random seed of the kill moments")
    args = ap.parse_args()
    if not os.access(args.app, os.X_OK):
        raise SystemExit("no app binary at %s: cargo build --release -p plover-conformance-app"
                         % args.app)
    rounds = args.rounds or (3 if args.quick else 20)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    workdir = tempfile.mkdtemp(prefix="plover-crash-")
    log = os.path.join(workdir, "app.log")
    db = harness.Scratch(args.pg, workdir, "crash")
    engine = "postgresql" if args.pg else "sqlite"
    db_url = db.url
    target = db.path or db.url
    print("crash durability, %s, %d rounds, %d writers, seed %d (app log: %s)"
          % (engine, rounds, WRITERS, seed, log), flush=True)
    ledger = Ledger()
    problems = []
    started = time.monotonic()
    totals = dict.fromkeys(("sent", "acked", "live", "found", "deleted", "gone", "unanswered",
                            "unanswered_found"), 0)
    app = None
    try:
        app = App(args.app, db_url, log)
        for rnd in range(1, rounds + 1):
            label = "cr%d-%s" % (rnd, uuid.uuid4().hex[:6])
            sent_before = ledger.sent
            stop = threading.Event()
            threads = [threading.Thread(target=writer, args=(app.port, label, n, ledger, stop))
                       for n in range(WRITERS)]
            for t in threads:
                t.start()
            kill_after = rng.uniform(0.2, 2.5)
            time.sleep(kill_after)
            app.kill()
            stop.set()
            for t in threads:
                t.join()
            sent = ledger.sent - sent_before
            before = len(problems)
            db_state = (sqlite_checks(target, problems) if engine == "sqlite"
                        else pg_checks(db_url, problems))
            app = App(args.app, db_url, log)
            f = verify_round(app.port, ledger, label, problems)
            for k in totals:
                totals[k] += f.get(k, 0)
            totals["sent"] += sent
            print("round %2d: killed after %.2f s; sent %d, acknowledged %d: %d live found %d "
                  "exactly once, %d deleted (acknowledged) gone %d; no answer %d, found %d; %s; "
                  "%d GETs; %s"
                  % (rnd, kill_after, sent, f["acked"], f["live"], f["found"], f["deleted"],
                     f["gone"], f["unanswered"], f["unanswered_found"], db_state, f["gets"],
                     "ok" if len(problems) == before else "FAIL"), flush=True)
            for p in problems[before:before + 5]:
                print("    FAIL: " + p, flush=True)
        app.stop()
        app = None
        before = len(problems)
        a_n, b_n, lost, doubled, orphans = final_check(engine, target, ledger, problems)
        for p in problems[before:before + 5]:
            print("    FAIL: " + p, flush=True)
    finally:
        if app is not None and app.alive():
            app.kill()
        db.drop()
    statuses = dict(sorted(ledger.statuses.items()))
    print("total: %d rounds, %.0f s; sent %d (statuses %s), acknowledged %d: %d live found %d "
          "exactly once, %d deleted gone %d; no answer %d, found %d; database at the end: %d "
          "amodel and %d bmodel rows, %d acknowledged writes wrong, %d doubled, %d orphans; %d "
          "problem(s)"
          % (rounds, time.monotonic() - started, totals["sent"], statuses, totals["acked"],
             totals["live"], totals["found"], totals["deleted"], totals["gone"],
             totals["unanswered"], totals["unanswered_found"], a_n, b_n, lost, doubled, orphans,
             len(problems)))
    server_errors = sum(n for s, n in ledger.statuses.items() if s >= 500)
    if server_errors:
        problems.append("%d answers 5xx during the bursts" % server_errors)
        print("    FAIL: %d answers 5xx during the bursts (log: %s)" % (server_errors, log))
    if problems:
        raise SystemExit("crash durability failed; app log and database kept in %s" % workdir)
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
