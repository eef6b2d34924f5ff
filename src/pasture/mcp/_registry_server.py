"""A registry served on its own over MCP: each command its own tool, changes announced.

This is the library use of `pasture.commands.registry` (DESIGN §6, last
sentence): no platform, no fixed tool list. `tools/list` is the registry's
commands as agents name them (`cart_add`), plus `status` when a provider has a
status command. When a command is registered or removed while a client is
connected, the client hears `notifications/tools/list_changed`: on its own
connection in the handshake generation, on a `subscriptions/listen` stream in
the newest. Arguments arrive typed, so nothing is converted from text. A command that
is hard to undo runs once the person says yes: asked where the client can ask them
(`pasture.mcp._elicitation`), else said by the call's own `"confirm": true` (its tool
takes it beside the command's arguments), without which it is not run and the answer
says so (`pasture.asking.unconfirmed`), as the platform's connector answers.

A command runs in a watched thread: its `ctx.progress` reaches `notifications/progress`
where the client sent a token, a cancel is its `ctx.cancelled`, and it may ask the
client (`ctx.ask`, `ctx.sample`, `ctx.roots`, `ctx.log`: `pasture.mcp._client_asks`),
the newest revision's rounds carried in a `requestState` the SDK seals. Where the
registry has resources or prompts as it is served, they are served too, with
completion (`pasture.mcp._registry_parts`); every list and read says on the newest
revision that it is true for a moment, for this caller (`CACHE_HINTS`).

A door, it knows a registry only by its shape (`pasture.served`), and answers as
the platform's connector does (`pasture.mcp._tool_results`). The SDK enters the
server's lifespan once per run — one connection over stdio and in memory, every
client's session over HTTP (`pasture.mcp._registry_http`) — so what the sessions of
the handshake generation need to hear of changes, and the log level each set, live
there, by session.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import NotificationOptions, Server
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.methods import CacheableMethod
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from pasture.asking import CANCELLED, CONFIRM, confirmed, question, unconfirmed
from pasture.client_asks import CannotAsk, InputRequired, Level
from pasture.errors import UsageError
from pasture.long_calls import LongCall
from pasture.mcp import _registry_parts as parts
from pasture.mcp._client_asks import McpClientAsks, cannot_ask, input_required
from pasture.mcp._elicitation import ask, can_ask
from pasture.mcp._progress import progress_to
from pasture.mcp._tool_results import Wire, answer, refusal
from pasture.mcp._tools import CONFIRM_PROPERTY, tool
from pasture.result import Result
from pasture.served import ServedCommand, ServedRegistry
from pasture.threads import in_watched_thread
from pasture.version import __version__

logger = logging.getLogger("pasture.mcp")

STATUS_TOOL = "status"

# On the newest revision every list and read says how long it stays true: not a moment
# (a command may be registered or removed at any time), and for this caller alone.
CACHE_HINTS: dict[CacheableMethod, CacheHint] = {
    method: CacheHint(0, "private")
    for method in (
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    )
}

_STATUS = types.Tool(
    name=STATUS_TOOL,
    title="The state of everything here",
    description="Every provider's state in one line each: run it before changing anything.",
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
)


def tool_of(command: ServedCommand) -> types.Tool:
    """A command as an MCP tool: its agent name, schema and what it does to the world; one
    hard to undo takes `confirm` too, the person's yes where nothing could ask them."""
    schema = command.input
    if command.consequential:
        properties = {**schema.get("properties", {}), CONFIRM: CONFIRM_PROPERTY}
        schema = {**schema, "properties": properties}
    return tool(
        command.agent_name,
        command.title,
        command.description,
        schema,
        read_only=command.read_only,
        destructive=command.consequential,
    )


def tools_of(registry: ServedRegistry) -> list[types.Tool]:
    tools = [tool_of(c) for c in registry.commands()]
    if registry.status_commands() and registry.get(STATUS_TOOL) is None:
        tools.append(_STATUS)
    return tools


