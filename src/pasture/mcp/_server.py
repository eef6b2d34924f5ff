"""The connector itself: the SDK's low-level server, with every tool one `Service` call.

Nothing here decides who may do what or touches a store: a tool reads its
arguments, calls the Service as the caller, and renders the `Result` (its text
followed by its data as JSON as `content`, the data as `structuredContent`). A
`Refused` becomes an `isError` result carrying its sentence and nothing else, in
`answer` and nowhere else;
anything unexpected becomes a plain sentence, its traceback kept in the log
(`pasture.mcp._tool_results`, which a registry served on its own answers with too).

Beside the tools: the caller's views as resources (`_templates`), each of their apps
as a prompt (`_prompts`), and each call told in the client's log (`_call_log`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server import NotificationOptions, Server
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp_types.methods import CacheableMethod
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from pasture import jsontext
from pasture.asking import CONFIRM, confirmed
from pasture.caller import Caller
from pasture.client_asks import Level
from pasture.errors import NotFound, PastureError, Refused, UsageError
from pasture.long_calls import LongCall
from pasture.mcp import _call_log, _prompts
from pasture.mcp._changes import EMPTY, Relay
from pasture.mcp._elicitation import GoAhead, ask_about, can_ask, looked_up
from pasture.mcp._progress import InFlight, progress_to
from pasture.mcp._templates import VIEW_TEMPLATE, complete, view_parts
from pasture.mcp._tool_results import Wire, answer, refusal
from pasture.mcp._tools import CHANGED, INPUT_SCHEMAS, RELEASE, TOOL_NAMES, TOOLS
from pasture.platform import Access, AppInfo, Resolved, Service, with_base
from pasture.result import Result
from pasture.schema import args_object
from pasture.threads import in_command_thread, in_thread, in_watched_thread
from pasture.version import __version__

logger = logging.getLogger("pasture.mcp")

CallerOf = Callable[[], Caller]
RefusedOf = Callable[[], Refused | None]

NO_RESOURCE = "no resource"

INSTRUCTIONS = (
    "pasture hosts the person's own apps. Their apps' actions are commands: call `commands` "
    "to see what the apps offer, then `command` to run one as the person. The graph tools read "
    "and write an app's data directly; the app tools list, read back and deploy apps. A "
    "command's `view` is a ui:// resource the answer can be drawn in."
)

_ACCESS: tuple[Access, ...] = ("private", "public", "open")

# How long a list or a read stays true, on the newest revision: the tool list is the same
# for every caller, signed in or not, so anyone's copy may be shared; a caller's views are
# theirs alone. Neither stays true a moment longer than it is asked for: a release changes
# the tools, a deploy the views, and each is announced.
CACHE_HINTS: dict[CacheableMethod, CacheHint] = {
    "tools/list": CacheHint(0, "public"),
    "resources/list": CacheHint(0, "private"),
    "resources/templates/list": CacheHint(0, "public"),
    "resources/read": CacheHint(0, "private"),
    "prompts/list": CacheHint(0, "private"),  # a caller's apps, theirs alone
}

# The tools whose text is their data as people read it, with nothing to add: `commands`'
# listing, and `app_files`' list of files or the file itself (sent back whole to deploy).
# Every other answer's text is its sentence and then its data as JSON (`_tool_results`).
SAID_AS_READ = frozenset({"commands", "app_files"})


# -- arguments ---------------------------------------------------------------
def _text(arguments: Mapping[str, Any], key: str, *, required: bool = False) -> str | None:
    value = arguments.get(key)
    if value is None or value == "":
        if required:
            raise UsageError(f"{key} is required")
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise UsageError(f"{key} is text")
    return str(value)


def _required(arguments: Mapping[str, Any], key: str) -> str:
    value = _text(arguments, key, required=True)
    assert value is not None
    return value


def _args(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A command's args: none given is none; anything but an object is refused."""
    value = arguments.get("args")
    return {} if value is None else dict(args_object(value))


