"""The threads a door runs the synchronous `Service` in.

Everything the Service does is synchronous (a database, files), so the web
and MCP doors call it in a worker thread, keeping the event loop free. A
command may run an app's code, which may take as long as its time limit
allows, so commands run in threads of their own (`in_command_thread`, up to
`COMMANDS_AT_ONCE` at a time): however many slow calls are waiting on one
app's code, pages, reads and writes of every app keep the usual threads.

A command a door watches (`in_watched_thread`) is given a `LongCall`
(`pasture.long_calls`): its progress is told on the event loop, and when the
task awaiting it is cancelled (an MCP client's `notifications/cancelled`, its
stream closed) or the door says its request has gone, the call is asked to stop
and the task waits for its thread to end — so what it wrote is settled (a
mutation's kept or not) before the door moves on.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio.from_thread
import anyio.to_thread
from anyio import CapacityLimiter
from anyio.lowlevel import RunVar

from pasture.long_calls import LongCall, Progress

T = TypeVar("T")

COMMANDS_AT_ONCE = 1024

_commands: RunVar[CapacityLimiter] = RunVar("pasture_commands")


async def in_thread(run: Callable[[], T]) -> T:
    """`run()` in one of the usual threads."""
    return await anyio.to_thread.run_sync(run)


async def in_command_thread(run: Callable[[], T]) -> T:
    """`run()` — a command, which may run an app's code — in a thread of the commands' own."""
    return await anyio.to_thread.run_sync(run, limiter=_commands_limiter())


def _commands_limiter() -> CapacityLimiter:
    try:
        return _commands.get()
    except LookupError:
        limiter = CapacityLimiter(COMMANDS_AT_ONCE)
        _commands.set(limiter)
        return limiter


async def in_watched_thread(
    run: Callable[[LongCall], T],
    tell: Callable[[Progress], Awaitable[None]] | None = None,
    *,
    gone: Callable[[], Awaitable[None]] | None = None,
    long_call: LongCall | None = None,
) -> T:
    """`run(long_call)` — a command a door watches — in a command thread: each report of
    progress is told with `tell` on this loop (dropped when the loop is behind), and the
    call is stopped (`long_call.cancel()`) when this task is cancelled or `gone()` returns
    (its request has gone). Either way this waits for the thread to end. `long_call`: the
    call's own, where another may stop it too (`pasture.mcp._progress.InFlight`)."""
    if long_call is None:
        long_call = LongCall()
    if tell is None and gone is None:
        return await _stopped_when_cancelled(run, long_call)
    send, receive = anyio.create_memory_object_stream[Progress](8)

    def heard(progress: Progress) -> None:  # in the command's thread
        with contextlib.suppress(
            anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError, RuntimeError
        ):
            anyio.from_thread.run_sync(send.send_nowait, progress)

    if tell is not None:
        long_call.on_progress = heard
    finished = False

    async def telling() -> None:
        assert tell is not None
        async with receive:
            async for progress in receive:
                with contextlib.suppress(Exception):  # a client gone is not the call's failure
                    await tell(progress)

    async def watching() -> None:
        try:
            if gone is None:
                await anyio.sleep_forever()
            else:
                await gone()
                long_call.cancel()
        except anyio.get_cancelled_exc_class():
            if not finished:  # this task was cancelled, not the watch ended
                long_call.cancel()
            raise

    answered: list[T] = []
    failed: list[Exception] = []
    async with anyio.create_task_group() as group:
        if tell is not None:
            group.start_soon(telling)
        group.start_soon(watching)
        try:
            # Not abandoned when cancelled: the thread is waited for, stopped by long_call.
            answered.append(await in_command_thread(lambda: run(long_call)))
        except Exception as e:  # raised as it is, not in the task group's ExceptionGroup
            failed.append(e)
        finally:
            finished = True
            send.close()
            group.cancel_scope.cancel()
    if failed:
        raise failed[0]
    return answered[0]


async def _stopped_when_cancelled(run: Callable[[LongCall], T], long_call: LongCall) -> T:
    """`in_watched_thread` with nothing to tell and no request to watch: no task beside
    this one. Cancelled, the call is stopped and its thread waited for all the same."""
    ended = threading.Event()

    def running() -> T:
        try:
            return run(long_call)
        finally:
            ended.set()

    try:
        limiter = _commands_limiter()
        return await anyio.to_thread.run_sync(running, limiter=limiter, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        long_call.cancel()
        with anyio.CancelScope(shield=True):  # what it wrote is settled before moving on
            await anyio.to_thread.run_sync(ended.wait)
        raise
