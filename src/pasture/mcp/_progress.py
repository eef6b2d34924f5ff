"""A command's progress as MCP's `notifications/progress`, for a client that asked for it.

A client asks by sending a `progressToken` in the request's `_meta` (over HTTP its
reply is then an event stream, `pasture.web.mcp_http`, which carries them); each report the
command's code makes (`ctx.progress`, `pasture.long_calls`) is then one notification on
the request's own channel — its reply's stream over HTTP, the pipe on stdio — through
the SDK's `report_progress`, which names the token. A client that sent none is told
nothing. A cancel (`notifications/cancelled`, or the request's stream closed on the
newest revision) cancels the request's task, which stops the call
(`pasture.threads.in_watched_thread`).

Over stateless HTTP a handshake-generation client's `notifications/cancelled` comes in
a request of its own, which reaches no session: `InFlight` keeps this server's running
commands by the credential that sent them and their request id, so the same credential's
cancel stops its own call (and nobody else's).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from mcp.server.context import ServerRequestContext

from pasture.long_calls import LongCall, Progress

Tell = Callable[[Progress], Awaitable[None]]


def progress_to(ctx: ServerRequestContext[Any]) -> Tell | None:
    """Where a call's progress goes: this request's client, if it asked for it by sending a
    token (the SDK's `report_progress` names it; in memory it calls the client's callback
    itself); None where it did not, and nothing is to be told."""
    if ctx.meta is None or ctx.meta.get("progress_token") is None:
        return None

    async def tell(progress: Progress) -> None:
        await ctx.session.report_progress(progress.done, progress.total, progress.message)

    return tell


class InFlight:
    """The commands running on this server, by who sent them and their request id, which a
    cancel sent in a request of its own stops. On the event loop only."""

    def __init__(self) -> None:
        self._calls: dict[tuple[str, str], LongCall] = {}

    @contextmanager
    def running(self, who: str | None, request_id: Any) -> Iterator[LongCall]:
        """While a call runs: its LongCall, which its cancel stops."""
        long_call = LongCall()
        if who is None or request_id is None:
            yield long_call
            return
        key = (who, str(request_id))
        self._calls[key] = long_call
        try:
            yield long_call
        finally:
            if self._calls.get(key) is long_call:
                del self._calls[key]

    def cancel(self, who: str, request_id: Any) -> None:
        """A client's `notifications/cancelled`: stop its call of that id, if it runs here."""
        long_call = self._calls.get((who, str(request_id)))
        if long_call is not None:
            long_call.cancel()


__all__ = ["InFlight", "Tell", "progress_to"]
