"""An app's graph reached directly: apply bundles, query with a filter, describe the schema.

`via_web=True`: `app` is `space/slug` from a page's address, and a public or
open app of a space the caller is not in is reachable (as on the web).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pasture.caller import Caller
from pasture.commands.model import Result
from pasture.platform.access import Gate
from pasture.platform.catalog import Catalog
from pasture.platform.model import plural


class Graph:
    """Reads and writes on an app's store, under the app's access."""

    def __init__(self, catalog: Catalog, gate: Gate) -> None:
        self.catalog = catalog
        self.gate = gate

    def apply(self, caller: Caller, app: str, bundles: Any, *, via_web: bool = False) -> Result:
        """Write bundles under the app's access; data `{entities, aliases}`."""
        reached = self.gate.reach(caller, app, via_web=via_web)
        self.gate.check_write(caller, reached)
        applied = self.catalog.store(reached.space, reached.slug).apply(bundles, caller)
        named = ", ".join(
            f"{k if k.startswith('$') else '$' + k}={v}" for k, v in applied.aliases.items()
        )
        text = f"wrote {plural(len(applied.entities), 'entity', 'entities')} in {reached.at}"
        return Result(
            f"{text}: {named}" if named else text,
            {"entities": list(applied.entities), "aliases": dict(applied.aliases)},
        )

    def query(self, caller: Caller, app: str, filter: str, *, via_web: bool = False) -> Result:
        """Read under the app's access; data `{rows}`."""
        reached = self.gate.reach(caller, app, via_web=via_web)
        rows = self.catalog.store(reached.space, reached.slug).query(filter, caller)
        return Result(f"{plural(len(rows), 'row', 'rows')} in {reached.at}", {"rows": rows})

    def schema(self, caller: Caller, app: str, *, via_web: bool = False) -> Result:
        """Every component of the app with its columns and types."""
        reached = self.gate.reach(caller, app, via_web=via_web)
        described = self.catalog.store(reached.space, reached.slug).schema()
        lines = [f"## {reached.at}"]
        components = described.get("components", described)
        if isinstance(components, Mapping):
            for name, spec in components.items():
                lines.append(f"{name}: {_columns_text(spec)}")
        return Result("\n".join(lines), dict(described))


def _columns_text(spec: Any) -> str:
    if isinstance(spec, Mapping):
        cols = spec.get("columns", spec.get("properties", spec))
        if isinstance(cols, Mapping):
            parts = []
            for col, kind in cols.items():
                if isinstance(kind, Mapping):
                    kind = kind.get("type", "")
                parts.append(f"{col} {kind}".strip())
            return ", ".join(parts)
    return str(spec)
