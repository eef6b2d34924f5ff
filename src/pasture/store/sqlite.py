"""The embedded backend: one SQLite file per app, in WAL mode.

Tables are laid out in `tables.py`, shared with a PostgreSQL backend. A write is
one `BEGIN IMMEDIATE … COMMIT`: every bundle is checked and every entity named
before the first row changes, and any refusal rolls the whole call back. Reads
compile a filter once and keep the compiled SELECT (and its row builder) for
the next call with the same line. The names that references read back as
(`created.by` → `{eid, name}`) are read after the rows, once per distinct
eid, in the same read transaction.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from pasture import faults
from pasture.caller import Caller
from pasture.errors import DeployRefused, Refused
from pasture.store import bundles as b
from pasture.store.base import Answer, Applied, Bundle, Row
from pasture.store.dialect import SQLITE, q
from pasture.store.sql import Compiled, compile_filter
from pasture.store.tables import (
    BASE_TABLES,
    NAME_SQL,
    SQLITE_WRITES,
    Lookup,
    check_guards,
    count_sql,
    describe,
    installing,
    kind_of,
    kind_sql,
    name_of,
    type_changes,
)
from pasture.store.times import Clock, utc_now, zone_name
from pasture.store.vocab import Vocabulary
from pasture.values import stamp as stamp_of

if TYPE_CHECKING:
    from pasture.store.postgres import PostgresStore

_CACHE = 512  # compiled filters kept per store
_LAYOUT = "3"  # component rows carry `_eid`, `_created_at`, `_created_by` (pasture.store.tables)
_W = SQLITE_WRITES
_NONE: dict[str, Any] = {}  # no names to hand a row builder (never written to)

_FTS = [
    """CREATE VIRTUAL TABLE IF NOT EXISTS doc_fts USING fts5(
        title, body, content='c_doc', content_rowid='_e',
        tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER IF NOT EXISTS c_doc_ai AFTER INSERT ON c_doc BEGIN
        INSERT INTO doc_fts(rowid, title, body) VALUES (new._e, new.title, new.body); END""",
    """CREATE TRIGGER IF NOT EXISTS c_doc_ad AFTER DELETE ON c_doc BEGIN
        INSERT INTO doc_fts(doc_fts, rowid, title, body)
        VALUES ('delete', old._e, old.title, old.body); END""",
    """CREATE TRIGGER IF NOT EXISTS c_doc_au AFTER UPDATE ON c_doc BEGIN
        INSERT INTO doc_fts(doc_fts, rowid, title, body)
        VALUES ('delete', old._e, old.title, old.body);
        INSERT INTO doc_fts(rowid, title, body) VALUES (new._e, new.title, new.body); END""",
]


class SqliteStore:
    """One app's graph in one SQLite file (see `pasture.store.base.Store`)."""

    def __init__(self, path: str | Path, *, clock: Clock = utc_now) -> None:
        self.path = str(path)
        self._clock = clock  # what writes are stamped with and time phrases count from
        self._db = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, cached_statements=1024
        )
        self._lock = threading.RLock()
        self._compiled: OrderedDict[str, Compiled] = OrderedDict()
        # What a write may take as known rather than read again, true as of `_version`
        # (`PRAGMA data_version`, which moves when any other connection commits to the
        # file); forgotten whenever a write of ours rolls back.
        self._version: int | None = None
        self._top: int | None = None  # the largest `_e` there is
        self._people: dict[str, str | None] = {}  # eid -> name of callers kept as persons
        self._sql: dict[tuple[str, tuple[str, ...]], str] = {}  # a component's INSERT
        db = self._db
        try:
            db.execute(f"PRAGMA busy_timeout = {int(faults.busy_seconds() * 1000)}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA temp_store = MEMORY")
        except sqlite3.Error as e:
            raise faults.fault(e, self.path) or e from None
        with self._lock:
            self._begin()
            try:
                for statement in BASE_TABLES:
                    db.execute(statement)
                stored = db.execute("SELECT value FROM pasture_meta WHERE key = 'vocab'").fetchone()
                doc = json.loads(stored[0]) if stored else None
                self._vocab = Vocabulary.from_json(doc)
                self._upgrade()
                self._install(self._vocab)
                db.execute("COMMIT")
            except BaseException as e:
                raise self._undo(e) from None
        self._kinds()

    # -- the Store interface ------------------------------------------------------------

    @property
    def vocabulary(self) -> Vocabulary:
        """The vocabulary installed now (the platform's components and the app's own)."""
        return self._vocab

    def declare(self, vocab: Mapping[str, Any]) -> None:
        with self._lock:
            new = Vocabulary.from_json(vocab, self._vocab)
            problems = type_changes(new, self._physical())
            if problems:
                raise DeployRefused(problems, prefix="vocab.json")
            self._begin()
            try:
                self._install(new)
                self._db.execute(_W.meta, ("vocab", json.dumps(vocab)))
                if new.kind_order() != self._vocab.kind_order():
                    self._rekind_all(new)
                self._db.execute("COMMIT")
            except BaseException as e:
                raise self._undo(e) from None
            self._vocab = new
            self._compiled.clear()
            self._forget()
            self._kinds()

    def apply(self, bundles: Bundle | Sequence[Bundle], caller: Caller) -> Applied:
        vocab = self._vocab
        checked = b.check(bundles, vocab)
        with self._lock:
            if vocab is not self._vocab:  # redeclared meanwhile: check again
                vocab = self._vocab
                checked = b.check(bundles, vocab)
            self._begin()
            try:
                version = self._db.execute("PRAGMA data_version").fetchone()[0]
                if version != self._version:  # another connection wrote: read afresh
                    self._forget()
                    self._version = version
                applied = self._write(checked, caller, vocab)
                self._db.execute("COMMIT")
            except BaseException as e:
                self._forget()
                raise self._undo(e) from None
        return applied

    def query(self, filter: str, caller: Caller) -> Answer:
        with self._lock:
            compiled = self._compiled.get(filter) if isinstance(filter, str) else None
            if compiled is not None and compiled.zone not in (None, zone_name()):
                compiled = None  # written in a time zone the server no longer has
            if compiled is None:
                compiled = compile_filter(filter, self._vocab, now=self._clock())
                if compiled.cacheable:
                    self._compiled[filter] = compiled
                    if len(self._compiled) > _CACHE:
                        self._compiled.popitem(last=False)
            db = self._db
            try:
                if compiled.refs:
                    # the rows and the names they refer to are read from one snapshot
                    db.execute("BEGIN")
                    try:
                        found = db.execute(compiled.sql, compiled.params).fetchall()
                        names = self._names(found, compiled.refs) if found else _NONE
                    finally:
                        db.execute("COMMIT")
                else:
                    found = db.execute(compiled.sql, compiled.params).fetchall()
                    names = _NONE
            except sqlite3.Error as e:
                raise faults.fault(e, self.path) or e from None
        answer = compiled.build(found, names)
        if compiled.edges and isinstance(answer, list) and answer:
            self._edges(answer)
        return answer

    def _names(self, found: list[tuple[Any, ...]], refs: tuple[int, ...]) -> dict[str, Any]:
        """{eid: name} of the entities the rows refer to, each read once."""
        if len(refs) == 1:
            (at,) = refs
            eids = {r[at] for r in found}
        else:
            eids = {r[at] for r in found for at in refs}
        eids.discard(None)
        if not eids:
            return _NONE
        db = self._db
        if len(eids) == 1:
            (eid,) = eids
            one = db.execute("SELECT name FROM entity WHERE eid = ?", (eid,)).fetchone()
            return {} if one is None else {eid: one[0]}
        names: dict[str, Any] = {}
        listed = list(eids)
        for i in range(0, len(listed), 500):
            part = listed[i : i + 500]
            marks = ", ".join("?" * len(part))
            names.update(db.execute(f"SELECT eid, name FROM entity WHERE eid IN ({marks})", part))
        return names

    def _edges(self, rows: list[Row]) -> None:
        """Each row's edges, `[{type, child: {eid, name?}}]`, where it has any."""
        by_eid = {r["entity"]["eid"]: r for r in rows}
        eids = list(by_eid)
        with self._lock:
            for i in range(0, len(eids), 500):
                part = eids[i : i + 500]
                marks = ", ".join("?" * len(part))
                for parent, kind, child, name in self._db.execute(
                    "SELECT p.eid, g.type, g.child, c.name FROM edge g "
                    "JOIN entity p ON p._e = g.parent LEFT JOIN entity c ON c.eid = g.child "
                    f"WHERE p.eid IN ({marks}) ORDER BY g.parent, g.rowid",
                    part,
                ):
                    ref = {"eid": child} if name is None else {"eid": child, "name": name}
                    by_eid[parent].setdefault("edges", []).append({"type": kind, "child": ref})

    def count(self) -> int:
        with self._lock:
            try:
                found = self._db.execute(count_sql(self._vocab)).fetchone()
            except sqlite3.Error as e:
                raise faults.fault(e, self.path) or e from None
        return int(found[0])

    def schema(self) -> dict[str, Any]:
        return describe(self._vocab)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- installing a vocabulary --------------------------------------------------------

    def _forget(self) -> None:
        self._version = None
        self._top = None
        self._people.clear()

    def _undo(self, e: BaseException) -> BaseException:
        """Roll back what was begun: the sentence a storage fault `e` means, or `e` itself."""
        with contextlib.suppress(sqlite3.Error):
            self._db.execute("ROLLBACK")
        return faults.fault(e, self.path) or e

    def _begin(self) -> None:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise faults.fault(e, self.path) or e from None

    def _physical(self) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = defaultdict(dict)
        for comp, col, kind in self._db.execute("SELECT component, col, type FROM pasture_columns"):
            out[comp][col] = kind
        return out

    def _upgrade(self) -> None:
        """Give the component rows of a file made before they carried their entity's eid
        and `created` stamps those columns."""
        db = self._db
        found = db.execute("SELECT value FROM pasture_meta WHERE key = 'layout'").fetchone()
        if found is not None and found[0] == _LAYOUT:
            return
        for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'c\\_%' ESCAPE '\\'"
        ).fetchall():
            had = {r[1] for r in db.execute(f"PRAGMA table_info({q(name)})")}
            for column in ("_eid", "_created_at", "_created_by"):
                if column not in had:
                    db.execute(f"ALTER TABLE {q(name)} ADD COLUMN {column} TEXT")
            db.execute(
                f"UPDATE {q(name)} SET (_eid, _created_at, _created_by) = "
                f"(SELECT eid, created_at, created_by FROM entity WHERE _e = {q(name)}._e)"
            )
        db.execute(_W.meta, ("layout", _LAYOUT))

    def _install(self, vocab: Vocabulary) -> None:
        db = self._db
        physical = self._physical()
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for ddl, columns in installing(SQLITE, vocab, physical, tables):
            for statement in ddl:
                db.execute(statement)
            for row in columns:
                db.execute(_W.column, row)
        for statement in _FTS:
            db.execute(statement)

    def _kinds(self) -> None:
        order = self._vocab.kind_order()
        self._rank = {name: i for i, name in enumerate(order)}
        self._rekind = (
            f"UPDATE entity SET updated_at = ?, updated_by = ?, "
            f"kind = {kind_sql(self._vocab)}, name = {NAME_SQL} WHERE _e = ?"
        )
        self._sql.clear()
        # every component table there is, declared now or before: a tombstone empties them all
        self._all_tables = [
            r[0][2:]
            for r in self._db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'c\\_%' "
                "ESCAPE '\\'"
            )
        ]

    def _rekind_all(self, vocab: Vocabulary) -> None:
        self._db.execute(f"UPDATE entity SET kind = {kind_sql(vocab)}")

    # -- writing --------------------------------------------------------------------------

    def _write(self, checked: list[b.Checked], caller: Caller, vocab: Vocabulary) -> Applied:
        db = self._db
        stamp = stamp_of(self._clock())
        by = caller.eid
        top = self._top
        if top is None:
            top = db.execute("SELECT coalesce(max(_e), 0) FROM entity").fetchone()[0]
        people = self._people
        if by is not None and (by not in people or people[by] != caller.name):
            top = self._person(caller, stamp, top)
            people[by] = caller.name
        plan = b.resolve(checked, Lookup(_W, db.execute))
        for step in plan.steps:
            if step.was:
                check_guards(step, self._current)
        entities: list[tuple[Any, ...]] = []
        grouped: dict[str, list[tuple[Any, ...]]] = {}
        restamped: list[tuple[Any, ...]] = []  # patched: new `updated` stamps
        rekinded: list[tuple[Any, ...]] = []  # patched components: stamps, kind and name
        tombs: list[tuple[int, str]] = []
        edges: list[tuple[Any, ...]] = []
        unedges: list[tuple[Any, ...]] = []
        rank = self._rank
        for step in plan.steps:
            if step.row is None:
                top += 1
                row = top
                kind = kind_of(rank, (c for c, cols in step.writes.items() if cols is not None))
                for comp, cols in step.writes.items():
                    if cols is None:
                        continue
                    sql = self._sql.get((comp, tuple(cols)))
                    if sql is None:
                        sql = self._insert_sql(comp, tuple(cols))
                    params = (row, step.eid, stamp, by, *cols.values())
                    if sql in grouped:
                        grouped[sql].append(params)
                    else:
                        grouped[sql] = [params]
                entities.append((row, step.eid, kind, name_of(step.writes), stamp, by, stamp, by))
            else:
                row = step.row
                if step.tombstone:
                    tombs.append((row, step.eid))
                    continue
                for comp, cols in step.writes.items():
                    if cols is None:
                        sql = _W.delete_row(comp)
                        params = (row,)
                    elif not cols:
                        sql = _W.keep_row(comp)
                        params = (row,)
                    else:
                        sql = _W.set_row(vocab.components[comp], tuple(cols))
                        params = (*cols.values(), row)
                    grouped.setdefault(sql, []).append(params)
                (rekinded if step.writes else restamped).append((stamp, by, row))
            for kind_of_edge, child in step.edges:
                edges.append((row, kind_of_edge, child))
            for kind_of_edge, child in step.unedges:
                unedges.append((row, kind_of_edge, child))
        for eid in plan.bare:
            top += 1
            entities.append((top, eid, "created", None, stamp, by, stamp, by))
        if entities:
            _run(db, _W.entity, entities)
        for sql, many in grouped.items():
            _run(db, sql, many)
        if restamped:
            _run(db, _W.restamp, restamped)
        if rekinded:  # after the component rows: kind and name are read from them
            _run(db, self._rekind, rekinded)
        if unedges:
            _run(db, _W.unedge, unedges)
        if edges:
            _run(db, _W.edge, edges)
        for row, eid in tombs:
            for comp in self._all_tables:
                db.execute(_W.delete_row(comp), (row,))
            db.execute("DELETE FROM edge WHERE parent = ? OR child = ?", (row, eid))
            db.execute("DELETE FROM entity WHERE _e = ?", (row,))
        # Known from here on (forgotten again if this transaction does not commit): the
        # largest `_e`, and the caller as a person — unless this write touched a person.
        self._top = top
        for step in plan.steps:
            if step.eid in people:
                del people[step.eid]
        return Applied([s.eid for s in plan.steps], dict(plan.aliases))

    def _insert_sql(self, comp: str, names: tuple[str, ...]) -> str:
        """The INSERT of a new component row with these columns (kept for the next write)."""
        sql = _W.insert_row(comp, names)
        if len(self._sql) < _CACHE:
            self._sql[(comp, names)] = sql
        return sql

    def _person(self, caller: Caller, stamp: str, top: int) -> int:
        """Keep the caller as a person of this app, so `created.by` reads back a name."""
        db = self._db
        found = db.execute(
            "SELECT e._e, p._e, p.name FROM entity e LEFT JOIN c_person p ON p._e = e._e "
            "WHERE e.eid = ?",
            (caller.eid,),
        ).fetchone()
        if found is None:
            top += 1
            db.execute(
                _W.person_entity,
                (top, caller.eid, caller.name, stamp, caller.eid, stamp, caller.eid),
            )
            db.execute(_W.person, (top, caller.eid, stamp, caller.eid, caller.name))
        elif found[1] is None or found[2] != caller.name:
            db.execute(_W.person_name, (caller.name, found[0]))
            db.execute(
                f"UPDATE entity SET kind = {kind_sql(self._vocab)}, name = {NAME_SQL} WHERE _e = ?",
                (found[0],),
            )
        return top

    def _current(self, row: int, comp: str, col: str) -> Any:
        found = self._db.execute(_W.current(comp, col), (row,)).fetchone()
        value = None if found is None else found[0]
        column = self._vocab.components[comp].columns[col]
        if column.type == "bool" and value is not None:
            return bool(value)
        return value


def _run(db: sqlite3.Connection, sql: str, params: list[tuple[Any, ...]]) -> None:
    """One statement over its rows: a single row as a plain execute, which costs less."""
    if len(params) == 1:
        db.execute(sql, params[0])
    else:
        db.executemany(sql, params)


@overload
def open_store(target: str | Path, *, clock: Clock = ...) -> SqliteStore: ...
@overload
def open_store(target: str, *, schema: str, clock: Clock = ...) -> PostgresStore: ...
def open_store(
    target: str | Path, *, schema: str | None = None, clock: Clock = utc_now
) -> SqliteStore | PostgresStore:
    """The store in the SQLite file at `target`, made (WAL mode) if it is not there yet;
    or, for a `postgresql://` URL, the one in `schema` of that database. `clock` is what
    its writes are stamped with and its time phrases count from."""
    if isinstance(target, str) and target.startswith(("postgresql://", "postgres://")):
        if schema is None:
            raise Refused("a PostgreSQL store needs its app's schema: open_store(url, schema=...)")
        from pasture.store.postgres import PostgresStore

        return PostgresStore(target, schema, clock=clock)
    return SqliteStore(target, clock=clock)


__all__ = ["SqliteStore", "open_store"]
