"""What the doors ask of the platform database on every call, made cheap to ask again.

- `Remembered`: values read from the database (a token's caller), kept in memory
  until the database changes — here or in another process sharing it (its
  `stamp()`), so a revoked token is seen at once — and at most `most` of them.
  An event loop may look in them (`at_once`) when the database can say without
  waiting that they are still valid.
- `Touches`: a note of when something was last used (a token's `last_used`, a
  session's `last_seen`), written at most once a minute for each, so a call
  costs no write; a note that cannot be written is never a reason to refuse one.
"""

from __future__ import annotations

import threading
import time
from typing import Generic, TypeVar

from pasture.errors import Unavailable
from pasture.platform.db.platform_db import PlatformDB
from pasture.values import now

V = TypeVar("V")

MOST = 4096  # values or notes kept at most; past it they start again
TOUCH = 60.0  # seconds between two notes of one thing's last use


class Remembered(Generic[V]):
    """Values by key, valid while the platform database has not changed."""

    def __init__(self, db: PlatformDB, most: int = MOST) -> None:
        self.db = db
        self.most = most
        self._kept: tuple[tuple[int, int], dict[str, V]] = ((-1, -1), {})

    def current(self) -> dict[str, V]:
        """The values still valid, to look in and then `keep` into.

        The stamp is taken before the caller reads: a change made during that read
        moves it again, so the next look reads afresh."""
        stamp = self.db.stamp()
        kept, values = self._kept
        if kept != stamp:
            values = {}
            self._kept = (stamp, values)
        return values

    def at_once(self) -> dict[str, V] | None:
        """The values still valid, when `PlatformDB.stamp_at_once` can tell without
        waiting; None when it cannot, or when they were read before the last change."""
        stamp = self.db.stamp_at_once()
        kept, values = self._kept
        return values if stamp is not None and stamp == kept else None

    def keep(self, values: dict[str, V], key: str, value: V) -> None:
        """Keep one value read, in the `values` `current()` gave."""
        if len(values) >= self.most:
            values.clear()
        values[key] = value


class Touches:
    """`UPDATE … SET <column> = now WHERE hash = ?`, at most once every `TOUCH` seconds a hash."""

    def __init__(self, db: PlatformDB, sql: str) -> None:
        self.db = db
        self.sql = sql
        self._lock = threading.Lock()
        self._touched: dict[str, float] = {}

    def due(self, digest: str) -> bool:
        """Whether `touch(digest)` would write now."""
        with self._lock:  # held for a look in memory, never across a write
            return time.monotonic() - self._touched.get(digest, -TOUCH) >= TOUCH

    def touch(self, digest: str) -> None:
        moment = time.monotonic()
        with self._lock:
            if moment - self._touched.get(digest, -TOUCH) < TOUCH:
                return
            if len(self._touched) >= MOST:  # forget the notes whose minute has passed
                self._touched = {d: t for d, t in self._touched.items() if moment - t < TOUCH}
            self._touched[digest] = moment
        try:  # a note, never a reason to refuse the call (a full disk, a busy file)
            with self.db.transaction() as conn:
                conn.execute(self.sql, (now("seconds"), digest))
        except Unavailable:
            with self._lock:
                self._touched.pop(digest, None)


__all__ = ["Remembered", "Touches"]
