"""`/mcp` on `pasture serve`: streamable HTTP, stateless, a bearer token naming the caller.

Stateless: no session lives in a process, so any `pasture serve` behind a load
balancer answers any request. (The handshake's reply names a session all the same,
so that a client opens its GET stream of what changed, `pasture.web.mcp_events`: a
name only, which no request needs and every request may carry.) Each request names
its own caller with `Authorization: Bearer <token>` — a token the person made, or an
OAuth access token (`pasture.platform.auth.oauth`), each with its scope. Without one
the answer is 401 with the challenge that points at the protected resource metadata,
so every client starts signing in; a token the Service does not know is a 401
carrying its sentence. Host and Origin are checked against
the public URL, and against loopback when the server is bound there, rather
than left at the SDK's defaults, which refuse anything but localhost.

Every request is one call from its address and, once its token names someone,
one by that token or grant (`pasture.platform.access.limits`). Past a limit, a tool
call is answered as a refused one — an `isError` result with the sentence, so
the agent reads it — and any other request is a 429 with `Retry-After` and the
sentence as a JSON-RPC error.

Nothing here waits on the event loop: finding a token's person may wait on the
database (a lock another thread holds, a round trip), so it is done in a
thread, unless memory already knows it and the database says without waiting
that it still stands (`Service.caller_at_once`). A `commands` call asked again
is answered with the SDK's own reply to it while the listing stands
(`pasture.mcp._replies`).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from mcp.server import NotificationOptions
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.inbound import MCP_METHOD_HEADER
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pasture import request_ids
from pasture.caller import NOBODY, Caller, bearer
from pasture.errors import BadToken, PastureError, Refused, TooMany
from pasture.mcp import RELEASE, Replies, build_server, may_ask, unheard
from pasture.platform import Service
from pasture.threads import in_thread
from pasture.web.consent import resource_metadata_url
from pasture.web.hosts import Hosts
from pasture.web.mcp_events import is_events, may_open, naming_a_session, serve_events, turned_away
from pasture.web.mcp_exchange import OneExchange

SIGN_IN_FIRST = (
    "sign in first: this server's MCP takes an OAuth sign-in (your client starts it from this "
    "answer) or a token of yours (Authorization: Bearer …, from pasture token new)"
)

_caller: contextvars.ContextVar[Caller] = contextvars.ContextVar(
    "pasture_mcp_caller", default=NOBODY
)
_refused: contextvars.ContextVar[Refused | None] = contextvars.ContextVar(
    "pasture_mcp_refused", default=None
)
_sent_by: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "pasture_mcp_sent_by", default=None
)
_PEEK = 1024 * 1024  # the most of a refused request's body read to see if it is a tool call


def security_settings(public_url: str, bind_host: str) -> TransportSecuritySettings:
    """Host and Origin allowed: the public URL's, and any loopback port when bound to loopback."""
    return Hosts.of(public_url, bind_host).settings()


def _authorization(scope: Scope) -> str | None:
    for key, value in scope.get("headers", []):
        if key == b"authorization":
            text: str = value.decode("latin-1")
            return text
    return None


async def _unauthorized(sentence: str, send: Send, metadata: str, *, token: bool) -> None:
    """401 with the challenge that starts a client's sign-in (RFC 9728's resource_metadata);
    `token`: one was sent, and it named nobody."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": sentence}}
    ).encode()
    challenge = f'Bearer resource_metadata="{metadata}"'
    if token:
        challenge += f', error="invalid_token", error_description="{_in_header(sentence)}"'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", challenge.encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _in_header(sentence: str) -> str:
    """A sentence as a challenge's error_description carries it: printable ASCII without
    `"` or `\\` (RFC 6750 §3); the body has it whole."""
    plain = sentence.replace("\u2014", "-").replace("\u2013", "-").replace("\u2019", "'")
    return "".join(
        c if " " <= c <= "~" and c not in '"\\' else "'" if c == '"' else "?" for c in plain
    )


def _error_body(sentence: str, request_id: Any = None) -> bytes:
    error = {"code": -32000, "message": sentence}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()


async def _body(receive: Receive) -> bytes | None:
    """The request's whole body, or None when it is over `_PEEK` or the client went away."""
    body = b""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        body += bytes(message.get("body", b""))
        if len(body) > _PEEK:
            return None
        if not message.get("more_body", False):
            return body


def _replayed(body: bytes, receive: Receive) -> Receive:
    """`receive`, giving the body already read first."""
    given = False

    async def replay() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _small_post(scope: Scope) -> bool:
    """Whether a request may be a tool call or a cancel, by its headers alone: a POST of a
    small body, which the newest protocol's Mcp-Method, where sent, names as one."""
    headers = dict(scope.get("headers", []))
    length = headers.get(b"content-length", b"")
    method = headers.get(MCP_METHOD_HEADER.encode(), b"tools/call")
    return (
        scope.get("method") == "POST"
        and length.isdigit()
        and int(length) <= _PEEK
        and method in (b"tools/call", b"notifications/cancelled")
    )


