"""The tables every SQL backend shares, and what a write runs against them.

The layout, one schema per app:

    entity(_e integer key, eid, kind, name, created_at, created_by, updated_at, updated_by)
    c_<component>(_e → entity, _eid, _created_at, _created_by,
                  one typed column per declared column, an index on each)
    edge(parent → entity, type, child eid)
    doc_fts                full text over c_doc(title, body)
    pasture_journal        what each write changed, with its call (`journal.py`)

`_e` is the backend's own integer for an entity, so joins are integer joins and
"oldest first" is `_e` order. `kind` (the component a row is listed as) and
`name` (what a reference to it reads back as) are kept on the entity by every
write, so a read never has to work them out. The stamps `created`/`updated` are
on every entity, so they live on `entity` itself. A component row also carries
what never changes of its entity — its eid and `created` stamps (`_eid`,
`_created_at`, `_created_by`) — so a listing driven from a component table
that shows nothing else of `entity` does not join it.

It is apart from the filter compiler (`sql.py`): this module makes and writes
the tables, that one reads them; both take their SQL spelling from `dialect.py`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from pasture.store import bundles as b
from pasture.store.dialect import POSTGRES, SQLITE, STAMPS, Dialect, q, sql_type, table
from pasture.store.journal import journal_ddl
from pasture.store.vocab import Column, Component, Vocabulary, changed_type

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
        # the indexes a vocabulary declared, so the next one's deploy drops those it does not
        f"""CREATE TABLE IF NOT EXISTS pasture_indexes (
        component {t} NOT NULL, name {t} NOT NULL, columns {t} NOT NULL,
        PRIMARY KEY (component, name))""",
        *journal_ddl(dialect),
    ]


def carried_ddl(dialect: Dialect) -> str:
    """What every component row carries of its entity (never changed once written)."""
    t = dialect.text
    return f"_eid {t}, _created_at {t}, _created_by {t}"


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


def declared_index(dialect: Dialect, component: str, index: str) -> str:
    """The SQL name of a declared index: `ix_<component>_<index>_<digest>`, the digest
    keeping apart names the underscores would run together, cut short where the database
    would cut it."""
    digest = hashlib.sha256(f"{component}.{index}".encode()).hexdigest()[:6]
    return f"{f'ix_{component}_{index}'[: dialect.max_name - 7]}_{digest}"


Recorded = Mapping[tuple[str, str], str]  # (component, index) -> its columns, comma-joined


def index_changes(
    dialect: Dialect, vocab: Vocabulary, recorded: Recorded
) -> tuple[list[str], list[tuple[str, str, str]], list[tuple[str, str]]]:
    """What makes the database's indexes the ones `vocab` declares: the statements, the rows
    of `pasture_indexes` to keep and those to take away.

    Each index is over its columns in order and then `_e`, the row's place in creation,
    so a read on those columns in their order (or its reverse) and then creation is one
    walk of the index, with nothing left to sort.
    """
    statements: list[str] = []
    keep: list[tuple[str, str, str]] = []
    declared: set[tuple[str, str]] = set()
    for comp in vocab.declared():
        for index, cols in comp.indexes.items():
            key, joined = (comp.name, index), ",".join(cols)
            declared.add(key)
            if recorded.get(key) == joined:
                continue
            name = declared_index(dialect, comp.name, index)
            statements.append(f"DROP INDEX IF EXISTS {name}")
            terms = ", ".join(dialect.index_term(q(c)) for c in cols)
            statements.append(f"CREATE INDEX {name} ON {table(comp.name)}({terms}, _e)")
            keep.append((comp.name, index, joined))
    gone = sorted(key for key in recorded if key not in declared)
    statements.extend(f"DROP INDEX IF EXISTS {declared_index(dialect, *key)}" for key in gone)
    return statements, keep, gone


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


def kind_of(rank: Mapping[str, int], written: Iterable[str]) -> str:
    """A new entity's kind, as `kind_sql` works it out for a stored one: of the components
    it is written with, the first in the vocabulary's order (`rank`), else `created`."""
    return min((c for c in written if c in rank), key=rank.__getitem__, default="created")


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


