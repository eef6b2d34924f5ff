"""`GET /mcp`: the handshake generation's stream of what changed, on stateless HTTP.

Streamable HTTP of the handshake generation (protocol 2025-11-25 and before) lets a
client open a GET stream on which the server says what nobody asked. The SDK's
stateless transport has nothing to say there, as no connection outlives its request;
but what pasture says unasked depends on no connection: the platform's bus, heard by
every server, tells of every deploy and rollback, and the connector's relay
(`pasture.mcp._changes`) announces each one to this server's streams. So any server
answers any such stream with

- `notifications/resources/list_changed` and `notifications/prompts/list_changed` (each
  app is a prompt) after every deploy and rollback (and when the bus lost what it was
  told, so that nothing is missed), and
- `notifications/tools/list_changed` when a client of this server was told that the
  tools changed with a release,

the same events the newest protocol's `subscriptions/listen` streams carry. A view's
own `notifications/resources/updated` is not among them: following a view is
`resources/subscribe`, which a stateless server cannot keep (it says so by not
offering it); the newest protocol follows views on its listen streams.

A client opens the stream once its handshake named a session, so the reply to
`initialize` carries an `Mcp-Session-Id` (`naming_a_session`). It is a name only,
kept nowhere: every request is answered the same with it or without it, by any
server, and ending it (a DELETE) is the SDK's 405.

The stream holds one of its person's places (`Limiter.streams`) as a listen stream
does, says a comment every `KEEPALIVE` seconds, and ends when the token it was opened
with no longer names its person.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio
from mcp.server.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ServerEvent,
    SubscriptionBus,
    ToolsListChanged,
)
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from pasture.caller import Caller
from pasture.errors import Refused
from pasture.web.live import KEEPALIVE, EventStream

log = logging.getLogger("pasture.web")

# What each event the relay publishes is said as on the stream.
_SAID: dict[type, bytes] = {
    ResourcesListChanged: b'{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}',
    ToolsListChanged: b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}',
    PromptsListChanged: b'{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}',
}
_BACKLOG = 64  # events waiting for a slow client at most; past it, repeats are dropped
_OPENING_AT_MOST = 64 * 1024  # bytes of a body that may be `initialize` read to see

Who = Callable[[], Awaitable[Caller]]


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value)
    return None


def _handshake(scope: Scope) -> bool:
    """Whether the request is of the handshake generation (its version, or none, named)."""
    version = _header(scope, MCP_PROTOCOL_VERSION_HEADER.lower().encode())
    return version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS


def is_events(scope: Scope) -> bool:
    """Whether the request opens the handshake generation's GET stream."""
    return scope.get("method") == "GET" and _handshake(scope)


def may_open(scope: Scope) -> bool:
    """Whether a request may be `initialize`, by its headers alone: a small POST naming no
    protocol version (every request after the handshake names one)."""
    if scope.get("method") != "POST" or not _handshake(scope):
        return False
    if _header(scope, MCP_PROTOCOL_VERSION_HEADER.lower().encode()) is not None:
        return False
    length = _header(scope, b"content-length")
    return length is not None and length.isdigit() and int(length) <= _OPENING_AT_MOST


def naming_a_session(send: Send) -> Send:
    """`send`, with a session's name on the reply: an `initialize` answered."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start" and message.get("status") == 200:
            name = secrets.token_hex(16).encode()
            message = {
                **message,
                "headers": [*message.get("headers", []), (b"mcp-session-id", name)],
            }
        await send(message)

    return sending


async def turned_away(
    settings: TransportSecuritySettings, scope: Scope, receive: Receive, send: Send
) -> bool:
    """Answer a GET that may not open the stream — a Host or Origin not this server's, a
    client that does not take event streams — as the SDK answers one; whether it was."""
    request = Request(scope, receive)
    error = await TransportSecurityMiddleware(settings).validate_request(request, is_post=False)
    if error is None and "text/event-stream" not in request.headers.get("accept", ""):
        error = JSONResponse(
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {
                    "code": -32600,
                    "message": "Not Acceptable: Client must accept text/event-stream",
                },
            },
            status_code=406,
        )
    if error is None:
        return False
    await error(scope, receive, send)
    return True


async def serve_events(
    announced: SubscriptionBus, caller: Caller, who: Who, scope: Scope, receive: Receive, send: Send
) -> None:
    """The stream, for `caller`, of what `announced` (the relay's bus) carries, until the
    client goes or `who()` no longer names the caller."""
    sending, waiting = anyio.create_memory_object_stream[bytes](_BACKLOG)

    def heard(event: ServerEvent) -> None:
        said = _SAID.get(type(event))
        if said is None:
            return
        # Past the backlog a list changed is already waiting to be said: twice adds nothing.
        with contextlib.suppress(anyio.WouldBlock):
            sending.send_nowait(said)

    async def events() -> AsyncIterator[bytes]:
        while True:
            said = None
            with anyio.move_on_after(KEEPALIVE):
                said = await waiting.receive()
            if said is not None:
                yield b"event: message\ndata: " + said + b"\n\n"
                continue
            if not await _still(caller, who):
                return
            yield b": still here\n\n"

    stop = announced.subscribe(heard)  # before the reply begins: nothing said after is missed
    try:
        await EventStream(events())(scope, receive, send)
    finally:
        stop()
        sending.close()
        waiting.close()


async def _still(caller: Caller, who: Who) -> bool:
    """Whether the stream's token still names its person."""
    try:
        now = await who()
    except Refused:
        return False
    except Exception:
        log.exception("an MCP event stream's token could not be read again")
        return True
    return now.eid == caller.eid


__all__ = ["is_events", "may_open", "naming_a_session", "serve_events", "turned_away"]