def _message(body: bytes) -> dict[str, Any]:
    try:
        message = json.loads(body)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}


def _may_say(body: bytes, word: bytes) -> bool:
    """Whether a body may hold `word`: it does, or it escapes characters (`\\u…`), which
    only reading it can tell. Most bodies are told apart here without being read."""
    return word in body or b"\\u" in body


def _asks_progress(body: bytes, scope: Scope) -> bool:
    """Whether a body is a tool call with a `progressToken` in its `_meta`, from a client that
    takes an event stream: its reply is one, carrying `notifications/progress` before it."""
    if b"text/event-stream" not in dict(scope.get("headers", [])).get(b"accept", b""):
        return False
    if not _may_say(body, b"progressToken"):
        return False
    message = _message(body)
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return (
        message.get("method") == "tools/call"
        and isinstance(meta, dict)
        and meta.get("progressToken") is not None
    )


def _cancelled_id(body: bytes) -> Any:
    """The request a `notifications/cancelled` names, or None when the body is not one."""
    if not _may_say(body, b"cancelled"):
        return None
    message = _message(body)
    params = message.get("params")
    if message.get("method") != "notifications/cancelled" or not isinstance(params, dict):
        return None
    request_id = params.get("requestId")
    return request_id if isinstance(request_id, str | int) else None


def _sender(token: str) -> str:
    """Who sent a request, as a cancel is matched with the call it stops: its credential."""
    return hashlib.sha256(token.encode()).hexdigest()


def _request_id(body: bytes | None) -> tuple[str | None, Any]:
    """The JSON-RPC method and id of a body holding one request, else (None, None)."""
    try:
        message = json.loads(body) if body else None
    except ValueError:
        return None, None
    if not isinstance(message, dict):
        return None, None
    method = message.get("method")
    return (method if isinstance(method, str) else None), message.get("id")


