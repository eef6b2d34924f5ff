"""The web door: a Starlette app that parses a request, calls `Service`, renders the answer.

Routes (the app's address is `{base_url}/{space}/{app}/`):

    GET  /                              the dashboard (signed out: a link to sign in)
    GET  /signin                        the sign-in form; `?token=…` signs in with a token
    GET  /signin/app?app=S/A&next=P     with an apps domain: a one-time code for the app's own
                                        origin, handed to its /.pasture/session (signing in first)
    POST /signin                        name + password → session cookie → redirect to /
    POST /signout                       forgets the cookie → redirect to /
    GET  /docs.md                       the guide (docs/guide.md), when it is there
    GET  /tools?app=A                   the dashboard's Tools tab: the list /api/tools gives
    GET  /api/tools?app=A               every command of the caller's apps (or of app A), the
                                        {"commands": […]} of MCP's `commands`, `pasture inspect`
    *    /mcp                           the MCP connector (streamable HTTP), when installed
    GET  /{space}/{app}                 redirect to /{space}/{app}/
    GET  /{space}/{app}/{path}          a file of the app; a folder serves its index.html;
                                        HTML gets `<base href="{app address}">` after <head>
                                        and the WebMCP module after it (pasture.platform.rewrite)
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
    GET  /{space}/{app}/api/webmcp.js   the module that offers them to a browser agent as
                                        WebMCP tools (see pasture.web.webmcp)

Where apps' pages are — their own origins, or sandboxed on this one — and a
page's pass are `pasture.web.apps_origins`' (it runs before routing). Every
route answers only for this server's own names (`pasture.web.hosts`): 421 else.

Who is asking: `Authorization: Bearer <token>`, else a page's pass (for its own
app only), else the `pasture_session` cookie (on the main origin only, and not
for `./api/` fetched from another site), else nobody. A token the platform does
not know is a 401. A POST made with the cookie must come from this server's own
origin (when the browser names one) and,
under ./api/, carry `Content-Type: application/json`: another site's form can do
neither, so it cannot act as the person whose browser it runs in.

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
own (`pasture.platform.limits`). Past a limit: 429, `Retry-After`, the sentence.
Sign-in failures (a password, a token or a link on /signin) are counted per name
and address: the sign-in page then carries `too many tries — wait a minute`.

Anything else is a bug: it is logged here with its traceback, and the caller
gets a 500 `{"error": "something went wrong on the server — …"}` and nothing more.
Pages answer a refusal with a short HTML page carrying the same sentence.
"""

from __future__ import annotations

import functools
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, ParamSpec, TypeVar
from urllib.parse import parse_qs, urlencode, urlsplit

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pasture import jsontext
from pasture.caller import NOBODY, Caller
from pasture.errors import Forbidden, NotFound, Refused, TooMany, Unauthorized, Unavailable
from pasture.platform.model import SIGN_IN
from pasture.platform.origins import PASS_MARK
from pasture.platform.rewrite import with_base
from pasture.platform.service import Service
from pasture.result import Result
from pasture.threads import in_command_thread, in_thread
from pasture.web import apps_origins, pages, webmcp
from pasture.web.client import CLIENT_JS
from pasture.web.consent import oauth_routes
from pasture.web.hosts import Hosts
from pasture.web.live import Live
from pasture.web.query_string import filter_of

log = logging.getLogger("pasture.web")

SESSION_COOKIE = "pasture_session"
SERVER_FAULT = (
    "something went wrong on the server — it has been logged; "
    "try again, and if it keeps happening tell whoever runs this pasture"
)
MAX_BODY = 8 * 1024 * 1024  # bundles for one transaction, generously (read in _json_body)
_GUIDE = Path(__file__).resolve().parents[3] / "docs" / "guide.md"

P = ParamSpec("P")
T = TypeVar("T")
McpLifespan = Callable[[], AbstractAsyncContextManager[None]]


class BadToken(Unauthorized):
    """The request's own credentials are wrong (a bad Authorization header or token).

    Answered as JSON even where a page was asked for: the caller is a program.
    """


