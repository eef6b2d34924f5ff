"""The platform's own database: people, spaces, members, apps, versions, apps' secrets.

`PlatformDB` is what every part of the platform talks to; it has two
implementations. `SqlitePlatformDB` is the SQLite file `platform.db` in the data
directory, the embedded default; `pasture.platform.db.postgres_db.PostgresPlatformDB`
keeps the same tables in a PostgreSQL database (its `pasture` schema), so any
number of `pasture serve` processes can stand in front of one database. Both
make their tables from one description (`platform_tables.py`), and the platform writes
its SQL once, in SQLite's words (`?` parameters); the PostgreSQL side
translates it.

On SQLite, one connection per `PlatformDB`, shared by threads under a lock (the
web runs handlers on a thread pool), in WAL mode so a `pasture deploy` in
another process can switch a version while `pasture serve` keeps reading; on
PostgreSQL, a connection from the process's pool for each read or transaction.

`stamp()` changes whenever what the database says may have changed: both keep one
counter row, `generation`, that every `transaction()` moves, in this process or
another. Not SQLite's `data_version`: that moves for any other connection's commit,
the audit's own (`write_aside`) among them, and so would throw away every cache at
each audit batch. What is derived from the database can be kept for as long as the
stamp stays the same.

Each app's store is opened here too (`app_store`): a SQLite file beside the
app's versions, or the app's own schema in the PostgreSQL database. A version's
files are written to the data directory by the deploy; PostgreSQL also keeps
them in its `files` table (`keep_files`), so a server on another machine
fetches a version it has not seen (`version_files`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pasture import faults, metrics
from pasture.platform.db import platform_tables as tables
from pasture.platform.db.bus import Bus, SqliteBus
from pasture.platform.db.counts import Counts, SqliteCounts

if TYPE_CHECKING:
    from pasture.store.base import Store


class Row(Protocol):
    """A row read back: its columns by name (or position)."""

    def __getitem__(self, key: str | int, /) -> Any: ...


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Conn(Protocol):
    """A connection inside `PlatformDB.transaction()`: SQL in SQLite's words, `?` params."""

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor: ...


