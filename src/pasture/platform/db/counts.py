"""The counts every process on the same data shares: what each limit lends out, failed sign-ins.

`pasture.platform.access.limits` takes each call at once from tokens its process holds
in memory; the tokens are lent to it by a bucket kept here, one per limit and key, so
that however many processes serve, a key's calls come out of the one bucket:

    limit_buckets     a limit's bucket for one key (`kind`: caller, address, open, …;
                      `whose`: the token or the address): what it holds now (`level`,
                      filled evenly since `at`, never past its size less what it has lent),
                      and what it has lent to each process (`holds`: {process: [tokens,
                      until]}) — a hold is forgotten a while after `until`, so the tokens
                      of a process that ended without giving them back are not lost
    limit_processes   each process that counts, and when it last said it was there
    sign_in_failures  failed sign-ins per name and per address (`SignInTries`)

A lease (`lease`) gives back what the process holds of a key and takes half of what the
bucket has, or what the rate lets through in a lease's time if that is less (a slow rate is
lent a call at a time, so no process sits on tokens another is refused for): a token is in
the bucket or held by one process, never both, so no number of processes lets more through
than the one bucket. Nothing is written for a call a process takes from its tokens; a
process asks again when they run out, when another found the bucket empty (`wanted`), or
before its lease runs out.

On PostgreSQL these are tables of the platform's schema, written on connections of the
pool outside the platform's `transaction()` (the generation every server's caches read
does not move for them); on SQLite, `limits.db` in the data directory, a file apart from
platform.db, so that a lease never waits behind a deploy nor a deploy behind a lease.
Time is seconds since 1970 as each process reads it: processes on several machines
sharing a PostgreSQL database keep their clocks in time (NTP), as sessions' expiry
needs anyway; a clock a little apart only moves when a bucket fills.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pasture.platform.db import platform_tables as tables

T = TypeVar("T")

# How long a lease may be spent from; the bucket forgets a hold this much later again
# (so clocks a little apart never let a bucket forget tokens a process may still spend).
LEASE_SECONDS = 30.0

Failures = dict[str, tuple[int, float, float]]  # whose -> (failures, last, locked until)


class Conn(Protocol):
    """A connection in one of `Counts`' blocks: SQL in SQLite's words, `?` parameters."""

    def execute(self, sql: str, parameters: Any = (), /) -> Any: ...


Block = Callable[[], AbstractContextManager[Conn]]


@dataclass(frozen=True, slots=True)
class Ask:
    """What a process asks of one key's bucket: to take back what it gives (`back`: the
    tokens it holds unspent, or below 0 the calls it let through counting alone) and,
    with `want`, to lend it more."""

    kind: str
    whose: str
    size: float  # the bucket's size: the rate's count
    per_second: float  # how fast it fills
    back: float = 0.0
    want: bool = True


@dataclass(frozen=True, slots=True)
class Lent:
    """What the bucket lent (whole tokens, 0 when it holds less than one), what it holds
    after, and what other processes hold of it."""

    granted: int
    level: float
    held: float


_TAKE = (
    "INSERT INTO limit_buckets (kind, whose, level, at, full_at) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (kind, whose) DO UPDATE SET kind = excluded.kind "
    "RETURNING level, at, wanted, holds"
)
_PUT = (
    "UPDATE limit_buckets SET level = ?, at = ?, full_at = ?, wanted = ?, holds = ?, "
    "held_until = ? WHERE kind = ? AND whose = ?"
)
_FAILURES = (
    "INSERT INTO sign_in_failures (whose, failures, last_at, locked_until) VALUES (?, 0, 0, 0) "
    "ON CONFLICT (whose) DO UPDATE SET whose = excluded.whose "
    "RETURNING failures, last_at, locked_until"
)


class Counts:
    """The shared counts, through `transaction` (all or nothing, one writer of a row at a
    time) and `reading` (a look); this process is `process`."""

    def __init__(self, transaction: Block, reading: Block, process: str | None = None) -> None:
        self.process = process or uuid.uuid4().hex
        self._transaction = transaction
        self._reading = reading

    # -- limits -----------------------------------------------------------------------------
    def lease(self, asks: Sequence[Ask], now: float) -> list[Lent]:
        """Each ask answered, in one transaction (keys taken in one order: no two processes
        wait on each other)."""
        answers: dict[int, Lent] = {}
        with self._transaction() as conn:
            for i in sorted(range(len(asks)), key=lambda i: (asks[i].kind, asks[i].whose)):
                answers[i] = self._lease(conn, asks[i], now)
        return [answers[i] for i in range(len(asks))]

    def _lease(self, conn: Conn, ask: Ask, now: float) -> Lent:
        row = conn.execute(_TAKE, (ask.kind, ask.whose, ask.size, now, now)).fetchone()
        level, at, wanted = float(row[0]), float(row[1]), float(row[2])
        holds = _holds(str(row[3]))
        mine = holds.pop(self.process, None)
        # a hold whose time ran out a while ago is forgotten: its process ended, or gave up
        holds = {p: h for p, h in holds.items() if h[1] + LEASE_SECONDS > now}
        held = sum(tokens for tokens, _ in holds.values())
        mine_held = mine[0] if mine is not None and mine[1] + LEASE_SECONDS > now else 0.0
        # filled since `at`, never past the size less what is lent (spent or not)
        level = min(ask.size - held - mine_held, level + max(0.0, now - at) * ask.per_second)
        level = min(level + ask.back, ask.size - held)  # this process's hold is given back
        granted = 0
        if ask.want and level >= 1.0:
            granted = max(1, int(min(level / 2, ask.per_second * LEASE_SECONDS)))
            level -= granted
        if granted:
            holds[self.process] = (float(granted), now + LEASE_SECONDS)
        elif ask.want:
            wanted = now  # found empty: whoever holds some gives it back
        at = max(at, now)
        full_at = at + max(0.0, ask.size - level) / ask.per_second
        held_until = max((until for _, until in holds.values()), default=0.0) + LEASE_SECONDS
        conn.execute(
            _PUT,
            (level, at, full_at, wanted, json.dumps(holds), held_until, ask.kind, ask.whose),
        )
        return Lent(granted, level, held)

    def wanted(self, since: float) -> list[tuple[str, str, float]]:
        """(kind, whose, when) of each bucket a process found empty after `since`."""
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT kind, whose, wanted FROM limit_buckets WHERE wanted > ?", (since,)
            ).fetchall()
        return [(str(r[0]), str(r[1]), float(r[2])) for r in rows]

    def alive(self, now: float, within: float) -> int:
        """Say this process is here; how many processes said so within `within` seconds
        (this one among them). Those silent for long are forgotten."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO limit_processes (process, seen) VALUES (?, ?) "
                "ON CONFLICT (process) DO UPDATE SET seen = excluded.seen",
                (self.process, now),
            )
            conn.execute("DELETE FROM limit_processes WHERE seen < ?", (now - 100 * within,))
            row = conn.execute(
                "SELECT count(*) FROM limit_processes WHERE seen >= ?", (now - within,)
            ).fetchone()
        return max(1, int(row[0]))

    def leave(self) -> None:
        """This process counts no more (what it held it has given back)."""
        with self._transaction() as conn:
            conn.execute("DELETE FROM limit_processes WHERE process = ?", (self.process,))

    def tidy(self, now: float, failures_before: float) -> None:
        """Forget buckets full again that lend nothing, and failures older than
        `failures_before` that refuse nothing."""
        with self._transaction() as conn:
            conn.execute(
                "DELETE FROM limit_buckets WHERE full_at < ? AND held_until < ?", (now, now)
            )
            conn.execute(
                "DELETE FROM sign_in_failures WHERE last_at < ? AND locked_until < ?",
                (failures_before, now),
            )

    # -- sign-in failures ---------------------------------------------------------------------
    def failures(self, whose: Sequence[str], change: Callable[[Failures], T]) -> T:
        """`change` the failures of `whose` (those it leaves out of the mapping it is given are
        forgotten), in one transaction; what it answers. Should it raise, nothing changes."""
        with self._transaction() as conn:
            found: Failures = {}
            for key in whose:
                row = conn.execute(_FAILURES, (key,)).fetchone()
                if int(row[0]) > 0:
                    found[key] = (int(row[0]), float(row[1]), float(row[2]))
            answer = change(found)
            for key in whose:
                if key in found:
                    failures, last, locked = found[key]
                    conn.execute(
                        "UPDATE sign_in_failures SET failures = ?, last_at = ?, locked_until = ? "
                        "WHERE whose = ?",
                        (failures, last, locked, key),
                    )
                else:
                    conn.execute("DELETE FROM sign_in_failures WHERE whose = ?", (key,))
        return answer

    def close(self) -> None:
        """Let go of what it holds open (nothing, here)."""


