"""A command run at the command line or the console, watched: a progress bar, and Ctrl-C.

While a command's code reports how far it has come (`ctx.progress`), a terminal shows a
bar on stderr (rich's `Progress`, gone once the call answers); with `--json`, or when
stderr is not a terminal, nothing is drawn. Ctrl-C asks the call to stop
(`pasture.long_calls`): its code sees `ctx.cancelled`, and is ended after the grace
period; a second Ctrl-C ends it at once, and a third interrupts pasture itself.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text

from pasture.long_calls import LongCall
from pasture.long_calls import Progress as Reported

STOPPING = "stopping it — Ctrl-C again ends it now"


@contextmanager
def watched(*, bar: bool, err: Console | None = None) -> Iterator[LongCall]:
    """A `LongCall` for one command: its progress drawn when `bar`, Ctrl-C stopping it."""
    err = err or Console(stderr=True, markup=False, emoji=False, highlight=False)
    drawn: Progress | None = None
    task: TaskID | None = None
    if bar:
        drawn = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:g}{task.fields[of]}"),
            TimeElapsedColumn(),
            console=err,
            transient=True,
        )

    def heard(progress: Reported) -> None:
        nonlocal task
        if drawn is None:
            return
        of = "" if progress.total is None else f" of {progress.total:g}"
        said = progress.message or ""
        if task is None:
            task = drawn.add_task(said, total=progress.total, of=of)
        drawn.update(task, completed=progress.done, total=progress.total, description=said, of=of)

    long_call = LongCall(heard)
    previous: Any = None
    here = threading.current_thread() is threading.main_thread()

    def stop(signum: int, frame: FrameType | None) -> None:
        if long_call.cancelled:  # the second: at once, and a third interrupts pasture
            long_call.cancel(now=True)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            return
        long_call.cancel()
        err.print(Text(STOPPING, style="yellow"))

    if here:
        previous = signal.signal(signal.SIGINT, stop)
    try:
        if drawn is None:
            yield long_call
        else:
            with drawn:
                yield long_call
    finally:
        if here:
            signal.signal(signal.SIGINT, previous)


def draws_on(stream: Any = None) -> bool:
    """Whether a bar may be drawn: stderr (where it is drawn) is a terminal, and so is
    stdout — its output piped or kept in a file, a script is running it."""

    def tty(s: Any) -> bool:
        return bool(getattr(s, "isatty", lambda: False)())

    return tty(stream or sys.stderr) and (stream is not None or tty(sys.stdout))


__all__ = ["STOPPING", "draws_on", "watched"]