def _bundles(arguments: Mapping[str, Any]) -> Any:
    value = arguments.get("bundles")
    if value is None:
        raise UsageError("bundles is required")
    # One bundle or a list of them, as the web's apply takes: the store decides the shape.
    return value


def _files(arguments: Mapping[str, Any]) -> dict[str, str]:
    value = arguments.get("files")
    if not isinstance(value, Mapping) or not value:
        raise UsageError('files is required: an object of path to text, e.g. {"index.html": "…"}')
    files: dict[str, str] = {}
    for path, text in value.items():
        if not isinstance(text, str):
            raise UsageError(f"files.{path} is text: the whole text of the file")
        files[str(path)] = text
    return files


def _access(arguments: Mapping[str, Any]) -> Access | None:
    value = _text(arguments, "access")
    if value is None:
        return None
    for access in _ACCESS:
        if value == access:
            return access
    raise UsageError("access is private, public or open")


# -- views -------------------------------------------------------------------
def _csp(address: str) -> dict[str, Any]:
    """MCP Apps metadata: the frame may load from and talk to the app's own address."""
    return {
        "ui": {
            "csp": {
                "connectDomains": [address],
                "resourceDomains": [address],
                "baseUriDomains": [address],
            }
        }
    }


def _split_view(uri: str) -> tuple[str, str, str] | None:
    if not uri.startswith("ui://"):
        return None
    parts = uri[len("ui://") :].split("/", 2)
    if len(parts) != 3 or not all(parts):
        return None
    return parts[0], parts[1], parts[2]


def _view_resource(uri: str, info: AppInfo) -> types.Resource:
    file = uri.rsplit("/", 1)[-1]
    return types.Resource(
        uri=uri,
        name=f"{info.at}/{file}",
        title=f"{info.title}: {file}",
        description=(
            f"A page of {info.at} ({info.title}, an app at {info.url}) that a command's answer is "
            "drawn in; `commands` names it as that command's view."
        ),
        mime_type=APP_MIME_TYPE,
        _meta=_csp(info.url),
    )


# -- the server --------------------------------------------------------------
class _Server(Server[Any]):
    """The SDK's server, saying what it announces on every connection it serves.

    Each transport says it once (`notifications`): the streamable HTTP manager asks for
    the initialization options with none of its own, and would otherwise promise none."""

    notifications = NotificationOptions()
    relay: Relay | None = None  # deploys heard on the platform's bus, told to its clients
    in_flight: InFlight | None = None  # its running commands, which a cancel may stop

    async def hearing(self) -> None:
        """Hear deploys from now on, on this loop: a transport calls this as it starts, so
        a listen stream opened at once misses none (a request would start it too)."""
        if self.relay is not None:
            await self.relay.start()

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or self.notifications, experimental_capabilities, extensions
        )


MCPServer = _Server

# On a connection that lives on (stdio, in memory): a deploy's new views and prompts and a
# release's new tools are all announced on it.
ANNOUNCED = NotificationOptions(resources_changed=True, tools_changed=True, prompts_changed=True)


