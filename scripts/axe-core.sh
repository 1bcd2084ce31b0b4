#!/usr/bin/env bash
# Fetches axe-core (the accessibility rules the browser tests run in each admin page) from the
# npm registry at a pinned version into target/axe-core/, checks the tarball against the
# registry's sha512 integrity pinned here, and unpacks target/axe-core/axe.min.js (with its version
# in target/axe-core/VERSION) for tests/browser.rs. Nothing is added to the repository; a second
# run with that version in place does nothing.
#   scripts/axe-core.sh        prints the path of axe.min.js
# To move to a newer version: `npm view axe-core@4 version dist.integrity`, then change both lines.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=4.14.1
INTEGRITY="sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="

dir="target/axe-core"
js="$dir/axe.min.js"
if [ -s "$js" ] && [ "$(cat "$dir/VERSION" 2>/dev/null)" = "$VERSION" ]; then
    echo "$js"
    exit 0
fi
command -v npm >/dev/null 2>&1 || {
    echo "axe-core.sh: npm is needed to fetch axe-core (Debian package npm)" >&2
    exit 1
}
mkdir -p "$dir"
tmp="$(mktemp -d "$dir/fetch.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# `npm pack` of a registry spec downloads the published tarball as it is (no install, no scripts).
(cd "$tmp" && npm pack --silent --ignore-scripts "axe-core@$VERSION" >/dev/null)
tarball="$tmp/axe-core-$VERSION.tgz"
[ -s "$tarball" ] || { echo "axe-core.sh: npm pack gave no $tarball" >&2; exit 1; }
actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
if [ "$actual" != "$INTEGRITY" ]; then
    echo "axe-core.sh: the tarball of axe-core $VERSION is not the pinned one" >&2
    echo "  expected $INTEGRITY" >&2
    echo "  got      $actual" >&2
    exit 1
fi
tar -xzf "$tarball" -C "$tmp" package/axe.min.js
mv "$tmp/package/axe.min.js" "$js"
echo "$VERSION" >"$dir/VERSION"
echo "$js"
