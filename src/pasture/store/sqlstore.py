"""One SQL store: how a bundle plan is written and a filter read, on every SQL backend.

`SqlStore` keeps one app's graph in `tables.py`'s tables. A write checks its
bundles (`bundles.py`), names every entity, then runs the plan's rows through
the statements `Writes` spells in the backend's `Dialect` (`dialect.py`); a
read compiles its filter once (`sql.py`) and keeps the compiled SELECT for the
next call with the same line, reading the names that references read back as
(`created.by` → `{eid, name}`) after the rows, from the same snapshot.

The backends, `SqliteStore` (`sqlite.py`) and `PostgresStore` (`postgres.py`),
subclass it and fill in only what the databases really do differently: the
connection, the write transaction and the lock it holds (with PostgreSQL's
pipeline for a few bundles), what a write reads first and what it may keep
known until the next, how many new rows go in at once (PostgreSQL's COPY),
the full-text search each keeps over docs, and how a driver's error becomes
the caller's sentence. What SQL text differs (parameter marks, a list of
values, an edge's order) is the dialect's, not the backend's.

It is an abstract base rather than one class handed a backend object because
every difference is a step of the same write or read: here the whole of each
reads top to bottom, and a backend's module holds only its side of the steps,
each a method named below as abstract or as a default it may override.

A **transaction** (`begin`) holds one write transaction, or one snapshot for reading,
open across many writes and reads of the thread that began it, until it is committed
or rolled back: a mutation's writes are all kept or none are, and a query reads one
moment. Another thread's reads and writes go on as before (on SQLite, whose store has
one connection, they wait for a write transaction to end; a snapshot has a connection
of its own).
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from operator import itemgetter
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar

from pasture import calls, metrics
from pasture.caller import Caller
from pasture.errors import Conflict, DeployRefused, Forbidden, Refused, UsageError, echo
from pasture.store import bundles as b
from pasture.store import journal as j
from pasture.store.base import Answer, Applied, Bundle, Row, Told
from pasture.store.dialect import Dialect, q, table
from pasture.store.pages import Rows, max_rows
from pasture.store.rows import built
from pasture.store.sql import Compiled, compile_filter
from pasture.store.tables import (
    ENTITY_COLUMNS,
    NAME_SQL,
    NAMERS,
    Lookup,
    Writes,
    check_guards,
    count_sql,
    describe,
    index_changes,
    installing,
    kind_of,
    kind_sql,
    name_of,
    type_changes,
)
from pasture.store.times import Clock, span, zone_name
from pasture.store.vocab import Vocabulary
from pasture.values import server_zone
from pasture.values import stamp as stamp_of

_CACHE = 512  # compiled filters (and INSERT texts) kept per store
# New rows of tables, each (table, its columns, the rows), to be written together
Inserts = list[tuple[str, tuple[str, ...], list[tuple[Any, ...]]]]
_ALONE = 64  # entities a write's journal lines are kept for by `_components_alone` at most
_NONE: dict[str, Any] = {}  # no names to hand a row builder (never written to)
# every doc row's carried kind made its entity's again (where doc rows carry it)
DOC_KIND = (
    "UPDATE c_doc d SET _kind = e.kind FROM entity e WHERE e._e = d._e "
    "AND d._kind IS DISTINCT FROM e.kind"
)


class Executes(Protocol):
    """What a read runs SQL through: a connection (or cursor) of either database's driver."""

    def execute(self, sql: Any, params: Any = ..., /) -> Any: ...


class Cursor(Executes, Protocol):
    """What a write runs SQL through, inside its transaction."""

    def executemany(self, sql: Any, params: Any, /) -> Any: ...


C = TypeVar("C", bound=Cursor)


class Faults:
    """A block whose storage faults are raised as the caller's sentences, as `fault` says
    them (an exception it makes no sentence of goes on as it is). A plain object rather
    than a generator's context: a read of a compiled filter takes only microseconds."""

    def __init__(self, fault: Callable[[BaseException], BaseException | None]) -> None:
        self.fault = fault

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, e: BaseException | None, traceback: object) -> None:
        if e is not None:
            sentence = self.fault(e)
            if sentence is not None:
                raise sentence from None


class _RolledBack(Exception):
    """Ends a transaction's block so that the backend rolls it back."""


class Transaction:
    """A transaction `SqlStore.begin` opened for the thread that began it: every read and
    write of that thread's on the store is in it until `commit` or `rollback` (either
    ends it; ending it again does nothing)."""

    def __init__(self, store: SqlStore[Any], stack: contextlib.ExitStack, conn: Any, writes: bool):
        self.store = store
        self.stack = stack
        self.conn = conn  # what its reads (and writes) run through
        self.writes = writes  # a write transaction, not a snapshot
        self.thread = threading.get_ident()
        self.wrote = False  # it has written something (to be committed)

    @property
    def open(self) -> bool:
        return self.store._held.get(self.thread) is self

    def commit(self) -> None:
        """Keep what it wrote (a snapshot: only end it)."""
        if self._end():
            self.stack.close()

    def rollback(self) -> None:
        """Keep nothing it wrote."""
        if self._end():
            with contextlib.suppress(_RolledBack):
                self.stack.__exit__(_RolledBack, _RolledBack(), None)

    def _end(self) -> bool:
        if not self.open:
            return False
        del self.store._held[self.thread]
        return True