def build_server(
    service: Service,
    caller_of: CallerOf,
    refused_of: RefusedOf | None = None,
    *,
    notifications: NotificationOptions = ANNOUNCED,
    living: bool = True,
    sender_of: Callable[[], str | None] | None = None,
) -> MCPServer:
    """The SDK server for one Service; `caller_of()` names who is asking, per request, and
    `refused_of()`, when it says so, refuses this request's tool call before it runs (a
    caller past their limit over HTTP: `pasture.web.mcp_http`). `notifications`: what the
    handshake promises to announce — only what the transport can carry. `living`: the
    transport's connections live on (stdio, in memory), so one of the handshake generation
    may follow a view (`resources/subscribe`); stateless HTTP's end with each request.
    `sender_of()`: the credential that sent this request, where a client's cancel comes in a
    request of its own (stateless HTTP: `server.in_flight`, `pasture.mcp._progress`).

    A client that listed the tools of another release (`pasture.platform.db.tool_lists`) is
    told on its next call: `notifications/tools/list_changed` (on the call's own channel,
    or the listen streams of the newest protocol) and a line on the reply."""
    bus = InMemorySubscriptionBus()
    relay = Relay(service, bus, living=living)  # deploys, told here
    tool_lists = service.tool_lists
    in_flight = InFlight()
    levels = _call_log.Levels()  # logging/setLevel's, over stateless HTTP
    # A prompt is an app: the prompts change with a deploy, announced wherever the views'
    # list is (`pasture.mcp._changes`).
    notifications = NotificationOptions(
        prompts_changed=notifications.resources_changed,
        resources_changed=notifications.resources_changed,
        tools_changed=notifications.tools_changed,
    )

    def least_level(ctx: ServerRequestContext[Any], caller: Caller) -> Level | None:
        """The least level the client set (the handshake generation), None for every one."""
        connection = relay.seen(ctx, caller)
        if connection is not None:
            return connection.level
        return None if living else levels.of(ctx, caller)

    async def call(name: str, run: Callable[..., Any], ctx: ServerRequestContext[Any]) -> Any:
        # The Service is synchronous (a database under it): keep the event loop free. A
        # command (and status, which runs providers' status commands) may run app code;
        # a command is watched: its progress told, and a cancel stops it.
        if name == "command":
            sender = sender_of() if sender_of is not None else None
            with in_flight.running(sender, ctx.request_id) as long_call:
                return await in_watched_thread(run, progress_to(ctx), long_call=long_call)
        if name == "status":
            return await in_command_thread(run)
        return await in_thread(run)

    def tool_call(
        name: str,
        arguments: Mapping[str, Any],
        caller: Caller,
        go: GoAhead,
        long_call: LongCall | None = None,
    ) -> Wire:
        def run() -> Result:
            for key, value in arguments.items():  # what JSON cannot carry on, refused first
                jsontext.check(value, key)
            if name == "commands":
                return service.listing.list_commands(caller, _text(arguments, "app"))
            if name == "command":  # what was found to ask first is what runs
                # The person's answer where they were asked, else the call's own `confirm`.
                yes = go.confirmed
                if yes is None:
                    yes = confirmed(arguments.get(CONFIRM))
                return service.run_command(
                    caller,
                    go.found or _required(arguments, "name"),
                    _args(arguments),
                    _text(arguments, "app"),
                    confirmed=yes,
                    long_call=long_call,
                )
            if name == "status":
                return service.listing.status(caller)
            if name == "graph_schema":
                return service.graph.schema(caller, _required(arguments, "app"))
            if name == "graph_query":
                return service.graph.query(
                    caller, _required(arguments, "app"), _required(arguments, "filter")
                )
            if name == "graph_apply":
                return service.apply(caller, _required(arguments, "app"), _bundles(arguments))
            if name == "app_list":
                return _app_list(service.gate.list_apps(caller))
            if name == "app_files":
                return service.apps.files(
                    caller, _required(arguments, "app"), _text(arguments, "path")
                )
            if name == "app_deploy":
                return service.deploy(
                    caller,
                    _files(arguments),
                    space=_text(arguments, "space"),
                    app=_text(arguments, "app"),
                    access=_access(arguments),
                    title=_text(arguments, "title"),
                )
            raise NotFound(f"no tool {name} — the tools are {', '.join(TOOL_NAMES)}")

        return answer(name, run, with_data=name not in SAID_AS_READ)

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        caller = caller_of()
        relay.seen(ctx, caller)
        if caller.signed_in:
            await in_thread(lambda: tool_lists.listed(caller, RELEASE))
        return types.ListToolsResult(tools=list(TOOLS))

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> Wire | types.InputRequiredResult:
        refused = refused_of() if refused_of is not None else None
        if refused is not None:
            return refusal(refused.sentence)
        caller = caller_of().at_door("mcp")  # for the audit
        least = least_level(ctx, caller)
        arguments = params.arguments or {}
        said_as = params.name
        if params.name == "command" and isinstance(arguments.get("name"), str):
            said_as = f"command {arguments['name']}"
        await _call_log.tell(ctx, least, "debug", lambda: _call_log.called(said_as, arguments))
        go = GoAhead()
        # Hard to undo, a command is asked about first where the client can ask: it is
        # looked up in the call's own thread, and run there at once unless it must be asked.
        asking = params.name == "command" and can_ask(ctx)
        must_ask: list[Resolved] = []
        told = False

        def run(long_call: LongCall | None = None) -> Wire | None:
            nonlocal told
            if tool_lists.due(caller, RELEASE):  # told now, so told once
                told = True
                tool_lists.listed(caller, RELEASE)
            ahead = go
            if asking:
                found = looked_up(service, caller, arguments)
                if isinstance(found, dict):
                    return found
                if not isinstance(found, GoAhead):
                    must_ask.append(found)
                    return None  # asked on the loop first, then run
                ahead = found
            return tool_call(params.name, arguments, caller, ahead, long_call)

        ran: Wire | None = await call(params.name, run, ctx)
        if ran is None:  # the person is asked first
            asked = await ask_about(ctx, params, must_ask[0])
            if not isinstance(asked, GoAhead):
                return asked
            go, asking = asked, False  # run where the person said yes to it
            ran = await call(params.name, run, ctx)
            assert ran is not None
        result: Wire = ran
        if params.name == "app_deploy" and not result.get("isError"):
            await relay.settled()  # its own connection hears of it before the reply
        level, line = _call_log.outcome(said_as, result)
        await _call_log.tell(ctx, least, level, lambda: line)
        if told:
            await _announce_new_tools(ctx)
            result = {**result, "content": [*result["content"], {"type": "text", "text": CHANGED}]}
        return result

    async def _announce_new_tools(ctx: ServerRequestContext[Any]) -> None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await bus.publish(ToolsListChanged())
            return
        try:  # on the call's own channel: its reply's stream over HTTP, the pipe on stdio
            await ctx.session.send_notification(
                types.ToolListChangedNotification(), related_request_id=ctx.request_id
            )
        except Exception:
            logger.debug("tools/list_changed had no channel to go out on")

    async def on_list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        caller = caller_of()
        relay.seen(ctx, caller)
        try:
            views = await in_thread(lambda: service.pages.views(caller))
        except PastureError as refused:
            raise MCPError(code=types.INVALID_PARAMS, message=refused.sentence) from None
        return types.ListResourcesResult(
            resources=[_view_resource(uri, info) for uri, info in views]
        )

    async def on_read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        caller = caller_of()
        uri = str(params.uri)
        where = _split_view(uri)
        if where is None:
            raise MCPError(code=types.INVALID_PARAMS, message=NO_RESOURCE)
        space, slug, _file = where

        def read() -> tuple[bytes, str]:
            page = service.pages.view(caller, uri)
            return page.body, service.gate.app_info(caller, f"{space}/{slug}").url

        try:
            body, address = await in_thread(read)
        except NotFound:
            raise MCPError(code=types.INVALID_PARAMS, message=NO_RESOURCE) from None
        except PastureError as refused:
            raise MCPError(code=types.INVALID_PARAMS, message=refused.sentence) from None
        # The platform's one rewrite, without the web's script: a view is not a tab.
        text = with_base(body, address).decode("utf-8", errors="replace")
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=uri, mime_type=APP_MIME_TYPE, text=text, _meta=_csp(address)
                )
            ]
        )

    async def on_list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[VIEW_TEMPLATE])

    async def on_list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        caller = caller_of()
        relay.seen(ctx, caller)
        try:
            return await in_thread(lambda: _prompts.listed(service, caller))
        except PastureError as refused:
            raise MCPError(code=types.INVALID_PARAMS, message=refused.sentence) from None

    async def on_get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        caller = caller_of()
        try:
            return await in_thread(
                lambda: _prompts.got(service, caller, params.name, params.arguments)
            )
        except PastureError as refused:
            raise MCPError(code=types.INVALID_PARAMS, message=refused.sentence) from None

    async def on_completion(
        ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        # From the caller's own views and apps alone: nothing they cannot read is offered.
        caller = caller_of()
        ref, argument = params.ref, params.argument
        try:
            if isinstance(ref, types.PromptReference):
                completion = await in_thread(
                    lambda: _prompts.completed(service, caller, ref, argument.name, argument.value)
                )
                return types.CompleteResult(completion=completion)
            views = await in_thread(lambda: service.pages.views(caller))
            completion = complete(view_parts(uri for uri, _ in views), params)
        except PastureError as refused:
            raise MCPError(code=types.INVALID_PARAMS, message=refused.sentence) from None
        return types.CompleteResult(completion=completion)

    async def on_listen(
        ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        caller = caller_of()
        relay.seen(ctx, caller)
        # Each stream sees the bus as its caller may: a view's change only if they read it.
        # (How many streams one person holds is `pasture.platform.access.limits`' to say.)
        uris = params.notifications.resource_subscriptions or ()
        return await ListenHandler(relay.scoped(caller, uris))(ctx, params)

    server = _Server(
        "pasture",
        version=__version__,
        title="pasture",
        instructions=INSTRUCTIONS,
        get_tool_input_schema=INPUT_SCHEMAS.get,
        cache_hints=CACHE_HINTS,
        on_list_tools=on_list_tools,
        on_list_resources=on_list_resources,
        on_read_resource=on_read_resource,
        on_list_resource_templates=on_list_resource_templates,
        on_list_prompts=on_list_prompts,
        on_get_prompt=on_get_prompt,
        on_completion=on_completion,
        on_subscriptions_listen=on_listen,
    )
    # Registered as a plain request handler, which may answer with the wire dict.
    server.add_request_handler("tools/call", types.CallToolRequestParams, on_call_tool)

    async def on_set_level(
        ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        # The handshake generation's: the least level of a call's lines this client hears,
        # kept where its connection lives, or by session over stateless HTTP (`_call_log`).
        caller = caller_of()
        connection = relay.seen(ctx, caller)
        if connection is not None:
            connection.level = params.level
        elif not living:
            levels.set(ctx, caller, params.level)
        return EMPTY

    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, on_set_level)
    if living:
        # Only a connection that lives on can hear that a view it follows changed.
        async def on_subscribe(
            ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
        ) -> types.EmptyResult:
            relay.follow(ctx, caller_of(), str(params.uri))
            return EMPTY

        async def on_unsubscribe(
            ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
        ) -> types.EmptyResult:
            relay.unfollow(ctx, str(params.uri))
            return EMPTY

        server.add_request_handler(
            "resources/subscribe", types.SubscribeRequestParams, on_subscribe
        )
        server.add_request_handler(
            "resources/unsubscribe", types.UnsubscribeRequestParams, on_unsubscribe
        )
    server.extensions[EXTENSION_ID] = {}
    server.relay = relay
    server.in_flight = in_flight
    server.notifications = notifications
    return server


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


def _app_list(apps: list[AppInfo]) -> Result:
    """`app_list` renders the Service's listing; the Service decided what is in it."""
    if not apps:
        return Result("no apps yet — deploy one with app_deploy", {"apps": []})
    lines = []
    for app in apps:
        commands = f" — commands: {', '.join(app.commands)}" if app.commands else ""
        lines.append(f"{app.at} v{app.version} ({app.access}): {app.title}, at {app.url}{commands}")
    return Result("\n".join(lines), {"apps": [app.as_data() for app in apps]})
