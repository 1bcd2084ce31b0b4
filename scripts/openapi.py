"""The API descriptions of the conformance app, checked by third-party tools.

usage: openapi.py --app BINARY --venv DIR [--pg POSTGRES_ADMIN_URL] [--examples N]

Starts the conformance app (with an admin user) on a new SQLite file, or with --pg on a new
database it creates on that server and drops at the end, adds an API key, then for each API
(`/api`, `/v2`):

  1. `openapi-spec-validator` validates `{prefix}/openapi.json` (OpenAPI 3.1);
  2. `{prefix}/docs/` is an HTML page that names every operation and loads nothing from
     elsewhere;
  3. Schemathesis runs every operation with at most N generated cases (default 40), with the
     admin's Basic credentials and the API key in headers, and the checks: no 5xx, every status,
     content type, header and body as the document says, 405 with `Allow` for verbs it does
     not list, and protected operations refused without credentials;
  4. Schemathesis sends every GET operation requests the document calls valid, and each must
     be accepted (no 400): the parameters' schemas state the filter limits' shares exactly.
     The hooks of openapi_hooks.py keep the three rules JSON Schema cannot state (a column
     once in `ordering`, a function in an aggregate, `cursor` from a `next` link). Schemathesis
     applies hooks to generated data only, so this run has no coverage phase.

DIR is a virtualenv holding openapi-spec-validator and schemathesis (scripts/test.sh makes it).
Exit status 1 if any check fails; the logs stay in the work folder it prints.
"""
import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

import harness
from harness import check

ADMIN = ("admin", "openapi-admin-pw")
KEY = ("openapi-key", "openapi-secret")
CHECKS = ",".join([
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "unsupported_method",
    "ignored_auth",
])


