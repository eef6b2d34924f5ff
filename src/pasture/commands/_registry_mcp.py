"""A registry served on its own over MCP: each command its own tool, changes announced.

This is the library use of `pasture.commands.registry` (DESIGN §6, last
sentence): no platform, no fixed tool list. `tools/list` is the registry's
commands as agents name them (`cart_add`), plus `status` when a provider has a
status command. When a command is registered or removed while a client is
connected, the client hears `notifications/tools/list_changed`: on its own
connection in the handshake generation, on a `subscriptions/listen` stream in
the newest. Arguments arrive typed, so nothing is converted from text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import NotificationOptions, Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from pasture.commands.model import Command
from pasture.errors import PastureError
from pasture.result import Result
from pasture.version import __version__

if TYPE_CHECKING:
    from pasture.commands.registry import Registry

logger = logging.getLogger("pasture.commands")

STATUS_TOOL = "status"


def tool_of(command: Command) -> types.Tool:
    """A command as an MCP tool: its agent name, schema and what it does to the world."""
    return types.Tool(
        name=command.agent_name,
        title=command.title,
        description=command.description,
        input_schema=command.input,
        annotations=types.ToolAnnotations(
            title=command.title,
            read_only_hint=command.read_only,
            destructive_hint=None if command.read_only else command.consequential,
            open_world_hint=False,
        ),
    )


def _status_tool() -> types.Tool:
    return types.Tool(
        name=STATUS_TOOL,
        title="The state of everything here",
        description="Every provider's state in one line each: run it before changing anything.",
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )


def tools_of(registry: Registry) -> list[types.Tool]:
    tools = [tool_of(c) for c in registry.commands()]
    if registry.status_commands() and registry.get(STATUS_TOOL) is None:
        tools.append(_status_tool())
    return tools


def _answer(name: str, run: Callable[[], Result]) -> types.CallToolResult:
    try:
        result = run()
    except PastureError as refused:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=refused.sentence)], is_error=True
        )
    except Exception:
        logger.exception("tool %s failed", name)
        return types.CallToolResult(
            content=[
                types.TextContent(
                    type="text", text=f"{name} failed on the server; the server's log says why"
                )
            ],
            is_error=True,
        )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=result.text)],
        structured_content=result.data,
    )


def build_registry_server(registry: Registry, name: str = "pasture") -> Server[Any]:
    """The SDK's low-level server over one registry."""
    bus = InMemorySubscriptionBus()
    # Sessions of the handshake generation that listed the tools: they hear changes directly.
    # Held until sending to one fails (the client went away).
    sessions: dict[int, Any] = {}
    tasks: set[asyncio.Task[None]] = set()

    async def announce() -> None:
        await bus.publish(ToolsListChanged())
        for key, session in list(sessions.items()):
            try:
                await session.send_tool_list_changed()
            except Exception:
                sessions.pop(key, None)
                logger.debug("tools/list_changed had no channel to go out on")

    @asynccontextmanager
    async def lifespan(_server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        loop = asyncio.get_running_loop()

        def changed() -> None:
            # register() may run on any thread: the notice goes out on the server's loop.
            def start() -> None:
                task = loop.create_task(announce())
                tasks.add(task)
                task.add_done_callback(tasks.discard)

            try:
                here = asyncio.get_running_loop()
            except RuntimeError:
                here = None
            if here is loop:
                start()
            elif not loop.is_closed():
                loop.call_soon_threadsafe(start)

        stop = registry.on_change(changed)
        try:
            yield {}
        finally:
            stop()

    def remember(ctx: ServerRequestContext[Any]) -> None:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            # The SDK hands each request a session of its own over the one connection.
            connection = getattr(ctx.session, "_connection", ctx.session)
            sessions[id(connection)] = ctx.session

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        remember(ctx)
        return types.ListToolsResult(tools=tools_of(registry))

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        remember(ctx)
        arguments = dict(params.arguments or {})
        tool = params.name

        def run() -> Result:
            # A command's own code may block: keep the event loop free.
            return registry.run(tool, arguments)

        return await anyio.to_thread.run_sync(lambda: _answer(tool, run))

    server: Server[Any] = Server(
        name,
        version=__version__,
        lifespan=lifespan,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )
    return server


def serve_stdio(registry: Registry, name: str = "pasture") -> None:
    """Serve the registry on stdin/stdout until the client closes the pipe."""
    server = build_registry_server(registry, name)
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, options)

    anyio.run(serve)
