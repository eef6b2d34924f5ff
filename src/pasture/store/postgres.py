"""The PostgreSQL backend: one schema per app, the same store as SQLite's.

    store = open_postgres_store("postgresql://pasture@db/pasture", schema="ada_runs")

The tables are `tables.py`'s, made in the app's own schema (each read or write
takes a connection from the process's pool, `pool.py`, its search_path that
schema alone), and a filter compiles with the same
compiler in its PostgreSQL dialect: `%s` parameters, ILIKE, and full text
through a tsvector that a generated column on `c_doc` keeps over title and
body, with a GIN index, ranked with ts_rank; a `c_doc` row also carries its
entity's kind (`_kind`, kept by every write that changes it), so a search reads
nothing but `c_doc`. The store itself — writes, reads, the vocabulary's
tables — is `sqlstore.py`'s, as SQLite's is; this module holds what is
PostgreSQL's own.

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
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pasture.caller import Caller
from pasture.errors import Refused, Unavailable
from pasture.store import bundles as b
from pasture.store import pool
from pasture.store.base import Bundle
from pasture.store.dialect import FTS_CONFIG, POSTGRES, q
from pasture.store.sqlstore import DOC_KIND, Executes, Inserts, SqlStore
from pasture.store.tables import POSTGRES_WRITES, UNINDEXED, base_tables
from pasture.store.times import Clock, utc_now
from pasture.store.vocab import Vocabulary

if TYPE_CHECKING:
    import psycopg

    Connection = psycopg.Connection[tuple[Any, ...]]
    Cursor = psycopg.Cursor[tuple[Any, ...]]

SCHEMA = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_COPY_FROM = 50  # new rows of one table from which COPY beats INSERTs
_TOGETHER = 20  # new rows of a write at most that go in one statement (`_insert_all`)
_SHAPES = 512  # such statements kept, one for each set of tables and row counts
# what a write reads first, under its lock: the vocabulary's version, the last entity's
# integer, and the caller's entity, person row and name
_HEAD = (
    "SELECT (SELECT value FROM pasture_meta WHERE key = 'version'), "
    "(SELECT coalesce(max(_e), 0) FROM entity), e._e, p._e, p.name "
    "FROM (SELECT 1) one LEFT JOIN entity e ON e.eid = %s LEFT JOIN c_person p ON p._e = e._e"
)
_IDLE = 0  # pq.TransactionStatus.IDLE: no transaction open
_UNREACHABLE = "the app's store cannot reach its PostgreSQL server — try again in a moment"
# The most bytes of text an indexed column keeps: a btree entry holds at most 2704.
MAX_INDEXED = 2600


class PostgresStore(SqlStore["Cursor"]):
    """One app's graph in one PostgreSQL schema (see `pasture.store.base.Store`)."""

    dialect = POSTGRES
    writes = POSTGRES_WRITES
    snapshot = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"

    def __init__(self, url: str, schema: str, *, clock: Clock = utc_now) -> None:
        if not isinstance(schema, str) or not SCHEMA.match(schema) or schema.startswith("pg_"):
            raise Refused(
                f"{schema!r} cannot name an app's PostgreSQL schema — use lowercase letters, "
                "digits and _, starting with a letter, like ada_runs"
            )
        super().__init__(clock)
        self.url = url
        self.app_schema = schema
        self._pool: pool.Connections | None = self._open()
        self._version = ""  # of the vocabulary, as kept beside it (`_load`)
        # one statement of a write's new rows, by its tables, their columns and row counts
        self._together: dict[tuple[tuple[str, tuple[str, ...], int], ...], str] = {}
        self._vocab = Vocabulary.from_json(None)
        try:
            with self._lock, self._writing() as cur:
                cur.execute(f"CREATE SCHEMA IF NOT EXISTS {q(schema)}")
                for statement in base_tables(POSTGRES):
                    cur.execute(statement)
                self._load(cur)
                self._install(cur, self._vocab)
            self._kinds()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.release()
                self._pool = None

    # -- the connection and its transactions ----------------------------------------------

    @contextlib.contextmanager
    def _connection(self, *, generic: bool = False) -> Iterator[Connection]:
        """A connection of the process's pool, its search_path this app's schema alone; with
        `generic`, its prepared statements planned once for any value."""
        connections = self._pool
        if connections is None:  # used again after `close`: opened again, as it was
            with self._lock:
                connections = self._pool = self._pool or self._open()
        with connections.connection(q(self.app_schema), generic=generic) as conn:
            yield conn

    def _open(self) -> pool.Connections:
        return pool.connections(
            self.url,
            unreachable=f"cannot reach {pool.where(self.url)} — check the address and that "
            "the server is up",
        )

    def _reading(self, *, generic: bool = False) -> contextlib.AbstractContextManager[Connection]:
        # No lock: each read has a connection of its own, and sees committed rows only.
        return self._connection(generic=generic)

    def _serialize(self, conn: Connection) -> None:
        """Take this app's write lock until the transaction ends (every process shares it)."""
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("pasture:" + self.app_schema,))

    @contextlib.contextmanager
    def _writing(self, bundles: int | None = None) -> Iterator[Cursor]:
        with self._faults, self._connection() as conn:
            if bundles is not None and bundles < _COPY_FROM:
                with self._pipelined(conn) as cur:
                    yield cur
            else:
                with conn.transaction():
                    self._serialize(conn)
                    with conn.cursor() as cur:
                        yield cur

    @contextlib.contextmanager
    def _pipelined(self, conn: Connection) -> Iterator[Cursor]:
        """A few bundles in two round trips: BEGIN, the lock and what the write reads first;
        then the rows and COMMIT. (psycopg's own transaction() in a pipeline would wait
        for the server at BEGIN and COMMIT too; COPY, for many rows, needs no pipeline.)"""
        try:
            with conn.pipeline():
                conn.execute("BEGIN")
                self._serialize(conn)
                with conn.cursor() as cur:
                    yield cur
                conn.execute("COMMIT")
        except BaseException:
            if not conn.broken and conn.pgconn.transaction_status != _IDLE:
                conn.execute("ROLLBACK")
            raise

    def _fault(self, e: BaseException) -> BaseException | None:
        psycopg = pool.psycopg_module()
        if isinstance(e, psycopg.errors.ProgramLimitExceeded):  # an OperationalError too
            return Refused(_past_limits(e))
        if isinstance(e, psycopg.OperationalError):
            return Unavailable(_UNREACHABLE)
        return None

    def _head(self, cur: Cursor, caller: Caller) -> tuple[int, Sequence[Any] | None]:
        head = cur.execute(_HEAD, (caller.eid,)).fetchone()
        assert head is not None
        version, top, *person = head
        if (version or "") != self._version:  # another process declared a vocabulary
            self._load(cur)
            self._kinds(cur)
        return top, None if caller.eid is None else person

    def _check_first(
        self, bundles: Bundle | Sequence[Bundle], vocab: Vocabulary
    ) -> list[b.Checked] | None:
        # refused here, perhaps only this process has not seen the vocabulary: checked
        # again under the lock, after `_head` has read it
        with contextlib.suppress(Refused):
            return b.check(bundles, vocab)
        return None

    def _keepable(self, checked: list[b.Checked]) -> None:
        _check_keepable(checked)

    def _insert_all(self, cur: Cursor, inserts: Inserts) -> None:
        """A few new rows of several tables in a pipelined write: one statement, each table's
        INSERT a data-modifying WITH of it (psycopg's work for each statement it sends cost
        more than the server's for the rows: about 0.12 ms of a one-bundle write)."""
        rows = sum(len(found) for _, _, found in inserts)
        if len(inserts) < 2 or rows > _TOGETHER or not cur.connection.pgconn.pipeline_status:
            super()._insert_all(cur, inserts)
            return
        shape = tuple((name, columns, len(found)) for name, columns, found in inserts)
        sql = self._together.get(shape)
        if sql is None:
            each = []
            for name, columns, n in shape:
                one = self.writes.insert(name, columns)  # `… VALUES (%s, …)`: one row's
                each.append(one + f", {one[one.rindex('(') :]}" * (n - 1))
            sql = "WITH " + ", ".join(f"i{at} AS ({one})" for at, one in enumerate(each[:-1]))
            sql += " " + each[-1]
            if len(self._together) < _SHAPES:
                self._together[shape] = sql
        cur.execute(sql, [value for _, _, found in inserts for row in found for value in row])

    def _insert(
        self, cur: Cursor, name: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]]
    ) -> None:
        """New rows: INSERTs for a few, COPY for many."""
        if len(rows) < _COPY_FROM or cur.connection.pgconn.pipeline_status:
            super()._insert(cur, name, columns, rows)
            return
        with cur.copy(f"COPY {name}({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    # -- the vocabulary, which any process may declare --------------------------------------

    def _load(self, conn: Executes) -> None:
        """The vocabulary and its version as stored (another process may have changed them)."""
        meta: dict[str, str] = dict(
            conn.execute(
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

    def _reload(self, cur: Cursor) -> None:
        self._load(cur)

    def _refresh(self) -> bool:
        with self._faults, self._connection() as conn, conn.transaction():
            found = conn.execute("SELECT value FROM pasture_meta WHERE key = 'version'").fetchone()
            if (found[0] if found else "") == self._version:
                return False
            self._load(conn)
            self._kinds(conn)
            return True

    def _keep_vocabulary(self, cur: Cursor, doc: Mapping[str, Any]) -> None:
        # (should the transaction not commit, the next write finds the version kept differs
        # from this one and reads the vocabulary afresh)
        self._version = str(int(self._version or "0") + 1)
        cur.executemany(self.writes.meta, [("vocab", json.dumps(doc)), ("version", self._version)])

    # -- tables ---------------------------------------------------------------------------

    def _tables(self, conn: Executes) -> list[str]:
        return [
            r[0]
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                "ORDER BY tablename"
            )
        ]

    def _install_search(self, cur: Cursor) -> None:
        """A tsvector over doc's title and body, kept by a generated column with a GIN
        index; each doc row carries its entity's kind, so a search reads nothing else."""
        self._fts_config(cur)
        has = {
            r[0]
            for r in cur.execute(
                "SELECT column_name FROM information_schema.columns WHERE "
                "table_schema = current_schema() AND table_name = 'c_doc'"
            )
        }
        if "_kind" not in has:
            cur.execute(f"ALTER TABLE c_doc ADD COLUMN _kind {POSTGRES.text}")
            cur.execute(DOC_KIND)
        if "_fts" not in has:
            cur.execute(
                "ALTER TABLE c_doc ADD COLUMN _fts tsvector GENERATED ALWAYS AS (to_tsvector("
                f"'{FTS_CONFIG}', coalesce(title, '') || ' ' || coalesce(body, ''))) STORED"
            )
            cur.execute("CREATE INDEX c_doc__fts ON c_doc USING gin (_fts)")

    def _fts_config(self, cur: Cursor) -> None:
        """English stems with no stop words dropped, as SQLite's porter tokenizer keeps them."""
        found = cur.execute(
            "SELECT 1 FROM pg_ts_config WHERE cfgname = %s AND cfgnamespace = to_regnamespace(%s)",
            (FTS_CONFIG, self.app_schema),
        ).fetchone()
        if found is None:
            cur.execute(
                "CREATE TEXT SEARCH DICTIONARY pasture_stem "
                "(TEMPLATE = snowball, LANGUAGE = english)"
            )
            cur.execute(f"CREATE TEXT SEARCH CONFIGURATION {FTS_CONFIG} (COPY = english)")
            cur.execute(
                f"ALTER TEXT SEARCH CONFIGURATION {FTS_CONFIG} "
                "ALTER MAPPING REPLACE english_stem WITH pasture_stem"
            )


def _check_keepable(checked: list[b.Checked]) -> None:
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
