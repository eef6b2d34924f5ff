"""The platform database in PostgreSQL: the same tables as `platform.db`, in a `pasture` schema.

    pasture serve --database postgresql://pasture@db/pasture

Any number of `pasture serve` processes, on any number of machines, can stand
in front of one database: everything a process keeps in memory is checked
against the database on every call, as on SQLite.

- The tables are `platform_tables.py`'s, as on SQLite, in the schema `pasture`; user
  names compare without regard to case (an ICU collation, as SQLite's NOCASE),
  and `files` and `generation` are PostgreSQL's alone. The platform's SQL is
  written in SQLite's words and translated here: `?` becomes `%s`, and the
  column `user` (a reserved word in PostgreSQL) is quoted.
- `stamp()` reads one counter row, `pasture.generation`, that every write
  transaction moves first. Moving it also takes the row's lock, so platform
  writes go one at a time, as SQLite's BEGIN IMMEDIATE makes them. A counter,
  not LISTEN/NOTIFY: one indexed read of one row per look costs a round trip,
  and it cannot miss a change the way a dropped listening connection could.
- Connections come from the process's pool for this database
  (`pasture.store.pool`), shared with the apps' stores: a read takes one for as
  long as it runs, a transaction for as long as it lasts (a read inside a
  transaction uses the transaction's). Write transactions of one process queue
  for a lock here before they take a connection.
- Each app's store is its own schema, `app_<space>_<slug>` (with a hash of the
  two when that would be ambiguous or longer than PostgreSQL keeps a name).
- A version's files are kept in `pasture.files` with the deploy's commit, so a
  server that has not seen a version fetches it (and writes it to its data
  directory, which is then only a cache: worker.py is imported from there).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pasture import metrics
from pasture.errors import Conflict, Unavailable
from pasture.platform.db import platform_tables as tables
from pasture.platform.db.bus import Bus, PostgresBus
from pasture.platform.db.counts import Counts
from pasture.platform.db.platform_db import Conn, Cursor, PlatformDB, Row
from pasture.store import pool

if TYPE_CHECKING:
    import psycopg

    from pasture.store.base import Store

SCHEMA = "pasture"
_DIALECT = tables.postgres(SCHEMA)
TABLES = [
    f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}",
    # user names compare as SQLite's NOCASE compares them: without regard to case
    f"""DO $$ BEGIN
        CREATE COLLATION {SCHEMA}.nocase
            (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
    EXCEPTION WHEN duplicate_object THEN NULL; END $$""",
    *tables.create(_DIALECT),
    *(
        f"ALTER TABLE {SCHEMA}.{table} ADD COLUMN IF NOT EXISTS {definition}"
        for table, _, definition in tables.added(_DIALECT)
    ),
    *tables.indexes(_DIALECT),
    *tables.reach_row(_DIALECT),
    # PostgreSQL's own: the counter `stamp()` reads (see the module)
    f"""CREATE TABLE IF NOT EXISTS {SCHEMA}.generation (
      one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
      n BIGINT NOT NULL)""",
    f"INSERT INTO {SCHEMA}.generation (one, n) VALUES (true, 0) ON CONFLICT DO NOTHING",
]
_BUMP = f"UPDATE {SCHEMA}.generation SET n = n + 1"
_STAMP = f"SELECT n FROM {SCHEMA}.generation"
_USER = re.compile(r"(?<![\w\"])user(?![\w\"])")
_LONGEST = 63  # the longest name PostgreSQL keeps whole
_NOT_REACHED = (
    "cannot reach the PostgreSQL database at --database / PASTURE_DATABASE_URL — "
    "check the address and that the server is up"
)
_UNREACHABLE = (
    "the platform's PostgreSQL database cannot be reached — check that the server is up "
    "and try again"
)
_CLASH = "someone changed the same thing at the same moment — try again"


def to_postgres(sql: str) -> str:
    """The platform's SQL (SQLite's words) as PostgreSQL reads it."""
    return _USER.sub('"user"', sql).replace("?", "%s")


# Hex digits of sha256 that end a hashed schema name: 64 bits, so that no one can search
# out a space and app of their own whose schema would be another's (at 40 bits, days of a
# computer's time could). A schema named with the 40 of before is renamed on first use.
_DIGEST = 16
_DIGEST_BEFORE = 10


def app_schema(space: str, slug: str, *, digits: int = _DIGEST) -> str:
    """The schema an app's store lives in: `app_<space>_<slug>`, or, where a `-` would
    make two apps' names meet or the name is too long, a hash of the two at its end."""
    plain = f"app_{space}_{slug}"
    if "-" not in plain and len(plain) <= _LONGEST:
        return plain
    digest = hashlib.sha256(f"{space}/{slug}".encode()).hexdigest()[:digits]
    head = plain.replace("-", "_")[: _LONGEST - len(digest) - 1]
    return f"{head}_{digest}"