class NotJson(Refused):
    """A body that is not declared as JSON: HTTP's 415."""

    status = 415


class TooLarge(Refused):
    """A body over the most one call takes: HTTP's 413."""

    status = 413


def create_app(service: Service, *, bind_host: str = "127.0.0.1") -> Starlette:
    """The whole web door for `service`, served at `service.base_url`."""
    web = _Web(service)
    routes: list[BaseRoute] = []
    mcp_app, mcp_lifespan = _load_mcp(service, bind_host)
    routes += [
        Route("/", web.home, methods=["GET", "HEAD"]),
        Route("/signin", web.signin_form, methods=["GET", "HEAD"]),
        Route("/signin", web.signin, methods=["POST"], max_body_size=64 * 1024),
        Route("/signin/app", web.signin_app, methods=["GET", "HEAD"]),
        Route("/tokens", web.tokens, methods=["GET", "HEAD"]),
        Route("/audit", web.audit, methods=["GET", "HEAD"]),
        Route("/tools", web.tools_tab, methods=["GET", "HEAD"]),
        Route("/api/tools", web.every_tool, methods=["GET"]),
        Route("/tokens", web.make_token, methods=["POST"], max_body_size=64 * 1024),
        Route("/tokens/revoke", web.revoke_token, methods=["POST"], max_body_size=64 * 1024),
        *oauth_routes(service, web),
        Route("/signout", web.signout, methods=["POST"]),
        Route("/docs.md", web.guide, methods=["GET", "HEAD"]),
        Route("/{space}/{app}", web.to_app, methods=["GET", "HEAD"]),
        Route("/{space}/{app}/api/apply", web.apply, methods=["POST"]),
        Route("/{space}/{app}/api/query", web.query, methods=["GET"]),
        Route("/{space}/{app}/api/subscribe", web.subscribe, methods=["GET"]),
        Route("/{space}/{app}/api/command", web.command, methods=["POST"]),
        Route("/{space}/{app}/api/call", web.call_handler, methods=["POST"]),
        Route("/{space}/{app}/api/me", web.me, methods=["GET"]),
        Route("/{space}/{app}/api/client.js", web.client_js, methods=["GET", "HEAD"]),
        Route("/{space}/{app}/api/tools", web.tools, methods=["GET"]),
        Route("/{space}/{app}/api/webmcp.js", web.webmcp_js, methods=["GET", "HEAD"]),
        Route("/{space}/{app}/{path:path}", web.page, methods=["GET", "HEAD"]),
    ]

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with mcp_lifespan():
            yield
        web.live.stop()
        # Stopping (uvicorn ends the process with the signal it was sent, past `atexit`):
        # the audit's last records are written now.
        await in_thread(service.flush_audit)

    app = _Door(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_error, Exception: _server_fault},
    )
    app.mcp = _McpAt(mcp_app)
    app.live = web.live
    app.hosts = Hosts.of(_public(service), bind_host, service.origins.apps_domain)
    app.service = service
    return app


class _Door(Starlette):
    """The web door; `/mcp` and everything under it go straight to the connector.

    An agent's every call is a POST to `/mcp`: it skips the routing table and
    the exception middleware the pages need, and a bug in it is answered as
    the rest of the door answers one (a logged traceback, a bare 500).
    """

    mcp: ASGIApp | None = None
    live: Live | None = None  # pages' subscriptions, ended first when the server stops
    hosts: Hosts | None = None
    service: Service | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.hosts is not None:
            host = Headers(scope=scope).get("host")
            if not self.hosts.allows(host):
                await _misdirected(host, self.hosts, scope, receive, send)
                return
        if scope["type"] == "http" and self.service is not None and not _mcp_path(scope["path"]):
            try:  # /mcp counts its own (pasture.mcp.http)
                self.service.limiter.address(client_address(scope))
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
        await super().__call__(scope, receive, send)


def _mcp_path(path: str) -> bool:
    return path == "/mcp" or path.startswith("/mcp/")


def client_address(scope: Scope) -> str | None:
    """The address a request came from (behind a proxy, what uvicorn was told it is)."""
    client = scope.get("client")
    return str(client[0]) if client else None


