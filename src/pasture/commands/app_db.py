"""`ctx.db`: an app's tables as its handlers read and write them, row by row.

    todo_id = ctx.db.todos.insert({"text": "milk", "owner": me.user_id})
    ctx.db.todos.get(todo_id)          # {"id", "created_at", "text", "done", "owner"} or None
    ctx.db.todos.update(todo_id, {"done": True})         # a patch: only what it names
    ctx.db.todos.replace(todo_id, {"text": "oat milk", "owner": me.user_id})
    ctx.db.todos.delete(todo_id)
    ctx.db.todos.with_index("by_owner", lambda q: q.eq("owner", me.user_id)) \\
        .order("desc").take(50)        # newest first, by the index
    ctx.db.todos.query().filter(lambda q: q.eq("done", False)).collect()
    ctx.db.todos.query().paginate(cursor, 20)   # {"page": [...], "cursor": ..., "done": ...}

It is `ctx.store` underneath — the same caller, the same access, the same one
store every door reads — spelled as the third document's handlers spell it. A
read is the filter grammar (`.todos!&.todos.owner=…&sort=-todos.owner`), so
what the index orders the database reads in order, asked for as the table's
rows (`query(line, table=…)`: the table's columns alone, no names looked up); a
write is a bundle. A row is a plain JSON object: its `id` (the entity's eid),
its `created_at`, and the table's columns, a reference as the id it names.

Pages are the store's: `take(n)` and `collect()` read on page after page by
cursor, `paginate` hands the cursor to the caller.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pasture.errors import Refused
from pasture.store import syntax
from pasture.store.base import Row

Order = Literal["asc", "desc"]
_EID_DIGITS = frozenset("0123456789abcdef")
_OPS = {"eq": "=", "neq": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_MOST_TAKE = 100_000  # rows `take` and `collect` gather at most


class NoTable(Refused, AttributeError):
    """`ctx.db.<name>` for a table the app does not have: refused with its sentence, and an
    AttributeError too, so `hasattr(ctx.db, name)` and `getattr(…, default)` work."""


class Database:
    """`ctx.db`: each of the app's tables by name (`ctx.db.todos`, or `ctx.db["todos"]`)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self._tables: dict[str, TableRows] = {}

    def __getattr__(self, name: str) -> TableRows:
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def __getitem__(self, name: str) -> TableRows:
        known = self._tables.get(name)
        if known is not None:
            return known
        components = self._store.schema().get("components", {})
        spec = components.get(name)
        if not isinstance(spec, Mapping) or spec.get("platform"):
            mine = sorted(n for n, c in components.items() if not c.get("platform"))
            raise NoTable(
                f"ctx.db has no table {str(name)[:40]} — this app's tables are "
                f"{', '.join(mine) or 'none yet: declare them in worker.py schema or vocab.json'}"
            )
        rows = self._tables[name] = TableRows(self._store, name, spec)
        return rows