class _Row(dict[str, Any]):
    """A row by column name, or by position as sqlite3.Row also reads."""

    def __getitem__(self, key: str | int) -> Any:
        if isinstance(key, int):
            return list(self.values())[key]
        return super().__getitem__(key)


def _rows(cursor: Any) -> Any:
    names = [c.name for c in cursor.description or ()]

    def make(values: Any) -> _Row:
        return _Row(zip(names, values, strict=True))

    return make


class _Conn:
    """The connection inside a transaction, taking the platform's SQL."""

    def __init__(self, db: psycopg.Connection[Any]) -> None:
        self._db = db

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor:
        cursor = self._db.cursor(row_factory=_rows)
        return cursor.execute(to_postgres(sql), tuple(parameters))  # type: ignore[arg-type]


class PostgresPlatformDB(PlatformDB):
    """The platform's tables in the `pasture` schema of a PostgreSQL database."""

    keeps_files = True

    def __init__(self, url: str) -> None:
        self.url = url
        # Write transactions of this process queue here rather than each holding a
        # connection while it waits for the generation row; reads do not wait.
        self._lock = threading.RLock()
        self._held = threading.local()  # the connection this thread is using, if any
        self._pool: pool.Connections | None = pool.connections(url, unreachable=_NOT_REACHED)
        try:
            with self._guard(), self._using() as db, db.transaction():
                # one process makes the tables at a time
                db.execute("SELECT pg_advisory_xact_lock(hashtext('pasture:platform'))")
                for statement in TABLES:
                    db.execute(statement)
        except BaseException:
            self.close()
            raise

    # -- the connection ---------------------------------------------------------------------

    @contextmanager
    def _using(self, *, own: bool = False) -> Iterator[psycopg.Connection[Any]]:
        """A connection of the process's pool for as long as the block lasts; in a block of
        this thread's already (a read inside a transaction), the same one, unless `own`."""
        held: psycopg.Connection[Any] | None = getattr(self._held, "conn", None)
        if held is not None and not own:
            yield held
            return
        connections = self._pool
        if connections is None:  # used again after `close`: opened again, as it was
            with self._lock:
                connections = self._pool = self._pool or pool.connections(
                    self.url, unreachable=_NOT_REACHED
                )
        with connections.connection(SCHEMA) as db:
            self._held.conn = db
            try:
                yield db
            finally:
                self._held.conn = held

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """A lost server or a write that met another one is a sentence."""
        psycopg = pool.psycopg_module()
        try:
            yield
        except psycopg.errors.IntegrityError:
            raise Conflict(_CLASH) from None
        except psycopg.OperationalError:
            raise Unavailable(_UNREACHABLE) from None

    # -- the interface ----------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[Conn]:
        with (
            self._lock,
            self._guard(),
            metrics.database("platform", "write"),
            self._using() as db,
            db.transaction(),
        ):
            db.execute(_BUMP)  # first: later writers wait here, and every stamp moves
            yield _Conn(db)

    def stamp(self) -> tuple[int, int]:
        with self._guard(), self._using() as db:
            row = db.execute(_STAMP).fetchone()
            assert row is not None  # made with the tables
            return int(row[0]), 0

    def one(self, sql: str, *params: Any) -> Row | None:
        with self._guard(), metrics.database("platform", "read"), self._using() as db:
            row: Row | None = _Conn(db).execute(sql, params).fetchone()
            return row

    def all(self, sql: str, *params: Any) -> list[Row]:
        with self._guard(), metrics.database("platform", "read"), self._using() as db:
            return list(_Conn(db).execute(sql, params).fetchall())

    def bus(self) -> Bus:
        # Said on one of the pool's connections; heard on one of its own, which listens
        # for as long as the process does and is never given back.
        url = self.url

        def own() -> psycopg.Connection[Any]:
            return pool.connect(url, unreachable=_UNREACHABLE)

        return PostgresBus(own, lambda: self._using(own=True))

    def counts(self) -> Counts:
        # On the pool's connections, outside `transaction()`: the generation stays.
        @contextmanager
        def transaction() -> Iterator[Conn]:
            with self._guard(), self._using(own=True) as db, db.transaction():
                yield _Conn(db)

        @contextmanager
        def reading() -> Iterator[Conn]:
            with self._guard(), self._using(own=True) as db:
                yield _Conn(db)

        return Counts(transaction, reading)

    def app_store(self, space: str, slug: str, app_dir: Path) -> Store:
        from pasture.store import open_store

        schema = app_schema(space, slug)
        before = app_schema(space, slug, digits=_DIGEST_BEFORE)
        if before != schema:
            self._renamed(before, schema)
        return open_store(self.url, schema=schema)

    def _renamed(self, before: str, schema: str) -> None:
        """An app's schema named as before (a shorter hash) takes its name of now, once:
        under the lock the store installs under, so two servers do it once between them."""
        with self._guard(), self._using() as db, db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("pasture:" + schema,))
            found = {
                str(r[0])
                for r in db.execute(
                    "SELECT nspname FROM pg_namespace WHERE nspname = ANY(%s)", ([before, schema],)
                )
            }
            if found == {before}:
                db.execute(f'ALTER SCHEMA "{before}" RENAME TO "{schema}"')

    def keep_files(
        self, conn: Conn, space: str, slug: str, version: int, files: Mapping[str, bytes]
    ) -> None:
        for path, body in files.items():
            conn.execute(
                "INSERT INTO files (space, slug, version, path, body) VALUES (?, ?, ?, ?, ?)",
                (space, slug, version, path, body),
            )

    def forget_files(self, conn: Conn, space: str, slug: str, version: int) -> None:
        conn.execute(
            "DELETE FROM files WHERE space = ? AND slug = ? AND version = ?",
            (space, slug, version),
        )

    def forget_app_files(self, conn: Conn, space: str, slug: str) -> None:
        conn.execute("DELETE FROM files WHERE space = ? AND slug = ?", (space, slug))

    def drop_store(self, space: str, slug: str, app_dir: Path) -> None:
        names = {app_schema(space, slug), app_schema(space, slug, digits=_DIGEST_BEFORE)}
        with self._guard(), self._using() as db, db.transaction():
            for schema in sorted(names):
                db.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')

    def version_files(self, space: str, slug: str, version: int) -> dict[str, bytes] | None:
        rows = self.all(
            "SELECT path, body FROM files WHERE space = ? AND slug = ? AND version = ?",
            space,
            slug,
            version,
        )
        return {str(r["path"]): bytes(r["body"]) for r in rows}

    def write_aside(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        # Not in `transaction()`: the generation stays, so no server reloads what it keeps.
        psycopg = pool.psycopg_module()
        try:
            with self._using(own=True) as db, db.transaction(), db.cursor() as cursor:
                cursor.executemany(to_postgres(sql), [tuple(r) for r in rows])
                return max(cursor.rowcount, 0)
        except psycopg.OperationalError:
            raise Unavailable(_UNREACHABLE) from None

    def close(self) -> None:
        with self._lock:
            connections, self._pool = self._pool, None
        if connections is not None:
            connections.release()


__all__ = ["PostgresPlatformDB", "app_schema", "to_postgres"]
