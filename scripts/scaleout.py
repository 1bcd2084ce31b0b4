#!/usr/bin/env python3
"""Scale-out test (docs/deployment.md#scaling-out): three conformance-app processes behind an
nginx load balancer, on a PostgreSQL primary with a streaming replica (replay delayed), the
deployment the docs describe.

usage: scaleout.py APP_BINARY

The script starts everything itself on loopback ports, in a temporary folder: the primary and
its replica (scripts/pg-replica.sh, the replica replaying the WAL REPLAY_DELAY_MS after each
commit), three app processes with PLOVER_DATABASE_REPLICAS set, and nginx with two front
doors: one spreading requests round robin, one choosing the process by the request's
credentials (`hash $http_authorization`, the stickiness docs/deployment.md recommends). Then:

  1. writes: threads create rows and update each twice through the round-robin door; every
     acknowledged write is present exactly once, with its last acknowledged value, no 5xx;
  2. unique races: the same unique name POSTed to the three processes at once: one 201, two
     409, one row;
  3. idempotency keys: the same key and body POSTed to the three processes at once: three
     equal answers (two marked replayed), one row;
  4. the login throttle: wrong passwords for one username, each attempt to the next process:
     the 6th and later are 429 (the counts are shared through the database);
  5. read-your-writes with a lagging replica: an authenticated client updates a row and reads
     it back at once through the sticky door; an anonymous client does so through the
     round-robin door, sending the `Plover-Consistency` token of its write: never the old
     value; anonymous reads without a token are served by the replica too (Plover-Served-By);
  6. a rate limit counted in the database (the app's `--rate-limit`): requests spread over the
     three processes get exactly the limit's number of answers, then 429 with Retry-After.

Exit status 1 when a check fails. Python standard library only, with psql and nginx.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid

import harness
from harness import App, check, free_port, psql

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROCESSES = 3
THREADS = 8
CREATES_PER_THREAD = 30
UPDATES_PER_ROW = 2
RACES = 20
REPLAY_DELAY_MS = 300
ADMIN = ("root", "scale-out-pw")
RATE_LIMIT = 12


def request(base, method, path, body=None, auth=None, headers=None):
    """(status, JSON body, response headers with lower-case names)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if auth:
        req.add_header("Authorization", "Basic " + base64.b64encode(
            ("%s:%s" % auth).encode()).decode())
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            got = {k.lower(): v for k, v in resp.headers.items()}
            return resp.status, json.loads(resp.read() or b"null"), got
    except urllib.error.HTTPError as e:
        got = {k.lower(): v for k, v in e.headers.items()}
        text = e.read()
        try:
            return e.code, json.loads(text or b"null"), got
        except ValueError:
            return e.code, text[:200], got


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.statuses = {}

    def add(self, status):
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1

    def server_errors(self):
        return sum(n for s, n in self.statuses.items() if s >= 500)


