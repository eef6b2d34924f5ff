"""One JSON request of the handshake generation, answered as one exchange.

For every request of the handshake generation (2025-11-25 and before), the SDK's
stateless HTTP path builds a whole connection: a transport with its memory streams, a
JSON-RPC dispatcher and the tasks that run them, torn down again once the one reply is
out — about a quarter of the server's work for a call such as `command log_run`. The
SDK answers a request of the newest revision another way, as a single exchange: the
request's context is made for it, the server's own request pipeline runs it
(`mcp.server.runner.serve_one`: its middleware, its validation of the request, the
handler, its serialization of the result), and the reply is written.

`answered` answers the older generation's single requests that same way, where that
changes nothing a client can see: a POST of one JSON-RPC request (not `initialize`,
whose reply names a session; not a notification or a reply, which the SDK
acknowledges) that asks for a JSON reply, whose Host, Origin and content type the SDK's
own check passes. Every other request — a refusal the transport would write, a stream
of events — is left to the SDK (it answers False). The reply is the SDK's own message
(`JSONRPCResponse` or `JSONRPCError`) dumped as its transport dumps it, with the same
headers; what differs is only what it cost to make (tests/mcp/test_mcp_exchange.py
checks that the bytes are the same).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import anyio
import pydantic_core
from mcp.server.connection import Connection
from mcp.server.runner import serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    INTERNAL_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    jsonrpc_message_adapter,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

logger = logging.getLogger("pasture.mcp")

_VERSION = b"mcp-protocol-version"
_JSON = [(b"content-type", b"application/json")]


@dataclass
class _Exchange:
    """The context of one request with no channel back: what the SDK's transport gives a
    request in JSON-reply mode (a server's request to the client cannot be carried, and a
    notice tied to the request has no wire)."""

    transport: TransportContext
    request_id: RequestId
    message_metadata: ServerMessageMetadata
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(self, method: str, params: Any, opts: Any = None) -> Any:
        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Any, opts: Any = None) -> None:
        return None

    async def progress(self, progress: float, total: Any = None, message: Any = None) -> None:
        return None


class OneExchange:
    """Answers a single JSON request of the handshake generation for `server`, once the
    SDK's session manager (`lifespan_state_of()` names its lifespan's state) is running."""

    def __init__(
        self, server: Any, settings: TransportSecuritySettings, lifespan_state_of: Any
    ) -> None:
        self.server = server
        self.security = TransportSecurityMiddleware(settings)
        self.lifespan_state_of = lifespan_state_of

    async def answered(self, scope: Scope, receive: Receive, send: Send, body: bytes) -> bool:
        """Whether this request (`body`, read whole) was answered here; if not, nothing was
        sent and the SDK is to answer it."""
        version = None
        for key, value in scope.get("headers", ()):
            if key == _VERSION:
                version = value.decode("latin-1")
        if version is None:
            version = DEFAULT_NEGOTIATED_VERSION  # what the SDK takes a request naming none for
        if scope.get("method") != "POST" or version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return False
        request = Request(scope, receive)
        if not check_accept_headers(request)[0]:
            return False  # the SDK's refusal, as it writes it
        if await self.security.validate_request(request, is_post=True) is not None:
            return False
        message = _one_request(body)
        if message is None or message.method == "initialize":
            return False
        exchange = _Exchange(
            transport=TransportContext(
                kind="streamable-http", can_send_request=False, headers=request.headers
            ),
            request_id=message.id,
            message_metadata=ServerMessageMetadata(request_context=request, can_send_request=False),
        )
        connection = Connection.from_envelope(version, None, None)
        reply: JSONRPCResponse | JSONRPCError
        try:
            result = await serve_one(
                self.server,
                exchange,
                message.method,
                message.params,
                connection=connection,
                lifespan_state=self.lifespan_state_of(),
            )
            reply = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
        except Exception as e:  # the SDK's dispatcher's ladder, but no internals on the wire
            error = handler_exception_to_error_data(e)
            if error is None:
                logger.exception("handler for %r raised", message.method)
                error = ErrorData(code=INTERNAL_ERROR, message="Internal server error")
            reply = JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        answer = reply.model_dump_json(by_alias=True, exclude_unset=True).encode()
        headers = [*_JSON, (b"content-length", str(len(answer)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": answer})
        return True


def _one_request(body: bytes) -> JSONRPCRequest | None:
    """The body as one JSON-RPC request, as the SDK's transport reads it; None for anything
    else (not JSON, a notification, a reply, a batch: the SDK's to answer)."""
    try:
        message = jsonrpc_message_adapter.validate_python(
            pydantic_core.from_json(body), by_name=False
        )
    except (ValueError, ValidationError):
        return None
    return message if isinstance(message, JSONRPCRequest) else None


__all__ = ["OneExchange"]
