#!/usr/bin/env bash
# Add-a-field rebuild time of Plover's microblog example (debug build).
#
# usage: scripts/rebuild.sh CHECKOUT [MODEL_FILE] [STRUCT]
#   CHECKOUT    a git checkout of the Plover workspace (its working tree is edited and restored)
#   MODEL_FILE  the file declaring the model, relative to CHECKOUT
#               (default: examples/microblog/src/lib.rs)
#   STRUCT      the RestModel struct that gets the field (default: Message)
# Env: CARGO_TARGET_DIR (build dir; default CHECKOUT/target), RUNS=3,
#      EXAMPLE_DIR=examples/microblog (its Cargo.toml gives the package name, src/main.rs is touched)
#
# Steps: one untimed `cargo build -p PKG` (warm-up); RUNS times: append
#   `#[rest(default = 0)] pub extra_N: i32,` to STRUCT (and `extra_N: None,` to every
#   STRUCTChanges { .. } literal under EXAMPLE_DIR/src, which must name every field), time
#   `cargo build -p PKG`, restore the edited files (`git checkout -- FILES`), time the rebuild;
#   RUNS times: touch EXAMPLE_DIR/src/main.rs, time the rebuild. Prints each time (stderr) and
#   the medians (stdout). Wall-clock seconds.
# The files it edits must have no uncommitted changes (they are restored with git checkout).
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,19p' "$0"; exit 2; }
CHECKOUT=$(cd "$1" && pwd)
MODEL_FILE=${2:-examples/microblog/src/lib.rs}
STRUCT=${3:-Message}
RUNS=${RUNS:-3}
EXAMPLE_DIR=${EXAMPLE_DIR:-examples/microblog}
cd "$CHECKOUT"
[ -n "${CARGO_TARGET_DIR:-}" ] || echo "rebuild.sh: CARGO_TARGET_DIR unset, using $CHECKOUT/target" >&2
[ -f "$MODEL_FILE" ] || { echo "rebuild.sh: no $MODEL_FILE in $CHECKOUT" >&2; exit 2; }
MAIN_RS="$EXAMPLE_DIR/src/main.rs"
[ -f "$MAIN_RS" ] || { echo "rebuild.sh: no $MAIN_RS in $CHECKOUT" >&2; exit 2; }
PKG=$(awk -F'"' '/^\[package\]/ {p=1; next} /^\[/ {p=0} p && /^name *=/ {print $2; exit}' "$EXAMPLE_DIR/Cargo.toml")
[ -n "$PKG" ] || { echo "rebuild.sh: no package name in $EXAMPLE_DIR/Cargo.toml" >&2; exit 2; }
git diff --quiet HEAD -- "$MODEL_FILE" "$EXAMPLE_DIR/src" \
  || { echo "rebuild.sh: uncommitted changes in $MODEL_FILE or $EXAMPLE_DIR/src; refusing (edits are undone with git checkout)" >&2; exit 2; }
EDITED=()
restore() { [ ${#EDITED[@]} -eq 0 ] || git checkout -q -- "${EDITED[@]}"; EDITED=(); }
trap restore EXIT
LOG=$(mktemp "${TMPDIR:-/tmp}/rebuild.XXXXXX.log")

# build: cargo build -p PKG, prints the wall seconds; stops on a failed build.
build() {
  local t0 t1
  t0=$EPOCHREALTIME
  if ! cargo build -p "$PKG" >"$LOG" 2>&1; then
    echo "rebuild.sh: cargo build -p $PKG failed:" >&2; tail -30 "$LOG" >&2; exit 1
  fi
  t1=$EPOCHREALTIME
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$t0" "$t1"
}

# add_field N: a new last field extra_N of STRUCT in MODEL_FILE, and ` extra_N: None,` after the
# brace of every STRUCTChanges { ... } literal under EXAMPLE_DIR/src (the derive's Changes struct
# has an Option per field, so an exhaustive literal would not compile otherwise). Prints the
# edited files, one a line.
add_field() {
  python3 - "$MODEL_FILE" "$STRUCT" "$1" "$EXAMPLE_DIR/src" <<'PY'
import os, re, sys
path, struct, n, src = sys.argv[1:5]
lines = open(path).read().split('\n')
start = next((i for i, l in enumerate(lines)
              if re.match(r'\s*pub\s+struct\s+%s\b[^;]*\{\s*$' % re.escape(struct), l)), None)
if start is None:
    sys.exit(f'rebuild.sh: no `pub struct {struct} {{` in {path}')
indent = re.match(r'\s*', lines[start]).group(0)
end = next(i for i in range(start + 1, len(lines)) if lines[i] == indent + '}')
# the last field must end with a comma before a new one follows
last = max(i for i in range(start + 1, end)
           if lines[i].strip() and not lines[i].strip().startswith(('//', '#[')))
if not lines[last].rstrip().endswith(','):
    lines[last] = lines[last].rstrip() + ','
lines[end:end] = [indent + '    #[rest(default = 0)]', indent + f'    pub extra_{n}: i32,']
open(path, 'w').write('\n'.join(lines))
edited = {os.path.normpath(path)}
literal = re.compile(r'(?<![\w:])(?:\w+::)*%sChanges\s*\{' % re.escape(struct))
for root, _, files in os.walk(src):
    for f in sorted(files):
        if not f.endswith('.rs'):
            continue
        p = os.path.join(root, f)
        text = open(p).read()
        out, pos = [], 0
        for m in literal.finditer(text):
            if re.search(r'\b(struct|impl|for|enum)\s*$', text[max(0, m.start() - 40):m.start()]):
                continue
            out.append(text[pos:m.end()] + f' extra_{n}: None,')
            pos = m.end()
        if out:
            open(p, 'w').write(''.join(out) + text[pos:])
            edited.add(os.path.normpath(p))
print('\n'.join(sorted(edited)))
PY
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "rebuild.sh: $CHECKOUT ($(git rev-parse --short HEAD)), package $PKG, $STRUCT in $MODEL_FILE, target ${CARGO_TARGET_DIR:-$CHECKOUT/target}, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "warm-up: $(build) s" >&2
adds=(); reverts=(); touches=()
for n in $(seq "$RUNS"); do
  mapfile -t EDITED < <(add_field "$n")
  [ ${#EDITED[@]} -gt 0 ] && grep -q "pub extra_$n: i32" "$MODEL_FILE" || { echo "rebuild.sh: field not added" >&2; exit 1; }
  [ "$n" -gt 1 ] || echo "edited: ${EDITED[*]}" >&2
  a=$(build); restore; r=$(build)
  adds+=("$a"); reverts+=("$r")
  echo "run $n: add field $a s, revert $r s (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
for n in $(seq "$RUNS"); do
  touch "$MAIN_RS"; t=$(build); touches+=("$t")
  echo "run $n: touch main.rs $t s (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
rm -f "$LOG"
echo "add field: $(median "${adds[@]}") s, revert: $(median "${reverts[@]}") s, touch main.rs: $(median "${touches[@]}") s"