async def _too_many(e: TooMany, scope: Scope, receive: Receive, send: Send) -> None:
    """429 for an address past its limit: JSON under ./api/, a short page elsewhere."""
    response: Response
    if "/api/" in scope.get("path", ""):
        response = _json_refusal(e)
    else:
        page = pages.message_page("Too many", e.sentence)
        response = HTMLResponse(page, status_code=e.status, headers=_refusal_headers(e))
    await response(scope, receive, send)


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
        response = HTMLResponse(pages.message_page("Not here", sentence), status_code=421)
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
        log.exception("unexpected error on %s %s", scope.get("method"), scope["path"])
        if not started:
            await JSONResponse({"error": SERVER_FAULT}, status_code=500)(scope, receive, send)
        raise


def _load_mcp(service: Service, bind_host: str) -> tuple[ASGIApp, McpLifespan]:
    """The MCP connector's HTTP app and its lifespan, imported only when a server starts."""
    from pasture.mcp.http import mcp_http

    return mcp_http(service, public_url=_public(service), bind_host=bind_host)


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


def _public(service: Service) -> str:
    return str(getattr(service, "base_url", "http://127.0.0.1:8000")).rstrip("/")


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    sentences = {
        404: f"nothing is at {request.url.path} — the dashboard at / lists your apps",
        405: f"{request.method} is not how {request.url.path} is used",
        413: "that request is too large — send fewer bundles at a time",
    }
    sentence = sentences.get(exc.status_code, str(exc.detail))
    if _wants_json(request):
        return JSONResponse({"error": sentence}, status_code=exc.status_code, headers=exc.headers)
    page = pages.message_page("Not here" if exc.status_code == 404 else "Refused", sentence)
    return HTMLResponse(page, status_code=exc.status_code, headers=exc.headers)


async def _server_fault(request: Request, exc: Exception) -> Response:
    log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"error": SERVER_FAULT}, status_code=500)


def _wants_json(request: Request) -> bool:
    return "/api/" in request.url.path or request.url.path.startswith("/mcp")


def _json_refusal(e: Refused) -> Response:
    return JSONResponse({"error": e.sentence}, status_code=e.status, headers=_refusal_headers(e))


def _refusal_headers(e: Refused) -> dict[str, str] | None:
    """`Retry-After` for a refusal that passes with time (`TooMany`)."""
    return {"Retry-After": str(e.retry_after)} if isinstance(e, TooMany) else None


def _result(result: Result) -> Response:
    return JSONResponse({"text": result.text, "data": result.data})


# The platform's one rewrite of an app's HTML, under the name this door gave it first.
inject_base = with_base


