"""A filter compiled to parameterised SQL: the filter compiler.

`compile_filter` turns a filter line into one SELECT. A value is never spliced
into SQL text: names are checked against the vocabulary (and match
`[a-z][a-z0-9_]*`), values are parameters. What differs between SQLite and
PostgreSQL comes from a `Dialect` (`dialect.py`); the tables it reads are laid
out in `tables.py`; the rows the SQL reads are turned into the store's by `rows.py`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pasture.errors import Refused, echo
from pasture.store import syntax
from pasture.store.bundles import no_column, not_a_component
from pasture.store.dialect import SQLITE, STAMPS, Dialect, q, table
from pasture.store.pages import read_cursor
from pasture.store.rows import (
    Build,
    counted,
    distinct_values,
    row_builder,
    table_rows,
    tallied_values,
)
from pasture.store.times import (
    EXAMPLES,
    Span,
    day_text,
    moment_text,
    server_zone,
    span,
    whole_second_text,
    zone_name,
)
from pasture.store.vocab import Column, Component, Vocabulary
from pasture.values import (
    BadValue,
    OutOfRange,
    convert,
    lone_surrogate,
    not_characters,
)

# What one SELECT may hold, so a filter the databases cannot plan (SQLite joins at most
# 64 tables) is refused with a sentence, the same on every backend
MAX_HOPS = 4  # references one path walks: .a.ref.b.ref.c.ref.d.ref.e.col
MAX_TABLES = 60  # tables one filter joins: the entity, components, walks (SQLite: 64)
MAX_SEARCH = 1000  # characters a ~= looks for, and the words of a full-text search
# Times in one any-of list: each is a range, and SQLite plans a list of ranges in time that
# grows with its square (a thousand took 1.7 s; fifty take 3 ms).
MAX_TIMES = 50


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
    # the server's time zone this SQL was written in, when a time in it depends on it
    zone: str | None = None
    # a read answered a page at a time: at most `page` rows, read `page + 1` to know whether
    # more follow; each SQL row ends with the values of `order` and its place in creation,
    # from `keys_at` on, which the last row's cursor is made of (`pasture.store.pages`)
    page: int | None = None
    # planned once for any value of its parameters (see `Dialect.generic_plans`)
    generic: bool = False
    keys_at: int = 0
    keys_from: tuple[int, ...] = ()  # where in the row each of those values is
    order: str = ""
    # Whole rows read every component: those they join only to bring them, whose tables a
    # read may find empty (`probe` asks, one boolean each) and then reads the rows without
    # (`without_empty`); each such reading kept in `variants`, by what it leaves out.
    optional: tuple[str, ...] = ()
    probe: str = ""
    variants: dict[frozenset[str], Compiled] = field(default_factory=dict)
    # Or (`Dialect.checks_empty`) each row ends, from `checks_at` on, with whether each of
    # the `checks` components' tables has any row, then whether the app keeps any edge, all
    # read by the statement itself: it left out `absent`, which it was to find empty.
    checks: tuple[str, ...] = ()
    checks_at: int = 0
    absent: frozenset[str] = frozenset()


@dataclass
class _Join:
    """A component's alias, or one hop of a walk: from a reference (`ref`) to the entity it
    names (`ent`) and that entity's component table (`table`, None for a stamp on `entity`
    itself). A hop is an inner join where some predicate needs a value beyond it (`inner`):
    a row without the far side could not match, and an inner join lets the planner start
    from that predicate's index rather than from every referencing row."""

    alias: str
    ref: str = ""  # empty: a component's alias, not a walk
    ent: str = ""
    table: str | None = None
    inner: bool = False

    def sql(self) -> str:
        join = "JOIN" if self.inner else "LEFT JOIN"
        sql = f"{join} entity {self.ent} ON {self.ent}.eid = {self.ref}"
        if self.table is not None:
            sql += f" {join} {self.table} {self.alias} ON {self.alias}._e = {self.ent}._e"
        return sql


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
    zone: str | None = None  # the server's time zone, once a time value was read in it
    # what each walked reference brings from its far side: (comp, ref column) -> components
    brought: dict[syntax.Path, list[str]] = field(default_factory=dict)
    # columns every row has one value in, by an `=` of one value: expr -> that value
    fixed: dict[str, Any] = field(default_factory=dict)
    # each reverse plural: its place in conds, and where it needs an entity pointing here,
    # the same test as a set of the entities pointed at so often (see `_plurals_drive`)
    plurals: list[tuple[int, str | None]] = field(default_factory=list)
    # components every row has though the filter does not require them: the doc rows a
    # search finds (see `Selecting.always`)
    always: set[str] = field(default_factory=set)

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # What reading the rows back asks of it (pasture.store.rows.Selecting).
    def column_of(self, component: str, column: str) -> str:
        return _expr(self, component, column)

    def alias_of(self, component: str) -> str:
        return _comp_alias(self, component)

    def walk_alias(self, path: syntax.Path) -> str:
        return self.joins[path].alias

    def walk_entity(self, path: syntax.Path) -> str:
        return self.joins[path].ent

    def walk_inner(self, path: syntax.Path) -> bool:
        return self.joins[path].inner


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
    page: int | None = None,
    table: str | None = None,
    absent: frozenset[str] = frozenset(),
) -> Compiled:
    """A filter line as one parameterised SELECT; Refused with how to write what it cannot.
    With `page`, rows are read a page of at most that many at a time. With `table`, each
    row is that component's alone, as a table's row (`pasture.store.rows.table_rows`).
    `absent` names components no entity has now: whole rows do not read them."""
    from pasture.store.grammar import parse

    if not isinstance(text, str):
        raise Refused('a filter is a line of text, like ".jog!&.doc?&limit=20"')
    return compile_ast(
        parse(text),
        vocabulary,
        variables=variables,
        now=now,
        dialect=dialect,
        page=page,
        table=table,
        absent=absent,
    )


