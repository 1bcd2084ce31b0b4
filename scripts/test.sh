#!/usr/bin/env bash
# Runs every test of the project: formatting, lints, unit, integration, UI and doc tests, and
# the black-box conformance suite of ../shared/conformance against the conformance app.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED="${PLOVER_SHARED:-$(cd .. && pwd)/shared}"

cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
cargo build --release -p plover-conformance-app
PLOVER_APP=target/release/plover-conformance-app "$SHARED/conformance/run.sh" -m rest -q