def mcp_http(
    service: Service, *, public_url: str, bind_host: str
) -> tuple[ASGIApp, Callable[[], AbstractAsyncContextManager[None]]]:
    """The ASGI app to mount at `/mcp`, and the lifespan its host must enter."""
    # A reply in JSON carries nothing but itself; a reply as an event stream carries the
    # notices the call gave rise to. Replies are JSON (the cheaper), but for a listen
    # stream of the newest protocol, and for a client due to hear that the tools changed
    # with a release (when it takes event streams, as clients must). What changes with a
    # deploy or a rollback goes out on the streams that live on: the newest protocol's
    # listen streams, and the handshake generation's GET stream (`pasture.web.mcp_events`).
    # So the handshake promises both lists' notices; but no connection lives on to follow a
    # view, so it offers no resources/subscribe.
    server = build_server(
        service,
        _caller.get,
        _refused.get,
        notifications=NotificationOptions(tools_changed=True, resources_changed=True),
        living=False,
        sender_of=_sent_by.get,
    )
    in_flight = server.in_flight
    relay = server.relay
    assert relay is not None
    metadata = resource_metadata_url(public_url)
    settings = security_settings(public_url, bind_host)
    manager = StreamableHTTPSessionManager(
        app=server, json_response=True, stateless=True, security_settings=settings
    )
    streaming = StreamableHTTPSessionManager(
        app=server, json_response=False, stateless=True, security_settings=settings
    )
    # A single JSON request of the handshake generation, answered without the connection
    # the SDK's stateless path builds for it (`pasture.web.mcp_exchange`).
    exchange = OneExchange(server, settings, lambda: manager._lifespan_state)

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        async with manager.run(), streaming.run():
            await server.hearing()
            yield

    replies = Replies()
    tool_lists = service.tool_lists
    Admitted = tuple[Caller, bool, object]  # the caller, due to hear of new tools, the listing

    def admitted(token: str) -> Admitted:
        """In a thread. The listing's version is taken last — after the token's note of use,
        a write — yet before any listing it vouches for is made."""
        caller = service.caller_for_token(token)
        due = tool_lists.due(caller, RELEASE)
        return caller, due, service.listing_version()

    def admitted_at_once(token: str) -> Admitted | None:
        """On the loop: the same from memory, or None when only `admitted` can tell."""
        caller = service.caller_at_once(token)
        due = None if caller is None else tool_lists.due_at_once(caller, RELEASE)
        if caller is None or due is None:
            return None
        return caller, due, service.listing_version(at_once=True)

    def streamed(scope: Scope, due: bool) -> tuple[bool, bool]:
        """Whether the reply is an event stream, and whether it is a listen stream, which
        lives until the client goes."""
        headers = dict(scope.get("headers", []))
        if headers.get(MCP_METHOD_HEADER.encode()) == b"subscriptions/listen":
            return True, True
        return due and b"text/event-stream" in headers.get(b"accept", b""), False

    async def too_many(refused: TooMany, scope: Scope, receive: Receive, send: Send) -> None:
        """A tool call past the limit is a refused tool call; anything else, a 429."""
        body = await _body(receive)
        method, request_id = _request_id(body)
        if body is not None and method == "tools/call" and request_id is not None:
            reset = _refused.set(refused)
            try:
                await manager.handle_request(scope, _replayed(body, receive), send)
            finally:
                _refused.reset(reset)
            return
        answer = _error_body(refused.sentence, request_id)
        await send(
            {
                "type": "http.response.start",
                "status": refused.status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(answer)).encode()),
                    (b"retry-after", str(refused.retry_after).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": answer})

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        client = scope.get("client")
        try:
            address = str(client[0]) if client else None
            if not service.limiter.address_at_once(address):  # only the shared counts can tell
                await in_thread(lambda: service.limiter.address(address))
        except TooMany as refused:
            await too_many(refused, scope, receive, send)
            return
        try:
            token = bearer(_authorization(scope))
        except BadToken as refused:
            await _unauthorized(refused.sentence, send, metadata, token=True)
            return
        if token is None:  # every client starts signing in here
            await _unauthorized(SIGN_IN_FIRST, send, metadata, token=False)
            return
        admitted_now = admitted_at_once(token)
        if admitted_now is None:
            try:
                admitted_now = await in_thread(lambda: admitted(token))
            except PastureError as refused:
                await _unauthorized(refused.sentence, send, metadata, token=True)
                return
        caller, due, version = admitted_now
        _sent_by.set(_sender(token))  # this request's own context: whose cancel stops its call
        try:
            if not service.limiter.caller_at_once(caller):
                await in_thread(lambda: service.limiter.caller(caller))
        except TooMany as refused:
            await too_many(refused, scope, receive, send)
            return
        if is_events(scope):  # the handshake generation's stream of what changed
            await events(caller, token, scope, receive, send)
            return
        body: bytes | None = None  # read once, where something here must see it
        if may_open(scope):  # perhaps `initialize`: its reply names a session to open it with
            body = await _body(receive)
            if body is None:
                return  # the client went away
            receive = _replayed(body, receive)
            if _request_id(body)[0] == "initialize":
                send = naming_a_session(send)
        stream, listen = streamed(scope, due)
        if not stream and _small_post(scope):
            # A command's progress goes out on its reply, an event stream; a cancel of the
            # handshake generation, in a request of its own, stops its sender's call here.
            body = await _body(receive)
            if body is None:
                return  # the client went away
            receive = _replayed(body, receive)
            stream = _asks_progress(body, scope)
            cancelled = _cancelled_id(body)
            if cancelled is not None and in_flight is not None:
                in_flight.cancel(_sender(token), cancelled)
        if stream:
            # A listen stream holds one of its person's places, as a page's stream does.
            try:
                release = service.limiter.streams.hold(caller) if listen else None
            except TooMany as refused:
                await too_many(refused, scope, receive, send)
                return
            try:
                await serve(streaming, caller, scope, receive, send)
            finally:
                if release is not None:
                    release()
            return
        if version is not None and not due and may_ask(scope):
            body = await _body(receive)
            if body is None:
                return  # the client went away
            receive = _replayed(body, receive)
            asked = replies.asked(scope, caller, body)
            if asked is not None:
                answer = replies.answer(version, asked)
                if answer is not None:
                    for message in answer:
                        await send(message)
                    return
                send = replies.keeping(version, asked, send)
        await serve(manager, caller, scope, receive, send, body)

    async def events(
        caller: Caller, token: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        if await turned_away(settings, scope, receive, send):
            return
        try:  # one of its person's places, as a listen stream holds
            release = service.limiter.streams.hold(caller)
        except TooMany as many:
            await too_many(many, scope, receive, send)
            return

        async def who() -> Caller:
            now = service.caller_at_once(token)
            return (
                now if now is not None else await in_thread(lambda: service.caller_for_token(token))
            )

        try:
            await serve_events(relay.listeners, caller, who, scope, receive, send)
        finally:
            release()

    async def serve(
        chosen: StreamableHTTPSessionManager,
        caller: Caller,
        scope: Scope,
        receive: Receive,
        send: Send,
        body: bytes | None = None,
    ) -> None:
        # The SDK carries this context to the handler that serves the request.
        reset = _caller.set(caller)
        request_ids.named(caller.name)  # for the request's line in the log
        json_reply = chosen is manager  # which carries no line of the client's log
        try:
            with unheard() if json_reply else contextlib.nullcontext():
                if (
                    json_reply
                    and body is not None
                    and await exchange.answered(scope, receive, send, body)
                ):
                    return
                await chosen.handle_request(scope, receive, send)
        finally:
            _caller.reset(reset)

    return app, lifespan


__all__ = ["mcp_http", "security_settings"]
