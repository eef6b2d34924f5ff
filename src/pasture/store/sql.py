"""What every SQL backend shares: the tables, and a filter compiled to parameterised SQL.

The layout, one schema per app:

    entity(_e integer key, eid, kind, name, created_at, created_by, updated_at, updated_by)
    c_<component>(_e → entity, _eid, _created_at, _created_by,
                  one typed column per declared column, an index on each)
    edge(parent → entity, type, child eid)
    doc_fts                full text over c_doc(title, body)

`_e` is the backend's own integer for an entity, so joins are integer joins and
"oldest first" is `_e` order. `kind` (the component a row is listed as) and
`name` (what a reference to it reads back as) are kept on the entity by every
write, so a read never has to work them out. The stamps `created`/`updated` are
on every entity, so they live on `entity` itself. A component row also carries
what never changes of its entity — its eid and `created` stamps (`_eid`,
`_created_at`, `_created_by`) — so a listing driven from a component table
that shows nothing else of `entity` does not join it.

`compile_filter` turns a filter line into one SELECT. A value is never spliced
into SQL text: names are checked against the vocabulary (and match
`[a-z][a-z0-9_]*`), values are parameters. A `Dialect` holds what differs
between SQLite and PostgreSQL.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pasture.errors import Refused
from pasture.store import ast
from pasture.store import bundles as b
from pasture.store.bundles import no_column, not_a_component
from pasture.store.vocab import PLATFORM, Column, Component, Vocabulary, changed_type
from pasture.values import TIME_FORMAT, BadValue, convert, normalize_time

Row = dict[str, Any]
# SQL rows and the names of the entities they refer to -> the store's rows
Build = Callable[[list[tuple[Any, ...]], dict[str, Any]], list[Row]]

# The stamps every entity carries, kept as columns of `entity`.
STAMPS = {"created": ("created_at", "created_by"), "updated": ("updated_at", "updated_by")}


def table(component: str) -> str:
    return f"c_{component}"


def q(name: str) -> str:
    """A checked name quoted as an SQL identifier (so `at`, `by` or `order` are fine)."""
    return f'"{name}"'


@dataclass(frozen=True)
class Dialect:
    """What SQLite and PostgreSQL write differently.

    The compiler writes `?` for every parameter; `placeholders` turns the
    finished text into the driver's own marks. No SQL text the compiler
    writes holds a `?` or a `%` of its own (names are `[a-z0-9_]`, values are
    parameters), so the swap is exact.
    """

    name: str
    types: dict[str, str]  # column type -> SQL type
    key: str = "INTEGER PRIMARY KEY"  # an entity's own integer, `_e`
    text: str = "TEXT"  # what the store keeps of its own (eids, stamps, names)
    like: str = "LIKE"  # a case-insensitive (ASCII) match
    max_name: int = 1000  # the longest identifier the database keeps whole
    # a reference's name read in the row's own SELECT (a join the planner may memoize),
    # not once per eid afterwards
    inline_names: bool = False
    # the alias of the full-text search's own rows, when they carry their entity's eid,
    # `created` stamps and kind (`_kind`), so a search need not join `entity`
    fts_rows: str | None = None
    keeps_nul: bool = True  # whether text may hold a NUL character

    def placeholders(self, sql: str) -> str:
        return sql

    def boolean(self, value: bool) -> Any:
        """A bool as a parameter compared with a bool column."""
        return 1 if value else 0

    def typed(self, sql_type: str) -> str:
        """A parameter in a SELECT list that is written into a column of `sql_type`."""
        return "?"

    def insert_or_skip(self, into: str, rest: str, key: str = "") -> str:
        """An INSERT that leaves alone a row whose `key` is taken already."""
        return f"INSERT OR IGNORE INTO {into} {rest}"

    def fts(self, words: Sequence[str]) -> tuple[str, list[str], list[Any], str]:
        """Full text over doc: the driving FROM, its conditions, their parameters, the order."""
        raise NotImplementedError


class SqliteDialect(Dialect):
    def fts(self, words: Sequence[str]) -> tuple[str, list[str], list[Any], str]:
        # Every word or phrase as an FTS5 string, so nothing in it is FTS syntax.
        # (a NUL would end FTS5's string early, so it goes)
        text = " ".join('"' + w.replace("\x00", " ").replace('"', '""') + '"' for w in words)
        return (
            "doc_fts JOIN entity e ON e._e = doc_fts.rowid",
            ["doc_fts MATCH ?"],
            [text],
            "doc_fts.rank",
        )


class PostgresDialect(Dialect):
    def placeholders(self, sql: str) -> str:
        return sql.replace("%", "%%").replace("?", "%s")

    def boolean(self, value: bool) -> Any:
        return value

    def typed(self, sql_type: str) -> str:
        # a bare parameter in a SELECT list would be taken for text; CAST takes no collation
        return f"CAST(? AS {sql_type.split(' COLLATE ')[0]})"

    def insert_or_skip(self, into: str, rest: str, key: str = "") -> str:
        conflict = f"ON CONFLICT ({key})" if key else "ON CONFLICT"
        return f"INSERT INTO {into} {rest} {conflict} DO NOTHING"

    def fts(self, words: Sequence[str]) -> tuple[str, list[str], list[Any], str]:
        # each word or quoted phrase a phrase query, all of them required; the query is
        # made once in a one-row subquery so ranking needs no second copy of it
        query = " && ".join(f"phraseto_tsquery('{FTS_CONFIG}', ?)" for _ in words)
        return (
            f"(SELECT {query} AS q) fq JOIN c_doc fts ON fts._fts @@ fq.q "
            "JOIN entity e ON e._e = fts._e",
            [],
            [w.replace("\x00", " ") for w in words],
            "ts_rank(fts._fts, fq.q) DESC, e._e",
        )


# PostgreSQL's text search configuration in each app's schema: English stems, no stop
# words dropped (as SQLite's porter tokenizer keeps them).
FTS_CONFIG = "pasture_fts"

SQLITE = SqliteDialect(
    "sqlite",
    {"text": "TEXT", "time": "TEXT", "url": "TEXT", "number": "NUMERIC", "bool": "INTEGER"},
)
# Text compares byte for byte ("C"), as SQLite's does, so `<`, ties in a tally and
# ILIKE's case folding (ASCII only) read the same on both.
_PG_TEXT = 'TEXT COLLATE "C"'
POSTGRES = PostgresDialect(
    "postgres",
    {
        "text": _PG_TEXT,
        "time": _PG_TEXT,
        "url": _PG_TEXT,
        "number": "DOUBLE PRECISION",
        "bool": "BOOLEAN",
    },
    key="BIGINT PRIMARY KEY",
    text=_PG_TEXT,
    like="ILIKE",
    max_name=63,
    inline_names=True,
    fts_rows="fts",
    keeps_nul=False,
)


def sql_type(dialect: Dialect, column: Column) -> str:
    return dialect.types["text" if column.reference else column.type]


# -- compiling a filter --------------------------------------------------------------------


@dataclass
class Compiled:
    """One filter as SQL: run `sql` with `params`, hand the rows to `build`."""

    sql: str
    params: list[Any]
    build: Build
    cacheable: bool = True
    edges: bool = False  # `*`: each row also lists the edges from it
    # positions of reference eids in each SQL row: their names are read once per distinct
    # eid and handed to `build` ({eid: name}), not joined row by row
    refs: tuple[int, ...] = ()


@dataclass
class _Join:
    alias: str
    sql: str


@dataclass
class _State:
    vocabulary: Vocabulary
    variables: bool
    now: datetime | None
    dialect: Dialect
    joins: dict[tuple[str, ...], _Join] = field(default_factory=dict)
    required: dict[str, bool] = field(default_factory=dict)  # component -> inner join
    named: list[str] = field(default_factory=list)
    conds: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)
    cacheable: bool = True
    counter: int = 0
    drive: str | None = None  # the alias of the component table a listing is driven from
    keep_entity: bool = False
    name_joins: list[str] = field(default_factory=list)  # a reference's name, for showing

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"


def _is_variable(text: str) -> bool:
    return len(text) > 1 and text[0] == "$" and (text[1].isalpha() or text[1] == "_")


def component_of(name: str, vocabulary: Vocabulary) -> Component:
    comp = vocabulary.components.get(name)
    if comp is None:
        raise Refused(not_a_component(name))
    return comp


def compile_filter(
    text: str,
    vocabulary: Vocabulary,
    *,
    variables: bool = False,
    now: datetime | None = None,
    dialect: Dialect = SQLITE,
) -> Compiled:
    """A filter line as one parameterised SELECT; Refused with how to write what it cannot."""
    from pasture.store.grammar import parse

    if not isinstance(text, str):
        raise Refused('a filter is a line of text, like ".jog!&.doc?&limit=20"')
    return compile_ast(parse(text), vocabulary, variables=variables, now=now, dialect=dialect)


def compile_ast(
    filt: ast.Filter,
    vocabulary: Vocabulary,
    *,
    variables: bool = False,
    now: datetime | None = None,
    dialect: Dialect = SQLITE,
) -> Compiled:
    compiled = _compile(filt, _State(vocabulary, variables, now, dialect))
    compiled.sql = dialect.placeholders(compiled.sql)
    return compiled


def _compile(filt: ast.Filter, st: _State) -> Compiled:
    vocabulary, dialect = st.vocabulary, st.dialect
    limit: int | None = None
    count = False
    tally: ast.Tally | None = None
    tallied: tuple[str, Column, str] | None = None
    words: list[str] = []
    every = False
    for p in filt.predicates:
        if isinstance(p, ast.Has):
            _need(st, component_of(p.component, vocabulary).name, inner=True)
            _name(st, p.component)
        elif isinstance(p, ast.Maybe):
            _need(st, component_of(p.component, vocabulary).name, inner=False)
            _name(st, p.component)
        elif isinstance(p, ast.Lacks):
            comp = component_of(p.component, vocabulary)
            if comp.name in STAMPS:
                raise Refused(f"every entity has {comp.name} — .{comp.name}= matches nothing")
            st.conds.append(f"NOT EXISTS (SELECT 1 FROM {table(comp.name)} WHERE _e = e._e)")
        elif isinstance(p, ast.Every):
            every = True
        elif isinstance(p, ast.Compare | ast.Range | ast.Empty | ast.Present):
            _column_predicate(st, p)
        elif isinstance(p, ast.Words):
            if p.text.replace("\x00", " ").strip():
                words.append(p.text)
        elif isinstance(p, ast.Limit):
            if limit is not None and limit != p.count:
                raise Refused(f"limit is written twice — keep one, like limit={p.count}")
            if p.count < 1:
                raise Refused("limit is a whole number of rows, at least 1, like limit=20")
            limit = p.count
        elif isinstance(p, ast.Id):
            _no_nul(p.eid)
            st.conds.append("e.eid = ?")
            st.keep_entity = True  # found through entity's eid index
            st.params.append(p.eid)
        elif isinstance(p, ast.Count):
            count = True
        elif isinstance(p, ast.Tally):
            if tally is not None:
                raise Refused("tally one column at a time — keep one .tally=comp.col")
            tally = p
            tallied = _resolve_path(st, p.path, needs_value=False)
            _need(st, p.path[0], inner=True)
        elif isinstance(p, ast.Plural):
            _plural(st, p)
        else:  # pragma: no cover - the grammar makes nothing else
            raise Refused("that filter cannot be served — write predicates like .jog!&limit=20")
    if count and tally is not None:
        raise Refused("ask for .count! or .tally=comp.col, not both — they are two answers")

    sources: list[str] = []
    order = "e._e"
    drive: str | None = None
    if words:
        fts_from, fts_conds, fts_params, order = dialect.fts(words)
        sources.append(fts_from)
        st.conds[0:0] = fts_conds
        st.params[0:0] = fts_params
        st.drive = dialect.fts_rows
    else:
        drive = next((c for c, inner in st.required.items() if inner and c not in STAMPS), None)
        if drive is not None:
            alias = _comp_alias(st, drive)
            sources.append(f"{table(drive)} {alias} JOIN entity e ON e._e = {alias}._e")
            order = f"{alias}._e"
            st.drive = alias
        else:
            sources.append("entity e")
    if every:
        for name in vocabulary.components:
            _need(st, name, inner=False)
    for name, inner in st.required.items():
        if name in STAMPS or name == drive:
            continue
        alias = _comp_alias(st, name)
        kind = "JOIN" if inner else "LEFT JOIN"
        sources.append(f"{kind} {table(name)} {alias} ON {alias}._e = e._e")
    # Every entity carrying the app's first kind is listed as that kind: no need to read it.
    order_of_kinds = vocabulary.kind_order()
    known_kind = drive if drive is not None and drive == order_of_kinds[0] else None
    select: list[str] = ["e.eid"] if known_kind else ["e.eid", "e.kind"]
    if tallied is not None:
        compiled = _tally(st, tallied, sources, limit, order)
        compiled.sql = _lean(st, compiled.sql)
        return compiled
    builder: Build = _count_rows
    refs: tuple[int, ...] = ()
    # newest N are selected newest first; the builder turns them round
    reverse = not words and limit is not None
    if not count:
        shown = list(vocabulary.components) if every else st.named
        builder, extra, refs = _row_builder(st, shown, every, len(select), known_kind, reverse)
        select.extend(extra)
    head = f"SELECT {', '.join(select)}"
    sql = f"{head} FROM {' '.join(sources + _walks(st) + st.name_joins)}"
    if st.conds:
        sql += " WHERE " + " AND ".join(st.conds)
    params = list(st.params)
    if count:
        inner_sql = sql
        if limit is not None:
            inner_sql += f" ORDER BY {order} DESC LIMIT {_rows(limit)}"
        return Compiled(
            _lean(st, f"SELECT count(*) FROM ({inner_sql}) AS counted"),
            params,
            builder,
            cacheable=st.cacheable,
        )
    if words:
        sql += f" ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {_rows(limit)}"
    elif limit is not None:
        sql += f" ORDER BY {order} DESC LIMIT {_rows(limit)}"
    else:
        sql += f" ORDER BY {order}"
    return Compiled(
        _lean(st, sql, len(head)), params, builder, cacheable=st.cacheable, edges=every, refs=refs
    )


# `e.<column>` where `e` is the entity table's alias (never a part of another name)
_ENTITY_USE = re.compile(r"(?<![\w.\"])e\.(\w+)")
# what a component row carries of its entity: `entity` column -> its own column
_CARRIED = {"_e": "_e", "eid": "_eid", "created_at": "_created_at", "created_by": "_created_by"}
# what the full-text search's rows carry besides (see `Dialect.fts_rows`)
_CARRIED_FTS = {**_CARRIED, "kind": "_kind"}


def _lean(st: _State, sql: str, shown: int = 0) -> str:
    """The SELECT without its join to `entity`, when its component rows carry what it needs.

    Every component row carries its entity's eid and `created` stamps (they
    never change), so a listing driven from a component table reads them
    there. The stamps are read there only for showing (`sql[:shown]` is the
    select list, and the joins reading a reference's name): a condition on
    them keeps `entity` and its indexes.
    """
    if st.drive is None or st.keep_entity:
        return sql
    join = f" JOIN entity e ON e._e = {st.drive}._e"
    if sql.count(join) != 1 or sql.index(join) < shown:  # pragma: no cover - written once
        return sql
    carried = _CARRIED_FTS if st.drive == st.dialect.fts_rows else _CARRIED
    head, rest = sql[:shown], sql[shown:].replace(join, "")
    showing = head + "".join(st.name_joins)
    conditions = rest
    for name_join in st.name_joins:
        conditions = conditions.replace(name_join, "")
    if not {m.group(1) for m in _ENTITY_USE.finditer(showing)} <= carried.keys():
        return sql
    if not {m.group(1) for m in _ENTITY_USE.finditer(conditions)} <= {"_e", "eid"}:
        return sql
    drive = st.drive
    return _ENTITY_USE.sub(lambda m: f"{drive}.{carried[m.group(1)]}", head + rest)


def _rows(limit: int) -> str:
    """A limit written into the SQL, not passed as a parameter: a prepared statement's
    generic plan then still knows how few rows are wanted (a whole number, never text)."""
    return str(min(int(limit), 2**62))


def _need(st: _State, component: str, *, inner: bool) -> None:
    st.required[component] = st.required.get(component, False) or inner


def _name(st: _State, component: str) -> None:
    if component not in st.named:
        st.named.append(component)


def _comp_alias(st: _State, component: str) -> str:
    key = ("comp", component)
    join = st.joins.get(key)
    if join is None:
        join = st.joins[key] = _Join(f"t{len(st.joins)}", "")
    return join.alias


def _walks(st: _State) -> list[str]:
    return [j.sql for j in st.joins.values() if j.sql]


def _expr(st: _State, component: str, column: str) -> str:
    if component in STAMPS:
        at, by = STAMPS[component]
        return f"e.{at if column == 'at' else by}"
    return f"{_comp_alias(st, component)}.{q(column)}"


def _resolve_path(st: _State, path: ast.Path, *, needs_value: bool) -> tuple[str, Column, str]:
    """The SQL expression of a column path (walking references), its column, and its text."""
    shown = ".".join(path)
    if len(path) < 2 or len(path) % 2:
        raise Refused(
            f".{shown} names no column — write .component.column, like .jog.miles>=5, "
            "or walk a reference like .comment.target.doc.title~=word"
        )
    comp = component_of(path[0], st.vocabulary)
    _need(st, comp.name, inner=needs_value)
    _name(st, comp.name)
    column = _column(st, comp, path[1])
    expr = _expr(st, comp.name, column.name)
    for i in range(2, len(path), 2):
        if not column.reference:
            raise Refused(
                f"{path[i - 2]}.{path[i - 1]} is not a reference, so .{shown} cannot walk "
                f"through it — walk a reference column, like .comment.target.doc.title"
            )
        target = component_of(path[i], st.vocabulary)
        key = (*path[: i + 1],)
        walk = st.joins.get(key)
        if walk is None:
            n = len(st.joins)
            ent, alias = f"w{n}", f"x{n}"
            if target.name in STAMPS:
                sql = f"LEFT JOIN entity {ent} ON {ent}.eid = {expr}"
            else:
                sql = (
                    f"LEFT JOIN entity {ent} ON {ent}.eid = {expr} "
                    f"LEFT JOIN {table(target.name)} {alias} ON {alias}._e = {ent}._e"
                )
            walk = st.joins[key] = _Join(alias if target.name not in STAMPS else ent, sql)
        column = _column(st, target, path[i + 1])
        if target.name in STAMPS:
            at, by = STAMPS[target.name]
            expr = f"{walk.alias}.{at if column.name == 'at' else by}"
        else:
            expr = f"{walk.alias}.{q(column.name)}"
    return expr, column, shown


def _column(st: _State, comp: Component, name: str) -> Column:
    column = comp.columns.get(name)
    if column is None:
        raise Refused(no_column(comp.name, name, st.vocabulary))
    return column


def _value(st: _State, column: Column, shown: str, text: str, op: str) -> Any:
    """A value written in a filter as its column's type, or the sentence saying how."""
    if st.variables and _is_variable(text):
        return None
    _no_nul(text)
    example = f".{shown}{op if op not in ('~=',) else '='}"
    if column.reference:
        return text
    if column.type == "number":
        try:
            return convert(shown, "number", text)
        except BadValue:
            raise Refused(f"{shown} is a number — write one, like {example}5") from None
    if column.type == "bool":
        try:
            return st.dialect.boolean(convert(shown, "bool", text) is True)
        except BadValue:
            raise Refused(f"{shown} is true or false — write {example}true") from None
    if column.type == "time":
        try:
            return normalize_time(text)
        except ValueError:
            pass
        from pasture.store.grammar import time_phrase

        st.cacheable = False
        phrase = time_phrase(text, st.now or datetime.now(UTC))
        if phrase is None:
            raise Refused(
                f"{shown} is a time — write {example}2026-09-01, a moment like {TIME_FORMAT}, "
                "or a phrase: today, yesterday, 3-days-ago, 2-hours-ago"
            )
        return phrase
    return text


def _column_predicate(st: _State, p: ast.Compare | ast.Range | ast.Empty | ast.Present) -> None:
    if isinstance(p, ast.Empty):
        expr, column, shown = _resolve_path(st, p.path, needs_value=False)
        st.conds.append(f"{expr} IS NULL")
        return
    if isinstance(p, ast.Present):
        expr, column, shown = _resolve_path(st, p.path, needs_value=True)
        st.conds.append(f"{expr} IS NOT NULL")
        return
    if isinstance(p, ast.Range):
        expr, column, shown = _resolve_path(st, p.path, needs_value=True)
        if column.type == "bool" or column.reference:
            raise Refused(
                f"{shown} has no range — ranges are for numbers and times, like .jog.miles=3..10"
            )
        low = _value(st, column, shown, p.low, "=")
        high = _value(st, column, shown, p.high, "=")
        st.conds.append(f"{expr} >= ? AND {expr} {'<=' if p.include_high else '<'} ?")
        st.params.extend([low, high])
        return
    op = p.op
    expr, column, shown = _resolve_path(st, p.path, needs_value=op != "!=")
    if len(p.values) > 1 and op not in ("=", "!="):
        raise Refused(
            f"several values (a,b) go with = or != only — like .{shown}={','.join(p.values)}"
        )
    if column.type == "bool" and op not in ("=", "!="):
        raise Refused(f"{shown} is true or false — compare it with = or !=, like .{shown}=true")
    if column.type == "number" and op == "~=":
        raise Refused(f"{shown} is a number — ~= is for text; compare it with = < <= > >=")
    if column.reference and op in ("<", "<=", ">", ">="):
        raise Refused(
            f"{shown} is a reference — compare it with = (an eid or a name) or ~= (part of a name)"
        )
    values = [_value(st, column, shown, v, op) for v in p.values]
    if op == "~=":
        like = st.dialect.like
        pattern = "%" + _like_escape(str(values[0])) + "%"
        if column.reference:
            st.conds.append(f"{expr} IN (SELECT eid FROM entity WHERE name {like} ? ESCAPE '\\')")
        else:
            st.conds.append(f"{expr} {like} ? ESCAPE '\\'")
        st.params.append(pattern)
        return
    if op in ("=", "!="):
        marks = ", ".join("?" for _ in values)
        if column.reference:
            named = f"SELECT eid FROM entity WHERE name IN ({marks})"
            test = f"({expr} IN ({marks}) OR {expr} IN ({named}))"
            params = values + values
        else:
            test = f"{expr} IN ({marks})" if len(values) > 1 else f"{expr} = ?"
            params = values
        if op == "!=":
            test = f"({expr} IS NULL OR NOT {test})"
        st.conds.append(test)
        st.params.extend(params)
        return
    st.conds.append(f"{expr} {op} ?")
    st.params.append(values[0])


def _no_nul(text: str) -> None:
    # PostgreSQL keeps no NUL in text, so neither backend matches one
    if "\x00" in text:
        raise Refused("a value in a filter cannot hold a NUL character (%00) — leave it out")


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def plural_of(word: str, vocabulary: Vocabulary) -> tuple[Component, Column] | None:
    """The component and reference column a plural like `comments` counts through."""
    for comp in vocabulary.components.values():
        n = comp.name
        forms = {n + "s", n + "es"}
        if n.endswith("y"):
            forms.add(n[:-1] + "ies")
        if word not in forms and word != n:
            continue
        refs = [c for c in comp.columns.values() if c.reference]
        if comp.name in STAMPS:
            return None
        if len(refs) == 1:
            return comp, refs[0]
        if "target" in comp.columns and comp.columns["target"].reference:
            return comp, comp.columns["target"]
        return None
    return None


def _plural(st: _State, p: ast.Plural) -> None:
    found = plural_of(p.word, st.vocabulary)
    if found is None:
        raise Refused(
            f".{p.word}{p.op}{p.number} counts the entities that point here, and no "
            f"component with one reference column is called {p.word} — like .comments>=2 "
            "for comment{target}"
        )
    comp, column = found
    if p.op not in ("=", "!=", "<", "<=", ">", ">="):
        raise Refused(f"compare a count with = != < <= > >=, like .{p.word}>=2")
    st.conds.append(
        f"(SELECT count(*) FROM {table(comp.name)} p WHERE p.{q(column.name)} = e.eid) {p.op} ?"
    )
    st.params.append(p.number)


def _count_rows(rows: list[tuple[Any, ...]], names: dict[str, Any]) -> list[Row]:
    return [{"count": rows[0][0]}]


def _tally(
    st: _State,
    tallied: tuple[str, Column, str],
    sources: list[str],
    limit: int | None,
    order: str,
) -> Compiled:
    # tallying a column counts the rows that have its component (joined, not left-joined)
    expr, column, _ = tallied
    inner = f"SELECT {expr} AS v FROM {' '.join(sources + _walks(st))}"
    if st.conds:
        inner += " WHERE " + " AND ".join(st.conds)
    params = list(st.params)
    if limit is not None:
        inner += f" ORDER BY {order} DESC LIMIT {_rows(limit)}"
    if column.reference:
        sql = (
            "SELECT v, (SELECT name FROM entity WHERE eid = v), count(*) AS n "
            f"FROM ({inner}) AS tallied GROUP BY v ORDER BY n DESC, v"
        )

        def build(rows: list[tuple[Any, ...]], names: dict[str, Any]) -> list[Row]:
            return [{"value": _ref(r[0], r[1]), "count": r[2]} for r in rows]

    else:
        sql = f"SELECT v, count(*) AS n FROM ({inner}) AS tallied GROUP BY v ORDER BY n DESC, v"
        is_bool = column.type == "bool"

        def build(rows: list[tuple[Any, ...]], names: dict[str, Any]) -> list[Row]:
            return [{"value": _bool(r[0]) if is_bool else r[0], "count": r[1]} for r in rows]

    return Compiled(sql, params, build, cacheable=st.cacheable)


# -- reading rows back --------------------------------------------------------------------


def _ref(eid: Any, name: Any) -> dict[str, Any] | None:
    if eid is None:
        return None
    return {"eid": eid} if name is None else {"eid": eid, "name": name}


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _row_builder(
    st: _State,
    shown: list[str],
    every: bool,
    start: int,
    known_kind: str | None,
    reverse: bool,
) -> tuple[Build, list[str], tuple[int, ...]]:
    """A function made for this filter that turns SQL rows into the store's rows.

    It is generated as Python source (names come from the checked vocabulary,
    positions are integers) because building rows is most of a read's cost:
    each SQL row is unpacked into locals `c0, c1, …` once, and every row is one
    dict display. A reference column selects only its eid; the function is
    handed `names` ({eid: name}, read once per distinct eid) to make `{eid, name}`.
    """
    select: list[str] = []
    refs: list[int] = []
    pos = start
    parts: list[str] = []
    conditional: list[tuple[str, str, int]] = []  # (component, dict display, presence)
    for comp_name in shown:
        comp = st.vocabulary.components[comp_name]
        presence: int | None = None
        if comp_name not in STAMPS and not st.required.get(comp_name, False):
            select.append(f"{_comp_alias(st, comp_name)}._e")
            presence = pos
            pos += 1
        fields: list[str] = []
        for column in comp.columns.values():
            select.append(_expr(st, comp_name, column.name))
            c = f"c{pos}"
            if column.reference and st.dialect.inline_names:
                # the name read in the same statement: cheaper than another round trip to
                # the server, and a join (not a subquery a row) lets the planner read each
                # distinct eid once (Memoize)
                alias = f"n{len(st.name_joins)}"
                st.name_joins.append(f"LEFT JOIN entity {alias} ON {alias}.eid = {select[-1]}")
                select.append(f"{alias}.name")
                pos += 1
                n = f"c{pos}"
                fields.append(
                    f"{column.name!r}: ({{'eid': {c}, 'name': {n}}} if {n} is not None "
                    f"else ({{'eid': {c}}} if {c} is not None else None))"
                )
            elif column.reference:
                refs.append(pos)
                # inline rather than a call: this runs once per row and column
                fields.append(
                    f"{column.name!r}: ({{'eid': {c}, 'name': _n}} "
                    f"if (_n := names.get({c})) is not None "
                    f"else ({{'eid': {c}}} if {c} is not None else None))"
                )
            elif column.type == "bool":
                fields.append(f"{column.name!r}: (None if {c} is None else bool({c}))")
            else:
                fields.append(f"{column.name!r}: {c}")
            pos += 1
        body = "{" + ", ".join(fields) + "}"
        if presence is None:
            parts.append(f"{comp_name!r}: {body}")
        elif every:
            conditional.append((comp_name, body, presence))
        else:
            parts.append(f"{comp_name!r}: ({body} if c{presence} is not None else None)")
    kind = repr(known_kind) if known_kind else "c1"
    head = "{'kind': " + kind + ", 'entity': {'eid': c0}" + "".join(", " + p for p in parts) + "}"
    unpack = "".join(f"c{i}, " for i in range(pos))
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
            lines.append(f"        if c{presence} is not None:")
            lines.append(f"            d[{comp_name!r}] = {body}")
        lines.extend(["        out.append(d)", "    return out", ""])
        source = "\n".join(lines)
    scope: dict[str, Any] = {}
    exec(compile(source, "<filter rows>", "exec"), scope)
    build: Build = scope["build"]
    return build, select, tuple(refs)


# -- tables ---------------------------------------------------------------------------------


def base_tables(dialect: Dialect) -> list[str]:
    """The tables every app's store has, whatever it declares."""
    t = dialect.text
    # PostgreSQL has no rowid: an edge keeps the order it was added in a column of its own
    seq = "" if dialect is SQLITE else " seq BIGINT GENERATED ALWAYS AS IDENTITY,"
    return [
        f"""CREATE TABLE IF NOT EXISTS entity (
        _e {dialect.key},
        eid {t} NOT NULL UNIQUE,
        kind {t},
        name {t},
        created_at {t}, created_by {t},
        updated_at {t}, updated_by {t})""",
        "CREATE INDEX IF NOT EXISTS entity_name ON entity(name)",
        "CREATE INDEX IF NOT EXISTS entity_created_at ON entity(created_at)",
        "CREATE INDEX IF NOT EXISTS entity_created_by ON entity(created_by)",
        "CREATE INDEX IF NOT EXISTS entity_updated_at ON entity(updated_at)",
        "CREATE INDEX IF NOT EXISTS entity_updated_by ON entity(updated_by)",
        f"""CREATE TABLE IF NOT EXISTS edge (
        parent {dialect.key.split()[0]} NOT NULL, type {t} NOT NULL, child {t} NOT NULL,{seq}
        PRIMARY KEY (parent, type, child))""",
        "CREATE INDEX IF NOT EXISTS edge_child ON edge(child)",
        f"CREATE TABLE IF NOT EXISTS pasture_meta (key {t} PRIMARY KEY, value {t} NOT NULL)",
        f"""CREATE TABLE IF NOT EXISTS pasture_columns (
        component {t} NOT NULL, col {t} NOT NULL, type {t} NOT NULL,
        PRIMARY KEY (component, col))""",
    ]


BASE_TABLES = base_tables(SQLITE)


def carried_ddl(dialect: Dialect) -> str:
    """What every component row carries of its entity (never changed once written)."""
    t = dialect.text
    return f"_eid {t}, _created_at {t}, _created_by {t}"


CARRIED_DDL = carried_ddl(SQLITE)

# Columns too long to be worth an ordinary index (full text covers them).
UNINDEXED = {("doc", "body")}


def index_name(dialect: Dialect, component: str, column: str) -> str:
    """`c_<component>_<column>`, or a short stand-in where the database would cut it off."""
    name = f"{table(component)}_{column}"
    if len(name) <= dialect.max_name:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:12]
    return f"{name[: dialect.max_name - 13]}_{digest}"


