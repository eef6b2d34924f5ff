"""Reading rows back: the SQL rows a compiled filter reads, turned into the store's answer.

A listing's rows become `{kind, entity: {eid}, …components}` by a function made
for each filter (`row_builder`); an aggregate's one row, or its groups, become
`{count}`, `{distinct}` or `{tally}`. The filter compiler (`sql.py`) decides what
is selected; this decides what each selected value becomes.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from pasture.store import syntax
from pasture.store.base import Answer
from pasture.store.dialect import STAMPS, Dialect, q
from pasture.store.vocab import Component, Vocabulary

# SQL rows and the names of the entities they refer to -> the store's rows (or an aggregate's
# one object)
Build = Callable[[list[tuple[Any, ...]], dict[str, Any]], Answer]

# an answer of at least this many rows is built with the cyclic collector paused (`built`)
_MANY = 64


def built(build: Build, rows: list[tuple[Any, ...]], names: dict[str, Any]) -> Answer:
    """`build(rows, names)`, with Python's cyclic garbage collector paused while it runs when
    the rows are many. A page of whole rows is thousands of new dicts, none of them in a
    cycle, and the collector would walk them again and again as they are made: a third
    of the time such a page takes. Left alone when something else paused the collector."""
    if len(rows) < _MANY or not gc.isenabled():
        return build(rows, names)
    gc.disable()
    try:
        return build(rows, names)
    finally:
        gc.enable()


class Selecting(Protocol):
    """What the row builder asks of a filter being compiled: what it named and where each
    column is read from. Names it adds (`name_joins`) go into the compiled SELECT."""

    @property
    def vocabulary(self) -> Vocabulary: ...

    @property
    def dialect(self) -> Dialect: ...

    @property
    def required(self) -> Mapping[str, bool]: ...

    @property
    def brought(self) -> Mapping[syntax.Path, list[str]]: ...

    @property
    def name_joins(self) -> list[str]: ...

    @property
    def always(self) -> set[str]:
        """Components every row has that the filter does not require: shown where they would
        be if it might not (a row's keys keep their order), with no presence read."""

    def column_of(self, component: str, column: str) -> str: ...

    def alias_of(self, component: str) -> str: ...

    def walk_alias(self, path: syntax.Path) -> str: ...

    def walk_entity(self, path: syntax.Path) -> str: ...

    def walk_inner(self, path: syntax.Path) -> bool: ...


# -- an aggregate ---------------------------------------------------------------------------


def counted(rows: list[tuple[Any, ...]], names: dict[str, Any]) -> Answer:
    return {"count": int(rows[0][0])}


def distinct_values(as_bool: bool) -> Build:
    def distinct(rows: list[tuple[Any, ...]], names: dict[str, Any]) -> Answer:
        return {"distinct": [bool(r[0]) if as_bool else r[0] for r in rows]}

    return distinct


def tallied_values(as_bool: bool) -> Build:
    def tally(rows: list[tuple[Any, ...]], names: dict[str, Any]) -> Answer:
        # JSON keys are text: a number as it is written, a bool as true or false
        return {"tally": {tally_key(r[0], as_bool): int(r[1]) for r in rows}}

    return tally


def tally_key(value: Any, as_bool: bool = False) -> str:
    """A value as a key of a tally: text as it is, a number as JSON writes it, true/false."""
    if as_bool or isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return json.dumps(value)
    return str(value)


# -- a listing ------------------------------------------------------------------------------


def _walked_columns(alias: str, component: str) -> Callable[[str], str]:
    """How a column of `component` reached through a walk (`alias`) is written in SQL."""
    if component in STAMPS:
        at, by = STAMPS[component]
        return lambda col: f"{alias}.{at if col == 'at' else by}"
    return lambda col: f"{alias}.{q(col)}"


def row_builder(
    st: Selecting,
    shown: list[str],
    every: bool,
    start: int,
    known_kind: str | None,
    reverse: bool,
    tail: int = 0,
    kinds: list[str] | None = None,
) -> tuple[Build, list[str], tuple[int, ...]]:
    """A function made for this filter that turns SQL rows into the store's rows.

    It is generated as Python source (names come from the checked vocabulary,
    positions are integers) because building rows is most of a read's cost:
    each SQL row is unpacked into locals `c0, c1, …` once, and every row is one
    dict display. A reference column selects only its eid; the function is
    handed `names` ({eid: name}, read once per distinct eid) to make `{eid, name}`.
    With `kinds` (the order of kinds; every component shown), a row's kind is not read
    but told from the components it has, as the store works it out (`kind_sql`).
    """
    select: list[str] = []
    refs: list[int] = []
    pos = start

    def take(expr: str) -> str:
        """`expr` selected: the local its value is unpacked into."""
        nonlocal pos
        select.append(expr)
        pos += 1
        return f"c{pos - 1}"

    def body_of(comp: Component, at: syntax.Path, expr_of: Callable[[str], str]) -> str:
        """The dict display of one component's columns; `at` is where it is in the row."""
        fields: list[str] = []
        for column in comp.columns.values():
            c = take(expr_of(column.name))
            walked = (*at, column.name)
            if column.reference and walked in st.brought:
                # a walk from it joins the entity it names already: its name is there, and
                # what the filter brings from that side goes in the same dict display
                ent = st.walk_entity((*walked, st.brought[walked][0]))
                n = take(f"{ent}.name")
                far = far_of(walked)
                value = (
                    f"({{'eid': {c}, 'name': {n}, {far}}} if {n} is not None "
                    f"else ({{'eid': {c}, {far}}} if {c} is not None else None))"
                )
            elif column.reference and st.dialect.inline_names:
                # the name read in the same statement: cheaper than another round trip to
                # the server, and a join (not a subquery a row) lets the planner read each
                # distinct eid once (Memoize)
                alias = f"n{len(st.name_joins)}"
                st.name_joins.append(f"LEFT JOIN entity {alias} ON {alias}.eid = {select[-1]}")
                n = take(f"{alias}.name")
                value = (
                    f"({{'eid': {c}, 'name': {n}}} if {n} is not None "
                    f"else ({{'eid': {c}}} if {c} is not None else None))"
                )
            elif column.reference:
                refs.append(pos - 1)
                # inline rather than a call: this runs once per row and column
                value = (
                    f"({{'eid': {c}, 'name': _n}} if (_n := names.get({c})) is not None "
                    f"else ({{'eid': {c}}} if {c} is not None else None))"
                )
            elif column.type == "bool":
                value = f"(None if {c} is None else bool({c}))"
            else:
                value = c
            fields.append(f"{column.name!r}: {value}")
        return "{" + ", ".join(fields) + "}"

    def far_of(walked: syntax.Path) -> str:
        """What a reference brings from its far side: each component the filter named there."""
        parts: list[str] = []
        for name in st.brought[walked]:
            alias = st.walk_alias((*walked, name))
            expr_of, there = _walked_columns(alias, name), f"{alias}._e"
            if st.walk_inner((*walked, name)):  # every row reached it: nothing to test
                body = body_of(st.vocabulary.components[name], (*walked, name), expr_of)
                parts.append(f"{name!r}: {body}")
                continue
            present = take(there)
            body = body_of(st.vocabulary.components[name], (*walked, name), expr_of)
            parts.append(f"{name!r}: ({body} if {present} is not None else None)")
        return ", ".join(parts)

    parts: list[str] = []
    # (component, dict display, presence; None: always there, set in its place)
    conditional: list[tuple[str, str, int | None]] = []
    present: dict[str, int | None] = {}  # each component shown: its presence (None: always)
    for comp_name in shown:
        comp = st.vocabulary.components[comp_name]
        presence: int | None = None
        there = comp_name in st.always
        if comp_name not in STAMPS and not st.required.get(comp_name, False) and not there:
            take(f"{st.alias_of(comp_name)}._e")
            presence = pos - 1
        present[comp_name] = presence

        def top(col: str, comp_name: str = comp_name) -> str:
            return st.column_of(comp_name, col)

        body = body_of(comp, (comp_name,), top)
        if every and there:
            conditional.append((comp_name, body, None))
        elif presence is None:
            parts.append(f"{comp_name!r}: {body}")
        elif every:
            conditional.append((comp_name, body, presence))
        else:
            parts.append(f"{comp_name!r}: ({body} if c{presence} is not None else None)")
    kind = repr(known_kind) if known_kind else "c1"
    if kinds is not None:
        kind = _kind_of(kinds, present)
    head = "{'kind': " + kind + ", 'entity': {'eid': c0}" + "".join(", " + p for p in parts) + "}"
    # `tail` columns more end each SQL row: what a page's cursor is made of, not shown
    unpack = "".join(f"c{i}, " for i in range(pos)) + "".join(f"t{i}, " for i in range(tail))
    source_rows = "reversed(rows)" if reverse else "rows"
    if not conditional:
        source = f"def build(rows, names):\n    return [{head} for {unpack} in {source_rows}]\n"
    else:
        lines = [
            "def build(rows, names):",
            "    out = []",
            f"    for {unpack} in {source_rows}:",
            f"        d = {head}",
        ]
        for comp_name, body, presence in conditional:
            if presence is None:
                lines.append(f"        d[{comp_name!r}] = {body}")
                continue
            lines.append(f"        if c{presence} is not None:")
            lines.append(f"            d[{comp_name!r}] = {body}")
        lines.extend(["        out.append(d)", "    return out", ""])
        source = "\n".join(lines)
    scope: dict[str, Any] = {}
    exec(compile(source, "<filter rows>", "exec"), scope)
    build: Build = scope["build"]
    return build, select, tuple(refs)


def _kind_of(kinds: list[str], present: Mapping[str, int | None]) -> str:
    """The kind as an expression of the row's presences: the first component in `kinds`'
    order it has (one always there ends it; one not shown it has not)."""
    tests: list[tuple[str, int]] = []
    last = "created"  # every entity has it
    for name in kinds:
        if name not in present:
            continue
        at = present[name]
        if at is None:
            last = name
            break
        tests.append((name, at))
    kind = repr(last)
    for name, at in reversed(tests):
        kind = f"({name!r} if c{at} is not None else {kind})"
    return kind


def table_rows(
    st: Selecting, name: str, start: int, reverse: bool, tail: int = 0
) -> tuple[Build, list[str]]:
    """A function made for this filter that turns SQL rows into one table's rows:
    `{"id", "created_at", …its columns}`, a reference as the id it names (`ctx.db`'s
    rows). The SQL row begins with the eid and the creation time (`start` values)."""
    comp = st.vocabulary.components[name]
    select: list[str] = []
    fields = ["'id': c0", "'created_at': c1"]
    pos = start
    for column in comp.columns.values():
        select.append(st.column_of(name, column.name))
        c = f"c{pos}"
        pos += 1
        value = f"(None if {c} is None else bool({c}))" if column.type == "bool" else c
        fields.append(f"{column.name!r}: {value}")
    unpack = "".join(f"c{i}, " for i in range(pos)) + "".join(f"t{i}, " for i in range(tail))
    source_rows = "reversed(rows)" if reverse else "rows"
    body = "{" + ", ".join(fields) + "}"
    source = f"def build(rows, names):\n    return [{body} for {unpack} in {source_rows}]\n"
    scope: dict[str, Any] = {}
    exec(compile(source, "<table rows>", "exec"), scope)
    build: Build = scope["build"]
    return build, select


__all__ = [
    "Build",
    "Selecting",
    "counted",
    "distinct_values",
    "row_builder",
    "table_rows",
    "tallied_values",
    "tally_key",
]
