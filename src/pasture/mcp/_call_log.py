"""A tool call told in the client's log: MCP's `notifications/message`, on the call's channel.

Each `tools/call` is told to its own client in two lines: at `debug`, what was called
and with what; then its outcome — at `info` the first line of its answer, at `warning`
a refusal's sentence (a fault's too: its traceback stays in the server's log). They go
out on the call's own channel, related to its request, and nowhere else:

- on stdio and in memory, the connection's own pipe;
- over HTTP, the reply when it is an event stream (a call that asked for progress, a
  client due to hear the tools changed); a reply in JSON carries nothing but itself,
  so a call answered so is told nothing.

Which levels a client hears:

- **the handshake generation**: those at or above the level it set with
  `logging/setLevel`, every one until it sets one. The level is kept where the
  connection is: on stdio and in memory, on the connection (`Connection.level`); over
  stateless HTTP, by the server process that was told it, for the caller and the
  session the client names (`Mcp-Session-Id`, which the handshake's reply names) — a
  call another process answers is told at every level;
- **the newest revision**, which has no `logging/setLevel`: those at or above the level
  the call's own `_meta` asks for (`io.modelcontextprotocol/logLevel`), none without it
  (the SDK's session holds to it).
"""

from __future__ import annotations

import contextvars
import json
import logging
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from mcp.server.connection import allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from pasture.caller import Caller
from pasture.client_asks import LEVELS, Level

logger = logging.getLogger("pasture.mcp")

LOGGER = "pasture"  # the `logger` each line names
LINE_MOST = 1000  # characters one line carries at most
SESSIONS_MOST = 4096  # stateless HTTP's sessions whose level one process keeps


def _session_id(ctx: ServerRequestContext[Any]) -> str | None:
    headers = getattr(ctx.request, "headers", None)
    return None if headers is None else headers.get("mcp-session-id")


def _bounded(text: str) -> str:
    return text if len(text) <= LINE_MOST else text[: LINE_MOST - 1] + "…"


class Levels:
    """The level each client of stateless HTTP set, by caller and session, the newest
    kept; a connection that lives on keeps its own (`pasture.mcp._changes.Connection`)."""

    def __init__(self) -> None:
        self._levels: OrderedDict[tuple[str | None, str], Level] = OrderedDict()

    def set(self, ctx: ServerRequestContext[Any], caller: Caller, level: Level) -> None:
        session = _session_id(ctx)
        if session is None:
            return  # nothing names the client again: no call after this one is its
        key = (caller.eid, session)
        self._levels[key] = level
        self._levels.move_to_end(key)
        while len(self._levels) > SESSIONS_MOST:
            self._levels.popitem(last=False)

    def of(self, ctx: ServerRequestContext[Any], caller: Caller) -> Level | None:
        session = _session_id(ctx)
        return None if session is None else self._levels.get((caller.eid, session))


_unheard: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "pasture_mcp_unheard", default=False
)


@contextmanager
def unheard() -> Iterator[None]:
    """While a request is answered by a reply that carries nothing but itself (JSON over
    HTTP): no line is made for it, since none could go out."""
    reset = _unheard.set(True)
    try:
        yield
    finally:
        _unheard.reset(reset)


def hears(ctx: ServerRequestContext[Any], least: Level | None, level: Level) -> bool:
    """Whether the call's client hears `level`: at or above the level it set (`least`), or
    in the newest revision the one its request asked for; none where its reply can carry
    no line (`unheard`)."""
    if _unheard.get():
        return False
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return level in allowed_log_levels(ctx.protocol_version, ctx.meta)
    return least is None or LEVELS.index(level) >= LEVELS.index(least)


async def tell(
    ctx: ServerRequestContext[Any], least: Level | None, level: Level, line: Callable[[], str]
) -> None:
    """One line for the call's client, made only if it hears `level` (`least`: the level
    it set)."""
    if not hears(ctx, least, level):
        return
    try:
        # The SDK warns at the call that the newest revision drops `logging/setLevel`; its
        # per-request opt-in is what this honours there. (No await within: one thread.)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            sending = ctx.session.send_log_message(
                level, _bounded(line()), logger=LOGGER, related_request_id=ctx.request_id
            )
        await sending
    except Exception:
        logger.debug("a log line had no channel to go out on")


def called(name: str, arguments: Mapping[str, Any]) -> str:
    """The debug line: the tool and its arguments (a bundle of megabytes said in part)."""
    try:
        given = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"), default=str)
    except ValueError:
        given = "…"
    return f"{name} called with {given}"


def outcome(name: str, wire: dict[str, Any]) -> tuple[Level, str]:
    """The outcome's level and line: the answer's first line, or the refusal's sentence."""
    content = wire.get("content") or []
    first = next((p.get("text", "") for p in content if p.get("type") == "text"), "")
    said = str(first).strip().split("\n", 1)[0] or "answered"
    if wire.get("isError"):
        return "warning", f"{name} refused: {said}"
    return "info", f"{name}: {said}"


__all__ = ["LOGGER", "Levels", "called", "outcome", "tell", "unheard"]
