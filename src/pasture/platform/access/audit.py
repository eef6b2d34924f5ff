"""The audit: every write and every command call, kept — who, through what, how it went.

    pasture audit ada/runs --since 1h      an app's calls (its space's owners)
    pasture audit --mine                   a person's own calls, through every token

One row a call, in the platform database's `audit` table: when; who (eid and
name, kept as they were, so a removed person's calls still read); the door
(`web`, `webmcp`, `mcp`, `cli`; `Caller.door`); what they came through (a
token's id, an OAuth client and its grant, `session`, `command line`;
`Caller.via`); the app; what ran (`command` and its name, `apply`, `deploy`,
`rollback`); the outcome, `ok` or the refusal's sentence; and how long it took.

Arguments are kept only as their shape — `who text(3), miles number` — never
their values: an argument may be a password or someone's address. A refusal
that quotes what the caller sent has those words replaced by `…` too.

A call must never wait for its record, nor fail for it. It puts a tuple on a
queue and returns; a thread of the audit's own writes what has queued, a batch
at a time, in one transaction on a connection of its own (SQLite in WAL mode
lets the calls' reads go on meanwhile; PostgreSQL's generation counter is not
moved, so no server throws its caches away for it). A batch that cannot be
written (a full disk, a database gone) is dropped and said in the log, at most
once a minute; the calls it recorded were answered long before. What is still
queued is written on `close()`, and when the process ends.

Records are kept `days` days (`--audit-days`, `$PASTURE_AUDIT_DAYS`, 90): the
writer deletes older ones when it starts and once an hour after, a bounded
number at a time along the index on `at`, so a sweep never holds the table
long. `PASTURE_AUDIT=off` records nothing (the benchmarks' baseline).
"""

from __future__ import annotations

import collections
import logging
import os
import re
import threading
import time
import weakref
from collections.abc import Callable, Collection, Container, Iterator, Mapping
from contextvars import Token
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

from pasture import calls, metrics
from pasture.caller import Caller
from pasture.errors import PastureError, UsageError
from pasture.platform.db.platform_db import PlatformDB

logger = logging.getLogger("pasture.audit")

DAYS = 90.0
BATCH = 500  # records a transaction at most
LINGER = 0.2  # seconds the writer waits for more before it writes what it has
WAITING = 100_000  # records queued at most; past that (a database long gone) they are dropped
SWEEP_EVERY = 3600.0
SWEEP_STEP = 5000  # rows one statement of a sweep deletes at most
SWEEP_STEPS = 20  # statements a sweep runs at most; the next sweep goes on
SHAPE_ROOM = 200  # characters of an argument summary
OUTCOME_ROOM = 500  # characters of a refusal's sentence
SAID_EVERY = 60.0  # seconds between two log lines about records that could not be written

