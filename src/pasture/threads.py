"""The threads a door runs the synchronous `Service` in.

Everything the Service does is synchronous (a database, files), so the web
and MCP doors call it in a worker thread, keeping the event loop free. A
command may run an app's code, which may take as long as its time limit
allows, so commands run in threads of their own (`in_command_thread`, up to
`COMMANDS_AT_ONCE` at a time): however many slow calls are waiting on one
app's code, pages, reads and writes of every app keep the usual threads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from anyio.lowlevel import RunVar

T = TypeVar("T")

COMMANDS_AT_ONCE = 1024

_commands: RunVar[CapacityLimiter] = RunVar("pasture_commands")


async def in_thread(run: Callable[[], T]) -> T:
    """`run()` in one of the usual threads."""
    return await anyio.to_thread.run_sync(run)


async def in_command_thread(run: Callable[[], T]) -> T:
    """`run()` — a command, which may run an app's code — in a thread of the commands' own."""
    try:
        limiter = _commands.get()
    except LookupError:
        limiter = CapacityLimiter(COMMANDS_AT_ONCE)
        _commands.set(limiter)
    return await anyio.to_thread.run_sync(run, limiter=limiter)