@dataclass
class _Connection:
    """What a run serves: the sessions of the handshake generation that spoke to it — one
    over stdio, each client's over HTTP — each of which hears of changes until sending to
    it fails."""

    sessions: dict[str | None, ServerSession] = field(default_factory=dict)  # by session id
    levels: dict[str | None, Level] = field(default_factory=dict)  # logging/setLevel's


class _RegistryServer(Server[Any]):
    """The SDK's server, announcing `tools/list_changed` on every connection it serves,
    whichever transport asks for its initialization options (HTTP's asks with none)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


def _session_id(ctx: ServerRequestContext[Any]) -> str | None:
    """The HTTP session a request names (`Mcp-Session-Id`); None on stdio and in memory,
    whose one connection is the run's."""
    headers = getattr(ctx.request, "headers", None)
    return None if headers is None else headers.get("mcp-session-id")


def build_registry_server(registry: ServedRegistry, name: str = "pasture") -> Server[Any]:
    """The SDK's low-level server over one registry."""
    bus = InMemorySubscriptionBus()
    tasks: set[asyncio.Task[None]] = set()

    async def announce(connection: _Connection) -> None:
        await bus.publish(ToolsListChanged())
        for client, session in list(connection.sessions.items()):
            try:
                await session.send_tool_list_changed()
            except Exception:
                connection.sessions.pop(client, None)  # the client went away
                logger.debug("tools/list_changed had no channel to go out on")

    @asynccontextmanager
    async def lifespan(_server: Server[Any]) -> AsyncIterator[_Connection]:
        loop = asyncio.get_running_loop()
        connection = _Connection()

        def changed() -> None:
            # register() may run on any thread: the notice goes out on the server's loop.
            def start() -> None:
                task = loop.create_task(announce(connection))
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
            yield connection
        finally:
            stop()

    def remember(ctx: ServerRequestContext[_Connection]) -> None:
        # Each request has a session of its own; any of them reaches its connection.
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            ctx.lifespan_context.sessions[_session_id(ctx)] = ctx.session

    async def on_list_tools(
        ctx: ServerRequestContext[_Connection], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        remember(ctx)
        return types.ListToolsResult(tools=tools_of(registry))

    async def on_call_tool(
        ctx: ServerRequestContext[_Connection], params: types.CallToolRequestParams
    ) -> Wire | types.InputRequiredResult:
        remember(ctx)
        arguments = dict(params.arguments or {})
        name = params.name
        command = registry.get(name)
        if command is not None and command.consequential:
            said_yes = arguments.pop(CONFIRM, None)  # not the command's own: the person's
            if can_ask(ctx):  # then only their answer says yes, whatever the call carries
                asking = question(command.title, command.agent_name, None, arguments)
                said = await ask(ctx, params, asking)
                if isinstance(said, types.InputRequiredResult):
                    return said  # the question; the client calls again with the answer
                if not said:
                    return refusal(CANCELLED)
            else:
                try:
                    yes = confirmed(said_yes)
                except UsageError as wrong:
                    return refusal(wrong.sentence)
                if not yes:
                    return refusal(unconfirmed(command.title, command.agent_name, None, arguments))

        # A command's own code may block: keep the event loop free. It is watched: its
        # progress told where the client asked for it, a cancel seen as `ctx.cancelled`;
        # and it may ask the client (`ctx.ask`, `ctx.sample`, `ctx.roots`, `ctx.log`).
        least = ctx.lifespan_context.levels.get(_session_id(ctx))
        client = McpClientAsks(ctx, params.input_responses, params.request_state, least=least)
        asked: list[InputRequired | CannotAsk] = []

        def attempt(long_call: LongCall) -> Result:
            try:
                return registry.run(name, arguments, long_call=long_call, client=client)
            except (InputRequired, CannotAsk) as needed:
                asked.append(needed)
                return Result("")

        def run(long_call: LongCall) -> Wire:
            return answer(name, lambda: attempt(long_call))

        wire = await in_watched_thread(run, progress_to(ctx))
        if asked and isinstance(asked[0], InputRequired):
            return input_required(asked[0])  # asked again, with the answers
        if asked and isinstance(asked[0], CannotAsk):
            raise cannot_ask(asked[0])
        return wire

    # Resources and prompts are served where the registry has some as it is served.
    has_resources = bool(registry.resources())
    has_prompts = bool(registry.prompts())

    async def on_list_resources(
        ctx: ServerRequestContext[_Connection], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return parts.listed_resources(registry)

    async def on_list_templates(
        ctx: ServerRequestContext[_Connection], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return parts.listed_templates(registry)

    async def on_read_resource(
        ctx: ServerRequestContext[_Connection], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await anyio.to_thread.run_sync(lambda: parts.read(registry, str(params.uri)))

    async def on_subscribe(
        ctx: ServerRequestContext[_Connection], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        # A registry's resources read afresh each time and announce no change of their own.
        parts.known(registry, str(params.uri))
        return types.EmptyResult()

    async def on_unsubscribe(
        ctx: ServerRequestContext[_Connection], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        return types.EmptyResult()

    async def on_list_prompts(
        ctx: ServerRequestContext[_Connection], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return parts.listed_prompts(registry)

    async def on_get_prompt(
        ctx: ServerRequestContext[_Connection], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        least = ctx.lifespan_context.levels.get(_session_id(ctx))
        client = McpClientAsks(ctx, params.input_responses, params.request_state, least=least)
        try:
            return await anyio.to_thread.run_sync(lambda: parts.got(registry, params, client))
        except InputRequired as needed:
            return input_required(needed)  # type: ignore[return-value]
        except CannotAsk as refused:
            raise cannot_ask(refused) from None

    async def on_completion(
        ctx: ServerRequestContext[_Connection], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        completion = await anyio.to_thread.run_sync(lambda: parts.completed(registry, params))
        return types.CompleteResult(completion=completion)

    served: dict[str, Any] = {}
    if has_resources:
        served.update(
            on_list_resources=on_list_resources,
            on_list_resource_templates=on_list_templates,
            on_read_resource=on_read_resource,
            on_subscribe_resource=on_subscribe,
            on_unsubscribe_resource=on_unsubscribe,
        )
    if has_prompts:
        served.update(on_list_prompts=on_list_prompts, on_get_prompt=on_get_prompt)
    if has_resources or has_prompts:
        served.update(on_completion=on_completion)
    server = _RegistryServer(
        name,
        version=__version__,
        lifespan=lifespan,
        on_list_tools=on_list_tools,
        on_subscriptions_listen=ListenHandler(bus),
        cache_hints=CACHE_HINTS,
        **served,
    )
    # Registered as a plain request handler, which may answer with the wire dict.
    server.add_request_handler("tools/call", types.CallToolRequestParams, on_call_tool)

    async def on_set_level(
        ctx: ServerRequestContext[_Connection], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        # The handshake generation's: the least level of ctx.log this client is told.
        ctx.lifespan_context.levels[_session_id(ctx)] = params.level
        return types.EmptyResult()

    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, on_set_level)
    # The newest revision's questions come back with the answers so far in requestState,
    # sealed by this process on the way out and checked on the way back.
    security = RequestStateSecurity.ephemeral(audience=name)
    server.middleware.append(RequestStateBoundary(security, default_audience=name))
    return server


def serve_registry(registry: ServedRegistry, name: str = "pasture") -> None:
    """Serve the registry on stdin/stdout until the client closes the pipe."""
    server = build_registry_server(registry, name)
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, options)

    anyio.run(serve)


__all__ = ["STATUS_TOOL", "build_registry_server", "serve_registry", "tool_of", "tools_of"]
