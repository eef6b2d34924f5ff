"""The embedded backend: one SQLite file per app, in WAL mode.

The store itself — tables, writes, reads — is `sqlstore.py`'s, shared with the
PostgreSQL backend; this module holds what is SQLite's own. A write is one
`BEGIN IMMEDIATE … COMMIT`, which makes the writes to one file go one at a
time; any refusal rolls the whole call back. Between writes the store keeps
the largest `_e` and the callers it has kept as persons, true as long as no
other connection commits to the file (`PRAGMA data_version`). Full text is an
FTS5 table over `c_doc` kept by triggers, and a storage fault (a full disk, a
read-only file, a busy lock) is raised as the sentence `faults` says.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from pasture import faults
from pasture.caller import Caller
from pasture.errors import Refused
from pasture.store.dialect import SQLITE, q
from pasture.store.sqlstore import Executes, SqlStore
from pasture.store.tables import SQLITE_WRITES, base_tables
from pasture.store.times import Clock, utc_now
from pasture.store.vocab import Vocabulary

if TYPE_CHECKING:
    from pasture.store.postgres import PostgresStore

_LAYOUT = "3"  # component rows carry `_eid`, `_created_at`, `_created_by` (pasture.store.tables)
# the caller's entity, person row and name, as `SqlStore._person` takes them
_PERSON = (
    "SELECT e._e, p._e, p.name FROM entity e LEFT JOIN c_person p ON p._e = e._e WHERE e.eid = ?"
)

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


_SPARE = 4  # snapshot connections kept at rest
# Pages a connection keeps in memory, in KiB (SQLite's default is 2 MiB). A whole row is read
# from several tables (the entity's, each component's), so a page of a thousand found by a
# search touches some 16 MiB of them: at the default most of each read was read again from
# the file. Memory is taken only as pages are read.
PAGE_CACHE_KIB = 32 * 1024


class _Locked(contextlib.AbstractContextManager[sqlite3.Connection]):
    """The store's one connection, its lock held for the block (a plain object: a read's
    whole cost is a few tens of microseconds, and a generator's context costs some)."""

    __slots__ = ("db", "lock")

    def __init__(self, lock: threading.RLock, db: sqlite3.Connection) -> None:
        self.lock = lock
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.lock.acquire()
        return self.db

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


