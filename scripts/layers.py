"""The import map of src/pasture by layer, and every import that breaks the layer rule.

The layers, lowest first: the ground (the package's top-level modules: errors,
values, schema, caller, …), `store`, `commands`, `platform`, and the doors (`cli`,
`web`, `mcp`), which stand side by side; on top, the public API (`pasture`'s own
`__init__` and `__main__`), which may name anything. The rule: nothing imports a
layer above its own, and no door imports `store` or `commands` — a door calls the
platform and renders what the ground describes. (A door may start another:
`pasture serve` is the command line starting the web door.) Imports made only for
type checking count too: they are a dependency all the same, and so do imports made
inside a function — with one exception, named in `CALLS_INTO_DOORS`: a `Registry` used
as a library, with no platform, is served over MCP by the door (`Registry.mcp_server`,
`pasture.commands.registry.serve_stdio`), which knows a registry only by its shape
(`pasture.served`). The registry names that door inside the function that serves it,
so importing it never loads a door; the same import at the top of the module is a break.

    python scripts/layers.py           the map, then each import that breaks the rule
    python scripts/layers.py --check   only the breaks; exit 1 when there is one
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "pasture"
RANK = {
    "ground": 0,
    "store": 1,
    "commands": 2,
    "platform": 3,
    "cli": 4,
    "web": 4,
    "mcp": 4,
    "api": 5,
}
DOORS = {"cli", "web", "mcp"}
# (importer, imported): a lower layer naming a door, allowed only inside a function.
CALLS_INTO_DOORS = {("pasture.commands.registry", "pasture.mcp._registry_server")}


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


def imports_of(path: Path) -> list[tuple[int, str, bool]]:
    """Every module a file imports, with its line and whether a function makes the import:
    absolute, or relative made absolute."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    in_function = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for inner in ast.walk(node)
    }
    found: list[tuple[int, str, bool]] = []
    for node in ast.walk(tree):
        lazy = id(node) in in_function
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, lazy) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            # `from pasture import store` names a package; `from pasture import Result`
            # a name of the public API, which is what it is made of.
            for alias in node.names:
                whole = f"{base}.{alias.name}"
                found.append((node.lineno, whole if base == "pasture" else base, lazy))
    return found


def excused(importer: str, imported: str, *, lazy: bool) -> bool:
    """Whether module `importer` may name `imported` against the rule: inside a function,
    and only as `CALLS_INTO_DOORS` lists."""
    return lazy and (importer, imported) in CALLS_INTO_DOORS


def breaks(importer: str, imported: str) -> str | None:
    """Why `importer` may not import `imported`, or None when it may."""
    if importer == imported:
        return None
    if importer in DOORS and imported in ("store", "commands"):
        return f"a door ({importer}) imports {imported}"
    if importer not in DOORS and RANK[imported] > RANK[importer]:
        return f"{importer} imports {imported}, a layer above it"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only the breaks; exit 1 on one")
    check = parser.parse_args().check
    uses: dict[str, set[str]] = defaultdict(set)
    found: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        importer = layer_of(module_name(path))
        assert importer is not None
        for line, module, lazy in imports_of(path):
            imported = layer_of(module)
            if imported is None or excused(module_name(path), module, lazy=lazy):
                continue
            uses[importer].add(imported)
            why = breaks(importer, imported)
            said = f"{path.relative_to(SRC.parents[1])}:{line}: {why} ({module})"
            if why and said not in found:
                found.append(said)
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
