"""The PostgreSQL backend: one schema per app, the same store as SQLite's.

    store = open_postgres_store("postgresql://pasture@db/pasture", schema="ada_runs")

The tables are `tables.py`'s, made in the app's own schema (the connection's
search_path is that schema alone), and a filter compiles with the same
compiler in its PostgreSQL dialect: `%s` parameters, ILIKE, and full text
through a tsvector that a generated column on `c_doc` keeps over title and
body, with a GIN index, ranked with ts_rank; a `c_doc` row also carries its
entity's kind (`_kind`, kept by every write that changes it), so a search reads
nothing but `c_doc`. Bundles are checked and resolved by `bundles.py`, as on
SQLite.

A write of a few bundles takes two round trips to the server (BEGIN, the lock
and what it reads first; then its rows and COMMIT), a hand-written INSERT in
its own transaction three; many bundles go in with COPY.

Any number of processes may open the same schema. A write first takes a
transaction-scoped advisory lock for its schema, so the writes to one app go
one at a time, as SQLite's BEGIN IMMEDIATE makes them: every `$was` guard is
read and every entity named with nothing moving underneath. A vocabulary
another process declared is picked up by the next write (it reads the version
kept beside the vocabulary, under that lock) and by a read naming something
this process has not seen yet.

Text compares byte for byte (COLLATE "C"), numbers are doubles read back as
whole numbers where they are whole (as SQLite's NUMERIC does), and PostgreSQL
keeps no NUL character in text, so a write holding one is refused; nor more
than a btree entry holds in an indexed column (`MAX_INDEXED` bytes: every
column but doc.body, and an edge's type), so a longer value is refused too.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pasture.caller import Caller
from pasture.errors import DeployRefused, Refused, Unavailable
from pasture.store import bundles as b
from pasture.store.base import Answer, Applied, Bundle, Row
from pasture.store.dialect import FTS_CONFIG, POSTGRES, q, table
from pasture.store.sql import Compiled, compile_filter
from pasture.store.tables import (
    ENTITY_COLUMNS,
    NAME_SQL,
    POSTGRES_WRITES,
    UNINDEXED,
    Lookup,
    base_tables,
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
    import psycopg

    Connection = psycopg.Connection[tuple[Any, ...]]
    Cursor = psycopg.Cursor[tuple[Any, ...]]

INSTALL = "pip install 'pasture[postgres]'"
SCHEMA = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_CACHE = 512  # compiled filters kept per store
_COPY_FROM = 50  # new rows of one table from which COPY beats INSERTs
_W = POSTGRES_WRITES
_NONE: dict[str, Any] = {}  # no names to hand a row builder (never written to)
# what a write reads first, under its lock: the vocabulary's version, the last entity's
# integer, and the caller's entity, person row and name
_HEAD = (
    "SELECT (SELECT value FROM pasture_meta WHERE key = 'version'), "
    "(SELECT coalesce(max(_e), 0) FROM entity), e._e, p._e, p.name "
    "FROM (SELECT 1) one LEFT JOIN entity e ON e.eid = %s LEFT JOIN c_person p ON p._e = e._e"
)
# every doc row's carried kind made its entity's again
_DOC_KIND = (
    "UPDATE c_doc d SET _kind = e.kind FROM entity e WHERE e._e = d._e "
    "AND d._kind IS DISTINCT FROM e.kind"
)
_IDLE = 0  # pq.TransactionStatus.IDLE: no transaction open
_UNREACHABLE = "the app's store cannot reach its PostgreSQL server — try again in a moment"
# The most bytes of text an indexed column keeps: a btree entry holds at most 2704.
MAX_INDEXED = 2600


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise Refused(
            f"a PostgreSQL database needs psycopg, which is not installed — install it: {INSTALL}"
        ) from None
    return psycopg


def _number_loader() -> type[Any]:
    """float8 read back as SQLite's NUMERIC reads: a whole number as an int."""
    from psycopg.adapt import Loader

    class NumberLoader(Loader):
        def load(self, data: Any) -> Any:
            value = float(bytes(data))
            if value.is_integer() and -(2**63) <= value < 2**63:
                return int(value)
            return value

    return NumberLoader


