"""The platform's own SQLite file, `platform.db`: people, secrets, spaces, members, apps.

One connection per `PlatformDB`, shared by threads under a lock (the web runs
handlers on a thread pool), in WAL mode so a `pasture deploy` in another
process can switch a version while `pasture serve` keeps reading.

`stamp()` changes whenever what the file says may have changed: SQLite's
`data_version` moves when another connection (another process) commits, and
a counter here moves on every transaction of this one. What is derived from
the file can be kept for as long as the stamp stays the same.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
  eid TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE COLLATE NOCASE,
  space TEXT NOT NULL,
  password TEXT,
  admin INTEGER NOT NULL DEFAULT 0,
  created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tokens (
  hash TEXT PRIMARY KEY,
  user TEXT NOT NULL REFERENCES users(eid),
  label TEXT NOT NULL,
  created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
  hash TEXT PRIMARY KEY,
  user TEXT NOT NULL REFERENCES users(eid),
  created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS spaces (
  name TEXT PRIMARY KEY,
  created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS members (
  space TEXT NOT NULL REFERENCES spaces(name),
  user TEXT NOT NULL REFERENCES users(eid),
  role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
  PRIMARY KEY (space, user)
);
CREATE TABLE IF NOT EXISTS apps (
  space TEXT NOT NULL REFERENCES spaces(name),
  slug TEXT NOT NULL,
  title TEXT NOT NULL,
  access TEXT NOT NULL CHECK (access IN ('private', 'public', 'open')),
  version INTEGER NOT NULL,
  PRIMARY KEY (space, slug)
);
CREATE TABLE IF NOT EXISTS versions (
  space TEXT NOT NULL,
  slug TEXT NOT NULL,
  version INTEGER NOT NULL,
  title TEXT NOT NULL,
  deployed_by TEXT,
  deployed_at TEXT NOT NULL,
  PRIMARY KEY (space, slug, version)
);
"""


class PlatformDB:
    """The platform database; every statement runs under one lock."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(
            path, check_same_thread=False, isolation_level=None, timeout=30
        )
        self._conn.row_factory = sqlite3.Row
        self._writes = 0
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.execute("PRAGMA busy_timeout=30000")
        with self.transaction() as conn:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All or nothing: BEGIN IMMEDIATE so two writers queue instead of failing."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            self._writes += 1

    def stamp(self) -> tuple[int, int]:
        """A value that changes whenever platform.db may have changed, here or elsewhere.

        Take it before reading what it guards: a change made during the read moves it
        again, so the next look reads afresh.
        """
        with self._lock:
            row = self._conn.execute("PRAGMA data_version").fetchone()
            return int(row[0]), self._writes

    def one(self, sql: str, *params: Any) -> sqlite3.Row | None:
        with self._lock:
            row: sqlite3.Row | None = self._conn.execute(sql, params).fetchone()
            return row

    def all(self, sql: str, *params: Any) -> list[sqlite3.Row]:
        with self._lock:
            return list(self._conn.execute(sql, params).fetchall())

    def close(self) -> None:
        with self._lock:
            self._conn.close()