class _Web:
    """The endpoints; each one parses, calls the Service in a worker thread, and renders."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.base = _public(service)
        self.secure = self.base.startswith("https://")
        self.live = Live(service)

    async def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        # The Service is synchronous (SQLite, files): keep it off the event loop.
        return await in_thread(functools.partial(fn, *args, **kwargs))

    async def call_command(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`call` for what may run an app's code, in the commands' own threads."""
        return await in_command_thread(functools.partial(fn, *args, **kwargs))

    # -- who is asking ------------------------------------------------------
    async def caller(self, request: Request) -> Caller:
        header = request.headers.get("authorization")
        if header is not None:
            scheme, _, token = header.strip().partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise BadToken(
                    "the Authorization header is `Bearer <token>` — "
                    "make a token with `pasture token new`"
                )
            known = self.service.caller_at_once(token)  # from memory, no wait: no thread
            if known is not None:
                return known
            try:
                return await self.call(self.service.caller_for_token, token.strip())
            except Unavailable:
                raise  # the machine's trouble, not the token's
            except Refused as e:
                raise BadToken(e.sentence) from e
        state = request.scope.get("state", {})
        on_app_origin = state.get("app_origin") is not None
        page_pass = state.get("pass")
        if page_pass is None and on_app_origin:
            page_pass = request.cookies.get(apps_origins.PASS_COOKIE)
        if page_pass:
            # A page's pass names its person on its own app and nowhere else.
            space, slug = request.path_params.get("space"), request.path_params.get("app")
            if not space or not slug:
                return NOBODY
            return await self.call(self.service.caller_for_pass, page_pass, space, slug)
        if on_app_origin:
            return NOBODY  # the main origin's cookie never reaches an app's own origin
        session = request.cookies.get(SESSION_COOKIE)
        if session:
            if "/api/" in request.url.path and request.headers.get("sec-fetch-site") in (
                "cross-site",
                "same-site",
            ):
                return NOBODY  # a page elsewhere fetching with the visitor's cookie
            if request.method == "POST":
                self.check_cookie_post(request)
            return await self.call(self.service.caller_for_session, session)
        return NOBODY

    def check_cookie_post(self, request: Request) -> None:
        """A change made with the cookie comes from one of this server's own pages.

        The browser sends the cookie with a form another site submits here; such a
        form can neither set an Origin of ours nor a JSON content type.
        """
        origin = request.headers.get("origin")
        if origin is not None and origin not in self.origins(request):
            raise Forbidden(
                f"this request came from another site ({origin}) — pasture takes changes "
                "made with your sign-in only from its own pages"
            )
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if "/api/" in request.url.path and kind != "application/json":
            raise NotJson("send the body as JSON, with Content-Type: application/json")

    def origins(self, request: Request) -> set[str]:
        base = urlsplit(self.base)
        own = {f"{base.scheme}://{base.netloc}"}
        host = request.headers.get("host")
        if host:
            own.add(f"{request.url.scheme}://{host}")
        return own

    async def api(
        self, request: Request, work: Callable[[Caller], Awaitable[Response]]
    ) -> Response:
        """Runs one API call: a refusal becomes its status and sentence, a bug a bare 500."""
        try:
            return await work(came_by(self.counted(await self.caller(request), request), request))
        except Refused as e:
            return _json_refusal(e)
        except Exception:
            log.exception("unexpected error on %s %s", request.method, request.url.path)
            return JSONResponse({"error": SERVER_FAULT}, status_code=500)

    async def html(
        self, request: Request, work: Callable[[Caller], Awaitable[Response]]
    ) -> Response:
        """Runs one page: a refusal becomes a short page with its sentence."""
        try:
            return await work(self.counted(await self.caller(request), request))
        except BadToken as e:
            return _json_refusal(e)
        except Refused as e:
            title = {404: "Not here", 429: "Too many"}.get(e.status, "Refused")
            page = pages.message_page(title, e.sentence, self.sign_in_from(request))
            return HTMLResponse(page, status_code=e.status, headers=_refusal_headers(e))
        except Exception:
            log.exception("unexpected error on %s %s", request.method, request.url.path)
            return HTMLResponse(
                pages.message_page("Something went wrong", SERVER_FAULT), status_code=500
            )

    def counted(self, caller: Caller, request: Request) -> Caller:
        """One call by a signed-in caller (TooMany past their limit); nobody, with the
        address they came from, which open apps' anonymous writes are counted by."""
        if caller.signed_in:
            self.service.limiter.caller(caller)
            return caller
        return replace(caller, address=client_address(request.scope))

    def sign_in_from(self, request: Request) -> str:
        """Where a visitor of this page signs in: the main origin's page, or, on an app's own
        origin, the way through it and back."""
        if request.scope.get("state", {}).get("app_origin") is None:
            return "/signin"
        space, slug = request.path_params["space"], request.path_params["app"]
        here = request.url.path[len(f"/{space}/{slug}") :] or "/"
        return f"{apps_origins.PLATFORM}signin?" + urlencode({"next": here})

    # -- the platform's own pages --------------------------------------------
    async def home(self, request: Request) -> Response:
        async def work(caller: Caller) -> Response:
            if not caller.signed_in:
                return _own_page(pages.signed_out_dashboard())
            apps = await self.call(self.service.list_apps, caller)
            commands: dict[str, list[dict[str, Any]]] = {}
            problems: dict[str, str] = {}
            for app in apps:
                try:
                    listing = await self.call(self.service.list_commands, caller, app=app.at)
                except Refused as e:  # one app that cannot list its commands hides no other
                    problems[app.at] = e.sentence
                    continue
                commands[app.at] = [
                    e for e in listing.data.get("commands", []) if e.get("at", app.at) == app.at
                ]
            nonce = secrets.token_urlsafe(16)
            opens = {}
            if self.service.origins.apps_domain:  # through the sign-in for the app's own origin
                opens = {
                    a.at: apps_origins.sign_in_hop(self.service, a.space, a.slug, "/") for a in apps
                }
            roles = await self.call(self.service.spaces, caller)
            owned = {space for space, role in roles if role == "owner"}
            page = pages.dashboard(caller, apps, commands, nonce, problems, opens, owned)
            return _own_page(page, nonce)

        return await self.html(request, work)

    # -- a person's tokens ---------------------------------------------------------------
    async def tokens_of(
        self, caller: Caller, made: str | None = None, problem: str | None = None
    ) -> Response:
        if not caller.signed_in:
            return RedirectResponse("/signin", status_code=303)
        listed = await self.call(self.service.tokens, caller)
        spaces = [s for s, _ in await self.call(self.service.spaces, caller)]
        page = pages.tokens_page(caller, listed.data["tokens"], spaces, made, problem)
        return _own_page(page, status=400 if problem else 200)

    async def tokens(self, request: Request) -> Response:
        return await self.html(request, self.tokens_of)

    # -- the audit -----------------------------------------------------------------------
    async def audit(self, request: Request) -> Response:
        """`/audit?app=space/slug[&since=1h]`: an app's recorded calls (its space's owners);
        without `app`, the person's own."""
        app = request.query_params.get("app") or None
        since = request.query_params.get("since") or None

        async def work(caller: Caller) -> Response:
            if not caller.signed_in:
                return RedirectResponse("/signin", status_code=303)
            result = await self.call(self.service.audit, caller, app, since, mine=app is None)
            records = result.data["records"]
            return _own_page(pages.audit_page(caller, app, records, since))

        return await self.html(request, work)

    async def make_token(self, request: Request) -> Response:
        fields = parse_qs((await request.body()).decode("utf-8", "replace"))

        async def work(caller: Caller) -> Response:
            if not caller.signed_in:
                return RedirectResponse("/signin", status_code=303)
            try:
                made = await self.call(
                    functools.partial(
                        self.service.new_token,
                        caller,
                        fields.get("label", [""])[0],
                        writes=not fields.get("read"),
                        spaces=fields.get("spaces") or None,
                    )
                )
            except Refused as e:
                return await self.tokens_of(caller, problem=e.sentence)
            return await self.tokens_of(caller, made=made)

        return await self.html(request, work)

    async def revoke_token(self, request: Request) -> Response:
        fields = parse_qs((await request.body()).decode("utf-8", "replace"))

        async def work(caller: Caller) -> Response:
            if not caller.signed_in:
                return RedirectResponse("/signin", status_code=303)
            await self.call(self.service.revoke_token, caller, fields.get("id", [""])[0])
            return RedirectResponse("/tokens", status_code=303)

        return await self.html(request, work)

    async def signin_form(self, request: Request) -> Response:
        link = request.query_params.get("link")
        if link is not None:  # a one-time sign-in link (`pasture signin`, `make run`)
            address = client_address(request.scope)
            try:
                session = await self.call(self.service.session_for_link, link, address)
            except Refused as e:
                return _refused_page(pages.signin_page(e.sentence), e)
            return self.signed_in(session)
        token = request.query_params.get("token")
        if token is None:
            return _own_page(pages.signin_page())
        try:
            address = client_address(request.scope)
            session = await self.call(self.service.session_for_token, token, address)
        except Refused as e:
            return _refused_page(pages.signin_page(e.sentence), e, 401)
        return self.signed_in(session)

    async def signin(self, request: Request) -> Response:
        origin = request.headers.get("origin")
        if origin is not None and origin not in self.origins(request):
            page = pages.signin_page("sign in on this server's own page, not another site's")
            return _own_page(page, status=403)
        fields = parse_qs((await request.body()).decode("utf-8", "replace"))
        name = fields.get("name", [""])[0].strip()
        password = fields.get("password", [""])[0]
        if not name or not password:
            page = pages.signin_page("give your name and your password to sign in", name)
            return _own_page(page, status=400)
        app = fields.get("app", [""])[0]
        onward = apps_origins.safe_next(fields.get("next", [""])[0])
        try:
            address = client_address(request.scope)
            session = await self.call(self.service.sign_in, name, password, address)
        except Refused as e:
            page = pages.signin_page(e.sentence, name, app=app, next_path=onward)
            return _refused_page(page, e, 401)
        except Exception:
            log.exception("unexpected error signing in")
            return _own_page(pages.signin_page(SERVER_FAULT, name), status=500)
        if app:  # on, to the app's own origin it was asked for from
            space, _, slug = app.partition("/")
            hop = apps_origins.sign_in_hop(self.service, space, slug, onward)
            return self.signed_in(session, hop[len(self.service.base_url) :])
        return self.signed_in(session, onward)

    async def signin_app(self, request: Request) -> Response:
        """The main origin's half of signing in to an app's own origin: a one-time code."""
        app = request.query_params.get("app", "")
        onward = apps_origins.safe_next(request.query_params.get("next"))
        space, _, slug = app.partition("/")

        async def work(caller: Caller) -> Response:
            if not self.service.origins.apps_domain:
                return RedirectResponse(f"/{space}/{slug}{onward}", status_code=303)
            if not caller.signed_in:
                return _own_page(pages.signin_page(app=app, next_path=onward))
            await self.call(self.service.web_app, caller, space, slug)
            session = request.cookies.get(SESSION_COOKIE)
            code = await self.call(self.service.new_pass, caller, space, slug, session, code=True)
            origin = self.service.origins.origin(space, slug)
            query = urlencode({"code": code, "next": onward})
            return RedirectResponse(
                f"{origin}{apps_origins.PLATFORM}session?{query}",
                status_code=303,
                headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
            )

        return await self.html(request, work)

    def signed_in(self, session: str, to: str = "/") -> Response:
        response = RedirectResponse(to, status_code=303)
        response.set_cookie(
            SESSION_COOKIE,
            session,
            path="/",
            httponly=True,
            samesite="lax",
            secure=self.secure,
        )
        return response

    async def signout(self, request: Request) -> Response:
        try:
            await self.call(self.service.sign_out, request.cookies.get(SESSION_COOKIE))
        except Exception:
            log.exception("unexpected error signing out")
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
        return response

    async def guide(self, request: Request) -> Response:
        if not _GUIDE.is_file():
            raise HTTPException(404)
        return Response(_GUIDE.read_bytes(), media_type="text/markdown; charset=utf-8")

    # -- an app's pages ------------------------------------------------------
    async def to_app(self, request: Request) -> Response:
        target = request.url.path + "/"
        if request.url.query:
            target += "?" + request.url.query
        return RedirectResponse(target, status_code=307)

    async def page(self, request: Request) -> Response:
        space, slug = request.path_params["space"], request.path_params["app"]
        path = str(request.path_params["path"])
        if path == "" or path.endswith("/"):
            path += "index.html"

        if path.startswith("api/"):
            return await self.no_api(request, space, slug, path)

        origins = self.service.origins
        state = request.scope.get("state", {})
        if origins.apps_domain and state.get("app_origin") is None:
            # On the main origin an app has no pages: they are at its own origin.
            target = origins.origin(space, slug) + "/" + str(request.path_params["path"])
            if request.url.query:
                target += "?" + request.url.query
            return RedirectResponse(target, status_code=307)

        async def work(caller: Caller) -> Response:
            base = None
            if origins.sandboxed and caller.signed_in and path.endswith((".html", ".htm")):
                # What this page fetches acts as its visitor on this app only: a pass in
                # its address (the one it came with, or a new one).
                page_pass = state.get("pass") or await self.call(
                    self.service.new_pass,
                    caller,
                    space,
                    slug,
                    request.cookies.get(SESSION_COOKIE),
                )
                base = f"{self.base}/{space}/{slug}/{PASS_MARK}{page_pass}/"
            page = await self.call(
                self.service.page, caller, space, slug, path, module=webmcp.MODULE, base=base
            )
            return Response(
                page.body,
                media_type=page.media_type,
                headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"},
            )

        return await self.html(request, work)

    # -- an app's API ----------------------------------------------------------
    async def no_api(self, request: Request, space: str, slug: str, path: str) -> Response:
        """An address under ./api/ that is not one of its calls, or not with this method."""
        method = {"api/apply": "POST", "api/command": "POST", "api/call": "POST"}.get(path)

        async def work(caller: Caller) -> Response:
            await self.call(self.service.web_app, caller, space, slug)
            if method is not None:
                sentence = f"{request.method} is not how {request.url.path} is used — {method} it"
                return JSONResponse({"error": sentence}, status_code=405, headers={"Allow": method})
            # Whatever else is asked for, answer as for a missing file.
            await self.call(self.service.page, caller, space, slug, path)
            raise NotFound(f"no page {path} in {space}/{slug}")

        return await self.api(request, work)

    async def apply(self, request: Request) -> Response:
        at = _at(request)

        async def work(caller: Caller) -> Response:
            bundles = await _json_body(request, "the bundles, a JSON object or a list of them")
            return _result(await self.call(self.service.apply, caller, at, bundles, via_web=True))

        return await self.api(request, work)

    async def query(self, request: Request) -> Response:
        at = _at(request)
        text = filter_of(request.scope.get("query_string", b""))

        async def work(caller: Caller) -> Response:
            return _result(await self.call(self.service.query, caller, at, text, via_web=True))

        return await self.api(request, work)

    async def subscribe(self, request: Request) -> Response:
        at = _at(request)
        text = filter_of(request.scope.get("query_string", b""))
        seen = request.headers.get("last-event-id")

        async def work(caller: Caller) -> Response:
            async def who() -> Caller:  # asked again when who may reach what changes
                return came_by(await self.caller(request), request)

            return await self.live.open(caller, who, at, text, seen)

        return await self.api(request, work)

    async def command(self, request: Request) -> Response:
        at = _at(request)

        async def work(caller: Caller) -> Response:
            name, args = await _name_and_args(request, "command", "log_run", '{"who": "Ada"}')
            result = await self.call_command(
                self.service.run_command, caller, name, args, app=at, via_web=True
            )
            return _result(result)

        return await self.api(request, work)

    async def call_handler(self, request: Request) -> Response:
        at = _at(request)

        async def work(caller: Caller) -> Response:
            name, args = await _name_and_args(request, "handler", "add_todo", '{"text": "…"}')
            result = await self.call_command(
                self.service.call_handler, caller, at, name, args, via_web=True
            )
            return _result(result)

        return await self.api(request, work)

    async def me(self, request: Request) -> Response:
        space, slug = request.path_params["space"], request.path_params["app"]

        async def work(caller: Caller) -> Response:
            await self.call(self.service.web_app, caller, space, slug)
            if not caller.signed_in:
                return JSONResponse({"eid": None})
            return JSONResponse({"eid": caller.eid, "name": caller.name})

        return await self.api(request, work)

    async def client_js(self, request: Request) -> Response:
        return await self.script(request, CLIENT_JS)

    async def webmcp_js(self, request: Request) -> Response:
        return await self.script(request, webmcp.WEBMCP_JS)

    async def script(self, request: Request, text: str) -> Response:
        """One of pasture's own modules, served under an app the caller reaches."""
        space, slug = request.path_params["space"], request.path_params["app"]

        async def work(caller: Caller) -> Response:
            await self.call(self.service.web_app, caller, space, slug)
            return Response(
                text,
                media_type="text/javascript; charset=utf-8",
                headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
            )

        return await self.api(request, work)

    async def every_tool(self, request: Request) -> Response:
        """`/api/tools[?app=A]`: the caller's commands across their apps, as MCP's `commands`
        lists them (`pasture inspect --url` reads it)."""
        app = request.query_params.get("app") or None

        async def work(caller: Caller) -> Response:
            if not caller.signed_in and app is None:
                raise Unauthorized(f"no apps to list — {SIGN_IN}")
            listing = await self.call(self.service.list_commands, caller, app)
            return JSONResponse(
                {"commands": listing.data.get("commands", [])},
                headers={"Cache-Control": "no-cache"},
            )

        return await self.api(request, work)

    async def tools_tab(self, request: Request) -> Response:
        """The dashboard's Tools tab: what `/api/tools` gives, as a page."""
        app = request.query_params.get("app") or None

        async def work(caller: Caller) -> Response:
            if not caller.signed_in:
                return RedirectResponse("/signin", status_code=303)
            listing = await self.call(self.service.list_commands, caller, app)
            entries = listing.data.get("commands", [])
            return _own_page(pages.tools_page(caller, app, entries, listing.text))

        return await self.html(request, work)

    async def tools(self, request: Request) -> Response:
        at = _at(request)

        async def work(caller: Caller) -> Response:
            listing = await self.call(self.service.list_commands, caller, at, via_web=True)
            return JSONResponse(
                {"commands": listing.data.get("commands", [])},
                headers={"Cache-Control": "no-cache"},
            )

        return await self.api(request, work)