def _where(url: str) -> str:
    """The server and database a URL names, without its user or password, for sentences."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        info = conninfo_to_dict(url)
    except Exception:
        return "the PostgreSQL server"
    host = info.get("host") or "localhost"
    port = info.get("port") or 5432
    return f"the PostgreSQL server at {host}:{port}"


class PostgresStore:
    """One app's graph in one PostgreSQL schema (see `pasture.store.base.Store`)."""

    def __init__(self, url: str, schema: str, *, clock: Clock = utc_now) -> None:
        if not isinstance(schema, str) or not SCHEMA.match(schema) or schema.startswith("pg_"):
            raise Refused(
                f"{schema!r} cannot name an app's PostgreSQL schema — use lowercase letters, "
                "digits and _, starting with a letter, like ada_runs"
            )
        self.url = url
        self.app_schema = schema
        self._clock = clock  # what writes are stamped with and time phrases count from
        self._lock = threading.RLock()
        self._compiled: OrderedDict[str, Compiled] = OrderedDict()
        self._db: Connection | None = None
        self._version = ""
        self._vocab = Vocabulary.from_json(None)
        conn = self._conn()
        with self._lock:
            try:
                with conn.transaction():
                    self._serialize(conn)
                    conn.execute(f"CREATE SCHEMA IF NOT EXISTS {q(schema)}")
                    for statement in base_tables(POSTGRES):
                        conn.execute(statement)
                    self._fts_config(conn)
                    self._load(conn)
                    self._install(conn, self._vocab)
            except _psycopg().OperationalError:
                raise Unavailable(_UNREACHABLE) from None
        self._kinds()

    # -- the connection -------------------------------------------------------------------

    def _conn(self) -> Connection:
        """The open connection, made again if the last one broke."""
        db = self._db
        if db is not None and not db.closed and not db.broken:
            return db
        _psycopg()  # a sentence saying how to install it, if it is not there
        import psycopg

        try:
            db = psycopg.connect(self.url, autocommit=True)
        except psycopg.OperationalError:
            raise Unavailable(
                f"cannot reach {_where(self.url)} — check the address and that the server is up"
            ) from None
        except psycopg.ProgrammingError:
            raise Refused(
                "the database address is not a PostgreSQL URL — write it like "
                "postgresql://user@host:5432/dbname"
            ) from None
        assert db is not None
        db.adapters.register_loader("float8", _number_loader())
        db.execute(f"SET search_path TO {q(self.app_schema)}")
        self._db = db
        return db

    def _serialize(self, conn: Connection) -> None:
        """Take this app's write lock until the transaction ends (every process shares it)."""
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("pasture:" + self.app_schema,))

    # -- the Store interface ----------------------------------------------------------------

    @property
    def vocabulary(self) -> Vocabulary:
        """The vocabulary installed now (the platform's components and the app's own)."""
        return self._vocab

    def declare(self, vocab: Mapping[str, Any]) -> None:
        with self._lock:
            conn = self._conn()
            try:
                with conn.transaction():
                    self._serialize(conn)
                    self._load(conn)
                    new = Vocabulary.from_json(vocab, self._vocab)
                    problems = type_changes(new, self._physical(conn))
                    if problems:
                        raise DeployRefused(problems, prefix="vocab.json")
                    self._install(conn, new)
                    version = str(int(self._version or "0") + 1)
                    conn.cursor().executemany(
                        _W.meta, [("vocab", json.dumps(vocab)), ("version", version)]
                    )
                    if new.kind_order() != self._vocab.kind_order():
                        conn.execute(f"UPDATE entity SET kind = {kind_sql(new)}")
                        conn.execute(_DOC_KIND)
            except _psycopg().OperationalError:
                raise Unavailable(_UNREACHABLE) from None
            self._vocab = new
            self._version = version
            self._compiled.clear()
            self._kinds()

    def apply(self, bundles: Bundle | Sequence[Bundle], caller: Caller) -> Applied:
        vocab = self._vocab
        checked: list[b.Checked] | None = None
        # refused here, perhaps only this process has not seen the vocabulary: checked below
        with contextlib.suppress(Refused):
            checked = b.check(bundles, vocab)
        with self._lock:
            conn = self._conn()
            try:
                if checked is not None and len(checked) < _COPY_FROM:
                    return self._apply_few(conn, bundles, checked, vocab, caller)
                with conn.transaction():
                    self._serialize(conn)
                    with conn.cursor() as cur:
                        return self._apply_in(cur, bundles, checked, vocab, caller)
            except _psycopg().errors.ProgramLimitExceeded as e:
                raise Refused(_past_limits(e)) from None
            except _psycopg().OperationalError:
                raise Unavailable(_UNREACHABLE) from None

    def _apply_few(
        self,
        conn: Connection,
        bundles: Bundle | Sequence[Bundle],
        checked: list[b.Checked],
        vocab: Vocabulary,
        caller: Caller,
    ) -> Applied:
        """A few bundles in two round trips: BEGIN, the lock and what the write reads first;
        then the rows and COMMIT. (psycopg's own transaction() in a pipeline would wait
        for the server at BEGIN and COMMIT too; COPY, for many rows, needs no pipeline.)"""
        try:
            with conn.pipeline():
                conn.execute("BEGIN")
                self._serialize(conn)
                with conn.cursor() as cur:
                    applied = self._apply_in(cur, bundles, checked, vocab, caller)
                conn.execute("COMMIT")
            return applied
        except BaseException:
            if not conn.broken and conn.pgconn.transaction_status != _IDLE:
                conn.execute("ROLLBACK")
            raise

    def _apply_in(
        self,
        cur: Cursor,
        bundles: Bundle | Sequence[Bundle],
        checked: list[b.Checked] | None,
        vocab: Vocabulary,
        caller: Caller,
    ) -> Applied:
        """The write, in a transaction holding this app's lock (`checked` against `vocab`)."""
        head = cur.execute(_HEAD, (caller.eid,)).fetchone()
        assert head is not None
        version, top, *person = head
        if (version or "") != self._version:
            self._load(cur.connection)
            self._kinds(cur.connection)
        if vocab is not self._vocab or checked is None:
            vocab = self._vocab  # redeclared meanwhile: check again
            checked = b.check(bundles, vocab)
        _keepable(checked)
        return self._write(cur, checked, caller, vocab, top, person)

    def query(self, filter: str, caller: Caller) -> Answer:
        with self._lock:
            compiled = self._compile(filter)
            conn = self._conn()
            try:
                if compiled.refs:
                    # the rows and the names they refer to are read from one snapshot
                    conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    try:
                        found = conn.execute(compiled.sql, compiled.params).fetchall()
                        names = self._names(found, compiled.refs) if found else _NONE
                    finally:
                        conn.execute("COMMIT")
                else:
                    found = conn.execute(compiled.sql, compiled.params).fetchall()
                    names = _NONE
                answer = compiled.build(found, names)
                if compiled.edges and isinstance(answer, list) and answer:
                    self._edges(conn, answer)
            except _psycopg().errors.ProgramLimitExceeded as e:
                raise Refused(_past_limits(e)) from None
            except _psycopg().OperationalError:
                raise Unavailable(_UNREACHABLE) from None
        return answer

    def count(self) -> int:
        with self._lock:
            conn = self._conn()
            try:
                self._refresh()  # a component another process declared counts too
                found = conn.execute(count_sql(self._vocab)).fetchone()
            except _psycopg().OperationalError:
                raise Unavailable(_UNREACHABLE) from None
        assert found is not None
        return int(found[0])

    def schema(self) -> dict[str, Any]:
        return describe(self._vocab)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ----------------------------------------------------------------------------

    def _compile(self, filter: str) -> Compiled:
        compiled = self._compiled.get(filter) if isinstance(filter, str) else None
        if compiled is not None and compiled.zone in (None, zone_name()):
            return compiled
        now = self._clock()
        try:
            compiled = compile_filter(filter, self._vocab, now=now, dialect=POSTGRES)
        except Refused:
            # another process may have declared what this filter names
            if not self._refresh():
                raise
            compiled = compile_filter(filter, self._vocab, now=now, dialect=POSTGRES)
        if compiled.cacheable:
            self._compiled[filter] = compiled
            if len(self._compiled) > _CACHE:
                self._compiled.popitem(last=False)
        return compiled

    def _names(self, found: list[tuple[Any, ...]], refs: tuple[int, ...]) -> dict[str, Any]:
        """{eid: name} of the entities the rows refer to, each read once."""
        eids = {r[at] for r in found for at in refs}
        eids.discard(None)
        if not eids:
            return _NONE
        conn = self._conn()
        return dict(
            conn.execute(  # type: ignore[arg-type]
                "SELECT eid, name FROM entity WHERE eid = ANY(%s)", (list(eids),)
            ).fetchall()
        )

    def _edges(self, conn: Connection, rows: list[Row]) -> None:
        """Each row's edges, `[{type, child: {eid, name?}}]`, where it has any."""
        by_eid = {r["entity"]["eid"]: r for r in rows}
        for parent, kind, child, name in conn.execute(
            "SELECT p.eid, g.type, g.child, c.name FROM edge g "
            "JOIN entity p ON p._e = g.parent LEFT JOIN entity c ON c.eid = g.child "
            "WHERE p.eid = ANY(%s) ORDER BY g.parent, g.seq",
            (list(by_eid),),
        ):
            ref = {"eid": child} if name is None else {"eid": child, "name": name}
            by_eid[parent].setdefault("edges", []).append({"type": kind, "child": ref})

    # -- installing a vocabulary ------------------------------------------------------------

    def _load(self, conn: Connection) -> None:
        """The vocabulary and its version as stored (another process may have changed them)."""
        meta: dict[str, str] = dict(
            conn.execute(  # type: ignore[arg-type]
                "SELECT key, value FROM pasture_meta WHERE key IN ('vocab', 'version')"
            ).fetchall()
        )
        version = meta.get("version", "")
        if version != self._version or "vocab" not in meta:
            self._vocab = Vocabulary.from_json(
                json.loads(meta["vocab"]) if "vocab" in meta else None
            )
            self._version = version
            self._compiled.clear()

    def _stale(self, conn: Connection) -> bool:
        """Whether another process declared a vocabulary since this one read it; loads it."""
        found = conn.execute("SELECT value FROM pasture_meta WHERE key = 'version'").fetchone()
        if (found[0] if found else "") == self._version:
            return False
        self._load(conn)
        self._kinds(conn)
        return True

    def _refresh(self) -> bool:
        conn = self._conn()
        with conn.transaction():
            return self._stale(conn)

    def _physical(self, conn: Connection) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = defaultdict(dict)
        for comp, col, kind in conn.execute("SELECT component, col, type FROM pasture_columns"):
            out[comp][col] = kind
        return out

    def _tables(self, conn: Connection) -> list[str]:
        return [
            r[0]
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                "ORDER BY tablename"
            )
        ]

    def _fts_config(self, conn: Connection) -> None:
        """English stems with no stop words dropped, as SQLite's porter tokenizer keeps them."""
        found = conn.execute(
            "SELECT 1 FROM pg_ts_config WHERE cfgname = %s AND cfgnamespace = to_regnamespace(%s)",
            (FTS_CONFIG, self.app_schema),
        ).fetchone()
        if found is None:
            conn.execute(
                "CREATE TEXT SEARCH DICTIONARY pasture_stem "
                "(TEMPLATE = snowball, LANGUAGE = english)"
            )
            conn.execute(f"CREATE TEXT SEARCH CONFIGURATION {FTS_CONFIG} (COPY = english)")
            conn.execute(
                f"ALTER TEXT SEARCH CONFIGURATION {FTS_CONFIG} "
                "ALTER MAPPING REPLACE english_stem WITH pasture_stem"
            )

    def _install(self, conn: Connection, vocab: Vocabulary) -> None:
        physical = self._physical(conn)
        tables = set(self._tables(conn))
        for ddl, columns in installing(POSTGRES, vocab, physical, tables):
            for statement in ddl:
                conn.execute(statement)
            conn.cursor().executemany(_W.column, columns)
        has = {
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE "
                "table_schema = current_schema() AND table_name = 'c_doc'"
            )
        }
        if "_kind" not in has:
            # a search reads its rows' kind from c_doc, not from a join to entity
            conn.execute(f"ALTER TABLE c_doc ADD COLUMN _kind {POSTGRES.text}")
            conn.execute(_DOC_KIND)
        if "_fts" not in has:
            conn.execute(
                "ALTER TABLE c_doc ADD COLUMN _fts tsvector GENERATED ALWAYS AS (to_tsvector("
                f"'{FTS_CONFIG}', coalesce(title, '') || ' ' || coalesce(body, ''))) STORED"
            )
            conn.execute("CREATE INDEX c_doc__fts ON c_doc USING gin (_fts)")

    def _kinds(self, conn: Connection | None = None) -> None:
        order = self._vocab.kind_order()
        self._rank = {name: i for i, name in enumerate(order)}
        # every component table there is, declared now or before: a tombstone empties them all
        conn = conn or self._conn()
        self._all_tables = [t[2:] for t in self._tables(conn) if t.startswith("c_")]

    # -- writing ----------------------------------------------------------------------------

    def _write(
        self,
        cur: Cursor,
        checked: list[b.Checked],
        caller: Caller,
        vocab: Vocabulary,
        top: int,
        person: list[Any],
    ) -> Applied:
        stamp = stamp_of(self._clock())
        by = caller.eid
        if by is not None:
            top = self._person(cur, caller, stamp, top, vocab, person)
        plan = b.resolve(checked, Lookup(_W, cur.execute))
        for step in plan.steps:
            if step.was:
                check_guards(step, lambda row, comp, col: _current(cur, row, comp, col))
        entities: list[tuple[Any, ...]] = []
        fresh: dict[tuple[str, tuple[str, ...]], list[tuple[Any, ...]]] = defaultdict(list)
        grouped: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
        patched: list[tuple[int, set[str]]] = []
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
                        carried = (
                            (row, step.eid, stamp, by, kind)
                            if comp == "doc"
                            else (row, step.eid, stamp, by)
                        )
                        fresh[(comp, tuple(cols))].append((*carried, *cols.values()))
            else:
                row = step.row
                if step.tombstone:
                    tombs.append((row, step.eid))
                    continue
                for comp, cols in step.writes.items():
                    if cols is None:
                        grouped[_W.delete_row(comp)].append((row,))
                    elif not cols:
                        grouped[_W.keep_row(comp)].append((row,))
                    else:
                        sql = _W.set_row(vocab.components[comp], tuple(cols))
                        grouped[sql].append((*cols.values(), row))
                patched.append((row, set(step.writes)))
            for kind_of_edge, child in step.edges:
                edges.append((row, kind_of_edge, child))
            for kind_of_edge, child in step.unedges:
                unedges.append((row, kind_of_edge, child))
        for eid in plan.bare:
            top += 1
            entities.append((top, eid, "created", None, stamp, by, stamp, by))
        if entities:
            _insert(cur, "entity", ENTITY_COLUMNS, entities)
        for (comp, names), rows in fresh.items():
            _insert(cur, table(comp), (*_W.carry(comp), *map(q, names)), rows)
        for sql, params in grouped.items():
            cur.executemany(sql, params)
        if patched:
            cur.executemany(_W.restamp, [(stamp, by, row) for row, _ in patched])
            changed = [row for row, comps in patched if comps]
            if changed:
                _rekind(cur, vocab, changed)
        if unedges:
            cur.executemany(_W.unedge, unedges)
        if edges:
            cur.executemany(_W.edge, edges)
        if tombs:
            rows_gone = [row for row, _ in tombs]
            for comp in self._all_tables:
                cur.execute(f"DELETE FROM {table(comp)} WHERE _e = ANY(%s)", (rows_gone,))
            cur.execute(
                "DELETE FROM edge WHERE parent = ANY(%s) OR child = ANY(%s)",
                (rows_gone, [eid for _, eid in tombs]),
            )
            cur.execute("DELETE FROM entity WHERE _e = ANY(%s)", (rows_gone,))
        return Applied([s.eid for s in plan.steps], dict(plan.aliases))

    def _person(
        self,
        cur: Cursor,
        caller: Caller,
        stamp: str,
        top: int,
        vocab: Vocabulary,
        found: list[Any],
    ) -> int:
        """Keep the caller as a person of this app, so `created.by` reads back a name.

        `found` is what the write read first: the caller's entity row, its person row
        and name (all None when the caller is not an entity here yet)."""
        if found[0] is None:
            top += 1
            cur.execute(
                _W.person_entity,
                (top, caller.eid, caller.name, stamp, caller.eid, stamp, caller.eid),
            )
            cur.execute(_W.person, (top, caller.eid, stamp, caller.eid, caller.name))
        elif found[1] is None or found[2] != caller.name:
            cur.execute(_W.person_name, (caller.name, found[0]))
            _rekind(cur, vocab, [found[0]])
        return top