class PlatformDB:
    """The platform database; one write transaction at a time (see the module)."""

    # Whether it keeps versions' files itself (`keep_files`), so the data directory's copy
    # is only a cache this machine may let go of and fetch again.
    keeps_files = False

    def transaction(self) -> AbstractContextManager[Conn]:
        """All or nothing, one writer at a time: `with db.transaction() as conn: ...`."""
        raise NotImplementedError

    def stamp(self) -> tuple[int, int]:
        """A value that changes whenever the database may have changed, here or elsewhere.

        Take it before reading what it guards: a change made during the read moves it
        again, so the next look reads afresh.
        """
        raise NotImplementedError

    def stamp_at_once(self) -> tuple[int, int] | None:
        """`stamp()` when it can be read without waiting — on no lock another thread holds,
        for no round trip to a server — else None. An event loop may ask this; whatever
        it keeps by the stamp is then still valid when the answer equals `stamp()`'s."""
        return None

    def take_away(self, *statements: tuple[str, Sequence[Any]]) -> None:
        """Statements that end someone's reach (a session, a pass, a person's rows), run in
        one transaction that also moves `reach` (`tables.REACH_MOVED`)."""
        with self.transaction() as conn:
            for sql, params in statements:
                conn.execute(sql, params)
            conn.execute(tables.REACH_MOVED)

    def one(self, sql: str, *params: Any) -> Row | None:
        raise NotImplementedError

    def all(self, sql: str, *params: Any) -> list[Row]:
        raise NotImplementedError

    def app_store(self, space: str, slug: str, app_dir: Path) -> Store:
        """The app's store, opened (and made, the first time)."""
        raise NotImplementedError

    def bus(self) -> Bus:
        """The bus among every process that shares this database (`pasture.platform.db.bus`)."""
        raise NotImplementedError

    def counts(self) -> Counts:
        """The counts every process that shares this database shares: limits' buckets and
        failed sign-ins (`pasture.platform.db.counts`); nothing is opened until they are used."""
        raise NotImplementedError

    def keep_files(
        self, conn: Conn, space: str, slug: str, version: int, files: Mapping[str, bytes]
    ) -> None:
        """Keep a version's files with the deploy's commit (only the data directory's
        copy on SQLite: nothing more to do)."""

    def version_files(self, space: str, slug: str, version: int) -> dict[str, bytes] | None:
        """A version's files as the database keeps them, or None when it keeps none."""
        return None

    def forget_files(self, conn: Conn, space: str, slug: str, version: int) -> None:
        """Forget a version's files with the transaction that lets the version go (only
        the data directory's copy on SQLite: its folder goes after the commit)."""

    def forget_app_files(self, conn: Conn, space: str, slug: str) -> None:
        """Forget every version's files of an app deleted for good (`pasture.platform.apps.trash`;
        only the data directory's copy on SQLite: its folder goes with the app's)."""

    def drop_store(self, space: str, slug: str, app_dir: Path) -> None:
        """Delete an app's store for good: its SQLite file, or its PostgreSQL schema."""
        raise NotImplementedError

    def write_aside(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        """`sql` once for each row, all or nothing, on a connection of its own: for records no
        cache is derived from (`pasture.platform.access.audit`), written off the calls' path so no
        call waits for them. PostgreSQL's generation is not moved. How many rows it changed."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


# The counter `stamp()` reads (see the module), made before any `transaction()`, which
# moves it first.
_GENERATION = (
    "CREATE TABLE IF NOT EXISTS generation ("
    "one INTEGER PRIMARY KEY CHECK (one = 1), n INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO generation (one, n) VALUES (1, 0)",
)
_BUMP = "UPDATE generation SET n = n + 1"
_STAMP = "SELECT n FROM generation"


class SqlitePlatformDB(PlatformDB):
    """`platform.db`, the SQLite file in the data directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._aside: sqlite3.Connection | None = None  # `write_aside`'s own connection
        self._aside_lock = threading.Lock()
        with self._faults():
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                path, check_same_thread=False, isolation_level=None, timeout=30
            )
            self._conn.row_factory = sqlite3.Row
            mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()
            # In WAL mode a read never waits for a writer (`stamp_at_once`).
            self._wal = str(mode[0]).lower() == "wal"
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.execute(f"PRAGMA busy_timeout={int(faults.busy_seconds() * 1000)}")
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in _GENERATION:
                    self._conn.execute(statement)
                self._conn.execute("COMMIT")
            except BaseException:
                with suppress(sqlite3.Error):
                    self._conn.execute("ROLLBACK")
                raise
        with self.transaction() as conn:
            for statement in tables.create(tables.SQLITE):
                conn.execute(statement)
            for table, column, definition in tables.added(tables.SQLITE):
                have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})").fetchall()}
                if column not in have:  # a database made before the column was
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {definition}")
            for statement in tables.indexes(tables.SQLITE):
                conn.execute(statement)
            for statement in tables.reach_row(tables.SQLITE):
                conn.execute(statement)

    @contextmanager
    def transaction(self) -> Iterator[Conn]:
        """All or nothing: BEGIN IMMEDIATE so two writers queue instead of failing."""
        with self._lock, self._faults(), metrics.database("platform", "write"):
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute(_BUMP)
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                with suppress(sqlite3.Error):
                    self._conn.execute("ROLLBACK")
                raise

    @contextmanager
    def _faults(self) -> Iterator[None]:
        """A full disk, a read-only folder or a file held too long: said, naming platform.db."""
        try:
            yield
        except (sqlite3.Error, OSError) as e:
            raise faults.fault(e, self.path) or e from None

    def stamp(self) -> tuple[int, int]:
        with self._lock, self._faults():
            return int(self._conn.execute(_STAMP).fetchone()[0]), 0

    def stamp_at_once(self) -> tuple[int, int] | None:
        # The connection's lock may be held through a transaction waiting on another
        # process: not waited for. Past it, a read in WAL mode waits for no writer.
        if not self._wal or not self._lock.acquire(blocking=False):
            return None
        try:
            return int(self._conn.execute(_STAMP).fetchone()[0]), 0
        except sqlite3.Error:
            return None  # `stamp()`, in a thread, says what is wrong
        finally:
            self._lock.release()

    def one(self, sql: str, *params: Any) -> Row | None:
        with self._lock, self._faults(), metrics.database("platform", "read"):
            row: sqlite3.Row | None = self._conn.execute(sql, params).fetchone()
            return row

    def all(self, sql: str, *params: Any) -> list[Row]:
        with self._lock, self._faults(), metrics.database("platform", "read"):
            return list(self._conn.execute(sql, params).fetchall())

    def bus(self) -> Bus:
        return SqliteBus(self.path.parent / "changes.db")

    def counts(self) -> Counts:
        return SqliteCounts(self.path.parent / "limits.db")

    def app_store(self, space: str, slug: str, app_dir: Path) -> Store:
        from pasture.store import open_store

        try:
            app_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise faults.fault(e, app_dir) or e from None
        return open_store(app_dir / "store.db")

    def drop_store(self, space: str, slug: str, app_dir: Path) -> None:
        for name in ("store.db", "store.db-wal", "store.db-shm", "store.db-journal"):
            with self._faults():
                (app_dir / name).unlink(missing_ok=True)

    def write_aside(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        # WAL: the calls' reads on the main connection go on while this writes.
        with self._aside_lock, self._faults():
            conn = self._aside
            if conn is None:
                conn = sqlite3.connect(
                    self.path, check_same_thread=False, isolation_level=None, timeout=30
                )
                conn.execute("PRAGMA synchronous=NORMAL")  # in WAL: safe, and no fsync a batch
                conn.execute(f"PRAGMA busy_timeout={int(faults.busy_seconds() * 1000)}")
                self._aside = conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                changed = conn.executemany(sql, rows).rowcount
                conn.execute("COMMIT")
            except BaseException:
                with suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            return changed

    def close(self) -> None:
        with self._aside_lock:
            if self._aside is not None:
                self._aside.close()
                self._aside = None
        with self._lock:
            self._conn.close()