class SqliteStore(SqlStore[sqlite3.Connection]):
    """One app's graph in one SQLite file (see `pasture.store.base.Store`)."""

    dialect = SQLITE
    writes = SQLITE_WRITES
    snapshot = "BEGIN"

    def __init__(self, path: str | Path, *, clock: Clock = utc_now) -> None:
        super().__init__(clock)
        self.path = str(path)
        self._db = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, cached_statements=1024
        )
        # What a write may take as known rather than read again, true as of `_data_version`
        # (`PRAGMA data_version`, which moves when any other connection commits to the
        # file); forgotten whenever a write of ours rolls back.
        self._data_version: int | None = None
        # how a read holds the one connection: made once, as every read takes it
        self._locked = _Locked(self._lock, self._db)
        self._top: int | None = None  # the largest `_e` there is
        self._people: dict[str, str | None] = {}  # eid -> name of callers kept as persons
        # Connections of snapshots (`begin(read_only=True)`) at rest, for the next: a query
        # handler's reads see one moment without holding the store's one connection.
        self._spare: list[sqlite3.Connection] = []
        self._spare_lock = threading.Lock()  # not the store's: a write transaction holds that
        db = self._db
        with self._faults:
            db.execute(f"PRAGMA busy_timeout = {int(faults.busy_seconds() * 1000)}")
            db.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA temp_store = MEMORY")
        with self._lock, self._writing() as cur:
            for statement in base_tables(SQLITE):
                cur.execute(statement)
            stored = cur.execute("SELECT value FROM pasture_meta WHERE key = 'vocab'").fetchone()
            self._vocab = Vocabulary.from_json(json.loads(stored[0]) if stored else None)
            self._upgrade()
            self._install(cur, self._vocab)
        self._kinds()

    def close(self) -> None:
        with self._lock:
            self._db.close()
            with self._spare_lock:
                for spare in self._spare:
                    spare.close()
                self._spare.clear()

    # -- the connection and its transactions ----------------------------------------------

    def _reading(
        self, *, generic: bool = False
    ) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        held = self._held
        if held and threading.get_ident() not in held and any(t.writes for t in held.values()):
            # Another thread holds the one connection in a write transaction: read what is
            # committed through a connection of its own rather than wait for it to end.
            return self._snapshot_connection()
        return self._locked  # one connection: one statement at a time

    @contextlib.contextmanager
    def _snapshot_connection(self) -> Iterator[sqlite3.Connection]:
        with self._spare_lock:
            db = self._spare.pop() if self._spare else None
        if db is None:
            with self._faults:
                db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
                db.execute(f"PRAGMA busy_timeout = {int(faults.busy_seconds() * 1000)}")
                db.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
        try:
            yield db
        except BaseException:
            db.close()  # what it was in the middle of is not known: not kept
            raise
        with self._spare_lock:
            if len(self._spare) < _SPARE:
                self._spare.append(db)
                return
        db.close()

    @contextlib.contextmanager
    def _writing(self, bundles: int | None = None) -> Iterator[sqlite3.Connection]:
        db = self._db
        with self._faults:
            db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException as e:
            self._forget()
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise faults.fault(e, self.path) or e from None

    def _fault(self, e: BaseException) -> BaseException | None:
        return faults.fault(e, self.path)

    def _head(self, cur: sqlite3.Connection, caller: Caller) -> tuple[int, Sequence[Any] | None]:
        version = cur.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version:  # another connection wrote: read afresh
            self._forget()
            self._data_version = version
        top = self._top
        if top is None:
            top = cur.execute("SELECT coalesce(max(_e), 0) FROM entity").fetchone()[0]
        by, people = caller.eid, self._people
        if by is None or (by in people and people[by] == caller.name):
            return top, None
        found = cur.execute(_PERSON, (by,)).fetchone()
        people[by] = caller.name  # kept by this write (forgotten if it does not commit)
        return top, found or (None, None, None)

    def _written(self, top: int, eids: list[str]) -> None:
        # Known from here on (forgotten again if this transaction does not commit): the
        # largest `_e`, and the caller as a person — unless this write touched a person.
        self._top = top
        for eid in eids:
            self._people.pop(eid, None)

    def _forget(self) -> None:
        self._data_version = None
        self._top = None
        self._people.clear()

    # -- tables ---------------------------------------------------------------------------

    def _tables(self, conn: Executes) -> list[str]:
        return [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]

    def _keep_vocabulary(self, cur: sqlite3.Connection, doc: Mapping[str, Any]) -> None:
        cur.execute(self.writes.meta, ("vocab", json.dumps(doc)))

    def _install_search(self, cur: sqlite3.Connection) -> None:
        for statement in _FTS:
            cur.execute(statement)

    def _upgrade(self) -> None:
        """Give the component rows of a file made before they carried their entity's eid
        and `created` stamps those columns."""
        db = self._db
        found = db.execute("SELECT value FROM pasture_meta WHERE key = 'layout'").fetchone()
        if found is not None and found[0] == _LAYOUT:
            return
        for name in self._tables(db):
            if not name.startswith("c_"):
                continue
            had = {r[1] for r in db.execute(f"PRAGMA table_info({q(name)})")}
            for column in ("_eid", "_created_at", "_created_by"):
                if column not in had:
                    db.execute(f"ALTER TABLE {q(name)} ADD COLUMN {column} TEXT")
            db.execute(
                f"UPDATE {q(name)} SET (_eid, _created_at, _created_by) = "
                f"(SELECT eid, created_at, created_by FROM entity WHERE _e = {q(name)}._e)"
            )
        db.execute(self.writes.meta, ("layout", _LAYOUT))


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
