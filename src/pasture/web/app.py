"""The web door: a Starlette app that parses a request, calls `Service`, renders the answer.

Routes (the app's address is `{base_url}/{space}/{app}/`):

    GET  /                              the dashboard (signed out: a link to sign in)
    GET  /signin                        the sign-in form; `?token=…` signs in with a token
    GET  /signin/app?app=S/A&next=P     with an apps domain: a one-time code for the app's own
                                        origin, handed to its /.pasture/session (signing in first)
    POST /signin                        name + password → session cookie → redirect to /
    POST /signout                       forgets the cookie → redirect to /
    GET  /docs.md                       the guide (docs/guide.md), when it is there
    GET  /favicon.svg                   the platform's icon, which its pages link to
    GET  /healthz, /readyz              the process answers; it can serve (pasture.web.health)
    GET  /metrics                       with `metrics`: Prometheus' text, to the server's owner
                                        alone (pasture.web.scrape)
    GET  /tools?app=A                   the dashboard's Tools tab: the list /api/tools gives
    GET  /data?app=A&kind=K&filter=F    the data browser: a kind's rows (as ./api/query reads
                                        them), a page at a time (&after=), an entity (&id=)
    POST /data                          its forms (do=add|edit|delete): one apply as the
                                        person, as ./api/apply; do=undo: that write's Undo
    GET  /settings?app=A                an app's settings: its access, schema, versions, secrets'
                                        names; POST /settings (a form) sets its title and access,
                                        rolls it back or removes it
    GET  /spaces                        the person's spaces and their members; POST /spaces (a
                                        form): a member added, changed, taken out; a space made,
                                        trusted (the server's owner)
    GET  /people                        the server's owner's: everyone on it; POST /people (a
                                        form): a person added or removed, a sign-in link made
    GET  /audit?app=A&person=&door=&outcome=&since=&until=&before=
                                        a page of the audit: an app's (its owners) or one's own
    GET  /api/tools?app=A               every command of the caller's apps (or of app A), the
                                        {"commands": […]} of MCP's `commands`, `pasture inspect`
    GET  /api/trash                     what the trash holds of the caller's spaces
    POST /api/trash/remove              body: {"app": "space/slug"} or {"space": name}
    POST /api/trash/restore             body: {"name": "space/slug"} or {"name": space}
    POST /api/undo                      body: {"call": id}: what that call changed, put back
    POST /api/restore                   body: {"app": "space/slug", "to": "2 hours ago"}
    POST /audit/undo                    the audit page's Undo (a form): the same, then back
    *    /mcp                           the MCP connector (streamable HTTP), when installed
    GET  /{space}/{app}                 redirect to /{space}/{app}/
    GET  /{space}/{app}/{path}          a file of the app; a folder serves its index.html;
                                        HTML gets `<base href="{app address}">` after <head>
                                        and the WebMCP module after it (platform.apps.rewrite)
    POST /{space}/{app}/api/apply       body: bundles (an object or a list)
    GET  /{space}/{app}/api/subscribe?F the same answer as an event stream, sent again
                                        whenever it changes (`pasture.web.live`)
    GET  /{space}/{app}/api/query?F     F is the filter as written, each &-separated part
                                        percent-decoded as any client encodes it
                                        (pasture.web.query_string); or ?filter=<F
                                        percent-encoded> (what client.js sends)
    POST /{space}/{app}/api/command     body: {"name": …, "args": {…}}
    POST /{space}/{app}/api/call        body: {"name": …, "args": {…}}: one of worker.py's
                                        handlers, as the app's pages call it (client.js call)
    GET  /{space}/{app}/api/me          {"eid": …, "name": …}, or {"eid": null}
    GET  /{space}/{app}/api/client.js   the ES module pages import (text/javascript)
    GET  /{space}/{app}/api/tools       the app's commands as the caller sees them: the same
                                        {"commands": [{at, name, title, description, readOnly,
                                        input, view?}]} that `pasture inspect` prints
    GET  /{space}/{app}/api/tools/follow the same as an event stream, sent again whenever
                                        the app's commands change (pasture.web.live_tools)
    GET  /{space}/{app}/api/webmcp.js   the module that offers them to a browser agent as
                                        WebMCP tools (see pasture.web.webmcp)

Where apps' pages are — their own origins, or sandboxed on this one — and a
page's pass are `pasture.web.apps_origins`' (it runs before routing). Every
route answers only for this server's own names (`pasture.web.hosts`): 421 else.

The modules of the door, one concept each:

    app                this module: the routes, and what every request passes first
                       (the host and origin guard, the address's limit, apps' origins)
    _who               who is asking: a bearer token, a page's pass, the session cookie
    _api               the JSON API's endpoints (an app's ./api/, the platform's /api/)
    _page_endpoints    the pages' endpoints (the platform's own, an app's files)
    _failures          a refusal or a bug turned into an answer, once, for every route
    endpoints          what every endpoint is made of (the Service, who, calls off the loop)
    traffic            what every request passes first and last: its id (X-Request-Id), its
                       line in the log, its count; /healthz and /readyz before all of it
    health             /healthz and /readyz
    scrape             /metrics, and the door's own meters

Answers of `apply`, `query` and `command` are the Service's `Result` as it is:

    200  {"text": "log_run: wrote 1 entity in ada/runs: $run=4f3c…",
          "data": {"entities": ["4f3c…"], "aliases": {"$run": "4f3c…"}}}

and `client.js` resolves each call to its `data`. A refusal is its sentence
with the status its kind carries (see `pasture.errors`):

    400 Refused · 401 a bad token · 403 Forbidden · 404 NotFound · 409 Conflict
    · 413 a body over 8 MB · 415 a body not sent as application/json with the cookie
    · 424 the app's own code failed (it crashed, answered with what is not JSON, or
      went past its limits) · 429 too many calls, with `Retry-After`
         {"error": "you can read this app but not change it — its owner can make you an editor"}

Every request is one call from its address, and one by its token or person once
they are known; anonymous writes to an open app are counted per address on their
own (`pasture.platform.access.limits`). Past a limit: 429, `Retry-After`, the sentence.
Sign-in failures (a password, a token or a link on /signin) are counted per name
and address: the sign-in page then carries `too many tries — wait a minute`.

Anything else is a bug: it is logged with its traceback, and the caller gets a
500 `{"error": "something went wrong on the server — …"}` and nothing more.
Pages answer a refusal with a short HTML page carrying the same sentence
(`pasture.web._failures`, registered here as the app's exception handlers).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pasture.errors import PastureError, TooMany
from pasture.platform import Service, with_base
from pasture.request_ids import fault_id
from pasture.threads import in_thread
from pasture.web import apps_origins, own_pages
from pasture.web._api import MAX_BODY, Api
from pasture.web._failures import SERVER_FAULT, fault, http_error, refusal, refused, server_fault
from pasture.web._page_endpoints import PageEndpoints
from pasture.web._who import SESSION_COOKIE, client_address
from pasture.web.app_settings import SettingsEndpoints
from pasture.web.consent import oauth_routes
from pasture.web.endpoints import public_url
from pasture.web.hosts import Hosts
from pasture.web.live import Live
from pasture.web.live_tools import ToolStreams
from pasture.web.people_pages import PeopleEndpoints
from pasture.web.scrape import Scrape
from pasture.web.traffic import Traffic

log = logging.getLogger("pasture.web")

McpLifespan = Callable[[], AbstractAsyncContextManager[None]]


def create_app(
    service: Service, *, bind_host: str = "127.0.0.1", metrics: bool = False
) -> Starlette:
    """The whole web door for `service`, served at `service.base_url`; with `metrics`,
    `/metrics` too (`pasture serve --metrics`)."""
    api = Api(service)
    web = PageEndpoints(service, api)
    settings = SettingsEndpoints(service)
    people = PeopleEndpoints(service)
    routes: list[BaseRoute] = []
    mcp_app, mcp_lifespan = _load_mcp(service, bind_host)
    routes += [
        Route("/", web.home, methods=["GET", "HEAD"]),
        Route("/signin", web.signin_form, methods=["GET", "HEAD"]),
        Route("/signin", web.signin, methods=["POST"], max_body_size=64 * 1024),
        Route("/signin/app", web.signin_app, methods=["GET", "HEAD"]),
        Route("/tokens", web.tokens, methods=["GET", "HEAD"]),
        Route("/audit", web.audit, methods=["GET", "HEAD"]),
        Route("/data", web.data, methods=["GET", "HEAD"]),
        Route("/settings", settings.settings, methods=["GET", "HEAD"]),
        Route("/settings", settings.change, methods=["POST"], max_body_size=64 * 1024),
        Route("/spaces", people.spaces, methods=["GET", "HEAD"]),
        Route("/spaces", people.change_spaces, methods=["POST"], max_body_size=64 * 1024),
        Route("/people", people.people, methods=["GET", "HEAD"]),
        Route("/people", people.change_people, methods=["POST"], max_body_size=64 * 1024),
        Route("/tools", web.tools_tab, methods=["GET", "HEAD"]),
        Route("/api/tools", api.every_tool, methods=["GET"]),
        Route("/api/trash", api.trash, methods=["GET"]),
        Route("/api/trash/remove", api.trash_remove, methods=["POST"]),
        Route("/api/trash/restore", api.trash_restore, methods=["POST"]),
        Route("/api/undo", api.undo, methods=["POST"]),
        Route("/api/restore", api.restore, methods=["POST"]),
        Route("/audit/undo", web.undo, methods=["POST"], max_body_size=64 * 1024),
        Route("/data", web.data_change, methods=["POST"], max_body_size=1024 * 1024),
        Route("/tokens", web.make_token, methods=["POST"], max_body_size=64 * 1024),
        Route("/tokens/revoke", web.revoke_token, methods=["POST"], max_body_size=64 * 1024),
        *oauth_routes(service, web),
        Route("/signout", web.signout, methods=["POST"]),
        Route("/docs.md", web.guide, methods=["GET", "HEAD"]),
        Route("/favicon.svg", web.favicon, methods=["GET", "HEAD"]),
        Route("/{space}/{app}", web.to_app, methods=["GET", "HEAD"]),
        Route("/{space}/{app}/api/apply", api.apply, methods=["POST"]),
        Route("/{space}/{app}/api/query", api.query, methods=["GET"]),
        Route("/{space}/{app}/api/subscribe", api.subscribe, methods=["GET"]),
        Route("/{space}/{app}/api/command", api.command, methods=["POST"]),
        Route("/{space}/{app}/api/call", api.call_handler, methods=["POST"]),
        Route("/{space}/{app}/api/me", api.me, methods=["GET"]),
        Route("/{space}/{app}/api/client.js", api.client_js, methods=["GET", "HEAD"]),
        Route("/{space}/{app}/api/tools", api.tools, methods=["GET"]),
        Route("/{space}/{app}/api/tools/follow", api.follow_tools, methods=["GET"]),
        Route("/{space}/{app}/api/webmcp.js", api.webmcp_js, methods=["GET", "HEAD"]),
        Route("/{space}/{app}/{path:path}", web.page, methods=["GET", "HEAD"]),
    ]
    if metrics:  # the owner's alone (pasture.web.scrape)
        routes.insert(0, Route("/metrics", Scrape(service).metrics, methods=["GET"]))

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        # what has been in the trash 30 days goes for good: now, and hourly while serving
        stop_sweeping = service.trash.sweeping()
        async with mcp_lifespan():
            yield
        await in_thread(stop_sweeping)
        api.live.stop()
        api.tool_streams.stop()
        # Stopping (uvicorn ends the process with the signal it was sent, past `atexit`):
        # the audit's last records are written now.
        await in_thread(service.audit_log.flush)

    app = _Door(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            HTTPException: http_error,
            PastureError: refused,
            Exception: server_fault,
        },
    )
    app.mcp = _McpAt(mcp_app)
    app.live = api.live
    app.tool_streams = api.tool_streams
    app.hosts = Hosts.of(public_url(service), bind_host, service.origins.apps_domain)
    app.service = service
    # its id, its log line, its count; /healthz and /readyz (pasture.web.traffic)
    app.traffic = Traffic(service, app.answer, metrics=metrics)
    return app


class _Door(Starlette):
    """The web door; `/mcp` and everything under it go straight to the connector.

    An agent's every call is a POST to `/mcp`: it skips the routing table and
    the exception middleware the pages need, and a bug in it is answered as
    the rest of the door answers one (a logged traceback, a bare 500).
    """

    mcp: ASGIApp | None = None
    live: Live | None = None  # pages' subscriptions, ended first when the server stops
    tool_streams: ToolStreams | None = None  # and their WebMCP modules' streams of tools
    hosts: Hosts | None = None
    service: Service | None = None
    traffic: Traffic | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.traffic is not None:
            await self.traffic(scope, receive, send)
        else:
            await self.answer(scope, receive, send)

    async def answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        """What the door answers, once `traffic` has given the request its id."""
        if scope["type"] == "http" and self.hosts is not None:
            host = Headers(scope=scope).get("host")
            if not self.hosts.allows(host):
                await _misdirected(host, self.hosts, scope, receive, send)
                return
        if scope["type"] == "http" and self.service is not None and not _mcp_path(scope["path"]):
            try:  # /mcp counts its own (pasture.web.mcp_http)
                limiter, address = self.service.limiter, client_address(scope)
                if not limiter.address_at_once(address):  # only the shared counts can tell
                    await in_thread(lambda: limiter.address(address))
            except TooMany as e:
                await _too_many(e, scope, receive, send)
                return
        if scope["type"] == "http" and self.service is not None:
            answer = await apps_origins.place(self.service, scope)
            if answer is not None:
                await answer(scope, receive, send)
                return
            if self.service.origins.sandboxed and _app_path(scope["path"]):
                # Whatever an app's address answers runs in an opaque origin of its own.
                if scope["method"] == "OPTIONS":
                    await apps_origins.preflight()(scope, receive, send)
                    return
                send = _with_headers(send, apps_origins.sandbox_headers())
        if self.mcp is not None and scope["type"] == "http":
            path: str = scope["path"]
            if path == "/mcp" or path.startswith("/mcp/"):
                scope["app"] = self
                await _guarded(self.mcp, scope, receive, send)
                return
        try:
            await super().__call__(scope, receive, send)
        except Exception:
            if scope["type"] != "http":
                raise
            # Answered and logged by `server_fault` already; nothing is left to tell.


def _mcp_path(path: str) -> bool:
    return path == "/mcp" or path.startswith("/mcp/")


async def _too_many(e: TooMany, scope: Scope, receive: Receive, send: Send) -> None:
    """429 for an address past its limit: JSON under ./api/, a short page elsewhere."""
    await refusal(scope.get("path", ""), e)(scope, receive, send)


def _app_path(path: str) -> bool:
    """An address under an app: `/<space>/<app>/…`, not one of the platform's own."""
    parts = path.split("/")
    own = ("signin", "mcp", "oauth", ".well-known", "tokens", "audit", "")
    return len(parts) >= 3 and parts[1] not in own and bool(parts[2])


