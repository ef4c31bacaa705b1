#!/usr/bin/env python3
"""Finds import circles in src/: prints each and exits 1.

Two graphs, and neither may have a cycle:
- between files: a file uses another when its code (tests left out) names
  an item of it: a path through `crate::`, `super::` or `self::`, or a
  child module declared with `mod`. A child that names its parent's items
  uses the parent; a parent's `mod child;` alone is not a use.
- between rooms (the library's top modules: `base`, `model`, `exact`, ...),
  test modules included: a room uses another when any of its files, or
  their tests, names an item of the other. A unit test may call down into
  a lower room's fixtures, never up into a room built on its own.
"""
import os
import re
import sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
# The library, and the command (a crate of its own, rooted at main.rs).
CRATES = [(SRC, "lib"), (os.path.join(SRC, "bin", "minimalloc"), "main")]


def module_of(rel, root_name):
    """Module path (tuple) of a file path under its crate's root."""
    parts = rel[:-3].split(os.sep)
    if parts[-1] in (root_name, "mod"):
        parts = parts[:-1]
    return tuple(parts)


def code_of(text, tests=False):
    """The file's code without comments and strings; its test modules only
    if `tests`, else the code before them."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    # A test module: `#[cfg(test)]`, or `test` beside features in `all(...)`.
    cut = re.search(
        r"#\[cfg\((all\()?test\b[^\]]*\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", text
    )
    if tests:
        return text[cut.start():] if cut else ""
    if cut:
        text = text[: cut.start()]
    return text


def main():
    found = 0
    total = 0
    for root, root_name in CRATES:
        found += check(root, root_name)
        total += sum(len([n for n in names if n.endswith(".rs")])
                     for d, _, names in os.walk(root)
                     if root_name == "main" or not os.path.relpath(d, root).startswith("bin"))
    if found:
        return 1
    print(f"no import circle among {total} files")
    return 0


def check(root, root_name):
    """Prints the circles of one crate; returns how many."""
    files = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if root_name == "lib" and rel.startswith("bin" + os.sep):
                    continue  # the command is its own crate
                files[module_of(rel, root_name)] = (rel, code_of(open(path).read()))
    modules = set(files)

    def resolve(path):
        """The file module a path (tuple) lands in: its longest prefix."""
        for k in range(len(path), -1, -1):
            if path[:k] in modules:
                return path[:k]
        return None

    def find_uses(mod, code, nest):
        """The file modules `code` (in file module `mod`, inside `nest`
        inline modules) names, other than `mod` itself."""
        found = set()
        at = list(mod) + ["tests"] * nest
        children = set(re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", code, re.M))
        for m in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+|(?:\w+)(?:::\w+)+)", code):
            parts = m.group(1).split("::")
            if parts[0] == "crate":
                target = tuple(parts[1:])
            elif parts[0] in ("super", "self"):
                base = list(at)
                while parts and parts[0] in ("super", "self"):
                    if parts[0] == "super":
                        base = base[:-1]
                    parts = parts[1:]
                target = tuple(base + parts)
            elif parts[0] in children:
                target = mod + tuple(parts)
            else:
                continue
            # `use x::{a, b}`: the braces' items are under the prefix.
            got = resolve(target)
            if got is not None and got != mod:
                found.add(got)
        # `use super::{a, b::C}`, `use crate::x::{...}`, `use child::{...}`.
        for m in re.finditer(r"\buse\s+(\w+(?:::\w+)*)::\{([^;]*)\};", code):
            prefix = m.group(1).split("::")
            if prefix[0] == "crate":
                base, rest = [], prefix[1:]
            elif prefix[0] in ("super", "self"):
                base, rest = list(at), prefix
            elif prefix[0] in children:
                base, rest = list(mod), prefix
            else:
                continue
            for p in rest:
                base = base[:-1] if p == "super" else base if p == "self" else base + [p]
            for item in re.split(r"[,\s{}]+", m.group(2)):
                if not item or item == "self":
                    continue
                got = resolve(tuple(base + item.split("::")[:1]))
                if got is not None and got != mod:
                    found.add(got)
        return found

    uses = {m: find_uses(m, code, 0) for m, (rel, code) in files.items()}
    found = report(cycles(uses), lambda m: name_of(root, files, m), uses)
    if root_name == "lib":
        # Rooms: the top modules of the library, tests included.
        room = lambda m: m[:1]
        rooms = {room(m): set() for m in modules if m}
        for m, (rel, code) in files.items():
            if not m:
                continue
            text = open(os.path.join(root, rel)).read()
            named = uses[m] | find_uses(m, code_of(text, tests=True), 1)
            rooms[room(m)] |= {room(w) for w in named if w and room(w) != room(m)}
        found += report(cycles(rooms), lambda r: "room " + r[0], rooms)
    return found


def name_of(root, files, m):
    prefix = os.path.relpath(root, os.path.join(SRC, ".."))
    return os.path.join(prefix, files[m][0])


def cycles(uses):
    """The strongly connected components of more than one node."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in uses[v]:
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
                comps.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(uses):
        if v not in index:
            visit(v)
    return comps


def report(comps, name, uses):
    """Prints each circle and the uses within it; returns how many."""
    for comp in comps:
        members = set(comp)
        print("circle: " + ", ".join(sorted(name(m) for m in comp)))
        for m in sorted(comp):
            for w in sorted(uses[m] & members):
                print(f"    {name(m)} uses {name(w)}")
    return len(comps)


if __name__ == "__main__":
    sys.exit(main())
