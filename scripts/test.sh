#!/usr/bin/env bash
# Runs every test of the project: formatting, lints, unit, integration, UI and doc tests, the
# browser tests in headless Chromium, the OpenAPI, scale-out, cross-process feed, fault,
# hostile-client and crash scripts against the conformance app, on SQLite and on a throw-away
# PostgreSQL server.
#
# The black-box conformance suite (REST, accounts, admin) is kept outside this repository, in
# $PLOVER_SHARED/conformance (PLOVER_SHARED defaults to ../shared). When its run.sh is there it
# runs against the conformance app on both engines; when it is not, the run prints "skipped: ..."
# and goes on, except under CI=true, where a missing suite fails the run before anything builds.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED="${PLOVER_SHARED:-$(cd .. && pwd)/shared}"
CONFORMANCE="$SHARED/conformance/run.sh"
if [ ! -e "$CONFORMANCE" ] && [ "${CI:-}" = true ]; then
    echo "test.sh: CI=true and the conformance suite is not at $CONFORMANCE;" \
        "CI must run it (set PLOVER_SHARED to its folder)" >&2
    exit 1
fi
PG_DIR="$(mktemp -d -u "${TMPDIR:-/tmp}/plover-pg.XXXXXX")"
PG_PORT="${PLOVER_PG_PORT:-55432}"
# On failure, the free disk and the build's size go into the log: a full disk makes cargo fail
# in ways that tools above it misreport (the compile-error tests then see every case "compile").
on_exit() {
    local status=$?
    scripts/pg.sh stop "$PG_DIR"
    if [ "$status" != 0 ]; then
        df -h . >&2 || true
        du -sh target 2>/dev/null >&2 || true
    fi
}
trap on_exit EXIT

# The stated minimum Rust is the pinned toolchain, so every build below checks it.
msrv="$(sed -n 's/^rust-version = "\([0-9.]*\)".*/\1/p' Cargo.toml)"
grep -q "^channel = \"$msrv" rust-toolchain.toml || {
    echo "test.sh: rust-version $msrv is not the toolchain pinned in rust-toolchain.toml" >&2
    exit 1
}
cargo fmt --all --check
# No module imports from a module that imports it (files and top-level modules).
python3 scripts/layers.py
cargo clippy --workspace --all-targets -- -D warnings
# The API documentation builds without a broken or private link.
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

# Licenses, duplicate crates and sources of every dependency (deny.toml).
command -v cargo-deny >/dev/null 2>&1 || cargo install --locked --quiet cargo-deny
cargo deny check licenses bans sources 2>&1 | tail -n 1

# Headless Chromium and ChromeDriver for the browser tests, npm to fetch the axe-core they
# run, and nginx for the scale-out test (Debian packages).
# Only what is missing: a machine whose npm comes with its own Node.js cannot take Debian's npm.
packages_missing=()
command -v chromium >/dev/null 2>&1 || packages_missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || packages_missing+=(chromium-driver)
command -v npm >/dev/null 2>&1 || packages_missing+=(npm)
# nginx, the load balancer in front of the scale-out test's three processes.
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || packages_missing+=(nginx)
if [ ${#packages_missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages_missing[@]}" >/dev/null
    else
        echo "test.sh: the browser tests need chromium, chromium-driver and npm, the scale-out test nginx (apt-get install)" >&2
        exit 1
    fi
fi

# Plover on its own, as users get it: every workspace member turns on `postgres`, so the
# workspace build alone would hide the default (SQLite-only) feature set. Then each feature on
# its own, from none (a REST-only build, which must compile neither askama nor actix-session).
echo "== plover alone: default features (accounts, admin, manage; SQLite only), then each feature alone"
cargo clippy -p plover --all-targets -- -D warnings
cargo test -p plover
for features in "" html accounts admin manage postgres; do
    echo "-- plover --no-default-features --features '$features'"
    cargo clippy -p plover --no-default-features --features "$features" --all-targets -- -D warnings
done
cargo test -p plover --no-default-features --lib
if cargo tree -p plover --no-default-features -e normal | grep -E "askama|actix-session"; then
    echo "test.sh: a REST-only build of plover compiles the crates above" >&2
    exit 1
fi

PG_URL="$(scripts/pg.sh start "$PG_DIR" "$PG_PORT")"
echo "== cargo test (SQLite)"
cargo test --workspace
echo "== integration tests on PostgreSQL"
PLOVER_TEST_PG_URL="$PG_URL" cargo test -p plover-tests --test integration
echo "== browser tests (headless Chromium; axe-core checks; screenshots in target/browser/)"
scripts/axe-core.sh
cargo test -p plover-tests --test browser -- --ignored

cargo build --release -p plover-conformance-app
APP=target/release/plover-conformance-app
if [ -e "$CONFORMANCE" ]; then
    echo "== conformance, SQLite"
    PLOVER_APP=$APP "$CONFORMANCE" -q
    echo "== conformance, PostgreSQL"
    PLOVER_DATABASE_URL="$PG_URL" PLOVER_APP=$APP "$CONFORMANCE" -q
else
    echo "skipped: conformance suite not found at $SHARED/conformance" \
        "(set PLOVER_SHARED to its folder)"
fi
# The API descriptions, by third-party tools: openapi-spec-validator and Schemathesis (a
# virtualenv of their pinned versions, made here).
echo "== OpenAPI documents: validator and Schemathesis, SQLite and PostgreSQL"
python3 -m venv target/openapi-venv
target/openapi-venv/bin/pip install -q --disable-pip-version-check -r scripts/openapi-requirements.txt
python3 scripts/openapi.py --app "$APP" --venv target/openapi-venv
python3 scripts/openapi.py --app "$APP" --venv target/openapi-venv --pg "$PG_URL"
echo "== scale-out: three processes behind nginx, PostgreSQL primary + replica"
python3 scripts/scaleout.py "$APP"
echo "== change feed and job queue across three processes, SQLite and PostgreSQL"
python3 scripts/feed_processes.py --app "$APP"
python3 scripts/feed_processes.py --app "$APP" --pg "$PG_URL"
echo "== faults: PostgreSQL restart under load, pool exhaustion, disconnects mid-body (quick)"
python3 scripts/faults.py --quick --app "$APP"
# glibc keeps freed multi-megabyte response buffers unless the mmap threshold is fixed: the
# setting docs/deployment.md gives for production, under which the memory check must hold.
echo "== hostile clients (quick), SQLite and PostgreSQL"
MALLOC_MMAP_THRESHOLD_=131072 python3 scripts/hostile.py --quick --app "$APP"
MALLOC_MMAP_THRESHOLD_=131072 python3 scripts/hostile.py --quick --app "$APP" --pg "$PG_URL"
echo "== crash durability (quick: 3 kill points per engine)"
python3 scripts/crash.py --quick --app "$APP"
python3 scripts/crash.py --quick --app "$APP" --pg "$PG_URL"