def component_ddl(dialect: Dialect, comp: Component, existing: dict[str, str] | None) -> list[str]:
    """Statements creating a component's table, or adding the columns it lacks."""
    if comp.name in STAMPS:
        return []
    out: list[str] = []
    name = table(comp.name)
    if existing is None:
        cols = "".join(f", {q(c.name)} {sql_type(dialect, c)}" for c in comp.columns.values())
        # carried columns last: a scan reading a declared column need not parse past them
        out.append(f"CREATE TABLE {name} (_e {dialect.key}{cols}, {carried_ddl(dialect)})")
        new = list(comp.columns.values())
    else:
        new = [c for c in comp.columns.values() if c.name not in existing]
        out.extend(f"ALTER TABLE {name} ADD COLUMN {q(c.name)} {sql_type(dialect, c)}" for c in new)
    for c in new:
        if (comp.name, c.name) not in UNINDEXED:
            out.append(
                f"CREATE INDEX {index_name(dialect, comp.name, c.name)} ON {name}({q(c.name)})"
            )
    return out


PLATFORM_NAMES = tuple(PLATFORM)


# -- what a write keeps on `entity`, the same SQL on every backend ---------------------------

NAMERS = ("person", "alias", "doc")  # what a reference reads back as `name`, first wins
NAME_COLUMN = {"person": "name", "alias": "name", "doc": "title"}
NAME_SQL = (
    "coalesce((SELECT name FROM c_person WHERE _e = entity._e), "
    "(SELECT name FROM c_alias WHERE _e = entity._e), "
    "(SELECT title FROM c_doc WHERE _e = entity._e))"
)


