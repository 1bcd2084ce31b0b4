#!/usr/bin/env python3
"""Hostile clients against a fresh conformance app (docs/contract.md#bounded-cost, and
docs/security.md for the claims and their tests).

usage: hostile.py [--quick] [--pg POSTGRES_ADMIN_URL] [--app BINARY]

Starts the conformance app itself (default target/release/plover-conformance-app) on a new
SQLite file, or with --pg on a new database it creates on that PostgreSQL server and drops at
the end, and checks, printing one line per check with its figures:

  1. bounded work: a 28-term ordering naming one column, 65 filter keys, an `in` list of 1,001
     values, a 10,001-character filter value and an admin bulk delete of 1,001 ids are 400s (and
     the values at the limits are not);
  2. 20 rows of ~900 KB make /api/sample/?limit=20 an ~18 MB page; clients that send that GET
     and never read are dropped by the app after --send-timeout (3 s); the app's response
     memory (--response-memory, 128 MiB) bounds what they pin: the pages that fit are sent
     (200), the others are 503 at once, and VmRSS stays under the budget plus the pages in
     construction at the peak, and comes back down 10 s after the last one was dropped;
  3. a stalled body is 408 after --body-timeout (2 s) and closed; upgrade and CONNECT are 4xx at
     once; `Expect: 100-continue` with 2,000,000 bytes is 413 without `100 Continue`;
  4. a flood of wrong Basic passwords (16 clients, from another process) on an app with a pool
     of 2 connections and a 1 s pool timeout: no 503, anonymous GET p99 under 200 ms. The flood
     user's hash is set to bcrypt cost 10 in the database (the app hashes at cost 4, too fast
     for a pool held during checks to show); a 2-client flood is measured too, for comparison;
  5. concurrent deletes of one row, 30 rounds of 30 clients: one 200, the others 404;
  6. an over-long URI and over-long headers: what the HTTP layer answers (reported only);
  7. framing headers on HTML pages, and nosniff on every response of the run;
  8. correct logins (Basic and the login form, bcrypt cost 10) from 127.0.0.3 succeed while 20
     connections from 127.0.0.2 send wrong passwords (401, then 429 once throttled), with their
     latency beside the latency without the flood, and the app logs a summary, not a line per
     refusal; 8b. correct logins of known users succeed, within a small factor of their time
     alone, while 40 connections send wrong passwords for other known users, each request
     from a new loopback address (so that no per-address share can stop them);
  9. sessions end with a password change; look-alike usernames are 409; a NUL in the login
     form is 400; exported CSV cells that a spreadsheet would evaluate start with a quote;
 10. 13 connections from 127.0.0.2 that never read an ~18 MB page hold at most their share of
     the response memory: a reader from 127.0.0.3 gets the page;
 11. a query of minutes whose client hangs up stops within a second (the app's CPU time on
     SQLite, the server's active statements on PostgreSQL); waited for, it is 503 at the 10 s
     statement budget;
 12. four aggregates at once that group the ~900 KB texts of check 2 by id and ask for their
     least and greatest values (~54 MB of text each): they stop at the database's read budget
     (READ_MEMORY) instead of growing the process by each one's size; the app's peak RSS grows
     by less than three times that budget.
 13. the change feed of tickets: 16 streams from one address open, the 17th is 429 with
     Retry-After and a JSON error, another address is served, and a closed stream's slot is
     free again at once, with no write;
 14. 16 streams from one address that never read (4 KB receive buffer) while tickets of 48 KB
     are written: the server drops them (their address is served again, their connections
     closed), a subscriber that reads gets every event within 2 s, writes stay within twice
     their time beside 16 subscribers that read (+50 ms), RSS grows by less than 64 MB;
 15. forged positions (Last-Event-ID and after: text, negative, beyond i64, float, 8,000
     digits, Latin-1 bytes, both at once): 400 naming the parameter (the header wins over
     `after`); positions ahead of every event, up to i64::MAX: a single `event: reset`; a
     100 KB header is a 4xx.
 16. a user holding only `ticket.view` (granted through the REST permission resources) logs
     into the admin and POSTs, with its session's CSRF token, a ticket's add, edit, import
     (preview and confirmation), delete and bulk delete, the Notes panel's form, an edit of its
     own user making it an administrator and a grant of `ticket.delete` to itself: each 403,
     and an administrator reads the same tickets, user and grants afterwards.
 17. a password reset link (read from the mail folder) altered 12 ways (signature, another
     user's key, a later or earlier time, padded, upper case, cut, lengthened, without a
     signature, 5,000 characters, not ASCII, a path): each 400 on GET and on POST, the password
     unchanged; the real link sets it once (302), then 400.

--quick is the CI size (100 stalled clients, 5 s floods; about a minute and a half); the full
run uses 480 stalled clients (the app is killed if the machine falls under 1.5 GB available),
15 s floods and up to 800 writes for check 14. The exit status is 1 when any check fails. Python standard library only (psql for
PostgreSQL).
"""
import argparse
import base64
import html
import http.client
import json
import os
import re
import selectors
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

import harness
from harness import FAILURES, check, proc_status, psql, with_options

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADMIN = ("root", "hostile-admin-pw")
SEND_TIMEOUT = 3
BODY_TIMEOUT = 2
RESPONSE_MEMORY = 128 << 20
READ_MEMORY = 64 << 20



def report(name, ok, figures):
    print("%-4s %-22s %s" % ("ok" if ok else "FAIL", name, figures), flush=True)


# ---------------------------------------------------------------------------------------------
# The app and its database


class App(harness.App):
    """The conformance app with the admin user, and what the checks measure of its process."""

    def __init__(self, binary, db_url, log_path, *extra):
        super().__init__(binary, db_url, log_path, "--admin", "%s:%s" % ADMIN, *extra)

    def rss_kb(self):
        return proc_status(self.pid, "VmRSS")

    def threads(self):
        return proc_status(self.pid, "Threads")

    def cpu_seconds(self):
        """User and system CPU time the app has used so far."""
        with open("/proc/%d/stat" % self.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def client_connections(self):
        """Client connections the app still holds: its socket descriptors that are accepted
        TCP connections on its port, or TCP sockets the kernel already closed (a send timeout)
        that the app has not let go of yet. Database connections, the listener and the
        runtime's own Unix sockets are not counted."""
        held = set()
        fd_dir = "/proc/%d/fd" % self.pid
        for fd in os.listdir(fd_dir):
            try:
                link = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if link.startswith("socket:["):
                held.add(int(link[8:-1]))
        tcp, unix = {}, set()
        for name in ("tcp", "tcp6"):
            try:
                with open("/proc/net/" + name) as f:
                    next(f)
                    for line in f:
                        cols = line.split()
                        tcp[int(cols[9])] = (int(cols[1].rsplit(":", 1)[1], 16), cols[3])
            except OSError:
                pass
        with open("/proc/net/unix") as f:
            next(f)
            for line in f:
                unix.add(int(line.split()[6]))
        count = 0
        for inode in held - unix:
            entry = tcp.get(inode)
            if entry is None or (entry[0] == self.port and entry[1] != "0A"):
                count += 1
        return count


# ---------------------------------------------------------------------------------------------
# HTTP


class Audit:
    """Every response of the run, for the header check (7)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.responses = 0
        self.without_nosniff = []
        self.server_errors = 0

    def add(self, what, status, headers):
        with self.lock:
            self.responses += 1
            self.server_errors += status is not None and status >= 500
            if headers.get("x-content-type-options", "").lower() != "nosniff":
                if len(self.without_nosniff) < 20:
                    self.without_nosniff.append("%s -> %s" % (what, status))
                else:
                    self.without_nosniff.append(None)


AUDIT = Audit()


class Resp:
    def __init__(self, status, headers, body, ms):
        self.status, self.headers, self.body, self.ms = status, headers, body, ms

    def json(self):
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            return None

    def text(self):
        return self.body.decode("utf-8", "replace")


class Client:
    """One keep-alive connection; reconnects when the server closed it. Keeps cookies."""

    def __init__(self, port, timeout=60, source=None):
        self.port, self.timeout = port, timeout
        # The loopback address requests come from (127.0.0.2 for a flood, say); any of 127/8.
        self.source = (source, 0) if source else None
        self.conn = None
        self.cookies = {}

    def request(self, method, path, body=None, headers=None, auth=None, form=None):
        headers = dict(headers or {})
        if form is not None:
            body = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None and not isinstance(body, bytes):
            body = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if auth:
            headers["Authorization"] = "Basic " + base64.b64encode(
                ("%s:%s" % auth).encode()).decode()
        if self.cookies:
            headers["Cookie"] = "; ".join("%s=%s" % kv for kv in self.cookies.items())
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                       timeout=self.timeout,
                                                       source_address=self.source)
            started = time.monotonic()
            try:
                self.conn.request(method, path, body=body, headers=headers)
                resp = self.conn.getresponse()
                data = resp.read()
            except (ConnectionError, http.client.RemoteDisconnected,
                    http.client.BadStatusLine):
                self.close()
                if attempt:
                    raise
                continue
            ms = (time.monotonic() - started) * 1000
            hdrs = {k.lower(): v for k, v in resp.getheaders()}
            for k, v in resp.getheaders():
                if k.lower() == "set-cookie":
                    name, _, value = v.split(";", 1)[0].partition("=")
                    self.cookies[name.strip()] = value.strip()
            if resp.will_close:
                self.close()
            AUDIT.add("%s %s" % (method, path[:60]), resp.status, hdrs)
            return Resp(resp.status, hdrs, data, ms)

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def raw_exchange(port, data, wait=5.0):
    """Sends raw bytes; returns (response bytes, seconds to the first byte, seconds to the end,
    how it ended: 'eof', 'reset', 'timeout' or 'send-error: ...')."""
    s = socket.create_connection(("127.0.0.1", port), timeout=wait)
    started = time.monotonic()
    out, first, end = b"", None, "timeout"
    try:
        s.sendall(data)
    except OSError as e:
        end = "send-error: %s" % e.__class__.__name__
    try:
        while True:
            chunk = s.recv(65536)
            if first is None:
                first = time.monotonic() - started
            if not chunk:
                end = "eof"
                break
            out += chunk
    except socket.timeout:
        pass
    except ConnectionResetError:
        end = "reset" if end == "timeout" else end
    finally:
        s.close()
    return out, first, time.monotonic() - started, end


def parse_head(raw):
    """(status, headers, body) of a raw HTTP response, or (None, {}, b"")."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0]) if lines else None
    if not m:
        return None, {}, b""
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return int(m.group(1)), headers, body


def names(resp, param):
    """The 400 body names the parameter."""
    return "'%s'" % param in resp.text()


def percentile(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(round(p / 100.0 * (len(values) - 1))))]