def came_by(caller: Caller, request: Request) -> Caller:
    """The caller as the audit tells of them: by the web, or by a page's WebMCP tool
    (`./api/webmcp.js` says so in a header); with a session when no token names them."""
    door = "webmcp" if request.headers.get("x-pasture-door") == "webmcp" else "web"
    return caller.at_door(door, caller.via or ("session" if caller.signed_in else None))


async def _name_and_args(
    request: Request, what: str, example: str, args_example: str
) -> tuple[str, dict[str, Any]]:
    """A body `{"name": …, "args": {…}}` (a command's or a handler's); refused otherwise."""
    shape = f'{{"name": "{example}", "args": {{…}}}}'
    body = await _json_body(request, shape)
    if not isinstance(body, dict) or not isinstance(body.get("name"), str):
        raise Refused(f"send the {what} as {shape}")
    args = body.get("args", {})
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise Refused(f"args is an object of the {what}'s arguments, like {args_example}")
    return body["name"], args


def _at(request: Request) -> str:
    return f"{request.path_params['space']}/{request.path_params['app']}"


async def _json_body(request: Request, what: str) -> Any:
    """The body as JSON, read strictly (`pasture.jsontext`); 413 over `MAX_BODY`."""
    too_large = TooLarge(
        f"the body is larger than {MAX_BODY // (1024 * 1024)} MB, the most one call takes "
        "— send less at a time, like fewer bundles in each apply"
    )
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise too_large
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            raise too_large
    return jsontext.loads(bytes(raw), "the body", what)