def kind_sql(vocab: Vocabulary) -> str:
    """An entity's kind worked out in SQL: the first kind in the vocabulary's order it has."""
    cases = " ".join(
        f"WHEN EXISTS (SELECT 1 FROM {table(c)} WHERE _e = entity._e) THEN '{c}'"
        for c in vocab.kind_order()
        if c not in STAMPS
    )
    return f"CASE {cases} ELSE 'created' END"


def name_of(writes: Mapping[str, Mapping[str, Any] | None]) -> Any:
    """What a new entity's references read back as, from the components it is written with."""
    for comp in NAMERS:
        cols = writes.get(comp)
        if cols:
            value = cols.get(NAME_COLUMN[comp])
            if value is not None:
                return value
    return None


def same_type(shown: str, column: Column) -> bool:
    """Whether a column that was `shown` before may now be `column` (strings stay strings)."""
    if shown == column.shown:
        return True
    return column.shown == "text" and shown in ("text", "time", "url")


def type_changes(new: Vocabulary, physical: Mapping[str, Mapping[str, str]]) -> list[str]:
    """What `new` would change of its columns' types as stored (`pasture_columns`)."""
    problems: list[str] = []
    for comp in new.declared():
        for column in comp.columns.values():
            was = physical.get(comp.name, {}).get(column.name)
            if was is not None and not same_type(was, column):
                old = Column(column.name, "text", reference=True)
                if was != "reference":
                    old = Column(column.name, was)  # type: ignore[arg-type]
                problems.append(changed_type(comp.name, old, column))
    return problems


