#!/usr/bin/env python3
"""Fails when a crate's modules import each other in a circle.

For each crate given (default: plover and plover-derive), reads every `crate::...` and
`super::...` path in its sources, resolves it to the file that defines the module, and looks
for circles twice: between files, and between top-level modules (`rest`, `admin`, `model`,
...). `lib.rs` (the root that declares and re-exports) is left out. Prints the circles found.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRATES = ["crates/plover/src", "crates/plover-derive/src"]
PATH = re.compile(r"\b(crate|super)((?:::[a-z_][a-z0-9_]*)+)")
USE_GROUP = re.compile(r"\buse\s+(crate|super)((?:::[a-z_][a-z0-9_]*)*)::\{([^;]*)\}", re.S)


def module_of(src: Path, file: Path) -> tuple:
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    return tuple(parts)


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//")[0] for line in text.splitlines())


def resolve(modules: dict, base: tuple) -> tuple:
    """The longest prefix of `base` that is a module of the crate."""
    for n in range(len(base), 0, -1):
        if base[:n] in modules:
            return base[:n]
    return ()


def edges_of(src: Path) -> dict:
    files = sorted(src.rglob("*.rs"))
    modules = {module_of(src, f): f for f in files}
    edges = {}
    for mod, file in modules.items():
        if mod in ((), ("lib",), ("main",)) or "tests" in mod:
            continue
        text = strip_comments(file.read_text())
        parent = mod if file.name == "mod.rs" else mod[:-1]
        paths = []
        for root, head, group in USE_GROUP.findall(text):
            for item in group.split(","):
                item = item.strip().split(" as ")[0]
                first = re.match(r"[a-z_][a-z0-9_]*", item)
                tail = "::" + first.group(0) if first and item != "self" else ""
                paths.append((root, head + tail))
        paths += PATH.findall(text)
        targets = set()
        for root, rest in paths:
            names = tuple(p for p in rest.split("::") if p)
            if root == "super":
                # `super::super::x` climbs further.
                base, climb = parent, 0
                while names and names[0] == "super":
                    names, climb = names[1:], climb + 1
                base = parent[: len(parent) - climb] if climb else parent
                # In a file module, `super` is its parent; in `mod.rs`, the parent's parent.
                if file.name == "mod.rs":
                    base = base[:-1]
                full = base + names
            else:
                full = names
            target = resolve(modules, full)
            if target and target != mod and target not in ((), ("lib",)):
                targets.add(target)
        edges[mod] = targets
    return edges


def circles(edges: dict) -> list:
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    failed = False
    for crate in sys.argv[1:] or CRATES:
        src = ROOT / crate
        files = edges_of(src)
        tops = {}
        for mod, targets in files.items():
            for t in targets:
                if t[0] != mod[0]:
                    tops.setdefault(mod[:1], set()).add(t[:1])
        for level, edges in (("files", files), ("top-level modules", tops)):
            for comp in circles(edges):
                failed = True
                names = ", ".join("::".join(m) for m in comp)
                print(f"{crate}: a circle of {level}: {names}")
        print(f"{crate}: {len(files)} modules, {sum(map(len, files.values()))} imports, "
              f"{len(tops)} top-level modules importing others")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