def check_filter(text: str, vocabulary: Vocabulary) -> None:
    """Refuse (with the sentence a query would get) a filter line this vocabulary cannot serve.

    A value that is a template variable (`$since`) is not checked against its
    column's type: it only has one once a command runs.
    """
    compile_filter(text, vocabulary, variables=True)


def compile_ast(
    filt: syntax.Filter,
    vocabulary: Vocabulary,
    *,
    variables: bool = False,
    now: datetime | None = None,
    dialect: Dialect = SQLITE,
    page: int | None = None,
    table: str | None = None,
    absent: frozenset[str] = frozenset(),
) -> Compiled:
    st = _State(vocabulary, variables, now, dialect)
    compiled = _compile(filt, st, page, table, absent)
    compiled.sql = dialect.placeholders(compiled.sql)
    compiled.zone = st.zone
    return compiled


def _compile(
    filt: syntax.Filter,
    st: _State,
    page: int | None,
    table_name: str | None = None,
    absent: frozenset[str] = frozenset(),
) -> Compiled:
    vocabulary, dialect = st.vocabulary, st.dialect
    limit: int | None = None
    sort: syntax.Sort | None = None
    after: syntax.After | None = None
    aggregate: syntax.Aggregate | None = None  # the first one written is the answer
    tallied: tuple[str, Column, str] | None = None  # the column a tally or distinct reads
    words: list[str] = []
    every = False
    addressed = False  # id= names an entity, not a component of it
    # a test whose best plan depends on its value (a range, a pattern, an inequality): a
    # plan made for no value in particular may start from the wrong table
    valued = False
    for p in filt.predicates:
        if isinstance(p, syntax.Range | syntax.Plural) or (
            isinstance(p, syntax.Compare) and p.op != "="
        ):
            valued = True
        if isinstance(p, syntax.Has):
            _need(st, component_of(p.component, vocabulary).name, inner=True)
            _name(st, p.component)
        elif isinstance(p, syntax.Maybe):
            _need(st, component_of(p.component, vocabulary).name, inner=False)
            _name(st, p.component)
        elif isinstance(p, syntax.Lacks):
            comp = component_of(p.component, vocabulary)
            if comp.name in STAMPS:
                raise Refused(f"every entity has {comp.name} — .{comp.name}= matches nothing")
            st.conds.append(f"NOT EXISTS (SELECT 1 FROM {table(comp.name)} WHERE _e = e._e)")
        elif isinstance(p, syntax.Every):
            every = True
        elif isinstance(p, syntax.Compare | syntax.Range | syntax.Empty | syntax.Present):
            _column_predicate(st, p)
        elif isinstance(p, syntax.Words):
            _whole_characters("the search", p.text)
            if p.text.replace("\x00", " ").strip():
                words.append(p.text)
                if sum(len(w) for w in words) > MAX_SEARCH:
                    raise Refused(
                        f"a full-text search looks for at most {MAX_SEARCH} characters of "
                        "words — search for fewer words"
                    )
        elif isinstance(p, syntax.Limit):
            if limit is not None and limit != p.count:
                raise Refused(f"limit is written twice — keep one, like limit={p.count}")
            if p.count < 1:
                raise Refused("limit is a whole number of rows, at least 1, like limit=20")
            limit = p.count
        elif isinstance(p, syntax.Sort):
            if sort is not None and sort != p:
                raise Refused("sort= is written twice — keep one, naming every column in it")
            sort = p
        elif isinstance(p, syntax.After):
            if after is not None and after != p:
                raise Refused("after= is written twice — keep the cursor of the last answer")
            after = p
        elif isinstance(p, syntax.Id):
            _no_nul(p.eid, "the eid in id=")
            st.conds.append("e.eid = ?")
            st.keep_entity = True  # found through entity's eid index
            st.params.append(p.eid)
            addressed = True
        elif isinstance(p, syntax.Count | syntax.Tally | syntax.Distinct):
            if aggregate is not None:
                # only the first aggregate answers; a later one's names are still checked
                if not isinstance(p, syntax.Count):
                    aside = _State(vocabulary, st.variables, st.now, dialect)
                    _resolve_path(aside, p.path, needs_value=False)
                continue
            aggregate = p
            if not isinstance(p, syntax.Count):
                # the values of a column are read from the rows that have its component
                tallied = _resolve_path(st, p.path, needs_value=False)
                _need(st, p.path[0], inner=True)
        elif isinstance(p, syntax.Plural):
            _plural(st, p)
        elif isinstance(p, syntax.Reach):
            _reach(st, p)
        else:  # pragma: no cover - the grammar makes nothing else
            raise Refused("that filter cannot be served — write predicates like .jog!&limit=20")
    _plurals_drive(st, bool(words or addressed))
    walked = any(j.ref for j in st.joins.values())
    if aggregate is not None:
        if after is not None:
            raise Refused(
                "after= continues a page of rows, and an aggregate answers one value for "
                "every match — leave out after="
            )
        limit = None  # a window shapes rows: an aggregate counts every match
        sort = None
        every = False
    if words and sort is not None:
        raise Refused(
            "a search for words answers the best matches first — leave out sort=, or search "
            "with a column instead, like .doc.title~=word"
        )
    if sort is None and limit is not None and after is not None:
        raise Refused(
            "limit= without sort= is the newest rows, one window, and has no page after it — "
            "say sort= (like sort=-created.at for the newest first) to read on with after="
        )
    # Words and id= name no component to leave out, so with nothing else named the rows
    # are whole, as with *: every component the entity has (an absence names none either).
    whole = not every and not st.named and bool(words or addressed) and aggregate is None
    every = every or whole
    if not addressed and not words and all(c in STAMPS for c in st.required):
        _no_bylines(st)
    optional: list[str] = []  # joined only to be brought whole (see `Compiled.optional`)
    skipped: set[str] = set()
    checks: list[str] = []  # whose emptiness the rows say (see `Compiled.checks`)
    if every:
        for name in vocabulary.components:
            if name not in st.required and name not in STAMPS and not (words and name == "doc"):
                if dialect.checks_empty and aggregate is None:
                    checks.append(name)
                if name in absent:
                    skipped.add(name)  # its table is empty: no row has it to bring
                    continue
                optional.append(name)
            _need(st, name, inner=False)
    _few_tables(st, bool(words), every, whole)

    sources: list[str] = []
    order = "e._e"
    drive: str | None = None
    if words:
        # The doc rows a search finds are the rows of doc it reads (or where it must read
        # them, as PostgreSQL's search does, the rows it finds them in): one join, no test.
        doc: str | None = None
        if "doc" in st.required or dialect.fts_kind:
            doc = _comp_alias(st, "doc")
            st.always.add("doc")  # every row found has it: no presence to read
        fts_from, fts_conds, fts_params, order = dialect.fts(words, doc)
        sources.append(fts_from)
        st.conds[0:0] = fts_conds
        st.params[0:0] = fts_params
        st.drive = doc if dialect.fts_kind else None
        drive = "doc" if doc is not None else None
    else:
        drive = next((c for c, inner in st.required.items() if inner and c not in STAMPS), None)
        if drive is not None:
            alias = _comp_alias(st, drive)
            sources.append(f"{table(drive)} {alias} JOIN entity e ON e._e = {alias}._e")
            order = f"{alias}._e"
            st.drive = alias
        else:
            sources.append("entity e")
    # The inner joins first, then the outer ones: a walk that must reach its far side is a
    # join like any other, and the planner may start from it.
    for outer in (False, True):
        for name, inner in st.required.items():
            if name in STAMPS or name == drive or inner == outer:
                continue
            alias = _comp_alias(st, name)
            kind = "LEFT JOIN" if outer else "JOIN"
            sources.append(f"{kind} {table(name)} {alias} ON {alias}._e = e._e")
        sources.extend(_walks(st, inner=not outer))
    # Every entity carrying the app's first kind is listed as that kind: no need to read it.
    order_of_kinds = vocabulary.kind_order()
    known_kind = drive if drive is not None and drive == order_of_kinds[0] else None
    # A row with every component tells its kind by which of them it has: no need to read it.
    told = every and known_kind is None and aggregate is None
    select: list[str] = ["e.eid"] if known_kind or told else ["e.eid", "e.kind"]
    if aggregate is not None:
        compiled = _aggregate(st, aggregate, tallied, sources)
        compiled.sql = _lean(st, compiled.sql)
        return compiled
    # newest N are selected newest first; the builder turns them round
    window = sort is None and limit is not None and not words
    keys = _sort_keys(st, sort, order) if not words and not window else []
    if page is not None and limit is not None and limit > page:
        rows = f"{page:,} row{'' if page == 1 else 's'}"
        raise Refused(
            f"limit is at most {rows}, the most one answer holds here — read on page by "
            f"page: each answer cut short gives the after= of the next"
        )
    paged = page is not None and not window and not words
    shown = [c for c in vocabulary.components if c not in skipped] if every else st.named
    tail = [expr for expr, _, _ in keys] + [order] if paged else []
    if table_name is not None:
        if words or every or aggregate is not None or shown != [table_name] or st.brought:
            raise Refused(
                f"a read of {table_name}'s rows names {table_name} alone — filter on its "
                "columns, and read other tables, searches and aggregates with ctx.store.query"
            )
        select = ["e.eid", "e.created_at"]
        _, extra = table_rows(st, table_name, len(select), window)
        # What the cursor is made of is read where the row has it already (a sorted
        # column, creation), and only what it lacks selected after it.
        shown_columns = [*select, *extra]
        more = list(dict.fromkeys(t for t in tail if t not in shown_columns))
        builder, extra = table_rows(st, table_name, len(select), window, tail=len(more))
        at = {expr: i for i, expr in enumerate([*shown_columns, *more])}
        keys_from: tuple[int, ...] = tuple(at[t] for t in tail)
        tail = more
        refs: tuple[int, ...] = ()
    else:
        builder, extra, refs = row_builder(
            st,
            shown,
            every,
            len(select),
            known_kind,
            window,
            tail=len(tail) + (len(checks) + 1 if checks else 0),
            kinds=order_of_kinds if told else None,
        )
        keys_from = tuple(range(len(select) + len(extra), len(select) + len(extra) + len(tail)))
    select.extend(extra)
    keys_at = len(select)
    select.extend(tail)
    checks_at = len(select)
    if checks:
        select.extend(f"EXISTS (SELECT 1 FROM {name})" for name in [*map(table, checks), "edge"])
    head = f"SELECT {', '.join(select)}"
    sql = f"{head} FROM {' '.join(sources + st.name_joins)}"
    spec = format_sort(sort)
    if after is not None:
        if words:
            raise Refused(
                "a search for words answers its best matches, one page — search for more "
                "words to narrow it, and leave out after="
            )
        values, position = read_cursor(after.cursor, spec, [_kind(c) for _, c, _ in keys])
        cond, cond_params = _after(keys, values, order, position, st.fixed)
        st.conds.append(cond)
        st.params.extend(cond_params)
    if st.conds:
        sql += " WHERE " + " AND ".join(st.conds)
    params = list(st.params)
    if words:
        sql += f" ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {_rows(limit)}"
        elif page is not None:
            sql += f" LIMIT {_rows(page + 1)}"
    elif window:
        assert limit is not None
        sql += f" ORDER BY {order} DESC LIMIT {_rows(limit)}"
    else:
        last_down = keys[-1][2] if keys else False
        terms = [dialect.order_term(expr, down) for expr, _, down in keys if expr != order]
        sql += " ORDER BY " + ", ".join([*terms, f"{order} {'DESC' if last_down else 'ASC'}"])
        size = limit if limit is not None else page
        if size is not None:
            sql += f" LIMIT {_rows(size + 1 if paged else size)}"
    compiled = Compiled(
        _lean(st, sql, len(head)), params, builder, cacheable=st.cacheable, edges=every, refs=refs
    )
    if paged:
        compiled.page = limit if limit is not None else page
        compiled.keys_at, compiled.order, compiled.keys_from = keys_at, spec, keys_from
    elif words and page is not None and limit is None:
        compiled.page = page  # the best of them, one page: cut short, with no cursor
        compiled.keys_at = -1
    # the search's index, or an equality's, is where a plan for any value starts too
    compiled.generic = dialect.generic_plans and (
        bool(words) or (walked and not valued and after is None)
    )
    if optional and dialect.probes_empty:
        compiled.optional = tuple(optional)
        # and, last, whether the app keeps any edge, which each row would list
        compiled.probe = "SELECT " + ", ".join(
            f"EXISTS (SELECT 1 FROM {name})" for name in [*map(table, optional), "edge"]
        )
    if checks:
        compiled.checks, compiled.checks_at = tuple(checks), checks_at
        compiled.absent = frozenset(skipped)
    return compiled


