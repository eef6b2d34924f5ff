"""The import map of src/pasture by layer, every import that breaks the layer rule, and every
circle of imports.

The layers, lowest first: the ground (the package's top-level modules: errors, values,
schema, caller, …), `store`, `commands`, `platform`, then the doors — `mcp`, `web`, `cli`,
in that order, since a door may start one below it (`pasture serve` is the command line
starting the web door, and the web door serves the MCP connector over HTTP at `/mcp`) —
and on top the public API (`pasture`'s own `__init__` and `__main__`), which may name
anything. The rules:

- nothing imports a layer above its own;
- no door imports `store` or `commands`: a door calls the platform and renders what the
  ground describes;
- a door reaches the platform through `pasture.platform` alone, whose names are the
  door-facing ones, never through the modules inside it;
- no module imports itself back, through any number of others.

Every import counts — at the top of a module, inside a function, or only for type
checking: each is a dependency all the same. There are no exceptions.

    python scripts/layers.py           the map, then each break and each circle
    python scripts/layers.py --check   only the breaks and circles; exit 1 when there is one
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "pasture"
RANK = {
    "ground": 0,
    "store": 1,
    "commands": 2,
    "platform": 3,
    "mcp": 4,
    "web": 5,
    "cli": 6,
    "api": 7,
}
DOORS = {"cli", "web", "mcp"}
PLATFORM = "pasture.platform"


def layer_of(module: str) -> str | None:
    """`pasture.store.sql` → store; `pasture.errors` → ground; not pasture's → None."""
    parts = module.split(".")
    if parts[0] != "pasture":
        return None
    if parts in (["pasture"], ["pasture", "__main__"]):
        return "api"
    if len(parts) > 1 and parts[1] in RANK:
        return parts[1]
    return "ground"


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    """Every module of src/pasture by its dotted name."""
    return {module_name(path): path for path in sorted(SRC.rglob("*.py"))}


def imports_of(path: Path, known: Iterable[str] = ()) -> list[tuple[int, str]]:
    """Every module a file imports, with its line: absolute, or relative made absolute.

    `from pasture.platform import db` names the module `pasture.platform.db` when that is
    one of `known`; otherwise (`from pasture.platform import Service`) a name the package
    itself gives, so the package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    known = set(known)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                whole = f"{base}.{alias.name}"
                # `from pasture import Result` names the public API, which is what it is made of
                named = whole if whole in known or base == "pasture" else base
                found.append((node.lineno, named))
    return found


def breaks(importer: str, imported: str) -> str | None:
    """Why layer `importer` may not import layer `imported`, or None when it may."""
    if importer == imported:
        return None
    if importer in DOORS and imported in ("store", "commands"):
        return f"a door ({importer}) imports {imported}"
    if RANK[imported] > RANK[importer]:
        return f"{importer} imports {imported}, a layer above it"
    return None


def behind_the_door(importer: str, module: str) -> str | None:
    """Why module `importer` may not import `module` of the platform, or None: a door
    takes the platform's names from `pasture.platform` itself."""
    door = layer_of(importer)
    if door in DOORS and module.startswith(PLATFORM + "."):
        return f"a door ({door}) reaches inside the platform: take it from {PLATFORM}"
    return None


def circles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Every set of modules that import each other round, however long the way (Tarjan's
    strongly connected components of more than one module, or one importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # iterative, so a long chain of imports cannot exhaust Python's stack
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.append(member)
                        if member == node:
                            break
                    if len(members) > 1 or node in graph.get(node, ()):
                        found.append(sorted(members))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def import_graph() -> dict[str, set[str]]:
    """Which modules of src/pasture each one imports (any import, anywhere in it)."""
    known = modules()
    return {
        name: {m for _, m in imports_of(path, known) if m in known and m != name}
        for name, path in known.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only the breaks; exit 1 on one")
    check = parser.parse_args().check
    known = modules()
    uses: dict[str, set[str]] = defaultdict(set)
    found: list[str] = []
    for name, path in known.items():
        importer = layer_of(name)
        assert importer is not None
        for line, module in imports_of(path, known):
            imported = layer_of(module)
            if imported is None:
                continue
            uses[importer].add(imported)
            why = breaks(importer, imported) or behind_the_door(name, module)
            said = f"{path.relative_to(SRC.parents[1])}:{line}: {why} ({module})"
            if why and said not in found:
                found.append(said)
    found += [f"a circle of imports: {' → '.join(c)}" for c in circles(import_graph())]
    if not check:
        for layer in sorted(RANK, key=lambda name: (RANK[name], name)):
            below = sorted(uses[layer] - {layer}, key=lambda name: (RANK[name], name))
            print(f"{layer:9} imports {', '.join(below) or 'nothing of pasture'}")
        print()
    for line in found:
        print(line)
    print(f"{len(found)} imports break the layer rule" if found else "the layer rule holds")
    return 1 if found and check else 0


if __name__ == "__main__":
    sys.exit(main())
