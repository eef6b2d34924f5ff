"""The bus: every write and deploy announced to every process sharing the data.

A `Change` says what moved — an app's rows (`write`), an app's version or access
(`deploy`), an app's commands in a worker that registered or removed one
(`commands`), who may reach a space (`access`) — and where. `Bus.publish` hands it
at once to this process's listeners, and to every other process that shares the
platform database:

- on PostgreSQL, by `NOTIFY` on one channel; each process `LISTEN`s on a
  connection of its own, and after that connection is lost and made again it
  announces `Change("lost")`, since what was said meanwhile is gone;
- on SQLite, by a row in `changes.db` in the data directory; each process that
  listens looks for new rows whenever the file's `data_version` moves, a
  question SQLite answers from the WAL's shared memory.

Listening starts with the first listener, so a process that only publishes (a
command line verb) starts no thread. Listeners are called on the bus's thread or
on the publisher's: a listener must be quick and must not raise (an event loop's
listener hands the change to its loop with `call_soon_threadsafe`). What a
listener does with a change is its own; the bus only says that something moved.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger("pasture.bus")

Kind = Literal["write", "deploy", "commands", "access", "lost"]
Listener = Callable[["Change"], None]

CHANNEL = "pasture_changes"
# How often a SQLite listener looks at the file: well under a person's notice.
POLL_SECONDS = 0.02
# How long a first listener waits for the bus to hear.
READY_SECONDS = 5.0
# Rows of changes.db kept for listeners that are a little behind.
KEPT = 10_000


@dataclass(frozen=True, slots=True)
class Change:
    """Something moved. `space` None: any space (a person's sign-in ended, or the
    bus lost what it was told); `slug` None: any app of the space."""

    kind: Kind
    space: str | None = None
    slug: str | None = None

    def touches(self, space: str, slug: str) -> bool:
        """Whether this change may alter what `space/slug` answers or who reaches it."""
        return (self.space is None or self.space == space) and (
            self.slug is None or self.slug == slug
        )

    def as_text(self) -> str:
        return json.dumps([self.kind, self.space, self.slug], separators=(",", ":"))

    @classmethod
    def from_text(cls, text: str) -> Change | None:
        try:
            kind, space, slug = json.loads(text)
        except (ValueError, TypeError):
            return None
        if kind not in ("write", "deploy", "commands", "access", "lost"):
            return None
        return cls(kind, space, slug)


class Bus:
    """Publish changes; hear every process's. The base delivers within this process."""

    def __init__(self) -> None:
        self.origin = uuid.uuid4().hex  # this bus's own word, not heard back
        self._listeners: dict[object, Listener] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ready = threading.Event()  # the thread hears what is said from now on
        self._thread: threading.Thread | None = None

    def publish(self, change: Change) -> None:
        """Tell every listener here, then every other process; never raises (a change
        that cannot go out is logged: the write it follows has happened)."""
        self._deliver(change)
        try:
            self._send(change)
        except Exception:
            log.warning("a change could not be announced to other servers", exc_info=True)

    def listen(self, listener: Listener, *, wait: bool = True) -> Callable[[], None]:
        """Call `listener` with every change from now on; returns the way to stop.

        The first listener starts the bus's thread; `wait`: until it hears (a moment, or
        `READY_SECONDS` at most when the database is away), so that what another process
        says next is not missed. An event loop passes `wait=False`, or calls this in a
        thread."""
        token = object()
        with self._lock:
            self._listeners[token] = listener
            if self._thread is None and not self._stopping.is_set():
                self._thread = threading.Thread(target=self._hear, name="pasture-bus", daemon=True)
                self._thread.start()
        if wait:
            self.ready()

        def stop() -> None:
            with self._lock:
                self._listeners.pop(token, None)

        return stop

    def ready(self) -> bool:
        """Until the bus's thread hears (`READY_SECONDS` at most); whether it does."""
        return self._ready.wait(READY_SECONDS)

    def close(self) -> None:
        self._stopping.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    def _deliver(self, change: Change) -> None:
        with self._lock:
            listeners = list(self._listeners.values())
        for listener in listeners:
            try:
                listener(change)
            except Exception:
                log.exception("a listener of the bus failed")

    # -- what a backend provides -----------------------------------------------------------
    def _send(self, change: Change) -> None:
        """Tell the other processes (none, here)."""

    def _hear(self) -> None:
        """On the bus's thread until `close`: deliver what other processes said."""