def _holds(text: str) -> dict[str, tuple[float, float]]:
    try:
        found = json.loads(text)
        return {str(p): (float(h[0]), float(h[1])) for p, h in found.items()}
    except (ValueError, TypeError, AttributeError, IndexError, KeyError):
        return {}  # unreadable: as if nothing were lent (each holder stops at its own time)


# The tables as SQLite keeps them, in limits.db.
_SQLITE_TABLES = [replace(t, postgres_only=False) for t in tables.COUNTS]


class SqliteCounts(Counts):
    """The shared counts in `limits.db` (WAL), opened on first use."""

    def __init__(self, path: Path, process: str | None = None) -> None:
        super().__init__(self._in_transaction, self._in_reading, process)
        self.path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(
                self.path, timeout=2.0, isolation_level=None, check_same_thread=False
            )
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")  # counts need no fsync a commit
                for statement in tables.create(tables.SQLITE, _SQLITE_TABLES):
                    conn.execute(statement)
                for statement in tables.indexes(tables.SQLITE, _SQLITE_TABLES):
                    conn.execute(statement)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    @contextmanager
    def _in_transaction(self) -> Iterator[Conn]:
        with self._lock:
            conn = self._kept(self._connection)
            self._kept(lambda: conn.execute("BEGIN IMMEDIATE"))
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                with suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise

    @contextmanager
    def _in_reading(self) -> Iterator[Conn]:
        with self._lock:
            yield self._kept(self._connection)

    def _kept(self, run: Callable[[], T]) -> T:
        """`run()`; should the file fail, the connection is made again next time."""
        try:
            return run()
        except sqlite3.Error:
            self._drop()
            raise

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with suppress(sqlite3.Error):
                conn.close()

    def close(self) -> None:
        with self._lock:
            self._drop()


__all__ = ["LEASE_SECONDS", "Ask", "Counts", "Failures", "Lent", "SqliteCounts"]