COLUMNS = "at, user, name, door, via, app, action, command, args, outcome, ms, call"
INSERT = f"INSERT INTO audit ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
SWEEP = (
    "DELETE FROM audit WHERE id IN "
    f"(SELECT id FROM audit WHERE at < ? ORDER BY at LIMIT {SWEEP_STEP})"
)
_SINCE = re.compile(r"(\d+)\s*(s|m|min|h|d|w)", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
SINCE_RULE = (
    "--since is a moment: a date (2026-12-01), a date and time (2026-12-01T09:30), "
    "or a while ago (90s, 30m, 1h, 2d, 1w)"
)


def stamp(moment: datetime | None = None) -> str:
    """A moment as the audit keeps it: UTC, to the millisecond, so text sorts as time."""
    moment = moment or datetime.now(UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def since_of(text: str, now: datetime | None = None) -> str:
    """`--since` as a stamp: `2026-12-01`, `2026-12-01T09:30` (UTC unless it says), `1h`…"""
    text = text.strip()
    now = now or datetime.now(UTC)
    ago = _SINCE.fullmatch(text)
    if ago is not None:
        return stamp(now - timedelta(seconds=int(ago[1]) * _UNITS[ago[2].lower()]))
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(SINCE_RULE) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return stamp(moment)


# -- shapes: what an argument was, never what it said ---------------------------------------
def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return f"text({len(value)})"
    if isinstance(value, Mapping):
        return f"object({len(value)})"
    if isinstance(value, list | tuple):
        return f"list({len(value)})"
    return type(value).__name__


class _Every:
    """Every name: a call that went through named only what its app declares."""

    def __contains__(self, name: object) -> bool:
        return True


EVERY: Container[str] = _Every()
BUNDLE_WORDS = frozenset({"entity", "edges", "tombstone", "$was", "was", "kind"})


def _named(key: Any, known: Container[str] | None) -> str:
    """A name the app declares; any other (it could be anything a caller typed) is `?`."""
    return key if isinstance(key, str) and known is not None and key in known else "?"


def _fit(text: str, room: int) -> str:
    """Text as a record keeps it: at most `room` characters, and only what every database
    holds (half a surrogate pair or a NUL a caller sent are written as escapes)."""
    text = text if len(text) <= room else text[: room - 1] + "…"
    if text.isascii() and "\x00" not in text:
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def args_shape(args: Any, known: Container[str] | None = None) -> str:
    """A command's arguments as names and kinds: `who text(3), miles number`; a name the
    command does not declare (`known`) is `?`."""
    if not isinstance(args, Mapping):
        return _kind(args)
    shown = [f"{_named(k, known)} {_kind(v)}" for k, v in list(args.items())[:20]]
    return _fit(", ".join(shown), SHAPE_ROOM)


def bundles_shape(bundles: Any, known: Container[str] | None = None) -> str:
    """Bundles as how many and the components they carry: `2 bundles: doc, jog`. A refused
    apply may name what is no component: only the bundle's own words are shown of it."""
    listed = list(bundles) if isinstance(bundles, list | tuple) else [bundles]
    names: list[str] = []
    for bundle in listed[:100]:
        if isinstance(bundle, Mapping):
            for key in bundle:
                name = key if key in BUNDLE_WORDS else _named(key, known)
                if name not in names:
                    names.append(name)
    count = f"{len(listed)} bundle{'' if len(listed) == 1 else 's'}"
    return _fit(f"{count}: {', '.join(names)}" if names else count, SHAPE_ROOM)


def files_shape(files: Any, known: Container[str] | None = None) -> str:
    """A deploy's files as how many and how large, or that they were a folder."""
    if isinstance(files, str | Path):
        return "a folder"
    if isinstance(files, Mapping):
        size = sum(
            len(v.encode("utf-8", "surrogatepass") if isinstance(v, str) else v)
            for v in files.values()
        )
        return f"{len(files)} file{'' if len(files) == 1 else 's'}, {size} bytes"
    return _kind(files)


def _words(value: Any, found: set[str], budget: list[int]) -> None:
    """The text values inside an argument (four characters or more), to keep out of a sentence."""
    if budget[0] <= 0:
        return
    budget[0] -= 1
    if isinstance(value, str):
        if len(value) >= 4:
            found.add(value)
    elif isinstance(value, Mapping):
        for v in value.values():
            _words(v, found, budget)
    elif isinstance(value, list | tuple):
        for v in value:
            _words(v, found, budget)


def unquoted(sentence: str, args: Any) -> str:
    """A refusal's sentence without any text the call carried in it (`…` in its place)."""
    found: set[str] = set()
    _words(args, found, [1000])
    for word in sorted(found, key=len, reverse=True):
        if word in sentence:
            sentence = sentence.replace(word, "…")
    return _fit(sentence, OUTCOME_ROOM)


# -- one call ----------------------------------------------------------------------------------
Shape = Callable[[Any, Container[str] | None], str]


class Call:
    """One call being recorded: `with audit.call(...) as noted:` around it.

    The layer that finds the app sets `noted.app` (`space/slug`, where the caller may have
    said only `slug`; a call refused before it is found keeps no app) and, for a command,
    `noted.command` (its agent name) and `noted.known` (the argument names it declares: no
    other name is kept).
    """

    __slots__ = (
        "_audit",
        "_token",
        "action",
        "app",
        "args",
        "began",
        "caller",
        "command",
        "id",
        "known",
        "shape",
        "started",
    )

    def __init__(
        self,
        audit: Audit | None,
        caller: Caller,
        action: str,
        command: str | None,
        args: Any,
        shape: Shape | None,
    ) -> None:
        self._audit = audit
        self.caller = caller
        self.action = action
        # Only an app the call reached is recorded as its app (the layer that finds it says
        # which): a call refused before, naming another's app, is the caller's record alone,
        # never in that app's audit with a sentence written for the caller.
        self.app: str | None = None
        self.command = command
        self.args = args
        self.shape = shape
        self.known: Container[str] | None = None  # the argument names the command declares
        self.started = self.began = 0.0
        # Its id, which the store's journal keeps with each write it makes; a call inside
        # another is part of it (`pasture.calls`).
        around = calls.current()
        self.id = calls.new_id() if around is None else around.id
        self._token: Token[calls.CallMark | None] | None = None

    def __enter__(self) -> Call:
        self.began = time.time()
        self.started = time.perf_counter()
        self._token = calls.mark(calls.CallMark(self.id, self.caller.eid, self.caller.door))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._token is not None:
            calls.unmark(self._token)
            self._token = None
        metrics.call_ended(self.action, self.app, error)
        audit, shape = self._audit, self.shape
        if audit is None or shape is None:
            return
        known = self.known
        if known is None and error is None:
            known = EVERY  # it went through: every name in it is one the app declares
        took = (time.perf_counter() - self.started) * 1000
        if error is None:
            outcome = "ok"
        elif isinstance(error, PastureError):
            outcome = unquoted(error.sentence, self.args)
        else:
            outcome = "failed on the server (a fault, logged)"
        try:
            caller = self.caller
            audit.put(
                (
                    stamp(datetime.fromtimestamp(self.began, UTC)),
                    caller.eid,
                    caller.name,
                    caller.door,
                    None if caller.via is None else _fit(caller.via, 200),
                    None if self.app is None else _fit(self.app.strip().strip("/"), 200),
                    self.action,
                    None if self.command is None else _fit(self.command, 100),
                    _fit(shape(self.args, known), SHAPE_ROOM),
                    _fit(outcome, OUTCOME_ROOM),
                    round(took, 3),
                    self.id,
                )
            )
        except Exception:  # a record is never a reason for the call to fail
            logger.exception("an audit record could not be made")


@dataclass(frozen=True)
class _Flush:
    done: threading.Event


_STOP = object()


class _Writer:
    """The thread that writes queued records, a batch a transaction, and sweeps old ones.

    A record is put on a deque, which wakes no one: the thread is woken once for the first
    record after it last wrote, waits `LINGER` for more (or until a batch is full, a flush
    or a stop), then writes what came. So a call's record costs it an append, not a wake
    of another thread.

    It holds no reference to its `Audit`, so an audit no one closed is still flushed when it
    is collected, or when the process ends (`weakref.finalize`)."""

    def __init__(self, db: PlatformDB, days: float) -> None:
        self.db = db
        self.days = days
        self.waiting: collections.deque[Any] = collections.deque()
        self._due = threading.Event()  # something waits: the thread is to look
        self._now = threading.Event()  # ... and to write it without lingering
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()
        self._closed = False
        self._said = -SAID_EVERY
        self._lost = 0
        self._swept = -SWEEP_EVERY

    def put(self, record: tuple[Any, ...]) -> None:
        if self._thread is None:
            self._begin()
        waiting = self.waiting
        if self._closed or len(waiting) >= WAITING:
            self._lost += 1
            return
        waiting.append(record)
        if not self._due.is_set():
            self._due.set()
        if len(waiting) >= BATCH:
            self._now.set()

    def _mark(self, marker: Any) -> None:
        """A flush or a stop: after what is queued, at once."""
        self.waiting.append(marker)
        self._now.set()
        self._due.set()

    def _begin(self) -> None:
        with self._start:
            if self._thread is None and not self._closed:
                thread = threading.Thread(target=self._run, name="pasture-audit", daemon=True)
                thread.start()
                self._thread = thread

    def _run(self) -> None:
        while True:
            wait = max(0.0, self._swept + SWEEP_EVERY - time.monotonic())
            if not self._due.wait(wait or None):
                self.sweep()
                continue
            self._now.wait(LINGER)  # for more to come, unless a flush or a full batch
            self._due.clear()  # before taking them: one put after this wakes it again
            self._now.clear()
            if self._write_waiting():
                return
            if time.monotonic() - self._swept >= SWEEP_EVERY:
                self.sweep()

    def _write_waiting(self) -> bool:
        """Write what waits, a batch a transaction, answering the flushes among it in their
        turn; whether a stop was among it."""
        batch: list[tuple[Any, ...]] = []
        while True:
            try:
                item = self.waiting.popleft()
            except IndexError:
                self.write(batch)
                return False
            if item is _STOP:
                self.write(batch)
                return True
            if isinstance(item, _Flush):
                self.write(batch)
                batch = []
                item.done.set()
                continue
            batch.append(item)
            if len(batch) >= BATCH:
                self.write(batch)
                batch = []

    def write(self, batch: list[tuple[Any, ...]]) -> None:
        if not batch:
            return
        try:
            self.db.write_aside(INSERT, batch)
            return
        except Exception as e:
            error = e
        # One record the database refused loses no other; three refused running, and the
        # database itself is likely gone: the rest are lost with them.
        failed = 0
        for at, record in enumerate(batch):
            try:
                self.db.write_aside(INSERT, [record])
                failed = 0
            except Exception as e:
                error, failed = e, failed + 1
                self._lost += 1
                if failed >= 3 or len(batch) == 1:
                    self._lost += len(batch) - at - 1
                    break
        if self._lost:
            self._say(error)

    def _say(self, error: BaseException) -> None:
        moment = time.monotonic()
        if moment - self._said >= SAID_EVERY:
            self._said = moment
            logger.warning(
                "%d audit records could not be written and are lost: %s", self._lost, error
            )
            self._lost = 0

    def sweep(self, now: datetime | None = None) -> int:
        """Delete the records older than the audit keeps; how many went."""
        self._swept = time.monotonic()
        cutoff = stamp((now or datetime.now(UTC)) - timedelta(days=self.days))
        gone = 0
        try:
            for _ in range(SWEEP_STEPS):
                step = self.db.write_aside(SWEEP, [(cutoff,)])
                gone += step
                if step < SWEEP_STEP:
                    break
        except Exception as e:
            self._say(e)
        return gone

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until what was queued before now is written (or `timeout` passed)."""
        if self._thread is None or self._closed:
            return
        done = threading.Event()
        self._mark(_Flush(done))
        done.wait(timeout)

    def close(self) -> None:
        """Write what is queued and stop the thread; records after this are dropped."""
        with self._start:
            self._closed = True
            thread = self._thread
        if thread is not None and thread.is_alive():
            self._mark(_STOP)
            thread.join(10.0)


class Audit:
    """Recording calls (`call`) and reading them back (`read`)."""

    def __init__(
        self, db: PlatformDB, *, days: float | None = None, on: bool | None = None
    ) -> None:
        """`days` kept (else `$PASTURE_AUDIT_DAYS`, else 90); `on` (else unless
        `$PASTURE_AUDIT` is `off`)."""
        self.db = db
        if on is None:
            on = os.environ.get("PASTURE_AUDIT", "on").strip().lower() not in ("off", "0", "no")
        if days is None:
            try:
                days = float(os.environ.get("PASTURE_AUDIT_DAYS") or DAYS)
            except ValueError:
                days = DAYS
        if days <= 0:
            raise UsageError("the audit keeps records for some days: --audit-days is at least 1")
        self.on = on
        self.days = days
        self._writer = _Writer(db, days)
        self.put = self._writer.put
        weakref.finalize(self, self._writer.close)

    def call(
        self,
        caller: Caller,
        action: str,
        command: str | None = None,
        args: Any = None,
        shape: Shape = args_shape,
    ) -> Call:
        """A call to record: `action` is `command`, `apply`, `deploy` or `rollback`; `args`
        is kept only as `shape(args)`; its app is the one the call reaches (`noted.app`)."""
        if not self.on:
            return Call(None, caller, action, command, None, None)  # counted, not kept
        return Call(self, caller, action, command, args, shape)

    def read(
        self,
        *,
        app: str | None = None,
        user: str | None = None,
        since: str | None = None,
        spaces: Collection[str] | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """The newest `limit` records of an app, of a person, or of a person in an app, since
        a stamp, and (`spaces`) of apps in those spaces alone; oldest first."""
        self._writer.flush()
        where = ["at >= ?"]
        params: list[Any] = [since or ""]
        for column, value in (("app", app), ("user", user)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if spaces is not None:
            if not spaces:
                return []
            # a space's name has no % or _: `ada/%` is ada's apps and nothing else
            where.append("(" + " OR ".join("app LIKE ?" for _ in spaces) + ")")
            params.extend(f"{space}/%" for space in sorted(spaces))
        rows = self.db.all(
            f"SELECT {COLUMNS} FROM audit WHERE {' AND '.join(where)} "
            "ORDER BY at DESC, id DESC LIMIT ?",
            *params,
            max(1, min(int(limit), 10_000)),
        )
        return [_record(r) for r in reversed(rows)]

    def page(
        self,
        *,
        app: str | None = None,
        user: str | None = None,
        spaces: Collection[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        person: str | None = None,
        door: str | None = None,
        outcome: str | None = None,
        before: int | None = None,
        limit: int = 50,
    ) -> tuple[list[dict[str, Any]], int | None]:
        """One page of records, newest first, each with its `id`; and the cursor of the page
        after it (the last id shown), or None when none is older. `person` is a name as the
        record keeps it (`nobody` for a signed-out visitor), `outcome` is `ok` or `refused`,
        `before` a cursor a page gave."""
        self._writer.flush()
        where = ["at >= ?"]
        params: list[Any] = [since or ""]
        for column, value in (("app", app), ('"user"', user), ("door", door)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if until is not None:
            where.append("at < ?")
            params.append(until)
        if person is not None:
            if person.lower() == "nobody":
                where.append("name IS NULL")
            else:
                where.append("LOWER(name) = ?")
                params.append(person.lower())
        if outcome == "ok":
            where.append("outcome = 'ok'")
        elif outcome == "refused":
            where.append("outcome <> 'ok'")
        if before is not None:
            where.append("id < ?")
            params.append(int(before))
        if spaces is not None:
            if not spaces:
                return [], None
            where.append("(" + " OR ".join("app LIKE ?" for _ in spaces) + ")")
            params.extend(f"{space}/%" for space in sorted(spaces))
        size = max(1, min(int(limit), 1000))
        rows = self.db.all(
            f"SELECT id, {COLUMNS} FROM audit WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ?",
            *params,
            size + 1,  # one more: whether an older page is there
        )
        records = [{**_record(r), "id": int(r["id"])} for r in rows[:size]]
        return records, records[-1]["id"] if len(rows) > size else None

    def last_uses(self, user: str, via_prefix: str) -> dict[str, str]:
        """When each `via` of `user`'s calls that starts with `via_prefix` (`client `: their
        OAuth grants', as calls record them) last made a call the audit still keeps."""
        self._writer.flush()
        rows = self.db.all(
            'SELECT via, MAX(at) AS last FROM audit WHERE "user" = ? AND via LIKE ? GROUP BY via',
            user,
            via_prefix.replace("%", "").replace("_", "") + "%",
        )
        return {str(r["via"]): str(r["last"]) for r in rows}

    def of_call(self, call: str) -> list[dict[str, Any]]:
        """The records of one call (`Call.id`): one, or a few for a call made inside another."""
        self._writer.flush()
        rows = self.db.all(f"SELECT {COLUMNS} FROM audit WHERE call = ? ORDER BY id", call)
        return [_record(r) for r in rows]

    def undos_of(self, call: str, app: str) -> list[dict[str, Any]]:
        """The undos of `call` in `app` that went through (a record a call)."""
        self._writer.flush()
        rows = self.db.all(
            f"SELECT {COLUMNS} FROM audit WHERE app = ? AND action = 'undo' AND command = ? "
            "AND outcome = 'ok' ORDER BY id",
            app,
            call,
        )
        return [_record(r) for r in rows]

    def flush(self) -> None:
        """Wait until every record queued so far is written."""
        self._writer.flush()

    def sweep(self, now: datetime | None = None) -> int:
        """Delete the records older than the audit keeps (the writer does this hourly)."""
        self._writer.flush()
        return self._writer.sweep(now)

    def close(self) -> None:
        self._writer.close()


def _record(row: Any) -> dict[str, Any]:
    return {
        "at": str(row["at"]),
        "eid": row["user"],
        "name": row["name"],
        "door": row["door"],
        "via": row["via"],
        "app": row["app"],
        "action": str(row["action"]),
        "command": row["command"],
        "args": row["args"],
        "outcome": str(row["outcome"]),
        "ms": float(row["ms"]),
        "call": row["call"],
    }


def what(record: Mapping[str, Any]) -> str:
    """`command log_run`, `apply`, `deploy`: what a record says ran."""
    command = record.get("command")
    return f"{record['action']} {command}" if command else str(record["action"])


def lines(records: list[dict[str, Any]], *, apps: bool) -> Iterator[str]:
    """A record a line, as a terminal or an agent reads it."""
    for r in records:
        who = r["name"] or "nobody"
        came = " ".join(x for x in (r["door"], r["via"] and f"({r['via']})") if x) or "—"
        where = f"{r['app'] or '?'} " if apps else ""
        shape = f" [{r['args']}]" if r["args"] else ""
        moment = r["at"][:19].replace("T", " ")
        call = f"  call {r['call']}" if r.get("call") else ""
        yield (
            f"{moment}  {who}  {came}  {where}{what(r)}{shape}  {r['outcome']}  "
            f"{r['ms']:.1f} ms{call}"
        )


__all__ = [
    "Audit",
    "Call",
    "args_shape",
    "bundles_shape",
    "files_shape",
    "lines",
    "since_of",
    "stamp",
    "unquoted",
    "what",
]
