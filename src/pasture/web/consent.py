"""OAuth for `/mcp` on the web door: the SDK's authorization server routes, and the consent page.

The MCP SDK serves `/.well-known/oauth-authorization-server`, `/authorize`,
`/token`, `/register` and `/revoke` (`mcp.server.auth.routes`) and
`/.well-known/oauth-protected-resource/mcp` (RFC 9728), asking the platform's
provider (`pasture.platform.auth.oauth`). `/authorize` sends the person here:

    GET  /oauth/consent?request=…   signed out: the sign-in form, which comes back here;
                                    signed in: which client asks, for what, and the choice
    POST /oauth/consent             approve (read only, or read and write; which spaces)
                                    or deny: to the client's redirect, with a code or not

The authorization server's metadata says it takes Client ID Metadata
Documents (`client_id_metadata_document_supported`): a client may name itself
by the `https://` address of its document instead of registering
(`pasture.platform.auth.client_documents`). `/authorize` fetches such a document
first, and a document that cannot be used is a page saying why, not the SDK's
bare "not found".

Around the SDK's routes, what it leaves to the server:

- `/register` is counted per address (`Limiter.registration`, 20 an hour):
  past it, 429 with `Retry-After` and the sentence as `error_description`;
- `/token` refuses a `resource` (RFC 8707) that is not this server's `/mcp`
  with `invalid_target` — the SDK reads it there and passes it on to no one —
  and so does `/authorize` when it names several (one alone, the provider
  refuses, sending the client back with `invalid_target`).

An issuer must be `https://`, or loopback for trying it out: a server whose
public URL is neither serves no OAuth (and says so in its log).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from urllib.parse import parse_qs, urlencode, urlsplit

from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pasture.errors import DocumentRefused, TooMany
from pasture.platform import Service, is_document_id
from pasture.threads import in_thread
from pasture.web import own_pages
from pasture.web._failures import own_page
from pasture.web._who import client_address
from pasture.web.endpoints import Endpoints

log = logging.getLogger("pasture.web")

SCOPES = ["read", "write"]
_MOST = 4 * 1024 * 1024  # the most of a body read here: the SDK's own limit, past which it 413s


def resource_metadata_url(base_url: str) -> str:
    """Where `/mcp`'s protected resource metadata is (RFC 9728 §3.1)."""
    return f"{base_url}/.well-known/oauth-protected-resource/mcp"


def oauth_routes(service: Service, web: Endpoints) -> list[BaseRoute]:
    """The SDK's OAuth routes for this server, and the consent page's; none without a
    usable issuer."""
    from mcp.server.auth.routes import create_auth_routes, create_protected_resource_routes
    from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
    from pydantic import AnyHttpUrl

    base = service.base_url
    try:
        routes: list[BaseRoute] = list(
            create_auth_routes(
                service.oauth,
                issuer_url=AnyHttpUrl(base),
                client_registration_options=ClientRegistrationOptions(
                    enabled=True, valid_scopes=SCOPES, default_scopes=SCOPES
                ),
                revocation_options=RevocationOptions(enabled=True),
            )
        )
    except ValueError as e:
        log.warning("OAuth for /mcp is off: %s is not an issuer (%s)", base, e)
        return []
    routes = [_documents_too(route, service, base) for route in routes]
    routes += create_protected_resource_routes(
        resource_url=AnyHttpUrl(f"{base}/mcp"),
        authorization_servers=[AnyHttpUrl(base)],
        scopes_supported=SCOPES,
        resource_name="pasture",
    )
    consent = Consent(service, web)
    routes += [
        Route("/oauth/consent", consent.show, methods=["GET", "HEAD"]),
        Route("/oauth/consent", consent.answer, methods=["POST"], max_body_size=64 * 1024),
    ]
    return routes


def _documents_too(route: BaseRoute, service: Service, base: str) -> BaseRoute:
    """The SDK's route, or its stand-in where pasture adds Client ID Metadata Documents: the
    metadata says they are taken, and `/authorize` fetches one before the SDK looks; and
    `/register` counted, `/token`'s resource checked (inside the SDK's CORS, so a browser's
    client reads the refusal)."""
    from mcp.server.auth.handlers.metadata import MetadataHandler
    from mcp.server.auth.routes import cors_middleware

    if not isinstance(route, Route):
        return route
    if route.path == "/.well-known/oauth-authorization-server":
        metadata = service.oauth.metadata(base)
        handler = cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"])
        return Route(route.path, endpoint=handler, methods=["GET", "OPTIONS"])
    if route.path == "/authorize":
        return Route(route.path, endpoint=_Fetching(route.app, service), methods=["GET", "POST"])
    if route.path == "/register":
        return _inside_cors(route, lambda app: _Counted(app, service))
    if route.path == "/token":
        return _inside_cors(route, lambda app: _Targeted(app, service))
    return route


def _inside_cors(route: Route, wrap: Callable[[ASGIApp], ASGIApp]) -> Route:
    """The route with `wrap` around what the SDK's CORS layer serves."""
    outer = route.app
    if isinstance(outer, CORSMiddleware):
        outer.app = wrap(outer.app)
        return route
    return Route(route.path, endpoint=wrap(outer), methods=sorted(route.methods or ()))


async def _oauth_error(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    error: str,
    sentence: str,
    **headers: str,
) -> None:
    """An OAuth error answer (RFC 6749 §5.2): its code, and the sentence as error_description."""
    answer = JSONResponse(
        {"error": error, "error_description": sentence},
        status_code=status,
        headers={"Cache-Control": "no-store", **headers},
    )
    await answer(scope, receive, send)