def format_sort(sort: syntax.Sort | None) -> str:
    """The order a `sort=` names, as written: what a cursor is a cursor of."""
    if sort is None:
        return ""
    return ",".join(("-" if down else "") + ".".join(path) for path, down in sort.keys)


def _sort_keys(st: _State, sort: syntax.Sort | None, order: str) -> list[tuple[str, Column, bool]]:
    """The SQL of each column `sort=` names, its column, and whether it descends. Creation
    (`created.at`) is the entity's place in creation itself, which no two entities share."""
    keys: list[tuple[str, Column, bool]] = []
    for path, down in sort.keys if sort is not None else ():
        if path == ("created", "at"):
            keys.append((order, Column("at", "number"), down))
            break  # nothing is tied after it
        expr, column, _ = _resolve_path(st, path, needs_value=False)
        keys.append((expr, column, down))
    return keys


def _kind(column: Column) -> str:
    if column.type == "number" and not column.reference:
        return "number"
    if column.type == "bool" and not column.reference:
        return "bool"
    return "text"


def _after(
    keys: list[tuple[str, Column, bool]],
    values: list[Any],
    order: str,
    position: int,
    fixed: Mapping[str, Any],
) -> tuple[str, list[Any]]:
    """The rows after the cursor's: past it in the first column, or tied there and past it in
    the next, …, or tied in all and later (earlier, descending) in creation. Ascending, an
    empty value comes first; descending, last.

    A column the filter holds to the cursor's own value (`fixed`) is tied for every row
    it selects, so it is left out: what is left is a range of the index that the filter's
    `=` and the order are the leading columns of, not an OR the database cannot walk."""
    terms: list[tuple[str, list[Any]]] = []
    tied: list[tuple[str, list[Any]]] = []
    last_down = keys[-1][2] if keys else False
    for (expr, _, down), value in zip(keys, values, strict=True):
        if expr == order:  # creation itself: the position says it
            continue
        if expr in fixed and value is not None and fixed[expr] == value:
            continue
        beyond = _beyond(expr, value, down)
        if beyond is not None:
            terms.append(_all([*tied, beyond]))
        tied.append((f"{expr} IS NULL", []) if value is None else (f"{expr} = ?", [value]))
    terms.append(_all([*tied, (f"{order} {'<' if last_down else '>'} ?", [position])]))
    sql = " OR ".join(f"({s})" for s, _ in terms)
    return f"({sql})", [v for _, ps in terms for v in ps]