class SqlStore(ABC, Generic[C]):
    """One app's graph in SQL tables (see `pasture.store.base.Store`); `C` is what the
    backend's writes run through."""

    dialect: ClassVar[Dialect]
    writes: ClassVar[Writes]
    snapshot: ClassVar[str]  # begins a read that sees the tables as of one moment

    _vocab: Vocabulary  # the vocabulary installed now, read by the backend as it opens

    def __init__(self, clock: Clock) -> None:
        self._clock = clock  # what writes are stamped with and time phrases count from
        self._max_rows: int | None = max_rows()
        self._lock = threading.RLock()
        self._faults = Faults(self._fault)
        self._compiled: OrderedDict[str, Compiled] = OrderedDict()
        # the components a whole read found empty last (`_checked_read`), to leave out next
        self._found_empty: frozenset[str] = frozenset()
        self._inserts: dict[tuple[str, tuple[str, ...]], str] = {}
        # what a write takes from the vocabulary (see `_kinds`)
        self._rank: dict[str, int] = {}
        self._kind_sql = ""
        self._all_tables: list[str] = []
        self._held: dict[int, Transaction] = {}  # thread -> the transaction it holds open
        self._described: tuple[Vocabulary | None, dict[str, Any]] = (None, {})
        # the days the journal keeps what each write changed, None for no journal
        self.history: float | None = j.history_days()
        self._swept = -j.SWEEP_EVERY  # when the journal was last swept (monotonic)
        self._columns: dict[str, tuple[str, ...]] | None = None  # see `_table_columns`
        self._keeping: dict[tuple[frozenset[str], str], str] = {}  # `journal.keeping_sql`
        self._alone: dict[tuple[frozenset[str], int], str] = {}  # `_components_alone`'s

    # -- the Store interface ------------------------------------------------------------

    @property
    def max_rows(self) -> int | None:
        """The rows one answer holds at most (`pasture.store.pages`), None for no bound."""
        return self._max_rows

    @max_rows.setter
    def max_rows(self, rows: int | None) -> None:
        with self._lock:
            if rows != self._max_rows:
                self._max_rows = rows
                self._compiled.clear()  # each was compiled for the old page

    @property
    def vocabulary(self) -> Vocabulary:
        """The vocabulary installed now (the platform's components and the app's own)."""
        return self._vocab

    def declare(self, vocab: Mapping[str, Any]) -> None:
        with self._lock:
            with self._writing() as cur:
                self._reload(cur)
                new = Vocabulary.from_json(vocab, self._vocab)
                problems = type_changes(new, self._physical(cur))
                if problems:
                    raise DeployRefused(problems, prefix="vocab.json")
                self._install(cur, new)
                self._keep_vocabulary(cur, vocab)
                if new.kind_order() != self._vocab.kind_order():
                    cur.execute(f"UPDATE entity SET kind = {kind_sql(new)}")
                    if self.writes.carries_kind("doc"):
                        cur.execute(DOC_KIND)
            self._vocab = new
            self._compiled.clear()
            self._forget()
            self._kinds()

    def apply(self, bundles: Bundle | Sequence[Bundle], caller: Caller) -> Applied:
        vocab = self._vocab
        held = self._held_here()
        if held is not None:
            return self._apply_held(held, bundles, caller)
        checked = self._check_first(bundles, vocab)
        with (
            self._lock,
            metrics.database("app", "write"),
            self._writing(None if checked is None else len(checked)) as cur,
        ):
            top, person = self._head(cur, caller)
            if vocab is not self._vocab or checked is None:
                vocab = self._vocab  # redeclared meanwhile: check again
                checked = b.check(bundles, vocab)
            self._keepable(checked)
            return self._write(cur, checked, caller, vocab, top, person)

    def begin(self, *, read_only: bool = False) -> Transaction:
        """Open a transaction for this thread's reads and writes (see the module); with
        `read_only`, a snapshot that reads one moment and writes nothing. A thread holds
        one at a time."""
        if self._held_here() is not None:
            raise Refused(
                "a transaction is open already — a mutation's writes are one transaction; "
                "an action runs each mutation (ctx.run_mutation) in one of its own, one after "
                "another"
            )
        stack = contextlib.ExitStack()
        try:
            if read_only:
                conn: Any = stack.enter_context(self._snapshot_connection())
                with self._faults:
                    conn.execute(self.snapshot)
                stack.callback(conn.execute, "COMMIT")
            else:
                stack.enter_context(self._lock)
                conn = stack.enter_context(self._writing())
        except BaseException:
            stack.close()
            raise
        held = self._held[threading.get_ident()] = Transaction(self, stack, conn, not read_only)
        return held

    def _held_here(self) -> Transaction | None:
        """The transaction this thread holds open, if it holds one."""
        return self._held.get(threading.get_ident()) if self._held else None

    def _apply_held(
        self, held: Transaction, bundles: Bundle | Sequence[Bundle], caller: Caller
    ) -> Applied:
        if not held.writes:
            raise Refused(
                "a query reads and cannot write — make it a mutation to change the app's data"
            )
        with metrics.database("app", "write"), self._faults:
            cur = held.conn
            top, person = self._head(cur, caller)
            checked = b.check(bundles, self._vocab)
            self._keepable(checked)
            applied = self._write(cur, checked, caller, self._vocab, top, person)
        held.wrote = True
        return applied

    def query(self, filter: str, caller: Caller, *, table: str | None = None) -> Answer:
        compiled = self._compile(filter, table)
        held = self._held_here()
        reading = (
            contextlib.nullcontext(held.conn)
            if held is not None
            else self._reading(generic=compiled.generic)
        )
        with metrics.database("app", "read"), self._faults, reading as conn:
            edged: bool | None = None  # whether the app keeps any edge, where it was asked
            if (compiled.refs or compiled.probe) and held is None:
                compiled, found, names, edged = self._snapshot_read(conn, compiled, filter, table)
            elif compiled.checks:
                compiled, found, edged = self._checked_read(conn, compiled, filter, table)
                names = self._names(conn, found, compiled.refs) if compiled.refs else _NONE
            else:
                if compiled.probe:
                    compiled, edged = self._without_empty(conn, compiled, filter, table)
                found = conn.execute(compiled.sql, compiled.params).fetchall()
                # in a transaction held open its reads are one moment already
                names = self._names(conn, found, compiled.refs) if compiled.refs else _NONE
            place: tuple[str, Sequence[Any], int] | None = None
            more = compiled.page is not None and len(found) > compiled.page
            if more:
                found = found[: compiled.page]  # and more follow: where the next page begins
                if compiled.keys_at >= 0:
                    last = found[-1]
                    keys = [last[i] for i in compiled.keys_from]
                    place = (compiled.order, keys[:-1], int(keys[-1]))
            answer = built(compiled.build, found, names)
            if compiled.edges and isinstance(answer, list) and answer and edged is not False:
                self._edges(conn, answer, asked=edged is True)
        if compiled.page is not None and isinstance(answer, list):
            return Rows(answer, more=more, place=place)
        return answer

    def count(self) -> int:
        with self._lock, self._faults:
            self._refresh()  # a component another process declared counts too
        with self._faults, self._reading() as conn:
            found = conn.execute(count_sql(self._vocab)).fetchone()
        return int(found[0])

    def schema(self) -> dict[str, Any]:
        # Described once a vocabulary: every `ctx.db.<table>` asks for it. (Its callers read
        # it and copy what they hand on; nobody changes it.)
        vocab, described = self._described
        if vocab is not self._vocab:
            described = describe(self._vocab)
            self._described = (self._vocab, described)
        return described

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what a backend provides --------------------------------------------------------

    @abstractmethod
    def _reading(self, *, generic: bool = False) -> contextlib.AbstractContextManager[Executes]:
        """The connection a read runs through, outside any write, for as long as the block
        lasts: the backend holds whatever lock it needs for it (this store's lock is not
        held through a read, so reads need not wait for each other or for a write).
        `generic`: its statements are planned once for any value (`Compiled.generic`)."""

    def _snapshot_connection(self) -> contextlib.AbstractContextManager[Executes]:
        """The connection a snapshot (`begin(read_only=True)`) holds for as long as it lasts;
        by default the one reads run through."""
        return self._reading()

    @abstractmethod
    def _writing(self, bundles: int | None = None) -> contextlib.AbstractContextManager[C]:
        """A write transaction holding this app's write lock, committed when its block ends
        and rolled back if it raises, storage faults made the caller's sentences;
        `bundles` is how many it writes, where that is known."""

    @abstractmethod
    def _fault(self, e: BaseException) -> BaseException | None:
        """The caller's sentence for a storage fault `e`, or None when `e` is not one."""

    @abstractmethod
    def _head(self, cur: C, caller: Caller) -> tuple[int, Sequence[Any] | None]:
        """What a write reads first: the largest `_e` there is, and what `_person` needs of
        the caller (None when the caller is known to be kept as a person already)."""

    @abstractmethod
    def _tables(self, conn: Executes) -> list[str]:
        """Every table there is."""

    @abstractmethod
    def _install_search(self, cur: C) -> None:
        """The full-text search over doc's title and body, made if it is not there yet."""

    @abstractmethod
    def _keep_vocabulary(self, cur: C, doc: Mapping[str, Any]) -> None:
        """Keep a vocabulary's document beside the tables it installs."""

    def _check_first(
        self, bundles: Bundle | Sequence[Bundle], vocab: Vocabulary
    ) -> list[b.Checked] | None:
        """The bundles checked before the write begins; None where they are to be checked
        in it (see `_head`)."""
        return b.check(bundles, vocab)

    def _keepable(self, checked: list[b.Checked]) -> None:
        """Refuse what this database cannot keep (the checks every backend shares passed)."""

    def _reload(self, cur: C) -> None:
        """Read the vocabulary again, where another process may have declared one."""

    def _refresh(self) -> bool:
        """Whether another process declared a vocabulary since this one read it; loads it."""
        return False

    def _forget(self) -> None:
        """Forget what writes kept known between them (see `_written`)."""

    def _written(self, top: int, eids: list[str]) -> None:
        """A write is done (it commits unless it raises): its largest `_e` and the entities
        it touched."""

    def _insert_all(self, cur: C, inserts: Inserts) -> None:
        """New rows of several tables, none of them read by another's INSERT."""
        for name, columns, rows in inserts:
            self._insert(cur, name, columns, rows)

    def _insert(
        self, cur: C, name: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]]
    ) -> None:
        """New rows of table `name`."""
        sql = self._inserts.get((name, columns))
        if sql is None:
            sql = self.writes.insert(name, columns)
            if len(self._inserts) < _CACHE:
                self._inserts[(name, columns)] = sql
        run(cur, sql, rows)

    # -- reading ------------------------------------------------------------------------

    def _compile(self, filter: str, table: str | None = None) -> Compiled:
        # A table's rows are compiled apart from the same line's store rows.
        key = filter if table is None else f"{table}\x00{filter}"
        compiled = self._compiled.get(key) if isinstance(filter, str) else None
        if compiled is not None and (compiled.zone is None or compiled.zone == zone_name()):
            return compiled  # not written in a time zone the server no longer has
        with self._lock:
            return self._compile_afresh(filter, table, key)

    def _compile_afresh(self, filter: str, table: str | None, key: str) -> Compiled:
        now = self._clock()

        def compiled_now() -> Compiled:
            return compile_filter(
                filter, self._vocab, now=now, dialect=self.dialect, page=self.max_rows, table=table
            )

        try:
            compiled = compiled_now()
        except Refused:
            # another process may have declared what this filter names
            if not self._refresh():
                raise
            compiled = compiled_now()
        if compiled.cacheable:
            self._compiled[key] = compiled
            if len(self._compiled) > _CACHE:
                self._compiled.popitem(last=False)
        return compiled

    def _snapshot_read(
        self, conn: Executes, compiled: Compiled, filter: str, table: str | None
    ) -> tuple[Compiled, list[tuple[Any, ...]], dict[str, Any], bool | None]:
        """The rows and the names they refer to, read from one snapshot (in which the tables
        found empty are); the filter as read, and whether the app keeps any edge (None: not
        asked here)."""
        edged: bool | None = None
        conn.execute(self.snapshot)
        try:
            if compiled.probe:
                compiled, edged = self._without_empty(conn, compiled, filter, table)
            found = conn.execute(compiled.sql, compiled.params).fetchall()
            names = self._names(conn, found, compiled.refs) if found else _NONE
        finally:
            conn.execute("COMMIT")
        return compiled, found, names, edged

    def _without_empty(
        self, conn: Executes, compiled: Compiled, filter: str, table: str | None
    ) -> tuple[Compiled, bool]:
        """The filter read without the components whose tables are empty now (a whole row
        looks each one up for every row it finds, and an empty table has none to give):
        asked in the read's own snapshot, compiled once for each set of them; and whether
        the app keeps any edge (asked in the same breath)."""
        *found, edged = conn.execute(compiled.probe).fetchone()
        absent = frozenset(c for c, has in zip(compiled.optional, found, strict=True) if not has)
        return self._variant(compiled, filter, table, absent), bool(edged)

    def _checked_read(
        self, conn: Executes, compiled: Compiled, filter: str, table: str | None
    ) -> tuple[Compiled, list[tuple[Any, ...]], bool]:
        """The rows of a whole read that leaves out the component tables the last one found
        empty, as its own statement says which are empty now (`Compiled.checks`): read
        again, without only those still empty, when one it left out has rows now. The
        filter as read, its rows, and whether the app keeps any edge."""
        read = self._variant(compiled, filter, table, self._found_empty & set(compiled.checks))
        while True:
            found = conn.execute(read.sql, read.params).fetchall()
            if not found:  # (a table left out could only have added to rows found)
                return read, found, False
            *has, edged = found[0][read.checks_at :]
            empty = frozenset(c for c, kept in zip(read.checks, has, strict=True) if not kept)
            # a guess for the next read, which checks it again: another thread's may land
            self._found_empty = (self._found_empty - set(read.checks)) | empty
            if read.absent <= empty:
                return read, found, bool(edged)
            read = self._variant(compiled, filter, table, read.absent & empty)

    def _variant(
        self, compiled: Compiled, filter: str, table: str | None, absent: frozenset[str]
    ) -> Compiled:
        """The whole read `compiled` without the components `absent`, compiled once each."""
        if not absent:
            return compiled
        variant = compiled.variants.get(absent)
        if variant is None:
            try:
                variant = compile_filter(
                    filter,
                    self._vocab,
                    now=self._clock(),
                    dialect=self.dialect,
                    page=self.max_rows,
                    table=table,
                    absent=absent,
                )
            except Refused:  # pragma: no cover - compiled once already; the whole read serves
                return compiled
            if len(compiled.variants) < _CACHE:
                compiled.variants[absent] = variant
        return variant

    def _names(
        self, conn: Executes, found: list[tuple[Any, ...]], refs: tuple[int, ...]
    ) -> dict[str, Any]:
        """{eid: name} of the entities the rows refer to, each read once."""
        eids: set[Any] = set()
        for at in refs:  # a column at a time, in C: most rows name the same few
            eids.update(map(itemgetter(at), found))
        eids.discard(None)
        if not eids:
            return _NONE
        d = self.dialect
        names: dict[str, Any] = {}
        for among, params in d.among(list(eids)):
            sql = d.placeholders(f"SELECT eid, name FROM entity WHERE eid {among}")
            names.update(conn.execute(sql, params).fetchall())
        return names

    def _edges(self, conn: Executes, rows: list[Row], *, asked: bool = False) -> None:
        """Each row's edges, `[{type, child: {eid, name?}}]`, where it has any (`asked`: the
        read knows the app keeps some)."""
        if not asked and conn.execute("SELECT 1 FROM edge LIMIT 1").fetchone() is None:
            return  # an app that keeps no edges: none to look for row by row
        by_eid = {r["entity"]["eid"]: r for r in rows}
        d = self.dialect
        for among, params in d.among(list(by_eid)):
            sql = d.placeholders(
                "SELECT p.eid, g.type, g.child, c.name FROM edge g "
                "JOIN entity p ON p._e = g.parent LEFT JOIN entity c ON c.eid = g.child "
                f"WHERE p.eid {among} ORDER BY g.parent, g.{d.edge_seq}"
            )
            for parent, kind, child, name in conn.execute(sql, params):
                ref = {"eid": child} if name is None else {"eid": child, "name": name}
                by_eid[parent].setdefault("edges", []).append({"type": kind, "child": ref})

    # -- installing a vocabulary --------------------------------------------------------

    def _physical(self, conn: Executes) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = defaultdict(dict)
        for comp, col, kind in conn.execute("SELECT component, col, type FROM pasture_columns"):
            out[comp][col] = kind
        return out

    def _install(self, cur: C, vocab: Vocabulary) -> None:
        physical = self._physical(cur)
        tables = set(self._tables(cur))
        for ddl, columns in installing(self.dialect, vocab, physical, tables):
            for statement in ddl:
                cur.execute(statement)
            cur.executemany(self.writes.column, columns)
        recorded = {
            (comp, name): cols
            for comp, name, cols in cur.execute(
                "SELECT component, name, columns FROM pasture_indexes"
            )
        }
        statements, keep, gone = index_changes(self.dialect, vocab, recorded)
        for statement in statements:
            cur.execute(statement)
        if keep:
            cur.executemany(self.writes.index, keep)
        if gone:
            cur.executemany(self.writes.unindex, gone)
        self._install_search(cur)

    def _kinds(self, conn: Executes | None = None) -> None:
        """What writes take from the vocabulary installed now: its order of kinds, and every
        component table there is, declared now or before (a tombstone empties them all)."""
        self._columns = None
        self._keeping.clear()
        self._alone.clear()
        self._rank = {name: i for i, name in enumerate(self._vocab.kind_order())}
        self._kind_sql = kind_sql(self._vocab)
        if conn is None:
            with self._reading() as read:
                tables = self._tables(read)
        else:
            tables = self._tables(conn)
        self._all_tables = [t[2:] for t in tables if t.startswith("c_")]

    # -- writing ------------------------------------------------------------------------

    def _write(
        self,
        cur: C,
        checked: list[b.Checked],
        caller: Caller,
        vocab: Vocabulary,
        top: int,
        person: Sequence[Any] | None,
    ) -> Applied:
        """The bundles `checked` against `vocab`, written in the transaction `cur` is in;
        `top` and `person` are what it read first (see `_head`)."""
        w = self.writes
        stamp = stamp_of(self._clock())
        by = caller.eid
        if person is not None:
            top = self._person(cur, caller, stamp, top, person)
        lookup = Lookup(w, cur.execute)
        plan = b.resolve(checked, lookup)
        for step in plan.steps:
            if step.was:
                check_guards(step, functools.partial(self._current, cur))
            self._not_a_kept_name(cur, step)
        b.complete(plan, vocab, lookup)  # defaults given, required columns there
        # the new rows of every table, written together once they are all known: none of
        # them is read before the write ends (a backend may send them as one statement)
        inserts: Inserts = []
        if self.history is not None:
            self._journal(cur, plan, caller, stamp, inserts)
        entities: list[tuple[Any, ...]] = []
        fresh: dict[tuple[str, tuple[str, ...]], list[tuple[Any, ...]]] = defaultdict(list)
        grouped: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
        patched: list[int] = []  # new `updated` stamps
        changed: list[int] = []  # patched components: kind and name again
        tombs: list[tuple[int, str]] = []
        edges: list[tuple[Any, ...]] = []
        unedges: list[tuple[Any, ...]] = []
        for step in plan.steps:
            if step.row is None:
                top += 1
                row = top
                kind = kind_of(
                    self._rank, (c for c, cols in step.writes.items() if cols is not None)
                )
                entities.append((row, step.eid, kind, name_of(step.writes), stamp, by, stamp, by))
                for comp, cols in step.writes.items():
                    if cols is not None:
                        carried: tuple[Any, ...] = (row, step.eid, stamp, by)
                        if w.carries_kind(comp):
                            carried = (*carried, kind)
                        fresh[(comp, tuple(cols))].append((*carried, *cols.values()))
            else:
                row = step.row
                if step.tombstone:
                    tombs.append((row, step.eid))
                    continue
                for comp, cols in step.writes.items():
                    if cols is None:
                        grouped[w.delete_row(comp)].append((row,))
                    elif not cols:
                        grouped[w.keep_row(comp)].append((row,))
                    else:
                        sql = w.set_row(vocab.components[comp], tuple(cols))
                        grouped[sql].append((*cols.values(), row))
                patched.append(row)
                if step.writes:
                    changed.append(row)
            for kind_of_edge, child in step.edges:
                edges.append((row, kind_of_edge, child))
            for kind_of_edge, child in step.unedges:
                unedges.append((row, kind_of_edge, child))
        for eid in plan.bare:
            top += 1
            entities.append((top, eid, "created", None, stamp, by, stamp, by))
        if entities:
            inserts.append(("entity", ENTITY_COLUMNS, entities))
        for (comp, names), rows in fresh.items():
            inserts.append((table(comp), (*w.carry(comp), *map(q, names)), rows))
        self._insert_all(cur, inserts)
        for sql, params in grouped.items():
            run(cur, sql, params)
        if patched:
            run(cur, w.restamp, [(stamp, by, row) for row in patched])
        if changed:  # after the component rows: kind and name are read from them
            self._rekind(cur, changed)
        if unedges:
            run(cur, w.unedge, unedges)
        if edges:
            run(cur, w.edge, edges)
        if tombs:
            self._bury(cur, tombs)
        touched = [s.eid for s in plan.steps]
        self._written(top, touched)
        return Applied(touched, dict(plan.aliases))

    def _person(self, cur: C, caller: Caller, stamp: str, top: int, found: Sequence[Any]) -> int:
        """Keep the caller as a person of this app, so `created.by` reads back a name.

        `found` is what the write read first of the caller: its entity's `_e`, its person
        row's `_e` and name (all None when the caller is not an entity here yet)."""
        w = self.writes
        if found[0] is None:
            top += 1
            cur.execute(
                w.person_entity,
                (top, caller.eid, caller.name, stamp, caller.eid, stamp, caller.eid),
            )
            cur.execute(w.person, (top, caller.eid, stamp, caller.eid, caller.name))
        elif found[1] is None or found[2] != caller.name:
            cur.execute(w.person_name, (caller.name, found[0]))
            self._rekind(cur, [found[0]])
        return top

    def _not_a_kept_name(self, cur: C, step: b.Step) -> None:
        """Refuse a write of what names a person the store keeps (`_person`): renamed by a
        bundle, their rows' created.by would name someone else — anyone's, on an open app."""
        naming = sorted(c for c in step.writes if c in NAMERS)
        if step.row is None or step.tombstone or not naming:
            return
        if cur.execute(self.writes.kept_person, (step.row,)).fetchone() is not None:
            raise Forbidden(
                f"{step.eid} is a person pasture keeps so that created.by names who wrote "
                f"what — their name comes from their sign-in, and no bundle writes its "
                f"{' or '.join(naming)}; give an entity of your own a person instead"
            )

    def _rekind(self, cur: C, rows: list[int]) -> None:
        """Work out these entities' kind and name again (and their doc rows' carried kind)."""
        d = self.dialect
        for among, params in d.among(rows):
            sql = f"UPDATE entity SET kind = {self._kind_sql}, name = {NAME_SQL} WHERE _e {among}"
            if self.writes.carries_kind("doc"):
                sql = (
                    f"WITH k AS ({sql} RETURNING _e, kind) "
                    "UPDATE c_doc d SET _kind = k.kind FROM k WHERE d._e = k._e "
                    "AND d._kind IS DISTINCT FROM k.kind"
                )
            cur.execute(d.placeholders(sql), params)

    def _bury(self, cur: C, tombs: list[tuple[int, str]]) -> None:
        """Take tombstoned entities away: their rows of every component, their edges either
        way, and the entities themselves."""
        d = self.dialect
        for among, params in d.among([row for row, _ in tombs]):
            for comp in self._all_tables:
                cur.execute(d.placeholders(f"DELETE FROM {table(comp)} WHERE _e {among}"), params)
            cur.execute(d.placeholders(f"DELETE FROM edge WHERE parent {among}"), params)
            cur.execute(d.placeholders(f"DELETE FROM entity WHERE _e {among}"), params)
        for among, params in d.among([eid for _, eid in tombs]):
            cur.execute(d.placeholders(f"DELETE FROM edge WHERE child {among}"), params)

    def _current(self, cur: C, row: int, comp: str, col: str) -> Any:
        """What a `$was` guard on `comp.col` compares with, for one entity."""
        found = cur.execute(self.writes.current(comp, col), (row,)).fetchone()
        value = None if found is None else found[0]
        column = self._vocab.components[comp].columns[col]
        if column.type == "bool" and value is not None:
            return bool(value)  # SQLite keeps a bool as 0 or 1
        return value

    # -- the journal (`journal.py`) -----------------------------------------------------

    def _journal(self, cur: C, plan: b.Plan, caller: Caller, stamp: str, inserts: Inserts) -> None:
        """Keep, beside the write about to be made, what it changes as it was before (its
        lines put among `inserts`, to be written with the write's new rows)."""
        mark = calls.current() or calls.CallMark(calls.new_id(), caller.eid, caller.door)
        if not plan.bare and self._components_alone(cur, plan.steps, mark, stamp):
            self._swept_now(cur)
            return
        scopes: dict[int, j.Scope] = {}
        eids: dict[int, str] = {}
        for step in plan.steps:
            if step.row is None:
                continue
            if step.tombstone:
                scope = j.Scope(None, out=True, into=True)
            else:
                scope = j.Scope(frozenset(step.writes), out=bool(step.edges or step.unedges))
            had = scopes.get(step.row)
            if had is not None:
                scope = _wider(had, scope)
            scopes[step.row] = scope
            eids[step.row] = step.eid
        lines: dict[str, str | None] = {}
        if scopes and not self._kept_by_the_database(cur, scopes, mark, stamp):
            images = j.Reader(self.dialect, cur, self._table_columns(cur)).images(scopes)
            lines.update((eids[row], j.dumps(images.get(row))) for row in scopes)
        kept = set(eids.values())
        for step in plan.steps:
            if step.eid not in kept:
                lines.setdefault(step.eid, None)  # made by this write: not there before
        for eid in plan.bare:
            lines.setdefault(eid, None)
        self._keep_lines(cur, lines, mark, stamp, inserts)

    def _components_alone(
        self, cur: C, steps: Sequence[b.Step], mark: calls.CallMark, stamp: str
    ) -> bool:
        """The most common write's lines — each step changing components of one entity there
        is, each entity named once — kept by one statement (`journal.keeping_sql`) with no
        scopes worked out; False, keeping none, for any other write."""
        comps: frozenset[str] | None = None
        rows: list[int] = []
        for step in steps:
            if step.row is None or step.tombstone or step.edges or step.unedges:
                return False
            these = frozenset(step.writes)
            if comps is None:
                comps = these
            elif these != comps:
                return False
            rows.append(step.row)
        if comps is None or len(rows) > _ALONE or len(set(rows)) != len(rows):
            return False
        key = (comps, len(rows))
        sql = self._alone.get(key)
        if sql is None:
            among = f"IN ({', '.join('?' * len(rows))})"
            sql = j.keeping_sql(self.dialect, self._table_columns(cur), comps, among)
            if sql is None:
                return False
            if len(self._alone) < _CACHE:
                self._alone[key] = sql
        cur.execute(sql, [mark.id, stamp, mark.by, mark.door, *rows])
        return True

    def _kept_by_the_database(
        self, cur: C, scopes: Mapping[int, j.Scope], mark: calls.CallMark, stamp: str
    ) -> bool:
        """Keep the lines of entities whose components alone change in one statement the
        database runs (`journal.keeping_sql`); False, keeping none, where edges change too."""
        if any(s.comps is None or s.out or s.into for s in scopes.values()):
            return False
        by_comps: dict[frozenset[str], list[int]] = defaultdict(list)
        for row, scope in scopes.items():
            by_comps[scope.comps or frozenset()].append(row)
        columns = self._table_columns(cur)
        statements: list[tuple[str, list[Any]]] = []
        for comps, rows in by_comps.items():
            for among, params in self.dialect.among(rows):
                key = (comps, among)
                sql = self._keeping.get(key)
                if sql is None:
                    sql = j.keeping_sql(self.dialect, columns, comps, among)
                    if sql is None:
                        return False
                    if len(self._keeping) < _CACHE:
                        self._keeping[key] = sql
                statements.append((sql, [mark.id, stamp, mark.by, mark.door, *params]))
        for sql, params in statements:
            cur.execute(sql, params)
        return True

    def _keep_lines(
        self,
        cur: C,
        lines: Mapping[str, str | None],
        mark: calls.CallMark,
        stamp: str,
        inserts: Inserts | None = None,
    ) -> None:
        rows = [(mark.id, stamp, mark.by, mark.door, eid, before) for eid, before in lines.items()]
        if rows and inserts is not None:
            inserts.append(("pasture_journal", JOURNAL_COLUMNS, rows))
        elif rows:
            self._insert(cur, "pasture_journal", JOURNAL_COLUMNS, rows)
        self._swept_now(cur)

    def _swept_now(self, cur: C) -> None:
        if time.monotonic() - self._swept >= j.SWEEP_EVERY:
            self._sweep(cur)

    def _table_columns(self, cur: C) -> dict[str, tuple[str, ...]]:
        """Each component table there is, and the columns it has (declared now or before),
        known until the tables change (`_kinds`)."""
        if self._columns is None:
            physical = self._physical(cur)
            self._columns = {t: tuple(physical.get(t, ())) for t in self._all_tables}
        return self._columns

    def _sweep(self, cur: C) -> None:
        """Forget the journal's lines older than it keeps, a bounded number at a time."""
        self._swept = time.monotonic()
        days = self.history if self.history is not None else j.DAYS
        cutoff = stamp_of(self._clock() - timedelta(days=days))
        cur.execute(
            self.dialect.placeholders(
                "DELETE FROM pasture_journal WHERE seq IN (SELECT seq FROM (SELECT seq, at "
                f"FROM pasture_journal ORDER BY seq LIMIT {j.SWEEP_STEP}) oldest WHERE at < ?)"
            ),
            (cutoff,),
        )

    def undo(self, call: str, caller: Caller, told: Told | None = None) -> Applied:
        """Put back what the call `call` changed, as one write of its own (journaled, so it
        can be undone too); Conflict, naming the rows and the calls, when a later call
        changed any of them, and Refused when the call changed nothing here."""
        self._must_keep_history()
        m = self.dialect.placeholders
        with self._lock, metrics.database("app", "write"), self._writing() as cur:
            found = cur.execute(
                m("SELECT seq, eid, before FROM pasture_journal WHERE call = ? ORDER BY seq"),
                (call,),
            ).fetchall()
            if not found:
                raise Refused(
                    f"call {call} changed nothing in this app's data (or longer ago than its "
                    f"journal keeps, {self.history:g} days): there is nothing to undo"
                )
            last = found[-1][0]
            eids = list(dict.fromkeys(eid for _, eid, _ in found))
            later = self._lines_after(cur, eids, last)
            if later:
                raise Conflict(f"call {call} cannot be undone: {j.changed_since(later)}")
            images = j.merged(found)
            made = [eid for eid, image in images.items() if image is None]
            referring = self._referring_since(cur, made, set(eids), last) if made else []
            if referring:
                raise Conflict(f"call {call} cannot be undone: {j.changed_since(referring)}")
            return self._put_back(cur, images, caller, told)

    def _referring_since(
        self, cur: C, made: Sequence[str], own: set[str], last: int
    ) -> list[tuple[str, str, str | None]]:
        """The later lines `(call, eid, name)` of entities the undone call did not touch that
        now point at one it made — by an edge or a reference column — which taking it away
        would leave pointing at nothing (an edge of theirs would go with it)."""
        d = self.dialect
        m = d.placeholders
        columns = self._table_columns(cur)
        pointing: set[str] = set()
        for among, params in d.among(list(made)):
            sql = f"SELECT p.eid FROM edge g JOIN entity p ON p._e = g.parent WHERE g.child {among}"
            pointing.update(r[0] for r in cur.execute(m(sql), params).fetchall())
            for comp, component in self._vocab.components.items():
                for col, column in component.columns.items():
                    if not column.reference or col not in columns.get(comp, ()):
                        continue
                    sql = (
                        f"SELECT e.eid FROM {table(comp)} t JOIN entity e ON e._e = t._e "
                        f"WHERE t.{q(col)} {among}"
                    )
                    pointing.update(r[0] for r in cur.execute(m(sql), params).fetchall())
        return self._lines_after(cur, sorted(pointing - own), last)

    def _lines_after(
        self, cur: C, eids: Sequence[str], last: int
    ) -> list[tuple[str, str, str | None]]:
        """The journal's lines `(call, eid, name)` after the line `last` naming any of
        `eids`, oldest first."""
        m = self.dialect.placeholders
        found: list[tuple[str, str, str | None]] = []
        for among, params in self.dialect.among(list(eids)):
            sql = (
                "SELECT l.call, l.eid, e.name FROM pasture_journal l "
                "LEFT JOIN entity e ON e.eid = l.eid "
                f"WHERE l.seq > ? AND l.eid {among} ORDER BY l.seq"
            )
            found.extend(cur.execute(m(sql), [last, *params]).fetchall())
        return found

    def moment(self, when: str) -> str:
        """The stamp `when` names: a time phrase of the grammar's (`2 hours ago`, `today`,
        `yesterday 9pm`) or a written time, read from its start."""
        found = span(when, self._clock(), server_zone())
        if found is None:
            raise UsageError(
                f"{echo(when, 60)} is not a moment — say a time such as '2 hours ago', "
                "'today', 'yesterday 9pm', '2026-12-01T09:30' or '2026-12-01T09:30:00Z'"
            )
        return stamp_of(found.start)

    def restore(self, moment: str, caller: Caller, told: Told | None = None) -> Applied:
        """Put every entity changed after `moment` (a stamp, or what `moment()` reads) back as
        it was then, as one write of its own (journaled: it can be undone); Refused for a
        moment older than the journal keeps."""
        self._must_keep_history()
        if not moment.endswith("Z"):
            moment = self.moment(moment)
        days = self.history if self.history is not None else j.DAYS
        oldest = stamp_of(self._clock() - timedelta(days=days))
        if moment < oldest:
            raise Refused(
                f"the journal keeps what changed for {days:g} days: restore to a moment after "
                f"{oldest[:16].replace('T', ' ')} UTC"
            )
        m = self.dialect.placeholders
        with self._lock, metrics.database("app", "write"), self._writing() as cur:
            found = cur.execute(
                m("SELECT seq, eid, before FROM pasture_journal WHERE at > ? ORDER BY seq"),
                (moment,),
            ).fetchall()
            return self._put_back(cur, j.merged(found), caller, told)

    def _must_keep_history(self) -> None:
        if self.history is None:
            raise UsageError(
                "this server keeps no journal of what calls change (PASTURE_HISTORY is off): "
                "nothing can be undone or restored — serve without PASTURE_HISTORY=off"
            )

    def _put_back(
        self,
        cur: C,
        images: Mapping[str, j.Image | None],
        caller: Caller,
        told: Told | None = None,
    ) -> Applied:
        """Make each entity of `images` what its image says (None: not there at all), its
        present state journaled first as this write's own; `told(done, total)` every
        `TELL_EVERY` entities, and once at the end."""
        d, w = self.dialect, self.writes
        m = d.placeholders
        stamp = stamp_of(self._clock())
        top, person = self._head(cur, caller)
        if person is not None:
            top = self._person(cur, caller, stamp, top, person)
        eids = list(images)
        rows: dict[str, int] = {}
        for among, params in d.among(eids):
            sql = m(f"SELECT eid, _e FROM entity WHERE eid {among}")
            rows.update(cur.execute(sql, params).fetchall())
        if self.history is not None:
            scopes = {rows[e]: j.full_scope(i) for e, i in images.items() if e in rows}
            now = j.Reader(d, cur, self._table_columns(cur)).images(scopes)
            mark = calls.current() or calls.CallMark(calls.new_id(), caller.eid, caller.door)
            self._keep_lines(
                cur,
                {e: j.dumps(now.get(rows[e])) if e in rows else None for e in eids},
                mark,
                stamp,
            )
        gone = [(rows[e], e) for e, image in images.items() if image is None and e in rows]
        if gone:
            self._bury(cur, gone)
        columns = self._table_columns(cur)
        total = len(images)
        for done, (eid, image) in enumerate(images.items()):
            if told is not None and done % TELL_EVERY == 0:
                told(done, total)  # what it raises ends the write: nothing of it is kept
            if image is None:
                continue
            was, _, kind, name, made_at, made_by, at, by = image["e"]
            row = rows.get(eid)
            if row is None:
                free = cur.execute(m("SELECT 1 FROM entity WHERE _e = ?"), (was,)).fetchone()
                if free is None:
                    row, top = was, max(top, was)
                else:
                    top += 1
                    row = top
                rows[eid] = row
                self._insert(
                    cur,
                    "entity",
                    ENTITY_COLUMNS,
                    [(row, eid, kind, name, made_at, made_by, at, by)],
                )
            else:
                cur.execute(
                    m(
                        "UPDATE entity SET kind = ?, name = ?, created_at = ?, created_by = ?, "
                        "updated_at = ?, updated_by = ? WHERE _e = ?"
                    ),
                    (kind, name, made_at, made_by, at, by, row),
                )
            for comp, cols in image["c"].items():
                if comp not in columns:
                    continue  # a component no longer kept: nothing to put it in
                cur.execute(w.delete_row(comp), (row,))
                if cols is None:
                    continue
                names = [c for c in cols if c in columns[comp]]
                carried: tuple[Any, ...] = (row, eid, made_at, made_by)
                if w.carries_kind(comp):
                    carried = (*carried, kind)
                values = (*carried, *(cols[c] for c in names))
                self._insert(cur, table(comp), (*w.carry(comp), *map(q, names)), [values])
            if "out" in image:
                cur.execute(m("DELETE FROM edge WHERE parent = ?"), (row,))
                if image["out"]:
                    run(
                        cur,
                        w.edge,
                        [(row, kind_of_edge, child) for kind_of_edge, child in image["out"]],
                    )
        for parent, kind_of_edge, child in j.edges_to_put_back(images):
            cur.execute(
                m(
                    d.insert_or_skip(
                        "edge(parent, type, child)", "SELECT _e, ?, ? FROM entity WHERE eid = ?"
                    )
                ),
                (kind_of_edge, child, parent),
            )
        if told is not None:
            told(total, total)
        self._written(top, eids)
        return Applied(eids, {})


TELL_EVERY = 200  # entities an undo or a restore puts back between two reports
JOURNAL_COLUMNS = ("call", "at", "who", "door", "eid", "before")


def _wider(a: j.Scope, b_: j.Scope) -> j.Scope:
    """Both scopes at once (one entity named by two steps of a write)."""
    comps = None if a.comps is None or b_.comps is None else a.comps | b_.comps
    return j.Scope(comps, out=a.out or b_.out, into=a.into or b_.into)


def run(cur: Cursor, sql: str, params: list[tuple[Any, ...]]) -> None:
    """One statement over its rows: a single row as a plain execute, which costs less."""
    if len(params) == 1:
        cur.execute(sql, params[0])
    else:
        cur.executemany(sql, params)


__all__ = ["DOC_KIND", "Cursor", "Executes", "Inserts", "SqlStore", "Transaction", "run"]
