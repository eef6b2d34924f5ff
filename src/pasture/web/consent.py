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

An issuer must be `https://`, or loopback for trying it out: a server whose
public URL is neither serves no OAuth (and says so in its log).
"""

from __future__ import annotations

import logging
from urllib.parse import parse_qs, urlencode, urlsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from pasture.errors import DocumentRefused
from pasture.platform import Service, is_document_id
from pasture.threads import in_thread
from pasture.web import own_pages
from pasture.web._failures import own_page
from pasture.web.endpoints import Endpoints

log = logging.getLogger("pasture.web")

SCOPES = ["read", "write"]


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
    metadata says they are taken, and `/authorize` fetches one before the SDK looks."""
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
    return route


class _Fetching:
    """The SDK's `/authorize`, after fetching the document a `client_id` address names (an
    ASGI app: a class, so Starlette hands it the request as it came)."""

    def __init__(self, authorize: ASGIApp, service: Service) -> None:
        self.authorize = authorize
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
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
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else "'none'"