def _beyond(expr: str, value: Any, down: bool) -> tuple[str, list[Any]] | None:
    if value is None:
        return None if down else (f"{expr} IS NOT NULL", [])
    if down:
        return (f"({expr} < ? OR {expr} IS NULL)", [value])
    return (f"{expr} > ?", [value])


def _all(parts: list[tuple[str, list[Any]]]) -> tuple[str, list[Any]]:
    return " AND ".join(s for s, _ in parts), [v for _, ps in parts for v in ps]


# what the store's eids look like (`pasture.store.base.new_eid`): a value written so in a
# filter is the eid of an entity, never a name
_AN_EID = re.compile(r"[0-9a-f]{16}")
# `e.<column>` where `e` is the entity table's alias (never a part of another name)
_ENTITY_USE = re.compile(r"(?<![\w.\"])e\.(\w+)")
# what a component row carries of its entity: `entity` column -> its own column
_CARRIED = {"_e": "_e", "eid": "_eid", "created_at": "_created_at", "created_by": "_created_by"}
_NO_JOIN = _Join("")
# what the full-text search's rows carry besides (see `Dialect.fts_kind`)
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
    searched = st.dialect.fts_kind and st.drive == st.joins.get(("comp", "doc"), _NO_JOIN).alias
    carried = _CARRIED_FTS if searched else _CARRIED
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