# ---------------------------------------------------------------------------------------------
# 1. Bounded work per request


def admin_login(port):
    c = Client(port)
    page = c.request("GET", "/accounts/login/")
    token = re.search(r'name="(csrf[^"]*)" value="([^"]*)"', page.text())
    if not token:
        raise SystemExit("no CSRF field on /accounts/login/")
    resp = c.request("POST", "/accounts/login/", form={
        token.group(1): token.group(2), "username": ADMIN[0], "password": ADMIN[1], "next": "/"})
    if resp.status not in (302, 303):
        raise SystemExit("admin login answered %s" % resp.status)
    return c


def csrf_of(client, path):
    page = client.request("GET", path)
    m = re.search(r'name="(csrf[^"]*)" value="([^"]*)"', page.text())
    if not m:
        raise SystemExit("no CSRF field on %s (status %s)" % (path, page.status))
    return m.group(1), m.group(2)


def filter_keys():
    """More than 65 distinct filter keys on `sample`, each with a value that parses."""
    keys = []
    for f in ("id", "qty", "big", "ratio"):
        keys += [(f, "0")] + [("%s__%s" % (f, op), "0") for op in
                              ("eq", "ne", "lt", "lte", "gt", "gte")] + [(f + "__in", "0,1")]
    for f in ("name", "body", "remark"):
        keys += [(f, "x")] + [("%s__%s" % (f, op), "x") for op in
                              ("eq", "ne", "lt", "lte", "gt", "gte", "in")]
        keys += [(f + "__like", "%x%"), (f + "__ilike", "%x%")]
    keys += [("remark__is", "null"), ("day__is", "null")]
    keys += [("flag", "true"), ("flag__eq", "true"), ("flag__ne", "true")]
    for f, v in (("day", "2020-01-01"), ("stamp", "2020-01-01 00:00:00")):
        keys += [("%s__%s" % (f, op), v) for op in ("eq", "ne", "lt", "lte", "gt", "gte")]
    return keys


def check_bounded_work(port):
    c = Client(port)
    ok = True
    # ordering naming one column 28 times
    q = "/api/sample/?ordering=" + ",".join(["qty"] * 28)
    r = c.request("GET", q)
    ok &= check(r.status == 400 and names(r, "ordering"),
                "GET /api/sample/?ordering=qty x28: expected 400 naming 'ordering', got %s %s"
                % (r.status, r.text()[:200]))
    ok &= check(r.ms < 1000, "ordering x28 took %.0f ms (bound 1000 ms)" % r.ms)
    r2 = c.request("GET", "/api/sample/?ordering=-id,id")
    ok &= check(r2.status == 400, "ordering=-id,id: expected 400, got %s" % r2.status)
    ordering = "ordering x28 %d in %.1f ms, -id,id %d" % (r.status, r.ms, r2.status)

    # 64 distinct filter keys pass, 65 are 400
    keys = filter_keys()
    assert len(keys) > 65
    at = c.request("GET", "/api/sample/?" + urllib.parse.urlencode(keys[:64]))
    over = c.request("GET", "/api/sample/?" + urllib.parse.urlencode(keys[:65]))
    ok &= check(at.status == 200, "64 filter keys: expected 200, got %s %s"
                % (at.status, at.text()[:200]))
    ok &= check(over.status == 400 and "error" in (over.json() or {}),
                "65 filter keys: expected 400 with an error, got %s %s"
                % (over.status, over.text()[:200]))
    named = any("'%s'" % k in over.text() for k, _ in keys[:65])
    ok &= check(named, "65 filter keys: the 400 does not name a parameter: %s" % over.text()[:200])
    conditions = "keys 64->%d 65->%d (%.0f ms)" % (at.status, over.status, over.ms)

    # in list of 1,000 / 1,001 values
    at = c.request("GET", "/api/sample/?id__in=" + ",".join(str(i) for i in range(1000)))
    over = c.request("GET", "/api/sample/?id__in=" + ",".join(str(i) for i in range(1001)))
    ok &= check(at.status == 200, "id__in with 1,000 values: expected 200, got %s %s"
                % (at.status, at.text()[:200]))
    ok &= check(over.status == 400 and names(over, "id__in"),
                "id__in with 1,001 values: expected 400 naming 'id__in', got %s %s"
                % (over.status, over.text()[:200]))
    inlist = "in 1000->%d 1001->%d (%.0f ms)" % (at.status, over.status, over.ms)

    # filter value of 10,000 / 10,001 characters
    at = c.request("GET", "/api/sample/?name=" + "a" * 10000)
    over = c.request("GET", "/api/sample/?name=" + "a" * 10001)
    like = c.request("GET", "/api/sample/?name__like=" + "%" * 10001)
    ok &= check(at.status == 200, "name of 10,000 chars: expected 200, got %s" % at.status)
    for r, key in ((over, "name"), (like, "name__like")):
        ok &= check(r.status == 400 and names(r, key),
                    "%s of 10,001 chars: expected 400 naming '%s', got %s %s"
                    % (key, key, r.status, r.text()[:200]))
    value = "value 10000->%d 10001->%d (like %%x10001 %d, %.0f ms)" % (
        at.status, over.status, like.status, like.ms)

    # admin bulk delete of 1,001 / 1,000 ids, three of them real rows
    real = [c.request("POST", "/api/amodel/", {"a_field": "bulk-%d" % i}).json()["id"]
            for i in range(3)]
    admin = admin_login(port)
    token = csrf_of(admin, "/admin/amodel/")
    fake = list(range(10_000_000, 10_000_000 + 997))
    form = [token, ("action", "delete")] + [("id", str(i)) for i in real + fake]
    over = admin.request("POST", "/admin/amodel/", form=form + [("id", "20000000")])
    left = [c.request("GET", "/api/amodel/%d/" % i).status for i in real]
    ok &= check(over.status == 400, "admin bulk delete of 1,001 ids: expected 400, got %s"
                % over.status)
    ok &= check(left == [200] * 3, "a refused bulk delete deleted rows: %s" % left)
    at = admin.request("POST", "/admin/amodel/", form=form)
    gone = [c.request("GET", "/api/amodel/%d/" % i).status for i in real]
    ok &= check(at.status in (302, 303) and gone == [404] * 3,
                "admin bulk delete of 1,000 ids: expected 302/303 and the rows gone, got %s %s"
                % (at.status, gone))
    bulk = "bulk 1000->%d 1001->%d" % (at.status, over.status)
    report("1 bounded work", ok, "; ".join([ordering, conditions, inlist, value, bulk]))


# ---------------------------------------------------------------------------------------------
# 2. Clients that never read their response


def mem_available_kb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    return 0


class Sampler(threading.Thread):
    """Samples the app's VmRSS and client connections every 50 ms. Kills the app (a failed
    check) before it takes the machine's last 1.5 GB."""

    def __init__(self, app):
        super().__init__(daemon=True)
        self.app = app
        self.stop_event = threading.Event()
        self.peak_rss = 0
        self.peak_conns = 0
        self.killed = False

    def run(self):
        while not self.stop_event.is_set():
            try:
                self.peak_rss = max(self.peak_rss, self.app.rss_kb())
                self.peak_conns = max(self.peak_conns, self.app.client_connections())
            except OSError:
                return
            if mem_available_kb() < 1536 * 1024:
                self.killed = True
                self.app.proc.kill()
                return
            time.sleep(0.05)


def read_outcome(socks, deadline_s):
    """Reads every stalled socket at once. Returns, per socket: (status, bytes read, end) where
    end is 'reset', 'eof' or 'open' (still nothing after the deadline, even after a write)."""
    sel = selectors.DefaultSelector()
    state = {}
    for s in socks:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        state[s] = [b"", 0, None]
    deadline = time.monotonic() + deadline_s
    poked = False
    while any(v[2] is None for v in state.values()):
        left = deadline - time.monotonic()
        if left <= 0:
            if poked:
                break
            # A socket that only sits there: write to it, the server's kernel answers a dead
            # connection with a reset.
            poked = True
            deadline = time.monotonic() + 3
            for s, v in state.items():
                if v[2] is None:
                    try:
                        s.send(b"\r\n")
                    except OSError:
                        v[2] = "reset"
            continue
        for key, _ in sel.select(timeout=min(left, 0.5)):
            s = key.fileobj
            v = state[s]
            try:
                chunk = s.recv(1 << 20)
            except BlockingIOError:
                continue
            except ConnectionResetError:
                chunk, v[2] = None, "reset"
            if chunk == b"":
                v[2] = "eof"
            if v[2] is not None:
                sel.unregister(s)
                continue
            if len(v[0]) < 64:
                v[0] += chunk[:64]
            v[1] += len(chunk)
    out = []
    for s, (head, n, end) in state.items():
        status = parse_head(head)[0] if head.startswith(b"HTTP/") else None
        out.append((status, n, end or "open"))
        try:
            sel.unregister(s)
        except (KeyError, ValueError):
            pass
        s.close()
    return out