def installing(
    dialect: Dialect,
    vocab: Vocabulary,
    physical: Mapping[str, Mapping[str, str]],
    tables: set[str],
) -> Iterator[tuple[list[str], list[tuple[str, str, str]]]]:
    """What installing `vocab` runs, a component at a time: the statements making or
    widening its table, then its rows of `pasture_columns` (for `Writes.column`)."""
    for comp in vocab.components.values():
        if comp.name in STAMPS:
            continue
        existing = dict(physical.get(comp.name, {})) if table(comp.name) in tables else None
        ddl = component_ddl(dialect, comp, existing)
        yield ddl, [(comp.name, c.name, c.shown) for c in comp.columns.values()]


def describe(vocab: Vocabulary) -> dict[str, Any]:
    """`Store.schema()`: every component with its columns and their types."""
    return {
        "components": {
            c.name: {
                "columns": {col.name: col.shown for col in c.columns.values()},
                "kind": c.kind,
                "platform": c.platform,
                "writable": c.writable,
            }
            for c in vocab.components.values()
        },
        "tools": vocab.tools,
    }


# -- what a write runs, its text built once from the dialect ----------------------------------

ENTITY_COLUMNS = (
    "_e",
    "eid",
    "kind",
    "name",
    "created_at",
    "created_by",
    "updated_at",
    "updated_by",
)
# what a component row carries of its entity, and those columns of `entity`
CARRY = ("_e", "_eid", "_created_at", "_created_by")
OF_ENTITY = ("_e", "eid", "created_at", "created_by")