def _few_tables(st: _State, search: bool, every: bool, whole: bool) -> None:
    """Refuses a filter that would join more tables in one SELECT than `MAX_TABLES`.

    Counted the same on every backend: the entity table, the full-text search's,
    each component read, and each table a walk through a reference joins.
    """
    components = sum(1 for c in st.required if c not in STAMPS)
    walked = sum(1 + (j.table is not None) for j in st.joins.values() if j.ref)
    tables = 1 + int(search) + components + walked
    if tables <= MAX_TABLES:
        return
    if every:
        what = "a filter naming no component" if whole else "*"
        raise Refused(
            f"{what} reads all {components} components of this app, more than one filter reads "
            f"at once ({MAX_TABLES} tables) — name the components you need, like .jog!&.doc?"
        )
    raise Refused(
        f"this filter reads {tables} tables at once, and a filter reads at most {MAX_TABLES} "
        "— name fewer components, or walk fewer references, and ask again for the rest"
    )


def _rows(limit: int) -> str:
    """A limit written into the SQL, not passed as a parameter: a prepared statement's
    generic plan then still knows how few rows are wanted (a whole number, never text)."""
    return str(min(int(limit), 2**62))


def _no_bylines(st: _State) -> None:
    """Leave out the persons the store keeps for `created.by` (an entity with a person and
    nothing else): a filter that names no component of the app's, like `.count!` or
    `.created.at=today`, is about the app's things, as status counts them. A filter that
    names `person` gets them."""
    others = [
        f"EXISTS (SELECT 1 FROM {table(name)} WHERE _e = e._e)"
        for name in st.vocabulary.components
        if name not in STAMPS and name != "person"
    ]
    st.conds.append(
        f"(NOT EXISTS (SELECT 1 FROM {table('person')} WHERE _e = e._e)"
        + "".join(f" OR {other}" for other in others)
        + ")"
    )


