"""A call that takes a while: the progress its code reports, and the stop its caller asks for.

A door that can show progress or stop a call makes a `LongCall` and hands it to
the Service with the call (`run_command(…, long_call=…)`); the command's
`Context` carries it, so code reports with `ctx.progress(done, total, message)`
and looks at `ctx.cancelled` (the second document's `signal`):

- **progress** reaches the door's listener (`on_progress`), each report a
  `Progress` checked as untrusted input (an app's code sends it, from another
  process), at most `MOST_PER_SECOND` a second and each one further on than
  the last (MCP's rule for `notifications/progress`); a report that comes too
  soon is held, and told once its turn comes (or the call answers) unless a
  newer one replaced it;
- **a stop** is `cancel()`: the agent's `notifications/cancelled`, a request
  gone, Ctrl-C. The code sees `ctx.cancelled` from then on; code in a worker
  process that has not answered `grace` seconds later is ended
  (`pasture.platform.workers.process`), and whatever a mutation wrote is not
  kept. `cancel(now=True)` (a second Ctrl-C) ends it without waiting.

A call nobody watches has a `LongCall` all the same, whose reports go nowhere
and which nobody stops.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pasture.errors import UsageError

logger = logging.getLogger("pasture")

MOST_PER_SECOND = 10  # reports told to a door in a second; more are held or dropped
GRACE = 5.0  # seconds code may take to stop once asked, before its process is ended
MAX_MESSAGE = 200  # characters of a report's message that are told

PROGRESS_RULE = (
    "ctx.progress takes done, and optionally total and message: "
    "ctx.progress(3, total=10, message='3 of 10 files read')"
)


@dataclass(frozen=True)
class Progress:
    """How far a call has come: `done` of `total` (None: not known), and a line for people."""

    done: float
    total: float | None = None
    message: str | None = None

    def as_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"done": self.done}
        if self.total is not None:
            data["total"] = self.total
        if self.message is not None:
            data["message"] = self.message
        return data


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and abs(number) < 1e15 else None


def progress_of(done: Any, total: Any = None, message: Any = None) -> Progress:
    """A report checked: numbers that are finite and not true/false, a total that is none or
    more than nothing, a message of text (one line, at most MAX_MESSAGE characters).
    UsageError when it is not one."""
    checked = _number(done)
    if checked is None or checked < 0:
        raise UsageError(f"{PROGRESS_RULE} — done is a number, 0 or more")
    whole = None if total is None else _number(total)
    if total is not None and (whole is None or whole <= 0):
        raise UsageError(f"{PROGRESS_RULE} — total is a number more than 0, or None")
    if message is not None and not isinstance(message, str):
        raise UsageError(f"{PROGRESS_RULE} — message is text, or None")
    line = None
    if message is not None:
        line = " ".join(message.split())[:MAX_MESSAGE]
        line = line.encode("utf-8", "replace").decode("utf-8")  # no half characters
    return Progress(checked, whole, line)


def progress_from(data: Any) -> Progress | None:
    """A report as a worker process sent it (`{"done", "total"?, "message"?}`), or None when
    it is not one: what another process says is checked, and dropped when it is wrong."""
    if not isinstance(data, dict) or set(data) - {"done", "total", "message"}:
        return None
    try:
        return progress_of(data.get("done"), data.get("total"), data.get("message"))
    except UsageError:
        return None


class LongCall:
    """One call as its door watches it: progress told to `on_progress`, a stop asked for.

    Thread-safe: the code reports from the thread it runs in, a door stops it from
    another (its event loop, a signal handler)."""

    def __init__(
        self,
        on_progress: Callable[[Progress], None] | None = None,
        *,
        most_per_second: float = MOST_PER_SECOND,
    ) -> None:
        self.on_progress = on_progress
        self.gap = 1.0 / most_per_second
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._now = False
        self.cancelled_at: float | None = None  # time.monotonic() when it was asked to stop
        self._told: Progress | None = None
        self._told_at = -math.inf
        self._held: Progress | None = None

    # -- progress ---------------------------------------------------------------------------
    def report(self, progress: Progress) -> None:
        """Tell the listener, when it is this report's turn; else hold it (see `flush`)."""
        with self._lock:
            if self._told is not None and progress.done <= self._told.done:
                return  # each report further on than the last, as MCP asks
            if time.monotonic() - self._told_at < self.gap:
                self._held = progress  # the newest waits its turn; the one before is dropped
                return
            self._mark(progress)
        self._tell(progress)

    def flush(self, *, last: bool = False) -> None:
        """Tell the report held back, if its turn has come (a call's loop asks now and then),
        or at once when it is the `last` (the call has answered: how far it came is told)."""
        with self._lock:
            due = last or time.monotonic() - self._told_at >= self.gap
            held = self._held if due else None
            if held is None:
                return
            self._held = None
            if self._told is not None and held.done <= self._told.done:
                return
            self._mark(held)
        self._tell(held)

    def _mark(self, progress: Progress) -> None:
        self._told, self._told_at, self._held = progress, time.monotonic(), None

    def _tell(self, progress: Progress) -> None:
        # Outside the lock: a listener may wait for an event loop that is stopping this call.
        if self.on_progress is None:
            return
        try:
            self.on_progress(progress)
        except Exception:  # a door that cannot show it does not fail the call
            logger.exception("a call's progress could not be told")

    @property
    def told(self) -> Progress | None:
        """The last report the listener was told of."""
        return self._told

    # -- stopping ---------------------------------------------------------------------------
    def cancel(self, *, now: bool = False) -> None:
        """Ask the call to stop: its code sees `ctx.cancelled`, and is ended after the grace
        period (`now`, or asked twice: at once)."""
        with self._lock:
            if self._stop.is_set():
                now = True
            else:
                self.cancelled_at = time.monotonic()
                self._stop.set()
            self._now = self._now or now

    @property
    def cancelled(self) -> bool:
        """Whether the call was asked to stop."""
        return self._stop.is_set()

    @property
    def ending_now(self) -> bool:
        """Whether it is to end without waiting for its code to stop."""
        return self._now

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the call is asked to stop (at most `timeout` seconds); whether it was."""
        return self._stop.wait(timeout)


__all__ = [
    "GRACE",
    "MOST_PER_SECOND",
    "LongCall",
    "Progress",
    "progress_from",
    "progress_of",
]