class TableRows:
    """One table: its rows by id, and the reads over them (`query`, `with_index`)."""

    def __init__(self, store: Any, name: str, spec: Mapping[str, Any]) -> None:
        self._store = store
        self.name = name
        self.columns: dict[str, str] = dict(spec.get("columns") or {})
        self.details: dict[str, Any] = dict(spec.get("details") or {})
        self.indexes: dict[str, list[str]] = dict(spec.get("indexes") or {})

    # -- one row --------------------------------------------------------------------------
    def get(self, row_id: str) -> Row | None:
        """The row of this id, or None (no such row of this table, or not one you can read)."""
        if not _is_eid(row_id):
            return None
        rows = self._store.query(f"id={row_id}&.{self.name}!", table=self.name)
        return dict(rows[0]) if rows else None

    def insert(self, values: Mapping[str, Any]) -> str:
        """A new row; its id. Columns left out take their default (a required one is refused)."""
        cols = self._values(values)
        applied = self._store.apply({"entity": {"eid": "$row"}, self.name: cols})
        return str(applied.entities[0])

    def update(self, row_id: str, values: Mapping[str, Any]) -> None:
        """Change the columns `values` names, and no other."""
        self._existing(row_id, "update")
        self._store.apply({"entity": {"eid": row_id}, self.name: self._values(values)})

    def replace(self, row_id: str, values: Mapping[str, Any]) -> None:
        """Make the row `values`: a column left out takes its default, or is emptied."""
        self._existing(row_id, "replace")
        cols = self._values(values)
        for column in self.columns:
            if column not in cols:
                detail = self.details.get(column) or {}
                cols[column] = detail.get("default")
        self._store.apply({"entity": {"eid": row_id}, self.name: cols})

    def delete(self, row_id: str) -> None:
        """Take the row away."""
        self._existing(row_id, "delete")
        self._store.apply({"entity": {"eid": row_id}, "tombstone": {}})

    # -- reads ----------------------------------------------------------------------------
    def query(self) -> Query:
        """Every row, in creation order (`order("desc")`: newest first)."""
        return Query(self)

    def with_index(self, name: str, build: Callable[[Range], Any] | None = None) -> Query:
        """The rows an index's range holds (`q.eq(…)` on its columns in order, then at most
        one of gt/gte/lt/lte on the next), in the index's order and then creation."""
        columns = self.indexes.get(name)
        if columns is None:
            known = ", ".join(self.indexes) or "none"
            raise Refused(f"{self.name} has no index {str(name)[:40]} — its indexes are {known}")
        bounds = Range(self, columns)
        if build is not None:
            build(bounds)
        return Query(self, index=list(columns), conditions=bounds.conditions)

    # -- helpers ----------------------------------------------------------------------------
    def _values(self, values: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(values, Mapping):
            raise Refused(f'a row of {self.name} is an object of its columns, like {{"text": …}}')
        cols: dict[str, Any] = {}
        for key, value in values.items():
            if key in ("id", "created_at"):
                raise Refused(f"{key} is the store's to set — leave it out of what you write")
            if key not in self.columns:
                raise Refused(
                    f"{self.name} has no column {str(key)[:40]} — its columns are "
                    f"{', '.join(self.columns)}"
                )
            cols[key] = value
        return cols

    def _existing(self, row_id: Any, verb: str) -> None:
        if not isinstance(row_id, str) or self.get(row_id) is None:
            raise Refused(
                f"{self.name} has no row {str(row_id)[:40]} to {verb} — get ids from a read of "
                f"{self.name}"
            )

    def _path(self, column: str, why: str) -> syntax.Path:
        if column not in self.columns:
            raise Refused(
                f"{why}: {self.name} has no column {str(column)[:40]} — its columns are "
                f"{', '.join(self.columns)}"
            )
        return (self.name, column)


class Conditions:
    """What `filter(lambda q: …)` builds: comparisons of a table's columns, all of which hold."""

    def __init__(self, table: TableRows) -> None:
        self._table = table
        self.conditions: list[syntax.Predicate] = []

    def _compare(self, op: str, column: str, value: Any) -> Conditions:
        path = self._table._path(column, "a filter")
        self.conditions.append(_comparison(path, op, value))
        return self

    def eq(self, column: str, value: Any) -> Conditions:
        return self._compare("eq", column, value)

    def neq(self, column: str, value: Any) -> Conditions:
        return self._compare("neq", column, value)

    def gt(self, column: str, value: Any) -> Conditions:
        return self._compare("gt", column, value)

    def gte(self, column: str, value: Any) -> Conditions:
        return self._compare("gte", column, value)

    def lt(self, column: str, value: Any) -> Conditions:
        return self._compare("lt", column, value)

    def lte(self, column: str, value: Any) -> Conditions:
        return self._compare("lte", column, value)


class Range(Conditions):
    """What `with_index(name, lambda q: …)` builds: `eq` on the index's columns in their
    order, then at most a lower and an upper bound on the next one."""

    def __init__(self, table: TableRows, columns: list[str]) -> None:
        super().__init__(table)
        self._columns = columns
        self._fixed = 0  # columns fixed by eq so far
        self._bounded: str | None = None  # the column a range bounds, once one does

    def _compare(self, op: str, column: str, value: Any) -> Conditions:
        expected = self._columns[self._fixed] if self._fixed < len(self._columns) else None
        if op == "neq":
            raise Refused("an index's range has no neq — use filter() for that")
        if self._bounded is not None and (op == "eq" or column != self._bounded):
            raise Refused(
                f"an index's range ends with its bounds: {self._bounded} is bounded already — "
                "use filter() for more"
            )
        if column != expected:
            order = ", ".join(self._columns)
            raise Refused(
                f"an index's range names its columns in order ({order}): "
                f"{expected or 'no more'} comes next, not {str(column)[:40]}"
            )
        if op == "eq":
            self._fixed += 1
        else:
            self._bounded = column
        return super()._compare(op, column, value)


class Query:
    """A read of one table, built step by step and run by `collect`, `take`, `first`,
    `unique` or `paginate`."""

    def __init__(
        self,
        table: TableRows,
        *,
        index: list[str] | None = None,
        conditions: list[syntax.Predicate] | None = None,
    ) -> None:
        self._table = table
        self._index = index or []
        self._conditions = list(conditions or [])
        self._filters: list[str] = []
        self._order: Order = "asc"

    def filter(self, condition: str | Callable[[Conditions], Any]) -> Query:
        """Only the rows that also pass `condition`: a filter line of the grammar
        (`.todos.done=false`) or `lambda q: q.eq("done", False)`."""
        if callable(condition):
            built = Conditions(self._table)
            condition(built)
            self._conditions.extend(built.conditions)
        elif isinstance(condition, str):
            self._filters.append(condition)
        else:
            raise Refused('filter takes a filter line or lambda q: q.eq("column", value)')
        return self

    def order(self, order: Order) -> Query:
        """ "asc" (the index's order, then oldest first) or "desc" (the other way round)."""
        if order not in ("asc", "desc"):
            raise Refused(f'order is "asc" or "desc", not {str(order)[:40]!r}')
        self._order = order
        return self

    def collect(self) -> list[Row]:
        """Every row it holds (read page by page)."""
        return self._gather(None)

    def take(self, n: int) -> list[Row]:
        """The first `n` rows."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise Refused(f"take's n is a whole number of rows, not {str(n)[:40]}")
        return self._gather(n) if n else []

    def first(self) -> Row | None:
        """The first row, or None."""
        rows = self.take(1)
        return rows[0] if rows else None

    def unique(self) -> Row | None:
        """The one row, or None; more than one is refused."""
        rows = self.take(2)
        if len(rows) > 1:
            raise Refused(f"unique() found more than one row of {self._table.name}")
        return rows[0] if rows else None

    def paginate(self, cursor: str | None, n: int) -> dict[str, Any]:
        """One page of at most `n` rows from `cursor` (None: the first):
        `{"page": [...], "cursor": <for the next, or None>, "done": <no page follows>}`."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise Refused(f"paginate's n is a whole number of rows, at least 1, not {str(n)[:40]}")
        if cursor is not None and not isinstance(cursor, str):
            raise Refused("paginate's cursor is the one a page gave, or None for the first")
        rows, after = self._page(n, cursor)
        return {"page": rows, "cursor": after, "done": after is None}

    # -- running ----------------------------------------------------------------------------
    def line(self, limit: int | None = None, after: str | None = None) -> str:
        """The filter line this read is."""
        name = self._table.name
        down = "-" if self._order == "desc" else ""
        keys = [*(f"{down}{name}.{c}" for c in self._index), f"{down}created.at"]
        parts = [
            f".{name}!",
            *(_format(p) for p in self._conditions),
            *self._filters,
            "sort=" + ",".join(keys),
        ]
        if limit is not None:
            parts.append(f"limit={limit}")
        if after is not None:
            parts.append(_format(syntax.After(after)))
        return "&".join(parts)

    def _page(self, n: int | None, after: str | None) -> tuple[list[Row], str | None]:
        rows = self._read(n, after)
        return list(rows), _cursor(rows)

    def _read(self, n: int | None, after: str | None) -> list[Row]:
        """One page's rows as the store answered them (its cursor made only if asked for)."""
        table = self._table
        answer = table._store.query(self.line(n, after), table=table.name)
        if not isinstance(answer, list):  # pragma: no cover - a table's read answers rows
            raise Refused(f"a read of {table.name}'s rows answers rows")
        return answer

    def _gather(self, n: int | None) -> list[Row]:
        found: list[Row] = []
        after: str | None = None
        while True:
            want = None if n is None else n - len(found)
            try:
                rows = self._read(want, after)
            except Refused as e:
                if want is None or "limit is at most" not in e.sentence:
                    raise
                rows = self._read(None, after)  # more than a page: page by page
            if not found and want is not None and len(rows) >= want:
                return rows[:want]  # the one page held them all
            found.extend(rows if want is None else rows[:want])
            if n is not None and len(found) >= n:
                return found
            after = _cursor(rows)
            if after is None:
                return found
            if len(found) >= _MOST_TAKE:
                raise Refused(
                    f"a read gathers at most {_MOST_TAKE:,} rows — read page by page with "
                    "paginate(cursor, n)"
                )


def _cursor(rows: list[Row]) -> str | None:
    """Where the page after `rows` begins, or None: none follows."""
    if not getattr(rows, "more", False):
        return None
    cursor: str | None = getattr(rows, "cursor", None)
    return cursor


def _comparison(path: syntax.Path, op: str, value: Any) -> syntax.Predicate:
    if value is None:
        if op == "eq":
            return syntax.Empty(path)
        if op == "neq":
            return syntax.Present(path)
        raise Refused(f"{'.'.join(path)} cannot be compared with None — only eq or neq")
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float):
        text = json.dumps(value)
    elif isinstance(value, str):
        text = value
    else:
        raise Refused(
            f"{'.'.join(path)} is compared with text, a number, true/false or None, "
            f"not {type(value).__name__}"
        )
    return syntax.Compare(path, _OPS[op], (text,))


def _format(predicate: syntax.Predicate) -> str:
    global _format_predicate
    if _format_predicate is None:  # the grammar only once a read runs
        from pasture.store.grammar import format_predicate

        _format_predicate = format_predicate
    return _format_predicate(predicate)


_format_predicate: Callable[[syntax.Predicate], str] | None = None


def _is_eid(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 16 and set(value) <= _EID_DIGITS


__all__ = ["Conditions", "Database", "NoTable", "Query", "Range", "TableRows"]