def _need(st: _State, component: str, *, inner: bool) -> None:
    st.required[component] = st.required.get(component, False) or inner


def _name(st: _State, component: str) -> None:
    if component not in st.named:
        st.named.append(component)


def _comp_alias(st: _State, component: str) -> str:
    key = ("comp", component)
    join = st.joins.get(key)
    if join is None:
        join = st.joins[key] = _Join(f"t{len(st.joins)}")
    return join.alias


def _walks(st: _State, *, inner: bool) -> list[str]:
    """The walks' joins: the inner ones (which need only the drive and inner joins before
    them) or the outer ones."""
    return [j.sql() for j in st.joins.values() if j.ref and j.inner == inner]


def _expr(st: _State, component: str, column: str) -> str:
    if component in STAMPS:
        at, by = STAMPS[component]
        return f"e.{at if column == 'at' else by}"
    return f"{_comp_alias(st, component)}.{q(column)}"


def _resolve_path(st: _State, path: syntax.Path, *, needs_value: bool) -> tuple[str, Column, str]:
    """The SQL expression of a column path (walking references), its column, and its text."""
    shown = ".".join(path)
    if len(path) < 2 or len(path) % 2:
        raise Refused(
            f"{echo('.' + shown)} names no column — write .component.column, like .jog.miles>=5, "
            "walk a reference like .comment.target.doc.title~=word, or bring what it points at "
            "like .comment.target.doc?"
        )
    if len(path) // 2 - 1 > MAX_HOPS:
        raise Refused(
            f".{path[0]}.{path[1]}… walks {len(path) // 2 - 1} references, and a filter walks at "
            f"most {MAX_HOPS} — like .comment.target.doc.title~=word, which walks one"
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
        walk = _hop(st, path[: i + 1], expr, target)
        walk.inner = walk.inner or needs_value  # no value is there without the far side
        column = _column(st, target, path[i + 1])
        if target.name in STAMPS:
            at, by = STAMPS[target.name]
            expr = f"{walk.alias}.{at if column.name == 'at' else by}"
        else:
            expr = f"{walk.alias}.{q(column.name)}"
    return expr, column, shown


def _hop(st: _State, key: syntax.Path, expr: str, target: Component) -> _Join:
    """The join from a reference (`expr`) to `target` on the entity it names, made once per
    path (`key` ends at the target); the row brings `target` along on the reference."""
    walk = st.joins.get(key)
    if walk is None:
        n = len(st.joins)
        ent, alias = f"w{n}", f"x{n}"
        if target.name in STAMPS:
            walk = _Join(ent, ref=expr, ent=ent)
        else:
            walk = _Join(alias, ref=expr, ent=ent, table=table(target.name))
        st.joins[key] = walk
    brought = st.brought.setdefault(key[:-1], [])
    if target.name not in brought:
        brought.append(target.name)
    return walk


def _reach(st: _State, p: syntax.Reach) -> None:
    """`.comment.target.doc?`: bring the component the reference points at (`!`: and require
    it), on the reference's value in the row."""
    shown = "." + ".".join(p.path) + ("!" if p.required else "?")
    if len(p.path) // 2 > MAX_HOPS:
        raise Refused(
            f".{p.path[0]}.{p.path[1]}… walks {len(p.path) // 2} references, and a filter walks "
            f"at most {MAX_HOPS} — like .comment.target.doc?, which walks one"
        )
    expr, column, _ = _resolve_path(st, p.path[:-1], needs_value=p.required)
    if not column.reference:
        raise Refused(
            f"{p.path[-3]}.{p.path[-2]} is not a reference, so {echo(shown)} brings nothing "
            "from it — bring what a reference points at, like .comment.target.doc?"
        )
    walk = _hop(st, p.path, expr, component_of(p.path[-1], st.vocabulary))
    walk.inner = walk.inner or p.required  # `!`: only the rows whose reference reaches it


def _column(st: _State, comp: Component, name: str) -> Column:
    column = comp.columns.get(name)
    if column is None:
        raise Refused(no_column(comp.name, name, st.vocabulary))
    return column


def _value(st: _State, column: Column, shown: str, text: str, op: str) -> Any:
    """A value written in a filter as its column's type, or the sentence saying how."""
    if st.variables and _is_variable(text):
        return None
    _no_nul(text, shown)
    example = f".{shown}{op if op not in ('~=',) else '='}"
    if column.reference:
        return text
    if column.type == "number":
        try:
            return convert(shown, "number", text)
        except OutOfRange as e:
            raise Refused(str(e)) from None
        except BadValue:
            raise Refused(f"{shown} is a number — write one, like {example}5") from None
    if column.type == "bool":
        try:
            return st.dialect.boolean(convert(shown, "bool", text) is True)
        except BadValue:
            raise Refused(f"{shown} is true or false — write {example}true") from None
    return text


def _column_predicate(
    st: _State, p: syntax.Compare | syntax.Range | syntax.Empty | syntax.Present
) -> None:
    if isinstance(p, syntax.Empty):
        expr, column, shown = _resolve_path(st, p.path, needs_value=False)
        st.conds.append(f"{expr} IS NULL")
        return
    if isinstance(p, syntax.Present):
        expr, column, shown = _resolve_path(st, p.path, needs_value=True)
        st.conds.append(f"{expr} IS NOT NULL")
        return
    if isinstance(p, syntax.Range):
        expr, column, shown = _resolve_path(st, p.path, needs_value=True)
        if column.type == "bool" or column.reference:
            raise Refused(
                f"{shown} has no range — ranges are for numbers and times, like .jog.miles=3..10"
            )
        if column.type == "time":
            low_span = _span(st, shown, p.low, "=")
            high_span = _span(st, shown, p.high, "=")
            if low_span is not None and high_span is not None:
                stamp = _is_stamp(p.path)
                high = high_span.end if p.include_high else high_span.start
                st.conds.append(_bounded(st, expr, stamp, [(">=", low_span.start), ("<", high)]))
            return
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
    if column.type == "time" and op != "~=":
        _time_predicate(st, expr, _is_stamp(p.path), shown, op, p.values)
        return
    values = [_value(st, column, shown, v, op) for v in p.values]
    if op == "~=":
        if len(p.values[0]) > MAX_SEARCH:
            raise Refused(
                f"~= looks for at most {MAX_SEARCH} characters in {shown} — "
                "look for a shorter part of it"
            )
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
        if column.reference and all(_AN_EID.fullmatch(str(v)) for v in values):
            # an eid is that entity alone: one look in the column's index, in its order
            test = f"{expr} IN ({marks})" if len(values) > 1 else f"{expr} = ?"
            params = values
        elif column.reference:
            named = f"SELECT eid FROM entity WHERE name IN ({marks})"
            test = f"({expr} IN ({marks}) OR {expr} IN ({named}))"
            params = values + values
        else:
            test = f"{expr} IN ({marks})" if len(values) > 1 else f"{expr} = ?"
            params = values
        if op == "=" and len(values) == 1 and values[0] is not None:
            st.fixed[expr] = values[0]
        if op == "!=":
            test = f"({expr} IS NULL OR NOT {test})"
        st.conds.append(test)
        st.params.extend(params)
        return
    st.conds.append(f"{expr} {op} ?")
    st.params.append(values[0])


# -- times -----------------------------------------------------------------------------


def _is_stamp(path: syntax.Path) -> bool:
    """Whether a path ends at a stamp (`created.at`): a moment every entity has, to the
    microsecond, so it is compared as one (and through its index)."""
    return path[-2] in STAMPS


def _span(st: _State, shown: str, text: str, op: str) -> Span | None:
    """The span a time value names, or None for a template's variable; Refused saying how
    to write a time when it names none."""
    if st.variables and _is_variable(text):
        return None
    _no_nul(text, shown)
    zone = server_zone()
    st.zone = zone_name()
    found = span(text, st.now or datetime.now(UTC), zone)
    if found is None:
        example = f".{shown}{op if op != '~=' else '='}"
        raise Refused(
            f"{shown} is a time — write {example}2026-09-01, a moment like 2026-09-01T10:00, "
            f"or a phrase: {EXAMPLES}"
        )
    if found.moving:
        st.cacheable = False
    return found


def _time_predicate(
    st: _State, expr: str, stamp: bool, shown: str, op: str, texts: tuple[str, ...]
) -> None:
    """`.comp.col OP value` on a time: the value is a span, and the operator picks its edge."""
    if len(texts) > MAX_TIMES:
        raise Refused(
            f"{shown} is one of at most {MAX_TIMES} times in one list — ask for a stretch "
            f"instead, like .{shown}>=2026-09-01&.{shown}<2026-10-01"
        )
    spans = [_span(st, shown, text, op) for text in texts]
    if any(s is None for s in spans):
        return  # a template's variable: checked once it has a value
    found = [s for s in spans if s is not None]
    if op in ("=", "!="):
        within = _any_of(
            [f"({_bounded(st, expr, stamp, [('>=', s.start), ('<', s.end)])})" for s in found]
        )
        st.conds.append(f"({within})" if op == "=" else f"({expr} IS NULL OR NOT ({within}))")
        return
    (one,) = found
    # `>=` from its start, `>` after its end, `<` before its start, `<=` up to its end
    edge = {">=": (">=", one.start), ">": (">=", one.end), "<": ("<", one.start)}
    compare, moment = edge.get(op, ("<", one.end))
    st.conds.append(_bounded(st, expr, stamp, [(compare, moment)]))


def _any_of(terms: list[str]) -> str:
    """`a OR b OR …` nested in halves: a thousand values make an expression ten deep, not a
    thousand (SQLite refuses one past a thousand)."""
    if len(terms) == 1:
        return terms[0]
    half = len(terms) // 2
    return f"({_any_of(terms[:half])} OR {_any_of(terms[half:])})"


def _bounded(st: _State, expr: str, stamp: bool, bounds: list[tuple[str, datetime]]) -> str:
    """`expr op moment` for each bound (`>=` or `<`) on a stored time, joined by AND, with
    its parameters added in order.

    A stamp is always a moment to the microsecond. A time column of an app's own
    holds a date (a day, counted from its midnight in the server's zone), a moment
    of whole seconds, or one to the microsecond; each form is compared as text with
    bounds of its own form, one branch of an OR apiece, so each branch is still a
    range an index on the column serves.
    """
    if stamp:
        st.params.extend(moment_text(moment) for _, moment in bounds)
        return " AND ".join(f"{expr} {op} ?" for op, _ in bounds)
    st.zone = zone_name()
    zone = server_zone()
    branches: list[str] = []
    for form, text_of in (
        ("= 10", lambda moment: day_text(moment, zone)),
        ("= 20", whole_second_text),
        ("NOT IN (10, 20)", moment_text),
    ):
        st.params.extend(text_of(moment) for _, moment in bounds)
        tests = "".join(f" AND {expr} {op} ?" for op, _ in bounds)
        branches.append(f"(length({expr}) {form}{tests})")
    return "(" + " OR ".join(branches) + ")"


def _no_nul(text: str, shown: str) -> None:
    # PostgreSQL keeps no NUL in text, so neither backend matches one
    if "\x00" in text:
        raise Refused("a value in a filter cannot hold a NUL character (%00) — leave it out")
    _whole_characters(shown, text)


def _whole_characters(shown: str, text: str) -> None:
    """Refuses text no database can be asked about: a lone UTF-16 surrogate in it."""
    surrogate = lone_surrogate(text)
    if surrogate is not None:
        raise Refused(not_characters(shown, surrogate))


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


def _plural(st: _State, p: syntax.Plural) -> None:
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
    ref = f"p.{q(column.name)}"
    st.conds.append(f"(SELECT count(*) FROM {table(comp.name)} p WHERE {ref} = e.eid) {p.op} ?")
    st.params.append(p.number)
    # no entity nobody points at matches: those pointed at so often are a set, read once
    # from the reference column's index (grouped, in its order)
    some = p.op == ">" or (p.op in (">=", "=") and p.number >= 1) or (p.op, p.number) == ("!=", 0)
    pointed = f"SELECT {ref} FROM {table(comp.name)} p GROUP BY {ref} HAVING count(*) {p.op} ?"
    within = f"e._e IN (SELECT w._e FROM entity w WHERE w.eid IN ({pointed}))"
    st.plurals.append((len(st.conds) - 1, within if some else None))


def _plurals_drive(st: _State, narrowed: bool) -> None:
    """A reverse plural needing an entity pointing here that is the filter's only test of its
    rows (beside other plurals) reads the entities it matches as a set (`e._e IN (…)`, which
    the database starts from), not a count for every row the filter's components have.
    Beside another test (a column's value, a walk, words, id=) each row is counted: that
    test's index finds a few rows, and the set would be read whole for them (SQLite plans
    it first all the same)."""
    if not st.plurals or narrowed or len(st.conds) > len(st.plurals):
        return
    for at, within in st.plurals:
        if within is not None:
            st.conds[at] = within


def _aggregate(
    st: _State,
    aggregate: syntax.Aggregate,
    tallied: tuple[str, Column, str] | None,
    sources: list[str],
) -> Compiled:
    """The one object an aggregate answers: `{count}`, `{tally}` or `{distinct}`."""
    where = (" WHERE " + " AND ".join(st.conds)) if st.conds else ""
    matched = f"FROM {' '.join(sources)}{where}"
    params = list(st.params)
    if tallied is None:
        return Compiled(f"SELECT count(*) {matched}", params, counted, cacheable=st.cacheable)
    expr, column, _ = tallied
    # a row lacking the value has none to count or list
    values = f"SELECT {expr} AS v {matched}{' AND ' if where else ' WHERE '}{expr} IS NOT NULL"
    as_bool = column.type == "bool" and not column.reference
    if isinstance(aggregate, syntax.Distinct):
        sql = f"SELECT DISTINCT v FROM ({values}) AS found ORDER BY v"
        return Compiled(sql, params, distinct_values(as_bool), cacheable=st.cacheable)
    sql = f"SELECT v, count(*) AS n FROM ({values}) AS tallied GROUP BY v ORDER BY n DESC, v"
    return Compiled(sql, params, tallied_values(as_bool), cacheable=st.cacheable)


__all__ = [
    "Compiled",
    "check_filter",
    "compile_ast",
    "compile_filter",
    "plural_of",
]
