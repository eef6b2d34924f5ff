"""Tables: the data an app's `worker.py` keeps, declared as its `schema`.

    from pasture import boolean, string, table, user_id

    schema = {
        "todos": table(text=string(), done=boolean().default(False), owner=user_id())
            .index("by_owner", ["owner"]),
    }

A table is a component of the app's one store, the same as one vocab.json
declares, and every door reads it with the one grammar. Its columns are built
from the arguments' builders (`pasture.commands.handlers`): `string()`,
`number()`, `boolean()`, `id("table")` (a row of that table), `user_id()` (a
person) and `json_value()`; a column is required unless it is `.optional()` or
has a `.default(value)`. `.index(name, [columns…])` declares an index over those
columns and then creation; a table has as many as it names.

The worker process turns `schema` into a vocab.json document (`schema_document`)
and reports it beside its commands at the deploy's check, where the server holds
it to the same rules as vocab.json's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pasture.commands.handlers import Arg

BUILDERS = 'string(), number(), boolean(), id("table"), user_id() or json_value()'


@dataclass(frozen=True)
class Table:
    """A table's columns and its indexes, in the order they were declared."""

    columns: Mapping[str, Arg]
    indexes: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())

    def index(self, name: str, columns: Sequence[str]) -> Table:
        """This table with one more index: over `columns` in order, then creation."""
        listed = tuple(columns) if isinstance(columns, list | tuple) else (columns,)
        return replace(self, indexes=(*self.indexes, (name, listed)))

    def document(self) -> dict[str, Any]:
        """This table as a component of vocab.json: properties, required and indexes.
        A table's rows are for its code to write: it has no add_/find_ of its own."""
        props = {name: property_of(arg) for name, arg in self.columns.items()}
        required = [n for n, a in self.columns.items() if not a.optional_ and not a.has_default]
        out: dict[str, Any] = {"properties": props, "tools": False}
        if required:
            out["required"] = required
        if self.indexes:
            out["indexes"] = {name: list(cols) for name, cols in self.indexes}
        return out


def table(**columns: Arg) -> Table:
    """A table of these columns (see the module)."""
    return Table(dict(columns))


def property_of(arg: Arg) -> dict[str, Any]:
    """A column's builder as vocab.json's property (see the guide for each spelling)."""
    prop: dict[str, Any]
    if arg.type == "id":
        prop = {"type": "string", "format": "reference", "table": arg.kind}
    elif arg.type == "user_id":
        prop = {"type": "string", "format": "person"}
    elif arg.type == "json":
        prop = {"format": "json"}
    else:
        prop = {"type": arg.type}
    if arg.has_default:
        prop["default"] = arg.default_
    return prop


def schema_document(schema: object) -> tuple[dict[str, Any], list[str]]:
    """worker.py's `schema` as vocab.json's `$defs`, and what only Python can get wrong in
    it (what is not a table or a column, an index declared twice); the rest is for the
    rules every vocabulary is held to."""
    if schema is None:
        return {}, []
    if not isinstance(schema, Mapping):
        return {}, [
            'schema maps each table\'s name to table(…), like {"todos": table(text=string())}'
        ]
    problems: list[str] = []
    defs: dict[str, Any] = {}
    for name, found in schema.items():
        if not isinstance(name, str):
            problems.append(f"schema's names are text, and {name!r} is not")
            continue
        if not isinstance(found, Table):
            problems.append(f"schema[{name!r}] is not a table — write table(column=string(), …)")
            continue
        # what is wrong is left out, and the rest is read on, so its problems are said too
        columns = {}
        for col, arg in found.columns.items():
            if isinstance(arg, Arg):
                columns[col] = arg
            else:
                problems.append(f"{name}.{col} is not a column — build it with {BUILDERS}")
        indexes: list[tuple[str, tuple[str, ...]]] = []
        for index, cols in found.indexes:
            if not isinstance(index, str) or not all(isinstance(c, str) for c in cols):
                problems.append(
                    f'{name}: an index is .index("by_owner", ["owner"]) — its name and its '
                    "columns are text"
                )
            elif any(index == seen for seen, _ in indexes):
                problems.append(
                    f"{name}: the index {index} is declared twice — give each index its own name"
                )
            else:
                indexes.append((index, cols))
        defs[name] = Table(columns, tuple(indexes)).document()
    return defs, problems


__all__ = ["Table", "property_of", "schema_document", "table"]