def check_stalled_readers(app, n_clients):
    c = Client(app.port)
    filler = ("plover hostile client page filler %s " % uuid.uuid4().hex) * 20000
    filler = filler[:900_000]
    for i in range(20):
        r = c.request("POST", "/api/sample/", {"name": "big-%d-%s" % (i, uuid.uuid4().hex[:6]),
                                               "qty": 1, "body": filler})
        if r.status != 201:
            check(False, "POST /api/sample/ of a 900 KB body: expected 201, got %s %s"
                  % (r.status, r.text()[:200]))
            report("2 stalled readers", False, "could not create the rows")
            return
    c.close()
    path = "/api/sample/?limit=20"
    # The baseline is an app that has served the page to as many concurrent readers as its
    # pool has connections (8), so that pool and allocator are warm.
    pages = []
    warm = [threading.Thread(target=lambda: pages.append(len(Client(app.port).request(
        "GET", path).body))) for _ in range(8)]
    for t in warm:
        t.start()
    for t in warm:
        t.join()
    page_bytes = max(pages)
    time.sleep(1)
    rss_before, conns_before = app.rss_kb(), app.client_connections()
    # The budget, pages in construction, 2 GB to spare.
    need_kb = RESPONSE_MEMORY // 1024 + int(16 * 2.2 * page_bytes / 1024) + 2 * 1024 * 1024
    if mem_available_kb() < need_kb:
        check(False, "%d stalled clients of an %.1f MB page may need %d MB, the machine has %d "
              "MB available: run --quick" % (n_clients, page_bytes / 1e6, need_kb // 1024,
                                              mem_available_kb() // 1024))
        report("2 stalled readers", False, "not run")
        return

    sampler = Sampler(app)
    sampler.start()
    request = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: stalled\r\n\r\n"
               % path).encode()
    socks = []
    started = time.monotonic()
    for _ in range(n_clients):
        s = socket.socket()
        # A small receive buffer: the client's window closes after a few KB, as with a phone
        # that stops reading, and the response stays with the server.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", app.port))
        s.sendall(request)
        socks.append(s)
    sent_s = time.monotonic() - started

    # The server must drop them all: wait until it holds no client connection.
    deadline = time.monotonic() + SEND_TIMEOUT + 60 + n_clients * 0.5
    conns = app.client_connections()
    while time.monotonic() < deadline and not sampler.killed:
        conns = app.client_connections()
        if conns <= conns_before and time.monotonic() - started > SEND_TIMEOUT:
            break
        time.sleep(0.1)
    dropped_s = time.monotonic() - started
    if not sampler.killed:
        time.sleep(10)
    sampler.stop_event.set()
    sampler.join()
    if sampler.killed:
        for s in socks:
            s.close()
        check(False, "%d clients that never read: the app took the machine's memory (VmRSS "
              "peak %d MB) and was killed" % (n_clients, sampler.peak_rss // 1024))
        report("2 stalled readers", False, "app killed at VmRSS %d MB" % (sampler.peak_rss // 1024))
        return
    rss_after = app.rss_kb()
    outcomes = read_outcome(socks, 5)

    statuses, ends, full = {}, {}, 0
    for status, n, end in outcomes:
        statuses[status] = statuses.get(status, 0) + 1
        ends[end] = ends.get(end, 0) + 1
        full += n >= page_bytes
    peak = sampler.peak_rss
    per_conn_mb = max(0, peak - rss_before) / 1024 / n_clients
    # The bound 10 s after the last connection was dropped: the warm baseline, plus 64 MiB of
    # allocator slack, plus a tenth of what the stalled clients added at the peak. What the
    # stalled responses held (up to n x page) must be given back, not kept for each client.
    bound_kb = rss_before + 64 * 1024 + (peak - rss_before) // 10
    # The peak: the budget (pages waiting for their clients), plus pages in construction (at
    # most the pool's 8 connections' worth, at about two copies of a page each: the rows and the
    # serialized page), plus 64 MiB. Without the budget it grew with the number of clients.
    peak_bound = (rss_before + RESPONSE_MEMORY // 1024 + int(8 * 2.2 * page_bytes / 1024)
                  + 64 * 1024)
    fit = RESPONSE_MEMORY // page_bytes
    ok = True
    ok &= check(conns <= conns_before,
                "%d clients that never read: the app still held %d of their connections %.0f s "
                "after the first request (send timeout %d s)"
                % (n_clients, conns, dropped_s, SEND_TIMEOUT))
    ok &= check(ends.get("open", 0) == 0 and full == 0,
                "stalled clients not closed by the server: %d still open, %d received the whole "
                "%d-byte page (ends %s)" % (ends.get("open", 0), full, page_bytes, ends))
    # At most `fit` pages are held at once; a page is given back when its client is dropped,
    # so more than `fit` clients in all may get one while the requests are being served.
    # One address holds at most an eighth of the budget: these clients, all from 127.0.0.1,
    # get a page while they hold none, and 429 beyond their share (503 when the budget is full).
    ok &= check(statuses.get(200, 0) >= 1
                and statuses.get(200, 0) + statuses.get(503, 0) + statuses.get(429, 0)
                == n_clients,
                "stalled clients: expected responses 200 (the pages that fit the %d MB response "
                "memory, %d at a time, and their address's share) and 429 or 503 for the rest, "
                "got %s" % (RESPONSE_MEMORY >> 20, fit, statuses))
    ok &= check(rss_after <= bound_kb,
                "GET %s by %d clients that never read: VmRSS %d MB 10 s after the last was "
                "dropped, expected <= %d MB (before %d MB, peak %d MB)"
                % (path, n_clients, rss_after // 1024, bound_kb // 1024, rss_before // 1024,
                   peak // 1024))
    ok &= check(peak <= peak_bound, "VmRSS peak %d MB above %d MB (the response memory and "
                "8 pages in construction)" % (peak // 1024, peak_bound // 1024))
    report("2 stalled readers", ok,
           "%d clients, page %.1f MB, response memory %d MB; VmRSS before %d MB, peak %d MB "
           "(bound %d MB, %.1f MB/client), after %d MB (bound %d MB); connections held: peak %d, 0 after %.1f s (send timeout %d s, "
           "requests sent in %.1f s); client ends %s; statuses %s"
           % (n_clients, page_bytes / 1e6, RESPONSE_MEMORY >> 20, rss_before // 1024,
              peak // 1024, peak_bound // 1024, per_conn_mb, rss_after // 1024, bound_kb // 1024, sampler.peak_conns, dropped_s, SEND_TIMEOUT,
              sent_s, ends, statuses))


# ---------------------------------------------------------------------------------------------
# 3. Stalled bodies, upgrades, CONNECT, Expect


def check_slow_requests(port):
    ok = True
    raw, first, end_s, end = raw_exchange(
        port, b"POST /api/amodel/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 1000\r\n\r\n{", wait=BODY_TIMEOUT + 10)
    status = parse_head(raw)[0]
    ok &= check(status == 408, "POST with Content-Length 1000 and 1 byte sent: expected 408, "
                "got %s (%r)" % (status, raw[:80]))
    ok &= check(first is not None and BODY_TIMEOUT * 0.9 <= first <= BODY_TIMEOUT + 1.5,
                "stalled body answered after %s s, body timeout %d s" % (first, BODY_TIMEOUT))
    ok &= check(end in ("eof", "reset") and end_s <= BODY_TIMEOUT + 4,
                "stalled body: connection not closed (%s after %.1f s)" % (end, end_s))
    stalled = "stalled body %s after %.2f s, closed (%s) after %.2f s" % (
        status, first or -1, end, end_s)

    results = []
    for label, data in (
            ("upgrade", b"GET /api/sample/ HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
                        b"Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"),
            ("CONNECT", b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")):
        raw, first, end_s, end = raw_exchange(port, data, wait=5)
        status, headers, _ = parse_head(raw)
        AUDIT.add(label, status, headers)
        ok &= check(status is not None and 400 <= status < 500 and first < 1.0,
                    "%s: expected a 4xx within 1 s, got %s after %s s" % (label, status, first))
        results.append("%s %s in %.0f ms" % (label, status, (first or 0) * 1000))

    raw, first, end_s, end = raw_exchange(
        port, b"POST /api/amodel/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 2000000\r\nExpect: 100-continue\r\n\r\n", wait=5)
    status, headers, _ = parse_head(raw)
    AUDIT.add("Expect: 100-continue, 2,000,000 bytes", status, headers)
    ok &= check(b"100 Continue" not in raw and status == 413 and first < 1.0,
                "Expect: 100-continue with Content-Length 2000000: expected 413 at once and no "
                "100 Continue, got %r after %s s" % (raw[:60], first))
    results.append("Expect 2 MB %s in %.0f ms (100 Continue sent: %s)"
                   % (status, (first or 0) * 1000, b"100 Continue" in raw))
    report("3 slow requests", ok, "; ".join([stalled] + results))


# ---------------------------------------------------------------------------------------------
# 4. Wrong passwords do not starve the pool


def flood_main(port, user, seconds, clients=16):
    """The flood of wrong passwords, in a process of its own (hostile.py --flood PORT USER
    SECONDS) so that its threads do not hold the interpreter lock the latency probe needs.
    Prints a JSON summary."""
    statuses, lock = {}, threading.Lock()
    without_nosniff = [0]
    until = time.monotonic() + seconds
    body = b'{"content": "x"}'

    def one(k):
        auth = base64.b64encode(("%s:wrong-%d" % (user, k)).encode())
        req = (b"POST /api/message/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic "
               + auth + b"\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
               % len(body) + body)
        s, buf = None, b""
        while time.monotonic() < until:
            try:
                if s is None:
                    s, buf = socket.create_connection(("127.0.0.1", port), timeout=30), b""
                s.sendall(req)
                head, _, buf = harness.read_response(s, buf)
                status, headers, _ = parse_head(head + b"\r\n\r\n")
                with lock:
                    statuses[status] = statuses.get(status, 0) + 1
                    without_nosniff[0] += headers.get("x-content-type-options") != "nosniff"
                if headers.get("connection", "").lower() == "close":
                    s.close()
                    s = None
            except OSError as e:
                with lock:
                    statuses[e.__class__.__name__] = statuses.get(e.__class__.__name__, 0) + 1
                if s is not None:
                    s.close()
                s = None
        if s is not None:
            s.close()

    threads = [threading.Thread(target=one, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"statuses": statuses, "without_nosniff": without_nosniff[0]}))


# bcrypt of "slow-right-pw" at cost 10 (the app itself hashes at cost 4, about 1 ms, too fast
# for a pool held during checks to show): every wrong password costs tens of milliseconds.
SLOW_HASH = "$2b$10$2VsuUtTnO/0D724.H736OOhv3Xa42gw/AbAjbdmklP0eQcVgOFAGW"
SLOW_PASSWORD = "slow-right-pw"


def check_password_flood(app, seconds, set_hash):
    c = Client(app.port)
    user = "flood-" + uuid.uuid4().hex[:8]
    r = c.request("POST", "/api/user/", {"username": user, "email": user + "@example.com",
                                         "password": "right-pw"}, auth=ADMIN)
    if not check(r.status == 201, "POST /api/user/ as admin: expected 201, got %s %s"
                 % (r.status, r.text()[:200])):
        report("4 password flood", False, "no user")
        return
    set_hash(user, SLOW_HASH)
    r = c.request("POST", "/api/message/", {"content": "hello"}, auth=(user, SLOW_PASSWORD))
    check(r.status == 201, "POST /api/message/ with the right password: expected 201, got %s"
          % r.status)
    wrong = [c.request("POST", "/api/message/", {"content": "x"}, auth=(user, "nope-%d" % i))
             for i in range(3)]
    one_check_ms = statistics.median(w.ms for w in wrong)

    def reads(seconds):
        """Anonymous GET /api/message/ in a loop: (latencies, statuses, most app threads)."""
        latencies, statuses, threads = [], {}, 0
        rc = Client(app.port)
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            r = rc.request("GET", "/api/message/")
            latencies.append(r.ms)
            statuses[r.status] = statuses.get(r.status, 0) + 1
            threads = max(threads, app.threads())
            time.sleep(0.005)
        rc.close()
        return latencies, statuses, threads

    def flooded(clients):
        """reads() while `clients` send wrong passwords (in another process)."""
        flood = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--flood",
                                  str(app.port), user, str(seconds + 1.5), str(clients)],
                                 stdout=subprocess.PIPE, text=True)
        time.sleep(0.75)
        measured = reads(seconds)
        out, _ = flood.communicate(timeout=seconds + 60)
        summary = json.loads(out)
        statuses = {int(k) if k.isdigit() else k: v for k, v in summary["statuses"].items()}
        with AUDIT.lock:
            AUDIT.responses += sum(v for k, v in statuses.items() if isinstance(k, int))
            AUDIT.without_nosniff += [None] * summary["without_nosniff"]
            AUDIT.server_errors += sum(v for k, v in statuses.items()
                                       if isinstance(k, int) and k >= 500)
        return measured, statuses

    base = reads(min(3, seconds))
    # A control: the same flood from 2 clients (no more than the cores of a small machine).
    control, control_st = flooded(2)
    (lat, st, threads), flood_st = flooded(16)
    flood_n = sum(flood_st.values())
    ok = True
    # Wrong passwords are 401 until the throttle or the address's share of the checks answers
    # 429.
    ok &= check(set(flood_st) <= {401, 429} and set(control_st) <= {401, 429},
                "POST /api/message/ with wrong Basic passwords: expected only 401 and 429, got "
                "%s (16 clients) and %s (2 clients)" % (flood_st, control_st))
    ok &= check(set(base[1]) == {200} and set(st) == {200},
                "anonymous GET /api/message/ (pool of 2, connection_timeout 1 s): expected only "
                "200, got %s before and %s during the flood" % (base[1], st))
    p50, p99 = percentile(lat, 50), percentile(lat, 99)
    ok &= check(p99 < 200, "anonymous GET /api/message/ while 16 clients send wrong passwords "
                "to POST /api/message/: p99 %.1f ms (bound 200 ms; p50 %.1f ms, %.1f ms alone; "
                "the app ran %d threads)" % (p99, p50, percentile(base[0], 50), threads))
    report("4 password flood", ok,
           "one wrong password %.0f ms (bcrypt cost 10); pool 2; anonymous GET p50/p99: alone "
           "%.1f/%.1f ms (%d requests), 2 flooding clients %.1f/%.1f ms (%d; %d wrong passwords), "
           "16 flooding clients %.1f/%.1f ms (%d; %d wrong passwords, %.1f/s, %s); app threads "
           "%d alone, %d under 16 clients; 503s: %d"
           % (one_check_ms, percentile(base[0], 50), percentile(base[0], 99), len(base[0]),
              percentile(control[0], 50), percentile(control[0], 99), len(control[0]),
              sum(control_st.values()), p50, p99, len(lat), flood_n, flood_n / (seconds + 1.5),
              flood_st, base[2], threads,
              base[1].get(503, 0) + control[1].get(503, 0) + st.get(503, 0)
              + flood_st.get(503, 0)))


# ---------------------------------------------------------------------------------------------
# 8. A wrong-password flood from one address does not lock out another


def login_flood_main(port, seconds, clients, source):
    """Wrong Basic passwords for many usernames from `source` (hostile.py --login-flood PORT
    SECONDS CLIENTS SOURCE), `clients` connections as fast as answered. Prints the statuses."""
    statuses, lock = {}, threading.Lock()
    until = time.monotonic() + seconds

    def one(k):
        c = Client(port, timeout=30, source=source)
        i = 0
        while time.monotonic() < until:
            i += 1
            try:
                r = c.request("POST", "/api/message/", {"content": "x"},
                              auth=("guess-%d-%d" % (k, i % 7), "wrong-%d" % i))
                status = r.status
            except OSError as e:
                status = e.__class__.__name__
                c.close()
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
        c.close()

    threads = [threading.Thread(target=one, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"statuses": statuses}))


def log_lines(app):
    with open(app.log_path, "rb") as f:
        return sum(1 for _ in f)


def slow_users(port, names, set_hash):
    """Creates users `names` (as the admin) whose password is SLOW_PASSWORD hashed at bcrypt
    cost 10; False (after a failed check) when one cannot be created."""
    c = Client(port)
    for user in names:
        r = c.request("POST", "/api/user/", {"username": user, "email": user + "@x.org",
                                             "password": "unused"}, auth=ADMIN)
        if not check(r.status == 201, "POST /api/user/: %s %s" % (r.status, r.text()[:200])):
            return False
        set_hash(user, SLOW_HASH)
    return True


def correct_logins(port, names, source):
    """One correct login of each of `names` from `source`, each on a new connection,
    alternately by Basic credentials (a POST of a message) and the login form: the statuses
    and the milliseconds each took."""
    codes, ms = [], []
    for k, user in enumerate(names):
        v = Client(port, source=source)
        started = time.monotonic()
        if k % 2:
            r = v.request("POST", "/api/message/", {"content": "hi"},
                          auth=(user, SLOW_PASSWORD))
        else:
            name, token = csrf_of(v, "/accounts/login/")
            r = v.request("POST", "/accounts/login/", form={
                "username": user, "password": SLOW_PASSWORD, name: token})
        codes.append(r.status)
        ms.append((time.monotonic() - started) * 1000)
        v.close()
    return codes, ms


def check_login_flood(app, seconds, set_hash):
    """Correct logins (Basic and the login form, each user once, so that no cache helps) from
    127.0.0.3, alone and while 20 connections from 127.0.0.2 send wrong passwords."""
    users = ["victim-%d-%s" % (i, uuid.uuid4().hex[:6]) for i in range(16)]
    if not slow_users(app.port, users, set_hash):
        report("8 login flood", False, "no users")
        return
    logins = lambda names: correct_logins(app.port, names, "127.0.0.3")

    quiet_codes, quiet_ms = logins(users[:6])
    lines_before = log_lines(app)
    flood = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--login-flood",
                              str(app.port), str(seconds + 1.0), "20", "127.0.0.2"],
                             stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    flood_codes, flood_ms = logins(users[6:16])
    out, _ = flood.communicate(timeout=seconds + 60)
    lines = log_lines(app) - lines_before
    statuses = {int(k) if k.isdigit() else k: v for k, v in json.loads(out)["statuses"].items()}
    expected = lambda codes: all(code in (201, 302) for code in codes)
    ok = True
    ok &= check(expected(quiet_codes) and expected(flood_codes),
                "correct logins from 127.0.0.3: expected 201 (Basic) and 302 (form), got %s "
                "alone and %s during the flood from 127.0.0.2" % (quiet_codes, flood_codes))
    ok &= check(set(statuses) <= {401, 429},
                "wrong passwords from 127.0.0.2: expected 401 and 429, got %s" % statuses)
    ok &= check(statuses.get(429, 0) > 0, "the flood was never throttled: %s" % statuses)
    ok &= check(lines <= 20, "the app wrote %d log lines during the flood (a summary a "
                "minute is expected)" % lines)
    report("8 login flood", ok,
           "correct logins from 127.0.0.3 (bcrypt cost 10): median %.0f ms, max %.0f ms alone; "
           "median %.0f ms, max %.0f ms during 20 connections of wrong passwords from "
           "127.0.0.2 (%d requests in %.0f s: %s); %d log lines during the flood"
           % (statistics.median(quiet_ms), max(quiet_ms), statistics.median(flood_ms),
              max(flood_ms), sum(statuses.values()), seconds + 1, statuses, lines))


def spread_flood_main(port, seconds, clients, targets):
    """Wrong Basic passwords for the comma-separated `targets`, each request from a new
    loopback address (hostile.py --spread-flood PORT SECONDS CLIENTS TARGETS), `clients` at once
    as fast as answered. Prints the statuses."""
    statuses, lock = {}, threading.Lock()
    until = time.monotonic() + seconds
    names = targets.split(",")

    def one(k):
        i = 0
        while time.monotonic() < until:
            i += 1
            n = k * 100000 + i
            source = "127.%d.%d.%d" % (10 + k % 200, n // 250 % 250, 1 + n % 250)
            c = Client(port, timeout=30, source=source)
            try:
                r = c.request("POST", "/api/message/", {"content": "x"},
                              auth=(names[n % len(names)], "wrong-%d" % n))
                status = r.status
            except OSError as e:
                status = e.__class__.__name__
            c.close()
            with lock:
                statuses[status] = statuses.get(status, 0) + 1

    threads = [threading.Thread(target=one, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"statuses": statuses}))


def check_spread_flood(app, seconds, set_hash):
    """Correct logins of known users (Basic and the login form, each user once) from
    127.0.0.4, alone and while 40 connections send wrong passwords for eight other known users,
    each request from a new loopback address (no per-address share can stop it): the flood
    fills the shared lane of the password checks, the correct logins take the reserved one."""
    tag = uuid.uuid4().hex[:6]
    users = ["spread-%d-%s" % (i, tag) for i in range(16)]
    targets = ["target-%d-%s" % (i, tag) for i in range(8)]
    if not slow_users(app.port, users + targets, set_hash):
        report("8b spread login flood", False, "no users")
        return
    logins = lambda names: correct_logins(app.port, names, "127.0.0.4")

    quiet_codes, quiet_ms = logins(users[:6])
    flood = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--spread-flood",
                              str(app.port), str(seconds + 1.0), "40", ",".join(targets)],
                             stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    flood_codes, flood_ms = logins(users[6:16])
    out, _ = flood.communicate(timeout=seconds + 60)
    statuses = {int(k) if k.isdigit() else k: v for k, v in json.loads(out)["statuses"].items()}
    expected = lambda codes: all(code in (201, 302) for code in codes)
    quiet, busy = statistics.median(quiet_ms), statistics.median(flood_ms)
    ok = True
    ok &= check(expected(quiet_codes) and expected(flood_codes),
                "correct logins from 127.0.0.4: expected 201 (Basic) and 302 (form), got %s "
                "alone and %s during the flood from new addresses" % (quiet_codes, flood_codes))
    ok &= check(set(statuses) <= {401, 429, 503},
                "wrong passwords from new addresses: expected 401, 429 or 503, got %s"
                % statuses)
    ok &= check(busy <= 4 * quiet + 1000,
                "correct logins took a median %.0f ms during the flood, %.0f ms alone"
                % (busy, quiet))
    report("8b spread login flood", ok,
           "correct logins of known users from 127.0.0.4 (bcrypt cost 10): median %.0f ms "
           "alone, median %.0f ms (max %.0f ms) during 40 connections of wrong passwords, each "
           "request from a new address (%d requests in %.0f s: %s)"
           % (quiet, busy, max(flood_ms), sum(statuses.values()), seconds + 1, statuses))


# ---------------------------------------------------------------------------------------------
# 9. Accounts: sessions end with the password, usernames, NUL in forms, safe CSV cells


def check_accounts(port):
    ok = True
    figures = []
    # Sessions end with the password: two sessions of one user; a password change by another
    # writer (the REST API, as an admin) ends both.
    user = "sess-" + uuid.uuid4().hex[:6]
    c = Client(port)
    r = c.request("POST", "/api/user/", {"username": user, "email": user + "@x.org",
                                         "password": "first-pw"}, auth=ADMIN)
    uid = r.json().get("id") if r.status == 201 else None
    sessions = []
    for _ in range(2):
        s = Client(port)
        name, token = csrf_of(s, "/accounts/login/")
        s.request("POST", "/accounts/login/", form={"username": user, "password": "first-pw",
                                                    name: token})
        sessions.append(s)
    before = [s.request("GET", "/private/").status for s in sessions]
    c.request("PUT", "/api/user/%s/" % uid, {"password": "second-pw"}, auth=ADMIN)
    after = [s.request("GET", "/private/").status for s in sessions]
    ok &= check(before == [200, 200] and after == [302, 302],
                "GET /private/ of two sessions: expected 200 before and 302 after a password "
                "change, got %s and %s" % (before, after))
    figures.append("sessions after a password change: %s -> %s" % (before, after))
    # Usernames: NFKC, and no look-alike of an existing name.
    base = "name" + uuid.uuid4().hex[:6]
    codes = []
    for name in (base, base.capitalize(), base.replace("a", "\u0430", 1),
                 "\uff4e" + base[1:] + "x"):
        r = c.request("POST", "/api/user/", {"username": name, "email": "e@x.org",
                                             "password": "pw"}, auth=ADMIN)
        codes.append(r.status)
    ok &= check(codes == [201, 409, 409, 201],
                "usernames %s, its capitalised form, a Cyrillic а, a full-width form of "
                "another: expected 201, 409, 409, 201, got %s" % (base, codes))
    figures.append("look-alike usernames %s" % codes)
    # A NUL in the login form.
    s = Client(port)
    name, token = csrf_of(s, "/accounts/login/")
    r = s.request("POST", "/accounts/login/", form={"username": user + "\0",
                                                    "password": "x", name: token})
    ok &= check(r.status == 400, "a NUL in the login form's username: expected 400, got %s"
                % r.status)
    figures.append("NUL in the login form %s" % r.status)
    # Exported CSV cells that a spreadsheet would evaluate.
    admin = admin_login(port)
    formula = '=HYPERLINK("http://evil.example/","x")-%s' % uuid.uuid4().hex[:6]
    created = c.request("POST", "/api/amodel/", {"a_field": formula})
    name, token = csrf_of(admin, "/admin/amodel/export/")
    r = admin.request("POST", "/admin/amodel/export/?id=%s" % created.json().get("id"),
                      form={"format": "csv", "fields": "a_field", name: token})
    cell = r.text().split("\r\n")[1] if r.status == 200 else ""
    ok &= check(cell.startswith("\"'=") or cell.startswith("'="),
                "the CSV export of a text starting with '=': expected a leading quote, got %r"
                % cell[:80])
    figures.append("CSV cell %r" % cell[:24])
    report("9 accounts and exports", ok, "; ".join(figures))


# ---------------------------------------------------------------------------------------------
# 16. A staff user who may only view tickets forges the admin's writes


def login(port, username, password):
    """A client logged in through the login form as `username` (None when it was refused)."""
    c = Client(port)
    name, token = csrf_of(c, "/accounts/login/")
    r = c.request("POST", "/accounts/login/", form={name: token, "username": username,
                                                    "password": password, "next": "/"})
    return c if r.status in (302, 303) else None


def listed(resp):
    """The rows of a REST list answer, sorted by id (a page's rows, or the list itself)."""
    body = resp.json()
    rows = body.get("objects", body.get("results")) if isinstance(body, dict) else body
    return sorted(rows or [], key=lambda row: row.get("id", 0)), resp.status


def staff_state(admin, port, uid, marker):
    """What the forged requests must not change, read by an administrator: the tickets, the
    staff user's record and direct grants, and whether a note or ticket carries `marker`."""
    c = Client(port)
    page = admin.request("GET", "/admin/note/?q=%s" % marker).text()
    return {
        "tickets": listed(c.request("GET", "/api/ticket/?limit=1000")),
        "user": c.request("GET", "/api/user/%d/" % uid, auth=ADMIN).json(),
        "grants": listed(c.request("GET", "/api/userpermission/?user=%d" % uid, auth=ADMIN)),
        "marked note": marker in page,
    }


def check_staff_forgery(port):
    """A user holding only `ticket.view` (granted through the REST permission resources) logs
    into the admin, then POSTs with its session's CSRF token what the admin would not offer
    it: each is 403, and an administrator reads the same rows afterwards."""
    c = Client(port)
    user = "staff-" + uuid.uuid4().hex[:6]
    r = c.request("POST", "/api/user/", {"username": user, "email": user + "@x.org",
                                         "password": "staff-pw"}, auth=ADMIN)
    uid = r.json().get("id") if r.status == 201 else None
    grant = c.request("POST", "/api/userpermission/", {"user": uid, "permission": "ticket.view"},
                      auth=ADMIN)
    tickets = [c.request("POST", "/api/ticket/", {"title": "hostile-%d" % k}).json()["id"]
               for k in range(2)]
    staff = login(port, user, "staff-pw")
    if not check(uid and grant.status == 201 and staff, "the staff user: user %s, grant %s, "
                 "login %s" % (r.status, grant.status, "ok" if staff else "refused")):
        report("16 staff forgery", False, "no staff user")
        return
    seen = staff.request("GET", "/admin/ticket/%d/" % tickets[0])
    ok = check(seen.status == 200, "the staff user's GET of a ticket's page: expected 200, "
               "got %s" % seen.status)
    version = re.search(r'name="_version" value="([^"]*)"', seen.text())
    name, token = csrf_of(staff, "/admin/ticket/")
    marker = "forged" + uuid.uuid4().hex[:8]
    ticket = {"title": marker, "priority": "1", "status": "open", "body": "", "secret_note": "",
              "opened": "2020-01-01", "parent": ""}
    csv_text = "id,title\r\n%d,%s\r\n,%s\r\n" % (tickets[0], marker, marker)
    forged = [
        ("add a ticket", "/admin/ticket/add/", ticket),
        ("edit a ticket", "/admin/ticket/%d/" % tickets[0],
         dict(ticket, _version=html.unescape(version.group(1)) if version else "")),
        ("import a file", "/admin/ticket/import/", {"file": csv_text}),
        ("confirm an import", "/admin/ticket/import/", {
            "confirm": "yes", "data": base64.b64encode(csv_text.encode()).decode()}),
        ("delete a ticket", "/admin/ticket/%d/delete/" % tickets[0], {}),
        ("bulk delete", "/admin/ticket/", {"action": "delete", "id": tickets,
                                           "confirm": "yes"}),
        ("the Notes panel", "/admin/notes/create/", {"message": marker}),
        ("make itself an administrator", "/admin/user/%d/" % uid, {
            "username": user, "email": user + "@x.org", "active": "1", "admin": "1"}),
        ("grant itself ticket.delete", "/admin/userpermission/add/", {
            "user": str(uid), "permission": "ticket.delete"}),
    ]
    admin = admin_login(port)
    before = staff_state(admin, port, uid, marker)
    statuses = []
    for what, path, fields in forged:
        form = [(k, v) for k, vs in fields.items()
                for v in (vs if isinstance(vs, list) else [vs])] + [(name, token)]
        r = staff.request("POST", path, form=form)
        statuses.append(r.status)
        ok &= check(r.status == 403, "the staff user's forged POST %s (%s): expected 403, got "
                    "%s" % (path, what, r.status))
    after = staff_state(admin, port, uid, marker)
    ok &= check(after == before and not after["marked note"] and after["user"].get("admin") is
                not True, "the forged POSTs changed the database: before %s, after %s"
                % (before, after))
    report("16 staff forgery", ok, "a user holding ticket.view: %d forged POSTs (%s) -> %s; "
           "the tickets, the user and its grants unchanged" % (
               len(forged), ", ".join(f[0] for f in forged), sorted(set(statuses))))


# ---------------------------------------------------------------------------------------------
# 17. Password reset links: a forged, altered or reused one changes nothing


def b36(n):
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def mailed_link(mail_dir, seen, user, kind, within_s=5):
    """The path and token of the newest `kind` link mailed to `user` since `seen` (file names)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        for f in sorted(set(os.listdir(mail_dir)) - seen):
            with open(os.path.join(mail_dir, f), encoding="utf-8") as m:
                text = m.read()
            found = re.search(r"http://[^/\s]+(/accounts/%s/([^/\s]+)/)" % kind, text)
            if found and ("Hello %s," % user) in text:
                return found.group(1), found.group(2)
        time.sleep(0.05)
    return None, None


def logs_in(port, user, password):
    s = Client(port)
    name, token = csrf_of(s, "/accounts/login/")
    r = s.request("POST", "/accounts/login/", form={"username": user, "password": password,
                                                    name: token})
    return r.status == 302


def check_reset_tokens(port, mail_dir):
    ok = True
    figures = []
    user = "reset-" + uuid.uuid4().hex[:6]
    c = Client(port)
    c.request("POST", "/api/user/", {"username": user, "email": user + "@x.org",
                                     "password": "first-pw"}, auth=ADMIN)
    s = Client(port)
    name, token = csrf_of(s, "/accounts/password_reset/")
    seen = set(os.listdir(mail_dir))
    r = s.request("POST", "/accounts/password_reset/", form={"username_or_email": user,
                                                             name: token})
    path, tok = mailed_link(mail_dir, seen, user, "reset")
    ok &= check(r.status == 302 and path is not None,
                "a reset request: expected 302 and a mailed link, got %s and %s"
                % (r.status, path))
    if path is None:
        report("17 reset links", ok, "no link mailed")
        return
    pk, made, sig = tok.split("-", 2)
    flip = lambda t: t[:-1] + ("A" if t[-1] != "A" else "B")
    forged = {
        "signature altered": "%s-%s-%s" % (pk, made, flip(sig)),
        "another user": "%s-%s-%s" % (b36(int(pk, 36) + 1), made, sig),
        "made later": "%s-%s-%s" % (pk, b36(int(made, 36) + 3600), sig),
        "made earlier": "%s-%s-%s" % (pk, b36(int(made, 36) - 1), sig),
        "zero-padded key": "0%s-%s-%s" % (pk, made, sig),
        "upper case": tok.upper(),
        "signature cut": tok[:-1],
        "signature longer": tok + "A",
        "no signature": "%s-%s" % (pk, made),
        "5,000 characters": "a" * 5000,
        "not ASCII": urllib.parse.quote("%s-%s-%sΩ" % (pk, made, sig)),
        "a path": "..%2F..%2Fadmin",
    }
    _, form_token = csrf_of(s, path)
    answers = {}
    for label, bad in forged.items():
        url = "/accounts/reset/%s/" % bad
        got = s.request("GET", url).status
        posted = s.request("POST", url, form={"new_password1": "evil-pw",
                                              "new_password2": "evil-pw",
                                              name: form_token}).status
        answers[label] = (got, posted)
    wrong = {k: v for k, v in answers.items() if v != (400, 400)}
    ok &= check(not wrong, "forged reset links: expected 400 on GET and POST, got %s" % wrong)
    unchanged = logs_in(port, user, "first-pw")
    ok &= check(unchanged, "after the forged links, the old password no longer logs in")
    r = s.request("POST", path, form={"new_password1": "second-pw", "new_password2": "second-pw",
                                      name: form_token})
    reused = s.request("POST", path, form={"new_password1": "third-pw",
                                           "new_password2": "third-pw",
                                           name: form_token}).status
    ok &= check(r.status == 302 and reused == 400 and logs_in(port, user, "second-pw"),
                "the real link: expected 302, then 400 on reuse and the new password, got "
                "%s, %s" % (r.status, reused))
    figures.append("%d forged links 400 on GET and POST; real link %s, reused %s"
                   % (len(forged) - len(wrong), r.status, reused))
    report("17 reset links", ok, "; ".join(figures))


# ---------------------------------------------------------------------------------------------
# 10. One client cannot take the whole response budget


def check_response_share(app):
    """13 connections from 127.0.0.2 ask for the ~18 MB page and never read; a reader from
    127.0.0.3 still gets it."""
    path = "/api/sample/?limit=20"
    request = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path).encode()
    socks = []
    for _ in range(13):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.bind(("127.0.0.2", 0))
        s.connect(("127.0.0.1", app.port))
        s.sendall(request)
        socks.append(s)
    time.sleep(1.0)
    r = Client(app.port, source="127.0.0.3").request("GET", path)
    outcomes = read_outcome(socks, 2)
    stalled = {}
    for status, _, _ in outcomes:
        stalled[status] = stalled.get(status, 0) + 1
    ok = check(r.status == 200 and len(r.body) > 1_000_000,
               "GET %s from 127.0.0.3 while 13 connections from 127.0.0.2 do not read: expected "
               "200 with the page, got %s (%d bytes)" % (path, r.status, len(r.body)))
    report("10 response share", ok, "the reader from 127.0.0.3: %s, %.1f MB in %.0f ms; the 13 "
           "stalled connections from 127.0.0.2: %s" % (r.status, len(r.body) / 1e6, r.ms,
                                                       stalled))


# ---------------------------------------------------------------------------------------------
# 12. Aggregates of long texts


def check_aggregate_memory(app):
    """Four aggregates at once over the long texts of check 2: the app's peak RSS."""
    path = "/api/sample/aggregate/?group=id,body&min=body&max=body&name__like=big-%25"
    before = app.rss_kb()
    peak = [before]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], app.rss_kb())
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    statuses = []

    def ask():
        statuses.append(Client(app.port).request("GET", path).status)

    askers = [threading.Thread(target=ask) for _ in range(4)]
    for t in askers:
        t.start()
    for t in askers:
        t.join()
    done.set()
    sampler.join()
    grown_mb = (peak[0] - before) / 1024
    bound_mb = 3 * READ_MEMORY / (1 << 20)
    ok = check(grown_mb < bound_mb and all(s in (200, 503) for s in statuses),
               "4 concurrent GET %s: peak RSS grew by %.0f MB (bound %.0f MB), statuses %s"
               % (path, grown_mb, bound_mb, statuses))
    report("12 aggregate memory", ok, "statuses %s; peak RSS %.0f MB -> %.0f MB (+%.0f MB; read "
           "budget %d MB)" % (sorted(statuses), before / 1024, peak[0] / 1024, grown_mb,
                              READ_MEMORY >> 20))


# ---------------------------------------------------------------------------------------------
# 11. Work that outlives its client


def check_outlived_work(app, pg_url):
    """A query of minutes (16 ilike patterns that each compare 1,000 characters at every
    position of 200 rows of 100,000 that it does not match; each row holds every trigram of the
    pattern, so the body's search index, a trigram index on PostgreSQL, rules no row out): its
    client hangs up after a second, and the work must stop within a second (CPU time of the app
    on SQLite, the server's active queries on PostgreSQL); sent and waited for, it ends at the
    statement budget (10 s) with 503."""
    c = Client(app.port)
    tag = uuid.uuid4().hex[:6]
    for i in range(200):
        r = c.request("POST", "/api/sample/", {"name": "slow-%s-%d" % (tag, i), "qty": 1,
                                               "body": "x" * 100_000 + "y-xyz"})
        if not check(r.status == 201, "POST /api/sample/: %s %s" % (r.status, r.text()[:200])):
            report("11 outlived work", False, "no rows")
            return
    pattern = "%" + "x" * 1000 + "yz%"
    path = "/api/sample/?" + "&".join(["body__ilike=" + urllib.parse.quote(pattern)] * 16)

    def busy():
        """CPU seconds the app used in one second (SQLite), or the active statements that
        match text on the database server (PostgreSQL)."""
        if pg_url:
            return int(psql(pg_url, "SELECT count(*) FROM pg_stat_activity WHERE state = "
                            "'active' AND query ILIKE '%%ilike%%' AND pid <> pg_backend_pid()"))
        before = app.cpu_seconds()
        time.sleep(1.0)
        return app.cpu_seconds() - before

    s = socket.create_connection(("127.0.0.1", app.port))
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
    time.sleep(1.0)
    while_running = busy()
    s.close()
    time.sleep(1.0)
    after = busy()
    r = Client(app.port).request("GET", "/api/sample/?limit=1")
    next_ms = r.ms
    ok = True
    if pg_url:
        ok &= check(while_running >= 1 and after == 0,
                    "PostgreSQL statements matching text: %d while the client waited, %d a "
                    "second after it hung up (expected at least 1, then 0)"
                    % (while_running, after))
    else:
        ok &= check(while_running > 0.5 and after < 0.2,
                    "app CPU: %.2f s in a second while the client waited, %.2f s in a second "
                    "from a second after it hung up (expected the work to stop)"
                    % (while_running, after))
    ok &= check(r.status == 200, "the next request: %s" % r.status)
    started = time.monotonic()
    waited = Client(app.port, timeout=120).request("GET", path)
    budget_s = time.monotonic() - started
    ok &= check(waited.status == 503 and waited.headers.get("retry-after") and budget_s < 14,
                "the same query waited for: %s after %.1f s, Retry-After %s (expected 503 at the "
                "10 s budget)" % (waited.status, budget_s, waited.headers.get("retry-after")))
    unit = "active statements" if pg_url else "CPU s/s"
    report("11 outlived work", ok,
           "%.4g %s while the client waited, %.4g from 1 s after it hung up; next request %.0f ms; "
           "the query waited for: %s after %.1f s"
           % (while_running, unit, after, next_ms, waited.status, budget_s))


# ---------------------------------------------------------------------------------------------
# 5. Concurrent deletes of one row


def check_concurrent_deletes(port, rounds=30, clients=30):
    c = Client(port)
    bad = []
    totals = {}
    for rnd in range(rounds):
        pk = c.request("POST", "/api/amodel/", {"a_field": "race-%d" % rnd}).json()["id"]
        barrier = threading.Barrier(clients)
        statuses = [None] * clients

        def delete(k):
            dc = Client(port)
            dc.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            dc.conn.connect()
            barrier.wait()
            statuses[k] = dc.request("DELETE", "/api/amodel/%d/" % pk).status
            dc.close()

        threads = [threading.Thread(target=delete, args=(k,)) for k in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for s in statuses:
            totals[s] = totals.get(s, 0) + 1
        if sorted(statuses) != [200] + [404] * (clients - 1):
            bad.append((rnd, pk, sorted(statuses)))
    ok = check(not bad, "concurrent DELETE /api/amodel/<id>/: expected one 200 and %d 404 per "
               "round, got %s" % (clients - 1, bad[:3]))
    report("5 concurrent deletes", ok, "%d rounds x %d clients; statuses %s; bad rounds %d"
           % (rounds, clients, dict(sorted(totals.items(), key=str)), len(bad)))


# ---------------------------------------------------------------------------------------------
# 6. What the HTTP layer answers by itself (reported, not asserted)


def check_http_layer(port):
    out = []
    cases = (
        ("URI 100 KB", b"GET /api/amodel/?a_field=" + b"a" * 100_000
         + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("header 100 KB", b"GET /api/amodel/?limit=1 HTTP/1.1\r\nHost: x\r\nX-Big: "
         + b"a" * 100_000 + b"\r\n\r\n"),
        ("headers 1 MB", b"GET /api/amodel/?limit=1 HTTP/1.1\r\nHost: x\r\n"
         + b"".join(b"X-Big-%d: %s\r\n" % (i, b"a" * 8000) for i in range(128)) + b"\r\n"),
        ("200 headers", b"GET /api/amodel/?limit=1 HTTP/1.1\r\nHost: x\r\n"
         + b"".join(b"X-H-%d: v\r\n" % i for i in range(200)) + b"\r\n"),
    )
    for label, data in cases:
        raw, first, end_s, end = raw_exchange(port, data + b"", wait=3)
        status, headers, body = parse_head(raw)
        kind = headers.get("content-type", "-")
        out.append("%s: %s, body %d bytes (%s), nosniff %s, %s" % (
            label, status, len(body), kind.split(";")[0],
            "yes" if headers.get("x-content-type-options") == "nosniff" else "no",
            "closed" if end in ("eof", "reset") else "kept open"))
    report("6 HTTP layer", True, "; ".join(out) + " (reported only)")


# ---------------------------------------------------------------------------------------------
# 13-15. The change feed (docs/changes.md#bounds): streams per address, stalled subscribers,
# forged positions


FEED = "/api/ticket/changes/"
FEED_LIMIT = 16  # streams per client address (StreamLimits::default)


def feed_stream(port, source, path=FEED, **kw):
    """A stream of the ticket feed from `source`, its head read."""
    s = harness.EventStream(port, path, source=source, **kw)
    s.head()
    AUDIT.add("GET %s (stream)" % path[:50], s.status, s.headers)
    return s


def json_error(stream, needle=""):
    """Whether a refused stream's body is a JSON error mentioning `needle`."""
    try:
        body = json.loads(stream.body or b"null")
    except ValueError:
        return False
    return isinstance(body, dict) and needle in str(body.get("error", ""))


def reopened(port, source, within_s):
    """Seconds until a new stream from `source` is accepted (its slot free), or None."""
    started = time.monotonic()
    while time.monotonic() - started < within_s:
        s = feed_stream(port, source)
        s.close()
        if s.status == 200:
            return time.monotonic() - started
        time.sleep(0.1)
    return None


def check_feed_streams(port):
    streams = [feed_stream(port, "127.0.0.5") for _ in range(FEED_LIMIT)]
    opened = sum(s.status == 200 for s in streams)
    extra = feed_stream(port, "127.0.0.5")
    retry = extra.headers.get("retry-after", "")
    other = feed_stream(port, "127.0.0.15")
    ok = check(opened == FEED_LIMIT, "%d of %d streams from one address opened"
               % (opened, FEED_LIMIT))
    ok &= check(extra.status == 429 and retry.isdigit() and json_error(extra),
                "stream %d from one address: %s, Retry-After %r, body %r"
                % (FEED_LIMIT + 1, extra.status, retry, extra.body[:100]))
    ok &= check(other.status == 200, "a stream from another address: %s" % other.status)
    # The server ends a connection whose client closed its side: the slot is free at once,
    # with no event or heartbeat needed.
    streams.pop().close()
    freed = reopened(port, "127.0.0.5", 5)
    ok &= check(freed is not None, "closing a stream frees its slot (within 5 s, no write)")
    for s in streams + [extra, other]:
        s.close()
    report("13 feed streams", ok, "%d streams from 127.0.0.5 open, the next %s with Retry-After "
           "%s; another address 200; after closing one, a new stream accepted in %s"
           % (opened, extra.status, retry or "-",
              "%.1f s" % freed if freed is not None else "never"))


class FeedReader(threading.Thread):
    """A subscriber that reads every event as it comes: the arrival time per object id."""

    def __init__(self, port, source):
        super().__init__(daemon=True)
        self.stream = feed_stream(port, source)
        self.arrived = {}
        self.stop_event = threading.Event()

    def run(self):
        while not self.stop_event.is_set() and not self.stream.ended:
            event = self.stream.next_event(timeout=0.5)
            if event and event.get("event") == "created":
                self.arrived[json.loads(event["data"])["id"]] = event["at"]

    def stop(self):
        self.stop_event.set()
        self.join()
        self.stream.close()


def write_tickets(c, n, body, written):
    """Creates `n` tickets; each one's response time (ms) in a list, and its id with the
    time its 201 arrived in `written`."""
    times = []
    for i in range(n):
        resp = c.request("POST", "/api/ticket/", {"title": "feed %d" % i, "body": body})
        if check(resp.status == 201, "ticket create: %s %r" % (resp.status, resp.body[:200])):
            written[resp.json()["id"]] = time.monotonic()
        times.append(resp.ms)
    return times


class Drainer(threading.Thread):
    """Reads and throws away what `streams` receive: subscribers that keep up."""

    def __init__(self, streams):
        super().__init__(daemon=True)
        self.streams = streams
        self.stop_event = threading.Event()

    def run(self):
        sel = selectors.DefaultSelector()
        for s in self.streams:
            sel.register(s.sock, selectors.EVENT_READ)
        while not self.stop_event.is_set():
            for key, _ in sel.select(timeout=0.1):
                try:
                    if not key.fileobj.recv(1 << 20):
                        sel.unregister(key.fileobj)
                except OSError:
                    sel.unregister(key.fileobj)
        sel.close()

    def stop(self):
        self.stop_event.set()
        self.join()
        for s in self.streams:
            s.close()


def drained(stream, within_s):
    """Whether the server closes a stalled stream's connection within `within_s` (what it
    buffered read and thrown away)."""
    deadline = time.monotonic() + within_s
    while not stream.ended and stream._recv(deadline):
        stream.raw = b""
    return stream.ended


def check_feed_stalled(app, quick):
    """16 subscribers from one address never read (a 4 KB receive buffer); tickets of 48 KB
    are written until a new stream from that address is accepted, which means the server
    dropped them all. The baseline: the same writes while 16 subscribers keep up."""
    c = Client(app.port)
    body = "s" * 48_000
    readers = Drainer([feed_stream(app.port, "127.0.0.9") for _ in range(FEED_LIMIT)])
    readers.start()
    baseline = write_tickets(c, 40, body, {})
    readers.stop()
    stalled = [feed_stream(app.port, "127.0.0.6", rcvbuf=4096) for _ in range(FEED_LIMIT)]
    ok = check(all(s.status == 200 for s in stalled), "stalled streams opened: %s"
               % [s.status for s in stalled])
    reader = FeedReader(app.port, "127.0.0.7")
    reader.start()
    rss_before = app.rss_kb()
    sampler = Sampler(app)
    sampler.start()
    written, during, freed = {}, [], None
    # Up to 400 (800) writes, 20 at a time, until a slot of the stalled address is free; then
    # 60 more, since the streams fill at different paces (a stream's task may put several
    # events in one chunk of its buffer, the kernel's buffers differ), and all must go.
    extra = 0
    for _ in range(20 if quick else 40):
        during += write_tickets(c, 20, body, written)
        if freed is None and reopened(app.port, "127.0.0.6", 0.05) is not None:
            freed = len(written)
        if freed is not None:
            if extra == 3:
                break
            extra += 1
    time.sleep(2)
    reader.stop()
    closed = sum(drained(s, SEND_TIMEOUT + 5) for s in stalled)
    sampler.stop_event.set()
    sampler.join()
    for s in stalled:
        s.close()
    lags = [reader.arrived[i] - t for i, t in written.items() if i in reader.arrived]
    missing = len(written) - len(lags)
    base_p90, during_p90 = percentile(baseline, 90), percentile(during, 90)
    grown_mb = (sampler.peak_rss - rss_before) / 1024
    ok &= check(freed is not None, "the stalled streams were not dropped after %d writes"
                % len(written))
    ok &= check(missing == 0, "the reading subscriber missed %d of %d events"
                % (missing, len(written)))
    ok &= check(max(lags, default=0) < 2.0, "an event reached the reading subscriber %.2f s "
                "after its write" % max(lags, default=0))
    ok &= check(during_p90 < 2 * base_p90 + 50, "writes p90 %.0f ms with stalled streams, %.0f "
                "ms with reading ones" % (during_p90, base_p90))
    ok &= check(closed == len(stalled), "the server closed %d of %d stalled connections"
                % (closed, len(stalled)))
    ok &= check(grown_mb < 64, "RSS grew %.0f MB with stalled streams" % grown_mb)
    report("14 feed stalled", ok, "%d stalled streams dropped after %s writes of 48 KB (their "
           "address accepted again), connections closed %d; reader got %d/%d, lag p50 %.0f ms "
           "max %.0f ms; write p50/p90 %.0f/%.0f ms (16 reading subscribers: %.0f/%.0f ms); "
           "RSS +%.0f MB"
           % (len(stalled), freed, closed, len(lags), len(written),
              percentile(lags, 50) * 1000, max(lags, default=0) * 1000,
              percentile(during, 50), during_p90, percentile(baseline, 50), base_p90, grown_mb))


def check_feed_positions(port):
    """Forged Last-Event-ID and after: 400 naming the parameter; positions ahead of every
    event: a single `reset`."""
    header, param = "Last-Event-ID", "after"
    bad = ["soon", "-1", "99999999999999999999", "1.5", "1e3", "", "0x10", "1" * 8000, "1 2",
           "\xe9t\xe9"]  # the last: not UTF-8 in a header (Latin-1 bytes)
    cases = [({header: v}, None, header) for v in bad]
    cases += [(None, v, param) for v in bad if v]
    cases += [({header: "x"}, "3", header), ({header: "-2"}, "also-bad", header)]
    ahead = ["9223372036854775807", "9223372036854775806", "1000000000"]
    cases += [({header: v}, None, "reset") for v in ahead]
    cases += [(None, v, "reset") for v in ahead]
    # With both, the header wins: a malformed `after` beside a position in the header.
    cases += [({header: ahead[0]}, "garbage", "reset")]
    ok, seen = True, {}
    for headers, after, expect in cases:
        path = FEED + ("?after=" + urllib.parse.quote(after) if after is not None else "")
        s = feed_stream(port, "127.0.0.8", path=path, headers=headers)
        what = "%s %s" % (("%s: %.20s" % next(iter(headers.items()))) if headers else "",
                          "after=%.20s" % after if after is not None else "")
        if expect == "reset":
            event = s.next_event(timeout=5) if s.status == 200 else None
            end = s.next_event(timeout=5) if event else None
            ok &= check(event is not None and event.get("event") == "reset" and end is None
                        and s.ended, "%s: %s %r then %r" % (what, s.status, event, end))
            outcome = "reset"
        else:
            ok &= check(s.status == 400 and json_error(s, "'%s'" % expect),
                        "%s: %s %r" % (what, s.status, s.body[:120]))
            outcome = s.status
        seen[outcome] = seen.get(outcome, 0) + 1
        s.close()
    # Beyond any header the HTTP layer takes: refused, never a 5xx or a hang.
    s = feed_stream(port, "127.0.0.8", headers={header: "9" * 100_000})
    ok &= check(s.status is not None and 400 <= s.status < 500,
                "a 100 KB Last-Event-ID: %s" % s.status)
    s.close()
    report("15 feed positions", ok, "%d forged positions: %s; a 100 KB header %s"
           % (len(cases), ", ".join("%s x%d" % kv for kv in sorted(seen.items(), key=str)),
              s.status))


# ---------------------------------------------------------------------------------------------
# 7. Headers


def check_headers(port):
    ok = True
    seen = []
    anon = Client(port)
    admin = admin_login(port)
    for label, client, path in (("login page", anon, "/accounts/login/"),
                                ("admin anonymous", anon, "/admin/"),
                                ("admin page", admin, "/admin/"),
                                ("admin amodel", admin, "/admin/amodel/"),
                                ("homepage", anon, "/")):
        r = client.request("GET", path)
        html = r.headers.get("content-type", "").startswith("text/html")
        framing = (r.headers.get("x-frame-options", "").upper() == "DENY"
                   or "frame-ancestors 'none'" in r.headers.get("content-security-policy", ""))
        if html:
            ok &= check(framing, "GET %s (%s): HTML without X-Frame-Options DENY or CSP "
                        "frame-ancestors 'none'" % (path, r.status))
        ok &= check(r.headers.get("x-content-type-options") == "nosniff",
                    "GET %s (%s): no X-Content-Type-Options: nosniff" % (path, r.status))
        seen.append("%s %s %s%s" % (path, r.status, "html" if html else "no body",
                                    " framing forbidden" if framing else ""))
    missing = [m for m in AUDIT.without_nosniff if m]
    extra = len(AUDIT.without_nosniff) - len(missing)
    ok &= check(not AUDIT.without_nosniff,
                "responses without X-Content-Type-Options: nosniff: %d of %d, e.g. %s"
                % (len(AUDIT.without_nosniff), AUDIT.responses, missing[:5] + (
                    ["..."] if extra else [])))
    report("7 headers", ok, "%s; nosniff on %d of %d responses of the run"
           % (", ".join(seen), AUDIT.responses - len(AUDIT.without_nosniff), AUDIT.responses))


# ---------------------------------------------------------------------------------------------


def main():
    if sys.argv[1:2] == ["--flood"]:
        flood_main(int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), *map(int, sys.argv[5:6]))
        return
    if sys.argv[1:2] == ["--login-flood"]:
        login_flood_main(int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
        return
    if sys.argv[1:2] == ["--spread-flood"]:
        spread_flood_main(int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI size")
    ap.add_argument("--pg", metavar="URL", help="PostgreSQL admin URL (a database is created)")
    ap.add_argument("--app", default=os.path.join(ROOT, "target/release/plover-conformance-app"))
    args = ap.parse_args()
    if not os.access(args.app, os.X_OK):
        raise SystemExit("no app binary at %s: cargo build --release -p plover-conformance-app"
                         % args.app)
    n_clients = 100 if args.quick else 480
    flood_s = 5 if args.quick else 15
    workdir = tempfile.mkdtemp(prefix="plover-hostile-")
    log = os.path.join(workdir, "app.log")
    mail_dir = os.path.join(workdir, "mail")
    os.makedirs(mail_dir)
    db = harness.Scratch(args.pg, workdir, "hostile")
    db_url = db.url
    def set_hash(username, password_hash):
        """Stores a password hash straight into the database."""
        if args.pg:
            psql(db_url, "UPDATE \"user\" SET password = '%s' WHERE username = '%s'"
                 % (password_hash, username))
        else:
            con = sqlite3.connect(db.path, timeout=30)
            with con:
                con.execute('UPDATE "user" SET password = ? WHERE username = ?',
                            (password_hash, username))
            con.close()

    engine = "PostgreSQL" if args.pg else "SQLite"
    print("hostile clients, %s, %s mode (app log: %s)" % (
        engine, "quick" if args.quick else "full", log), flush=True)
    started = time.monotonic()
    apps = []
    try:
        # A long pool wait: the stalled readers of check 2 queue for the pool all at once, and
        # a 503 after the default 5 s would only blur the memory figures.
        app = App(args.app, with_options(db_url, connection_timeout=120,
                                         read_memory=READ_MEMORY), log,
                  "--send-timeout", str(SEND_TIMEOUT), "--body-timeout", str(BODY_TIMEOUT),
                  "--response-memory", str(RESPONSE_MEMORY), "--mail-dir", mail_dir)
        apps.append(app)
        # The same database, a pool of two connections, for the password flood.
        small = App(args.app, with_options(db_url, max_connections=2, connection_timeout=1),
                    log)
        apps.append(small)
        check_bounded_work(app.port)
        check_stalled_readers(app, n_clients)
        check_response_share(app)
        check_aggregate_memory(app)
        check_slow_requests(app.port)
        check_password_flood(small, flood_s, set_hash)
        # On the first app: the flood of check 4 came from 127.0.0.1, which the second app
        # now throttles, the admin's own requests included.
        check_login_flood(app, flood_s, set_hash)
        check_spread_flood(app, flood_s, set_hash)
        check_accounts(app.port)
        check_staff_forgery(app.port)
        check_reset_tokens(app.port, mail_dir)
        check_outlived_work(app, db.url if args.pg else None)
        check_concurrent_deletes(app.port)
        check_http_layer(app.port)
        check_feed_streams(app.port)
        check_feed_stalled(app, args.quick)
        check_feed_positions(app.port)
        check_headers(app.port)
    finally:
        for a in apps:
            a.stop()
        db.drop()
    with open(log, "rb") as f:
        logged = sum(1 for line in f if re.search(rb"\] 5\d\d ", line))
    print("total: %d failed assertion(s), %.0f s, %d responses audited, %d of them 5xx, %d 5xx "
          "logged by the app" % (len(FAILURES), time.monotonic() - started, AUDIT.responses,
                                 AUDIT.server_errors, logged))
    if FAILURES:
        raise SystemExit("%d check(s) failed; app log and database kept in %s"
                         % (len(FAILURES), workdir))
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
