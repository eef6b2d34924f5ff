"""A registry served on its own over streamable HTTP: `/mcp`, with nothing else in front.

The library use over the network (DESIGN §6, last sentence): the registry's own door
(`pasture.mcp._registry_server`) behind the SDK's streamable HTTP session manager, in a
Starlette app of its own (`registry_app`) to mount or run, or run at once on loopback
(`serve_registry_http`). Each client of the handshake generation has a session of its
own, on which it hears `tools/list_changed` and may be asked (elicitation); the newest
revision's requests carry all they need, and its `subscriptions/listen` stream hears
the same changes. Host and Origin are checked (the SDK's transport security): loopback
names only (`LOOPBACK`), unless `security` says which — a registry served on its own
has no sign-in, so serve it where only those who may run its commands can reach it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route

from pasture.mcp._registry_server import build_registry_server
from pasture.served import ServedRegistry

PATH = "/mcp"

_NAMES = ("127.0.0.1", "localhost", "[::1]")
# What a request may name as its Host and Origin unless told otherwise: loopback, any port
# (a page elsewhere whose name resolves here — DNS rebinding — is refused).
LOOPBACK = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=[h for name in _NAMES for h in (name, f"{name}:*")],
    allowed_origins=[
        f"{scheme}://{name}{port}"
        for name in _NAMES
        for scheme in ("http", "https")
        for port in ("", ":*")
    ],
)


def registry_app(
    registry: ServedRegistry,
    name: str = "pasture",
    *,
    security: TransportSecuritySettings | None = None,
) -> Starlette:
    """The registry's MCP door at `/mcp` as an ASGI app (its lifespan runs the sessions)."""
    server = build_registry_server(registry, name)
    manager = StreamableHTTPSessionManager(app=server, security_settings=security or LOOPBACK)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    door = StreamableHTTPASGIApp(manager)
    return Starlette(
        routes=[Route(PATH, door, methods=["GET", "POST", "DELETE"])], lifespan=lifespan
    )


def serve_registry_http(
    registry: ServedRegistry,
    name: str = "pasture",
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    security: TransportSecuritySettings | None = None,
) -> None:
    """Serve the registry at `http://HOST:PORT/mcp` until the process is stopped."""
    app = registry_app(registry, name, security=security)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    anyio.run(uvicorn.Server(config).serve)


__all__ = ["LOOPBACK", "PATH", "registry_app", "serve_registry_http"]