def _current(cur: Cursor, row: int, comp: str, col: str) -> Any:
    found = cur.execute(_W.current(comp, col), (row,)).fetchone()
    return None if found is None else found[0]


def _rekind(cur: Cursor, vocab: Vocabulary, rows: list[int]) -> None:
    """Work out these entities' kind and name again; their doc rows carry the kind."""
    cur.execute(
        f"WITH k AS (UPDATE entity SET kind = {kind_sql(vocab)}, name = {NAME_SQL} "
        "WHERE _e = ANY(%s) RETURNING _e, kind) "
        "UPDATE c_doc d SET _kind = k.kind FROM k WHERE d._e = k._e "
        "AND d._kind IS DISTINCT FROM k.kind",
        (rows,),
    )


def _insert(cur: Cursor, name: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
    """New rows: INSERTs for a few, COPY for many."""
    if len(rows) < _COPY_FROM or cur.connection.pgconn.pipeline_status:
        cur.executemany(_W.insert(name, columns), rows)
        return
    with cur.copy(f"COPY {name}({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def _keepable(checked: list[b.Checked]) -> None:
    """Refuse text PostgreSQL cannot keep: it holds no NUL character, and an indexed column
    (every one but doc.body) or an edge's type no more than `MAX_INDEXED` bytes."""
    for c in checked:
        for comp, cols in c.writes.items():
            for col, value in (cols or {}).items():
                if not isinstance(value, str):
                    continue
                if "\x00" in value:
                    raise Refused(
                        f"{comp}.{col} holds a NUL character (\\u0000), which this app's "
                        "PostgreSQL store cannot keep — leave it out"
                    )
                if (comp, col) not in UNINDEXED and len(value) * 4 > MAX_INDEXED:
                    _short_enough(f"{comp}.{col}", value)
        for kind, _ in c.edges + c.unedges:
            if "\x00" in kind:
                raise Refused(
                    "an edge's type holds a NUL character (\\u0000), which this app's "
                    "PostgreSQL store cannot keep — leave it out"
                )
            if len(kind) * 4 > MAX_INDEXED:
                _short_enough("an edge's type", kind)


def _short_enough(what: str, text: str) -> None:
    size = len(text.encode())
    if size > MAX_INDEXED:
        raise Refused(
            f"{what} is {size} bytes long, more than this app's PostgreSQL store indexes "
            f"({MAX_INDEXED}) — keep it shorter; long text belongs in doc.body"
        )


def _past_limits(e: Exception) -> str:
    """What PostgreSQL's program_limit_exceeded (54xxx) says, as the caller's sentence."""
    said = str(e).split("\n", 1)[0][:200]
    return f"this app's PostgreSQL store cannot keep or read that ({said}) — send less at once"


def open_postgres_store(url: str, schema: str, *, clock: Clock = utc_now) -> PostgresStore:
    """The store in `schema` of the PostgreSQL database at `url`, made if it is not there yet."""
    return PostgresStore(url, schema, clock=clock)


__all__ = ["PostgresStore", "open_postgres_store"]
