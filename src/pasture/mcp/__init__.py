"""The MCP connector: a fixed tool list for every agent, views as MCP Apps resources.

Two transports over one server (`build_server`): stdio for `pasture mcp`
(`run_stdio`, acting as one caller for the life of the process) and
streamable HTTP at `/mcp` on `pasture serve` (`pasture.mcp.http.mcp_http`,
the caller named by each request's bearer token). Both protocol generations
the SDK serves are answered: the initialize handshake and the newest.
"""

from __future__ import annotations

import anyio
from mcp.server.stdio import stdio_server

from pasture.caller import Caller
from pasture.mcp._server import NO_RESOURCE, build_server
from pasture.mcp._tools import TOOL_NAMES, TOOLS
from pasture.platform.rewrite import with_base
from pasture.platform.service import Service


def run_stdio(service: Service, caller: Caller) -> None:
    """Serve MCP on stdin/stdout as `caller` until the client closes the pipe."""
    server = build_server(service, lambda: caller)
    # Over a pipe the connection lives on: a deploy and a release are announced on it.
    options = server.create_initialization_options()

    async def serve() -> None:
        await server.hearing()
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, options)

    anyio.run(serve)


__all__ = ["NO_RESOURCE", "TOOLS", "TOOL_NAMES", "build_server", "run_stdio", "with_base"]