def _with_headers(send: Send, headers: dict[str, str]) -> Send:
    """`send`, adding these headers to the answer's start."""
    extra = [(k.lower().encode(), v.encode()) for k, v in headers.items()]

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            kept = [h for h in message.get("headers", []) if h[0] not in {k for k, _ in extra}]
            message = {**message, "headers": kept + extra}
        await send(message)

    return sending


async def _misdirected(
    host: str | None, hosts: Hosts, scope: Scope, receive: Receive, send: Send
) -> None:
    """421: a request for another name that reaches this server (DNS rebinding) does nothing."""
    named = (host or "")[:100] or "no host"
    own = next((h for h in hosts.hosts if not h.endswith(":*")), "its own address")
    sentence = f"this server does not answer for {named} — reach it at {own}"
    path: str = scope.get("path", "")
    response: Response
    if "/api/" in path or path == "/mcp" or path.startswith("/mcp/"):
        response = JSONResponse({"error": sentence}, status_code=421)
    else:
        response = HTMLResponse(own_pages.message_page("Not here", sentence), status_code=421)
    await response(scope, receive, send)


async def _guarded(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    started = False

    async def sending(message: Message) -> None:
        nonlocal started
        if message["type"] == "http.response.start":
            started = True
        await send(message)

    try:
        await app(scope, receive, sending)
    except Exception:
        log.exception(
            "unexpected error on %s %s (fault %s)", scope.get("method"), scope["path"], fault_id()
        )
        if not started:
            await fault(scope["path"])(scope, receive, send)
        raise


def _load_mcp(service: Service, bind_host: str) -> tuple[ASGIApp, McpLifespan]:
    """The MCP connector's HTTP app and its lifespan, imported only when a server starts."""
    from pasture.web.mcp_http import mcp_http

    return mcp_http(service, public_url=public_url(service), bind_host=bind_host)


class _McpAt:
    """Hands `/mcp` and everything under it to the connector, seen from its own root."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/mcp":
            scope = {**scope, "path": "/mcp/", "raw_path": b"/mcp/", "root_path": "/mcp"}
        elif scope["type"] == "http":
            scope = {**scope, "root_path": "/mcp"}
        await self.app(scope, receive, send)


# The platform's one rewrite of an app's HTML, under the name this door gave it first.
inject_base = with_base

__all__ = [
    "MAX_BODY",
    "SERVER_FAULT",
    "SESSION_COOKIE",
    "create_app",
    "inject_base",
]