class Writes:
    """The statements a write runs, in one dialect's parameter marks and its spelling of
    an insert that skips a taken key and of a typed parameter."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        m = dialect.placeholders
        carry, of = ", ".join(CARRY), ", ".join(OF_ENTITY)
        self.entity = self.insert("entity", ENTITY_COLUMNS)
        self.person_entity = m(
            "INSERT INTO entity(_e, eid, kind, name, created_at, created_by, updated_at, "
            "updated_by) VALUES (?, ?, 'person', ?, ?, ?, ?, ?)"
        )
        self.person = m(f"INSERT INTO c_person({carry}, name) VALUES (?, ?, ?, ?, ?)")
        self.person_name = m(
            f"INSERT INTO c_person({carry}, name) SELECT {of}, {dialect.typed(dialect.text)} "
            "FROM entity WHERE _e = ? ON CONFLICT (_e) DO UPDATE SET name = excluded.name"
        )
        self.restamp = m("UPDATE entity SET updated_at = ?, updated_by = ? WHERE _e = ?")
        self.edge = m(dialect.insert_or_skip("edge(parent, type, child)", "VALUES (?, ?, ?)"))
        self.unedge = m("DELETE FROM edge WHERE parent = ? AND type = ? AND child = ?")
        self.meta = m(
            "INSERT INTO pasture_meta(key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        )
        self.column = m(
            "INSERT INTO pasture_columns(component, col, type) VALUES (?, ?, ?) "
            "ON CONFLICT (component, col) DO UPDATE SET type = excluded.type"
        )
        self.row_of = m("SELECT _e FROM entity WHERE eid = ?")
        self.named = m(
            "SELECT e.eid FROM c_alias a JOIN entity e ON e._e = a._e WHERE a.name = ? LIMIT 5"
        )

    def carry(self, comp: str) -> tuple[str, ...]:
        """What a `comp` row carries of its entity (a doc row its kind too, where a search
        reads its rows' kind from them: see `Dialect.fts_rows`)."""
        return (*CARRY, "_kind") if comp == "doc" and self.dialect.fts_rows else CARRY

    def of_entity(self, comp: str) -> tuple[str, ...]:
        """The columns of `entity` that `carry(comp)` are copied from."""
        return (*OF_ENTITY, "kind") if comp == "doc" and self.dialect.fts_rows else OF_ENTITY

    def insert(self, name: str, columns: Sequence[str]) -> str:
        marks = ", ".join("?" for _ in columns)
        return self.dialect.placeholders(
            f"INSERT INTO {name}({', '.join(columns)}) VALUES ({marks})"
        )

    def insert_row(self, comp: str, names: Sequence[str]) -> str:
        """A new `comp` row with the columns `names` (after what it carries)."""
        return self.insert(table(comp), (*self.carry(comp), *map(q, names)))

    def delete_row(self, comp: str) -> str:
        return self.dialect.placeholders(f"DELETE FROM {table(comp)} WHERE _e = ?")

    def keep_row(self, comp: str) -> str:
        """An entity's `comp` row with no columns set, unless it has one already."""
        into = f"{table(comp)}({', '.join(self.carry(comp))})"
        rest = f"SELECT {', '.join(self.of_entity(comp))} FROM entity WHERE _e = ?"
        return self.dialect.placeholders(self.dialect.insert_or_skip(into, rest, "_e"))

    def set_row(self, comp: Component, names: Sequence[str]) -> str:
        """An entity's `comp` row with the columns `names` set (the others kept, if it has one);
        its parameters are the values, then the entity's `_e`."""
        d = self.dialect
        columns = "".join(f", {q(n)}" for n in names)
        values = "".join(f", {d.typed(sql_type(d, comp.columns[n]))}" for n in names)
        sets = ", ".join(f"{q(n)} = excluded.{q(n)}" for n in names)
        return d.placeholders(
            f"INSERT INTO {table(comp.name)}({', '.join(self.carry(comp.name))}{columns}) "
            f"SELECT {', '.join(self.of_entity(comp.name))}{values} FROM entity WHERE _e = ? "
            f"ON CONFLICT (_e) DO UPDATE SET {sets}"
        )

    def current(self, comp: str, col: str) -> str:
        """What a `$was` guard on `comp.col` compares with, for one entity's `_e`."""
        if comp in STAMPS:
            at, by = STAMPS[comp]
            sql = f"SELECT {at if col == 'at' else by} FROM entity WHERE _e = ?"
        else:
            sql = f"SELECT {q(col)} FROM {table(comp)} WHERE _e = ?"
        return self.dialect.placeholders(sql)


SQLITE_WRITES = Writes(SQLITE)
POSTGRES_WRITES = Writes(POSTGRES)


class Lookup:
    """How `bundles.resolve` finds entities, through a connection's or cursor's `execute`."""

    def __init__(self, writes: Writes, execute: Callable[..., Any]) -> None:
        self.writes = writes
        self.execute = execute

    def row_of(self, eid: str) -> int | None:
        if not self.writes.dialect.keeps_nul and "\x00" in eid:  # kept nowhere: no entity has it
            return None
        found = self.execute(self.writes.row_of, (eid,)).fetchone()
        return None if found is None else int(found[0])

    def named(self, name: str) -> list[str]:
        if not self.writes.dialect.keeps_nul and "\x00" in name:
            return []
        return [r[0] for r in self.execute(self.writes.named, (name,)).fetchall()]


def check_guards(step: b.Step, current: Callable[[int, str, str], Any]) -> None:
    """Refuse the write if a `$was` guard of `step` does not hold; `current(row, comp, col)`
    reads what is there now."""
    for comp, cols in step.was.items():
        for col, expected in cols.items():
            now_there = None if step.row is None else current(step.row, comp, col)
            if not b.guard_holds(expected, now_there):
                raise b.moved(comp, col)


__all__ = [
    "NAME_SQL",
    "POSTGRES",
    "SQLITE",
    "STAMPS",
    "Compiled",
    "Dialect",
    "base_tables",
    "compile_ast",
    "compile_filter",
    "component_ddl",
    "describe",
    "kind_sql",
    "name_of",
    "plural_of",
    "q",
    "same_type",
    "table",
]