class SqliteBus(Bus):
    """Among processes sharing a data directory: a table of changes in `changes.db`."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._out: sqlite3.Connection | None = None
        self._out_lock = threading.Lock()
        self._sent = 0

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS changes ("
            " seq INTEGER PRIMARY KEY AUTOINCREMENT, origin TEXT NOT NULL, said TEXT NOT NULL)"
        )
        return conn

    def _send(self, change: Change) -> None:
        with self._out_lock:
            if self._out is None:
                self._out = self._connect()
            cursor = self._out.execute(
                "INSERT INTO changes (origin, said) VALUES (?, ?)", (self.origin, change.as_text())
            )
            self._sent += 1
            if self._sent % 1000 == 0 and cursor.lastrowid is not None:
                self._out.execute("DELETE FROM changes WHERE seq <= ?", (cursor.lastrowid - KEPT,))

    def _hear(self) -> None:
        conn: sqlite3.Connection | None = None
        last = 0
        version = None
        while not self._stopping.is_set():
            try:
                if conn is None:
                    conn = self._connect()
                    last = conn.execute("SELECT coalesce(max(seq), 0) FROM changes").fetchone()[0]
                    version = None
                    self._ready.set()
                now = conn.execute("PRAGMA data_version").fetchone()[0]
                if now != version:
                    version = now
                    rows = conn.execute(
                        "SELECT seq, origin, said FROM changes WHERE seq > ? ORDER BY seq", (last,)
                    ).fetchall()
                    if rows and rows[0][0] > last + 1 and last:
                        self._deliver(Change("lost"))  # trimmed before it was read
                    for seq, origin, said in rows:
                        last = seq
                        if origin == self.origin:
                            continue  # this process's own, heard here when it was said
                        change = Change.from_text(said)
                        if change is not None:
                            self._deliver(change)
            except sqlite3.Error:
                log.warning("the bus could not read changes.db; trying again", exc_info=True)
                if conn is not None:
                    conn.close()
                conn = None
                self._stopping.wait(1.0)
                self._deliver(Change("lost"))
            self._stopping.wait(POLL_SECONDS)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        super().close()
        with self._out_lock:
            if self._out is not None:
                self._out.close()
                self._out = None


class PostgresBus(Bus):
    """Among servers sharing a PostgreSQL database: `NOTIFY` and `LISTEN` on one channel.

    `connect` makes the listening connection, kept for as long as the bus listens;
    `borrow` lends one (autocommit) for the moment a change is said."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection[Any]],
        borrow: Callable[[], AbstractContextManager[psycopg.Connection[Any]]],
    ) -> None:
        super().__init__()
        self._connect = connect
        self._borrow = borrow

    def _send(self, change: Change) -> None:
        payload = json.dumps([self.origin, change.as_text()])
        with self._borrow() as conn:
            conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))

    def _hear(self) -> None:
        heard_before = False
        while not self._stopping.is_set():
            try:
                conn = self._connect()
            except Exception:
                log.warning("the bus cannot reach PostgreSQL; trying again", exc_info=True)
                self._stopping.wait(1.0)
                continue
            try:
                conn.execute(f"LISTEN {CHANNEL}")
                self._ready.set()
                if heard_before:
                    self._deliver(Change("lost"))  # what was said while away is gone
                heard_before = True
                while not self._stopping.is_set():
                    for notice in conn.notifies(timeout=0.5):
                        self._heard(notice.payload)
            except Exception:
                if not self._stopping.is_set():
                    log.warning("the bus lost PostgreSQL; listening again", exc_info=True)
                    self._stopping.wait(0.2)
            finally:
                conn.close()

    def _heard(self, payload: str) -> None:
        try:
            origin, said = json.loads(payload)
        except (ValueError, TypeError):
            return
        change = Change.from_text(said) if isinstance(said, str) else None
        if origin != self.origin and change is not None:
            self._deliver(change)


__all__ = ["CHANNEL", "Bus", "Change", "Kind", "Listener", "PostgresBus", "SqliteBus"]