def at_once(calls):
    """Runs the calls in threads released together; their results in order."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(k):
        barrier.wait()
        results[k] = calls[k]()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


class Balancer:
    """nginx in the foreground on two loopback ports: `spread` (round robin) and `sticky`
    (by the Authorization header), in front of `ports`."""

    def __init__(self, nginx, ports, workdir):
        self.dir = os.path.join(workdir, "nginx")
        os.makedirs(self.dir)
        self.spread, self.sticky = free_port(), free_port()
        servers = "".join("    server 127.0.0.1:%d;\n" % p for p in ports)
        proxy = ("proxy_http_version 1.1; proxy_set_header Connection \"\"; "
                 "proxy_set_header Host $http_host; proxy_read_timeout 60s;")
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write("""daemon off;
master_process off;
worker_processes 1;
pid %(dir)s/nginx.pid;
error_log %(dir)s/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path %(dir)s/body;
  proxy_temp_path %(dir)s/proxy;
  fastcgi_temp_path %(dir)s/fastcgi;
  uwsgi_temp_path %(dir)s/uwsgi;
  scgi_temp_path %(dir)s/scgi;
  upstream spread {
%(servers)s    keepalive 16;
  }
  upstream sticky {
    hash $http_authorization consistent;
%(servers)s    keepalive 16;
  }
  server { listen 127.0.0.1:%(spread)d; location / { proxy_pass http://spread; %(proxy)s } }
  server { listen 127.0.0.1:%(sticky)d; location / { proxy_pass http://sticky; %(proxy)s } }
}
""" % {"dir": self.dir, "servers": servers, "spread": self.spread, "sticky": self.sticky,
                "proxy": proxy})
        self.log = open(os.path.join(self.dir, "stdout.log"), "ab")
        self.proc = subprocess.Popen([nginx, "-p", self.dir, "-c", conf], stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                request("http://127.0.0.1:%d" % self.sticky, "GET", "/api/amodel/?limit=1")
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        with open(os.path.join(self.dir, "error.log")) as f:
            raise SystemExit("nginx did not start:\n" + f.read()[-2000:])

    def stop(self):
        harness.stop_process(self.proc)
        self.log.close()


def writes(spread, label):
    """Check 1: creates and updates through the round-robin door."""
    tally, acked, failures = Tally(), {}, []

    def writer(thread_no):
        mine = {}
        for i in range(CREATES_PER_THREAD):
            value = "%s-t%d-%d" % (label, thread_no, i)
            status, body, _ = request(spread, "POST", "/api/amodel/", {"a_field": value})
            tally.add(status)
            if status == 201:
                mine[body["id"]] = value
            else:
                failures.append(("create", status, body))
        for round_no in range(UPDATES_PER_ROW):
            for pk in sorted(mine):
                value = "%s-u%d" % (mine[pk].split("-u")[0], round_no)
                status, body, _ = request(spread, "PUT", "/api/amodel/%d/" % pk,
                                          {"a_field": value})
                tally.add(status)
                if status == 200 and body.get("a_field") == value:
                    mine[pk] = value
                else:
                    failures.append(("update", status, body))
        with tally.lock:
            acked.update(mine)

    started = time.monotonic()
    threads = [threading.Thread(target=writer, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return tally, acked, failures, time.monotonic() - started


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    app = sys.argv[1]
    nginx = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    if not nginx:
        raise SystemExit("scaleout.py: nginx is needed (Debian package nginx)")
    workdir = tempfile.mkdtemp(prefix="plover-scaleout-")
    # Not inside `workdir` (mode 0700): the servers run as the `postgres` user under root.
    pg_dir = os.path.join(tempfile.gettempdir(), "plover-scaleout-pg-" + uuid.uuid4().hex[:10])
    primary_port, replica_port = free_port(), free_port()
    urls = subprocess.run(
        [os.path.join(ROOT, "scripts", "pg-replica.sh"), "start", pg_dir, str(primary_port),
         str(replica_port), str(REPLAY_DELAY_MS)],
        capture_output=True, text=True, check=True).stdout.split()
    primary_admin, replica_admin = urls[-2], urls[-1]
    apps, balancer = [], None
    try:
        db_name = "plover_scaleout_" + uuid.uuid4().hex[:10]
        psql(primary_admin, 'CREATE DATABASE "%s"' % db_name)
        db_url = primary_admin.rsplit("/", 1)[0] + "/" + db_name
        replica_url = replica_admin.rsplit("/", 1)[0] + "/" + db_name
        os.environ["PLOVER_DATABASE_REPLICAS"] = replica_url
        # The processes start together: making the schema must not race.
        bases, errors = [None] * PROCESSES, []

        def start(k):
            try:
                started = App(app, db_url, os.path.join(workdir, "app%d.log" % k),
                              "--admin", "%s:%s" % ADMIN, "--rate-limit", str(RATE_LIMIT))
            except SystemExit as e:
                errors.append("app %d: %s" % (k, e))
                return
            apps.append(started)
            bases[k] = started.base

        at_once([lambda k=k: start(k) for k in range(PROCESSES)])
        if None in bases:
            raise SystemExit("an app did not start:\n" + "\n".join(errors))
        balancer = Balancer(nginx, [a.port for a in apps], workdir)
        spread = "http://127.0.0.1:%d" % balancer.spread
        sticky = "http://127.0.0.1:%d" % balancer.sticky
        label = "so" + uuid.uuid4().hex[:8]
        print("scale-out: %d processes behind nginx, PostgreSQL primary + replica (replay "
              "delayed %d ms)" % (PROCESSES, REPLAY_DELAY_MS))

        # 1. Writes through the balancer.
        tally, acked, failures, elapsed = writes(spread, label)
        rows = psql(db_url, "SELECT id, a_field FROM amodel WHERE a_field LIKE '%s-%%' "
                    "ORDER BY id" % label)
        found, duplicates = {}, 0
        for line in rows.splitlines():
            pk, value = line.split("|", 1)
            duplicates += int(pk) in found
            found[int(pk)] = value
        print("  1. writes: %d threads, %.1f s, statuses %s; acknowledged creates %d, rows %d"
              % (THREADS, elapsed, dict(sorted(tally.statuses.items())), len(acked),
                 len(found)))
        check(not failures, "writes failed: %r" % failures[:5])
        check(tally.server_errors() == 0, "5xx answers to writes")
        check(duplicates == 0 and found == acked,
              "rows differ from the acknowledged writes: missing %d, extra %d, duplicates %d"
              % (len(set(acked) - set(found)), len(set(found) - set(acked)), duplicates))

        # 2. Unique races across the three processes.
        outcomes = []
        for r in range(RACES):
            name = "%s-race-%d" % (label, r)
            results = at_once([lambda b=b: request(b, "POST", "/api/sample/",
                                                   {"name": name, "qty": r}) for b in bases])
            outcomes.append(sorted(status for status, _, _ in results))
        race_rows = int(psql(db_url, "SELECT COUNT(*) FROM sample WHERE name LIKE "
                             "'%s-race-%%'" % label))
        good = sum(o == [201, 409, 409] for o in outcomes)
        print("  2. unique races: %d, one 201 and two 409: %d, rows %d" % (RACES, good,
                                                                        race_rows))
        check(good == RACES and race_rows == RACES, "unique races: %r" % outcomes)

        # 3. One idempotency key sent to the three processes at once.
        answers = []
        for r in range(RACES):
            key, name = "%s-key-%d" % (label, r), "%s-once-%d" % (label, r)
            results = at_once([lambda b=b: request(
                b, "POST", "/api/sample/", {"name": name, "qty": r},
                headers={"Idempotency-Key": key}) for b in bases])
            answers.append(results)
        once_rows = int(psql(db_url, "SELECT COUNT(*) FROM sample WHERE name LIKE "
                             "'%s-once-%%'" % label))
        same = sum(len({(s, json.dumps(b, sort_keys=True)) for s, b, _ in res}) == 1
                   and res[0][0] == 201
                   and sum(h.get("idempotent-replayed") == "true" for _, _, h in res) == 2
                   for res in answers)
        print("  3. idempotency keys: %d sent to 3 processes at once, three equal answers "
              "(two replayed): %d, rows %d" % (RACES, same, once_rows))
        check(same == RACES and once_rows == RACES,
              "idempotency: %r" % [[(s, h.get("idempotent-replayed")) for s, _, h in res]
                                   for res in answers][:3])

        # 4. The login throttle, counted across processes.
        statuses = []
        for attempt in range(8):
            status, _, _ = request(bases[attempt % PROCESSES], "GET", "/v3/ticket/",
                                   auth=("%s-nobody" % label, "wrong-password"))
            statuses.append(status)
        print("  4. login throttle: 8 wrong passwords for one username over 3 processes: %s"
              % statuses)
        check(statuses[:5] == [401] * 5 and statuses[5:] == [429] * 3,
              "the 6th failure and later should be 429: %r" % statuses)

        # 5. Read-your-writes while the replica lags.
        stale, served, rounds = [], {}, 30
        pk = min(acked)
        for n in range(rounds):
            value = "%s-ryw-%d" % (label, n)
            status, _, _ = request(sticky, "PUT", "/api/amodel/%d/" % pk, {"a_field": value},
                                   auth=ADMIN)
            got = request(sticky, "GET", "/api/amodel/%d/" % pk, auth=ADMIN)
            if status != 200 or got[0] != 200 or got[1].get("a_field") != value:
                stale.append(("sticky", n, status, got[0], got[1]))
            value += "-anon"
            status, _, headers = request(spread, "PUT", "/api/amodel/%d/" % pk,
                                         {"a_field": value})
            token = headers.get("plover-consistency")
            got = request(spread, "GET", "/api/amodel/%d/" % pk,
                          headers={"Plover-Consistency": token or ""})
            if status != 200 or not token or got[1].get("a_field") != value:
                stale.append(("token", n, status, token, got[1]))
        for _ in range(rounds):
            status, _, headers = request(spread, "GET", "/api/amodel/?limit=1")
            served[headers.get("plover-served-by")] = served.get(
                headers.get("plover-served-by"), 0) + 1
        print("  5. read-your-writes: %d rounds (sticky door with credentials; round robin "
              "with the token): stale reads %d; anonymous reads served by %s"
              % (rounds, len(stale), dict(sorted(served.items(), key=str))))
        check(not stale, "read an older value than written: %r" % stale[:3])
        check(served.get("replica-1", 0) > 0, "no anonymous read reached the replica")

        # 6. A rate limit shared by the processes. Its window is an hour: should one end during
        # the check (RateLimit-Reset says when), the check runs again in the next.
        for _ in range(2):
            limited = [request(bases[n % PROCESSES], "GET", "/limited/sample/?limit=1")
                       for n in range(RATE_LIMIT + 6)]
            resets = {h.get("ratelimit-reset") for _, _, h in limited}
            if all(r and int(r) > 5 for r in resets):
                break
        statuses = [status for status, _, _ in limited]
        print("  6. rate limit of %d an hour, %d requests over 3 processes: %d answered, %d "
              "refused 429" % (RATE_LIMIT, len(statuses), statuses.count(200),
                               statuses.count(429)))
        check(statuses == [200] * RATE_LIMIT + [429] * 6
              and all(h.get("retry-after") for s, _, h in limited if s == 429),
              "the limit should hold across processes: %r" % statuses)
        if harness.FAILURES:
            for started in apps:
                print("--- %s:\n%s" % (started.log_path, started.log_tail()), file=sys.stderr)
            raise SystemExit(1)
        print("  OK")
    finally:
        if balancer:
            balancer.stop()
        for started in apps:
            started.stop()
        subprocess.run([os.path.join(ROOT, "scripts", "pg-replica.sh"), "stop", pg_dir],
                       capture_output=True)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