def count_sql(vocab: Vocabulary) -> str:
    """`Store.count()`: the entities carrying a component the app declared or a doc, each
    once, counted without a row leaving the database."""
    kept = " UNION ".join(
        f"SELECT _e FROM {table(name)}"
        for name in [*(c.name for c in vocab.declared()), "doc"]
        if name not in STAMPS
    )
    return f"SELECT count(*) FROM ({kept}) AS kept"


def describe(vocab: Vocabulary) -> dict[str, Any]:
    """`Store.schema()`: every component with its columns and their types, its indexes
    (`{"by_owner": ["owner"]}`), and what each column holds (`details`: its type,
    whether a new row must be given it, its default, the person or table it names)."""
    return {
        "components": {
            c.name: {
                "columns": {col.name: col.shown for col in c.columns.values()},
                "details": {col.name: column_details(col) for col in c.columns.values()},
                "indexes": {name: list(cols) for name, cols in c.indexes.items()},
                "kind": c.kind,
                "platform": c.platform,
                "writable": c.writable,
            }
            for c in vocab.components.values()
        },
        "tools": vocab.tools,
    }


def column_details(column: Column) -> dict[str, Any]:
    """`{"type", "required"}`, and `"default"`, `"person": true` or `"table"` where it has one."""
    out: dict[str, Any] = {"type": column.shown, "required": column.required}
    if column.has_default:
        out["default"] = column.default
    if column.person:
        out["person"] = True
    if column.table is not None:
        out["table"] = column.table
    return out


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
        self.person_entity = m(
            "INSERT INTO entity(_e, eid, kind, name, created_at, created_by, updated_at, "
            "updated_by) VALUES (?, ?, 'person', ?, ?, ?, ?, ?)"
        )
        self.person = m(f"INSERT INTO c_person({carry}, name) VALUES (?, ?, ?, ?, ?)")
        # A person the store keeps for created.by is the one entity that created itself.
        self.kept_person = m("SELECT 1 FROM entity WHERE _e = ? AND eid = created_by")
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
        self.index = m(
            "INSERT INTO pasture_indexes(component, name, columns) VALUES (?, ?, ?) "
            "ON CONFLICT (component, name) DO UPDATE SET columns = excluded.columns"
        )
        self.unindex = m("DELETE FROM pasture_indexes WHERE component = ? AND name = ?")
        self.row_of = m("SELECT _e FROM entity WHERE eid = ?")
        self.named = m(
            "SELECT e.eid FROM c_alias a JOIN entity e ON e._e = a._e WHERE a.name = ? LIMIT 5"
        )

    def carries_kind(self, comp: str) -> bool:
        """Whether a `comp` row carries its entity's kind: a doc row does where a search
        reads its rows' kind from them (see `Dialect.fts_kind`)."""
        return comp == "doc" and self.dialect.fts_kind

    def carry(self, comp: str) -> tuple[str, ...]:
        """What a `comp` row carries of its entity."""
        return (*CARRY, "_kind") if self.carries_kind(comp) else CARRY

    def of_entity(self, comp: str) -> tuple[str, ...]:
        """The columns of `entity` that `carry(comp)` are copied from."""
        return (*OF_ENTITY, "kind") if self.carries_kind(comp) else OF_ENTITY

    def insert(self, name: str, columns: Sequence[str]) -> str:
        marks = ", ".join("?" for _ in columns)
        return self.dialect.placeholders(
            f"INSERT INTO {name}({', '.join(columns)}) VALUES ({marks})"
        )

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

    def carries(self, component: str, eid: str) -> bool:
        sql = self.writes.dialect.placeholders(
            f"SELECT 1 FROM {table(component)} WHERE _e = (SELECT _e FROM entity WHERE eid = ?)"
        )
        return self.execute(sql, (eid,)).fetchone() is not None


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
    "base_tables",
    "column_details",
    "component_ddl",
    "count_sql",
    "declared_index",
    "describe",
    "index_changes",
    "kind_of",
    "kind_sql",
    "name_of",
    "same_type",
]