class _Counted:
    """The SDK's `/register`, after counting the registration against its address."""

    def __init__(self, register: ASGIApp, service: Service) -> None:
        self.register = register
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") == "POST":
            try:
                address, limiter = client_address(scope), self.service.limiter
                await in_thread(lambda: limiter.registration(address))  # may ask the counts
            except TooMany as refused:
                await _oauth_error(
                    scope,
                    receive,
                    send,
                    refused.status,
                    "temporarily_unavailable",
                    refused.sentence,
                    **{"Retry-After": str(refused.retry_after)},
                )
                return
        await self.register(scope, receive, send)


class _Targeted:
    """The SDK's `/token`, after refusing a resource (RFC 8707) this server gives no token for:
    the SDK reads the parameter, and passes it on for no grant pasture takes."""

    def __init__(self, token: ASGIApp, service: Service) -> None:
        self.token = token
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "POST":
            await self.token(scope, receive, send)
            return
        resources, receive = await _resources(scope, receive)
        refused = self.service.oauth.target_refusal(resources)
        if refused is not None:
            await _oauth_error(scope, receive, send, 400, "invalid_target", refused)
            return
        await self.token(scope, receive, send)


async def _resources(scope: Scope, receive: Receive) -> tuple[list[str], Receive]:
    """Every `resource` a request names where the SDK reads it (the query of a GET, else the
    form), and `receive` giving the body again."""
    if scope.get("method") == "GET":
        return Request(scope).query_params.getlist("resource"), receive
    body, whole = b"", False
    while not whole and len(body) <= _MOST:
        message = await receive()
        if message["type"] != "http.request":
            return [], _again(body, False, receive, message)
        body += bytes(message.get("body", b""))
        whole = not message.get("more_body", False)
    if not whole:  # too long: the SDK says so
        return [], _again(body, True, receive)
    try:
        form = await Request(scope, _again(body, False, receive)).form()
    except Exception:  # a body the SDK cannot read either: it says so
        return [], _again(body, False, receive)
    found = [v for v in form.getlist("resource") if isinstance(v, str)]
    await form.close()
    return found, _again(body, False, receive)


def _again(body: bytes, more: bool, receive: Receive, last: Message | None = None) -> Receive:
    """`receive`, giving what was read of the body first (then `last`, if it ended so)."""
    given = False

    async def replay() -> Message:
        nonlocal given, last
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": more or last is not None}
        if last is not None:
            message, last = last, None
            return message
        return await receive()

    return replay


class _Fetching:
    """The SDK's `/authorize`, after fetching the document a `client_id` address names (an
    ASGI app: a class, so Starlette hands it the request as it came)."""

    def __init__(self, authorize: ASGIApp, service: Service) -> None:
        self.authorize = authorize
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        resources, receive = await _resources(scope, receive)
        refused = self.service.oauth.target_refusal(resources)
        if refused is not None and len(resources) > 1:  # one alone: the provider's redirect
            await _oauth_error(scope, receive, send, 400, "invalid_target", refused)
            return
        client_id = Request(scope).query_params.get("client_id", "")
        if is_document_id(client_id):
            oauth = self.service.oauth
            try:
                await in_thread(lambda: oauth.client_document(client_id))
            except DocumentRefused as e:
                page = own_pages.message_page("This client cannot sign in", e.sentence)
                await own_page(page, status=400)(scope, receive, send)
                return
        await self.authorize(scope, receive, send)


class Consent:
    """The consent page: pasture's own sign-in, then the person's choice."""

    def __init__(self, service: Service, web: Endpoints) -> None:
        self.service = service
        self.web = web

    async def show(self, request: Request) -> Response:
        asked = request.query_params.get("request", "")
        caller = await self.web.who.of_page(request)
        asking = await self.web.call(self.service.oauth.asking, asked)
        if not caller.signed_in:
            here = "/oauth/consent?" + urlencode({"request": asked})
            return own_page(own_pages.signin_page(next_path=here))
        spaces = [s for s, _ in await self.web.call(self.service.spaces.of, caller)]
        target = urlsplit(asking.redirect_uri)
        page = own_pages.consent_page(
            asking.client_name,
            asking.client_uri,
            target.netloc or asking.redirect_uri,
            asked,
            asking.writes,
            spaces,
            caller,
        )
        return own_page(page, form_action=f"'self' {_origin(asking.redirect_uri)}")

    async def answer(self, request: Request) -> Response:
        fields = parse_qs((await request.body()).decode("utf-8", "replace"))

        def one(name: str) -> str:
            return fields.get(name, [""])[0]

        caller = await self.web.who.of_page(request)
        if not caller.signed_in:
            return RedirectResponse(
                "/oauth/consent?" + urlencode({"request": one("request")}), status_code=303
            )
        target = await self.web.call(
            self.service.oauth_decide,
            caller,
            one("request"),
            approve=one("decision") == "approve",
            writes=one("scope") == "write",
            spaces=fields.get("spaces", []),
        )
        return RedirectResponse(target, status_code=303, headers={"Referrer-Policy": "no-referrer"})


def _origin(url: str) -> str:
    """Where the consent form may send the browser on (CSP form-action): the redirect's
    origin, or a native app's private-use scheme (`com.example.agent:`)."""
    parts = urlsplit(url)
    if parts.scheme and parts.scheme not in ("http", "https"):
        return f"{parts.scheme}:"  # a scheme as urlsplit reads one: letters, digits, + . -
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else "'none'"
