"""`/mcp` on `pasture serve`: streamable HTTP, stateless, a bearer token naming the caller.

Stateless: no session lives in a process, so any `pasture serve` behind a load
balancer answers any request. Each request names its own caller with
`Authorization: Bearer <token>` — a token the person made, or an OAuth access
token (`pasture.platform.oauth`), each with its scope. Without one the answer
is 401 with the challenge that points at the protected resource metadata, so
every client starts signing in; a token the Service does not know is a 401
carrying its sentence. Host and Origin are checked against
the public URL, and against loopback when the server is bound there, rather
than left at the SDK's defaults, which refuse anything but localhost.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from pasture.caller import NOBODY, Caller
from pasture.errors import Refused
from pasture.mcp._server import build_server
from pasture.platform.service import Service
from pasture.web.consent import resource_metadata_url
from pasture.web.hosts import Hosts

SIGN_IN_FIRST = (
    "sign in first: this server's MCP takes an OAuth sign-in (your client starts it from this "
    "answer) or a token of yours (Authorization: Bearer …, from pasture token new)"
)

_caller: contextvars.ContextVar[Caller] = contextvars.ContextVar(
    "pasture_mcp_caller", default=NOBODY
)


def security_settings(public_url: str, bind_host: str) -> TransportSecuritySettings:
    """Host and Origin allowed: the public URL's, and any loopback port when bound to loopback."""
    return Hosts.of(public_url, bind_host).settings()


def _bearer(scope: Scope) -> str | None:
    for key, value in scope.get("headers", []):
        if key == b"authorization":
            text: str = value.decode("latin-1")
            scheme, _, token = text.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
            return ""  # an Authorization header that is not a bearer token
    return None


async def _unauthorized(sentence: str, send: Send, metadata: str, *, token: bool) -> None:
    """401 with the challenge that starts a client's sign-in (RFC 9728's resource_metadata);
    `token`: one was sent, and it named nobody."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": sentence}}
    ).encode()
    quoted = sentence.replace("\\", "\\\\").replace('"', '\\"')
    challenge = f'Bearer resource_metadata="{metadata}"'
    if token:
        challenge += f', error="invalid_token", error_description="{quoted}"'
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


def mcp_http(
    service: Service, *, public_url: str, bind_host: str
) -> tuple[ASGIApp, Callable[[], AbstractAsyncContextManager[None]]]:
    """The ASGI app to mount at `/mcp`, and the lifespan its host must enter."""
    server = build_server(service, _caller.get)
    metadata = resource_metadata_url(public_url)
    manager = StreamableHTTPSessionManager(
        app=server,
        json_response=True,
        stateless=True,
        security_settings=security_settings(public_url, bind_host),
    )

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        token = _bearer(scope)
        if token == "":
            sentence = "send your token as Authorization: Bearer <token>"
            await _unauthorized(sentence, send, metadata, token=True)
            return
        if token is None:  # every client starts signing in here
            await _unauthorized(SIGN_IN_FIRST, send, metadata, token=False)
            return
        try:
            # One indexed lookup of a hashed token: cheaper inline than a thread hop.
            caller = service.caller_for_token(token)
        except Refused as refused:
            await _unauthorized(refused.sentence, send, metadata, token=True)
            return
        # The SDK carries this context to the handler that serves the request.
        reset = _caller.set(caller)
        try:
            await manager.handle_request(scope, receive, send)
        finally:
            _caller.reset(reset)

    return app, manager.run


__all__ = ["mcp_http", "security_settings"]