def _own_page(
    html: str, nonce: str | None = None, status: int = 200, form_action: str = "'self'"
) -> Response:
    """A page of the platform's own: no frames, and no script but the one it carries.

    `form_action` is where its forms may go (and be redirected to): itself, unless said.
    """
    script = f"'nonce-{nonce}'" if nonce else "'none'"
    csp = (
        f"default-src 'self'; script-src {script}; style-src 'unsafe-inline'; "
        f"frame-ancestors 'none'; form-action {form_action}"
    )
    return HTMLResponse(
        html,
        status_code=status,
        headers={
            "Content-Security-Policy": csp,
            "X-Frame-Options": "DENY",
            "Referrer-Policy": "same-origin",
            "Cache-Control": "no-store",
        },
    )


def _refused_page(html: str, e: Refused, status: int | None = None) -> Response:
    """One of the platform's own pages carrying a refusal: its status (`status` for any
    but too many tries) and `Retry-After` when it passes with time."""
    response = _own_page(html, status=e.status if status is None or e.status == 429 else status)
    response.headers.update(_refusal_headers(e) or {})
    return response


own_page = _own_page  # for the door's other modules (`pasture.web.consent`)

__all__ = ["SESSION_COOKIE", "BadToken", "create_app", "inject_base", "own_page"]