def request(base, method, path, body=None, auth=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if auth:
        token = base64.b64encode(("%s:%s" % auth).encode()).decode()
        req.add_header("Authorization", "Basic " + token)
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.status, resp.headers, resp.read()


def document_checks(venv, base, prefix, workdir):
    status, _, raw = request(base, "GET", prefix + "/openapi.json")
    doc = json.loads(raw)
    path = os.path.join(workdir, prefix.strip("/") + ".json")
    with open(path, "wb") as f:
        f.write(raw)
    out = subprocess.run([os.path.join(venv, "bin", "openapi-spec-validator"), path],
                         capture_output=True, text=True)
    verdict = (out.stdout + out.stderr).strip().splitlines()
    check(out.returncode == 0, "%s: openapi-spec-validator: %s" % (prefix, verdict))
    operations = [(p, m) for p, item in doc["paths"].items() for m in item]
    print("%s/openapi.json: %d bytes, OpenAPI %s, %d paths, %d operations; validator: %s"
          % (prefix, len(raw), doc["openapi"], len(doc["paths"]), len(operations),
             verdict[-1] if verdict else "(nothing)"), flush=True)

    status, headers, page = request(base, "GET", prefix + "/docs/")
    text = page.decode()
    check(status == 200 and headers.get_content_type() == "text/html",
          "%s/docs/: %s %s" % (prefix, status, headers.get("Content-Type")))
    check("default-src 'none'" in headers.get("Content-Security-Policy", ""),
          "%s/docs/ loads only itself" % prefix)
    check(not re.search(r"<script|<link|src=\"http|href=\"http", text),
          "%s/docs/ refers to nothing outside it" % prefix)
    for op in doc["paths"].values():
        for entry in op.values():
            check(entry["operationId"] in text,
                  "%s/docs/ names %s" % (prefix, entry["operationId"]))
    print("%s/docs/: %d bytes of HTML" % (prefix, len(page)), flush=True)


def schemathesis(venv, base, prefix, examples, workdir, name, selection, checks=CHECKS,
                 phases="examples,coverage,fuzzing", hooks=""):
    report = os.path.join(workdir, name + "-report")
    # One worker: with two, Hypothesis compiles lambda sources in two threads at once, and
    # CPython 3.11.7's AST recursion counter is shared between threads ("AST constructor recursion
    # depth mismatch", a Runtime Error of the run, not of the API). One worker is no slower here.
    cmd = [os.path.join(venv, "bin", "schemathesis"), "run", base + prefix + "/openapi.json",
           "--checks", checks, "--max-examples", str(examples), "--seed", "1",
           "--phases", phases, "--workers", "1",
           "--generation-deterministic", "--no-color", "--request-timeout", "30",
           "--suppress-health-check", "all",
           "--auth", "%s:%s" % ADMIN, "-H", "key: %s" % KEY[0], "-H", "secret: %s" % KEY[1],
           "--report", "junit", "--report-dir", report,
           # A change feed's answer is a stream that stays open: its description is checked by
           # the validator, its behaviour by the integration tests and the conformance suite.
           "--exclude-path-regex", "/changes/$"] + selection
    print("$ " + " ".join(cmd[1:]), flush=True)
    # Run in the work folder: whatever Schemathesis keeps between runs stays there.
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir,
                         env=dict(os.environ, SCHEMATHESIS_HOOKS=hooks))
    log = os.path.join(workdir, name + "-schemathesis.log")
    with open(log, "w") as f:
        f.write(out.stdout + out.stderr)
    lines = [l for l in (out.stdout + out.stderr).splitlines() if l.strip()]
    summary = [l for l in lines if re.search(r"(passed|failed|errors?)\b.* in [0-9.]+s", l)]
    tail = lines[-40:] if out.returncode else (summary or lines[-5:])
    print("\n".join(tail), flush=True)
    check(out.returncode == 0, "%s: Schemathesis found failures (log: %s)" % (name, log))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--app", required=True)
    ap.add_argument("--venv", required=True)
    ap.add_argument("--pg")
    ap.add_argument("--examples", type=int, default=40)
    args = ap.parse_args()
    args.venv = os.path.abspath(args.venv)  # Schemathesis runs in the work folder
    workdir = tempfile.mkdtemp(prefix="plover-openapi-")
    db = harness.Scratch(args.pg, workdir, "openapi")
    print("== OpenAPI on %s" % ("PostgreSQL" if args.pg else "SQLite"), flush=True)
    # Schemathesis's ignored_auth check sends thousands of wrong credentials from one address
    # and expects 401 each time: the login throttle (429, tested in scripts/hostile.py and the
    # integration tests) is off for this run.
    app = harness.App(args.app, db.url, os.path.join(workdir, "app.log"),
                      "--admin", "%s:%s" % ADMIN, "--unthrottled-logins")
    try:
        status, _, _ = request(app.base, "POST", "/api/apikey/",
                               {"key": KEY[0], "secret": KEY[1]}, auth=ADMIN)
        check(status == 201, "the API key is created")
        for prefix in ("/api", "/v2"):
            document_checks(args.venv, app.base, prefix, workdir)
        # The operations that can take the run's own credentials away (the admin's user, the
        # API key) run last, on their own.
        last = ["user.update", "user.delete", "apikey.delete"]
        exclude = [a for op in last for a in ("--exclude-operation-id", op)]
        include = [a for op in last for a in ("--include-operation-id", op)]
        schemathesis(args.venv, app.base, "/api", args.examples, workdir, "api", exclude)
        schemathesis(args.venv, app.base, "/v2", args.examples, workdir, "v2", [])
        hooks = os.path.join(os.path.dirname(os.path.abspath(__file__)), "openapi_hooks.py")
        for prefix in ("/api", "/v2"):
            schemathesis(args.venv, app.base, prefix, args.examples, workdir,
                         prefix.strip("/") + "-valid", ["--include-method", "GET"],
                         checks="positive_data_acceptance,not_a_server_error",
                         phases="examples,fuzzing", hooks=hooks)
        schemathesis(args.venv, app.base, "/api", args.examples, workdir, "api-last", include)
        check(app.alive(), "the app is still up")
    finally:
        app.stop()
        db.drop()
    with open(os.path.join(workdir, "app.log"), "rb") as f:
        errors = [line for line in f if re.search(rb"\] 5\d\d ", line)]
    check(not errors, "the app logged no 5xx (%d)" % len(errors))
    if harness.FAILURES:
        raise SystemExit("%d check(s) failed; logs in %s" % (len(harness.FAILURES), workdir))
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
