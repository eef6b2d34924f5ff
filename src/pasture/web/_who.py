"""Who is asking the web door: a bearer token, a page's pass, the session cookie, or nobody.

`Authorization: Bearer <token>` (read by `pasture.caller.bearer`), else a page's
pass (for its own app only), else the `pasture_session` cookie (named
`__Host-pasture_session` on HTTPS: `apps_origins.cookie`; on the main origin
only, and not for `./api/` fetched from another site), else nobody. A
token the platform does not know is a `BadToken`, a 401. A POST made with the
cookie must come from this server's own origin (when the browser names one)
and, under ./api/, carry `Content-Type: application/json`: another site's form
can do neither, so it cannot act as the person whose browser it runs in.

Every call is counted once its caller is known (`pasture.platform.access.limits`).
"""

from __future__ import annotations

import functools
from dataclasses import replace
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.types import Scope

from pasture import request_ids
from pasture.caller import NOBODY, Caller, bearer
from pasture.errors import BadToken, Forbidden, NotJson, Refused
from pasture.platform import Service
from pasture.threads import in_thread
from pasture.web import apps_origins

SESSION_COOKIE = "pasture_session"


def client_address(scope: Scope) -> str | None:
    """The address a request came from (behind a proxy, what uvicorn was told it is)."""
    client = scope.get("client")
    return str(client[0]) if client else None


def came_by(caller: Caller, request: Request) -> Caller:
    """The caller as the audit tells of them: by the web, or by a page's WebMCP tool
    (`./api/webmcp.js` says so in a header); with a session when no token names them."""
    door = "webmcp" if request.headers.get("x-pasture-door") == "webmcp" else "web"
    return caller.at_door(door, caller.via or ("session" if caller.signed_in else None))


class Who:
    """Finds who is asking, for the door served at `base` (its public URL)."""

    def __init__(self, service: Service, base: str) -> None:
        self.service = service
        self.base = base
        self.secure = base.startswith("https://")
        # `__Host-…` on HTTPS (`apps_origins.cookie`): named once, read on every request
        self.session_cookie = apps_origins.cookie(SESSION_COOKIE, self.secure)
        self.pass_cookie = apps_origins.cookie(apps_origins.PASS_COOKIE, self.secure)

    async def of_api(self, request: Request) -> Caller:
        """Who calls an API endpoint: counted, and with the door they came by."""
        return came_by(await self.counted(await self.caller(request), request), request)

    async def of_page(self, request: Request) -> Caller:
        """Who visits a page: counted."""
        return await self.counted(await self.caller(request), request)

    async def caller(self, request: Request) -> Caller:
        token = bearer(request.headers.get("authorization"))
        if token is not None:
            known = self.service.caller_at_once(token)  # from memory, no wait: no thread
            if known is not None:
                return known
            try:
                return await in_thread(functools.partial(self.service.caller_for_token, token))
            except Refused as e:  # not a Fault: the machine's trouble is not the token's
                raise BadToken(e.sentence) from e
        state = request.scope.get("state", {})
        on_app_origin = state.get("app_origin") is not None
        page_pass = state.get("pass")
        if page_pass is None and on_app_origin:
            page_pass = request.cookies.get(self.pass_cookie)
        if page_pass:
            # A page's pass names its person on its own app and nowhere else.
            space, slug = request.path_params.get("space"), request.path_params.get("app")
            if not space or not slug:
                return NOBODY
            return await in_thread(
                functools.partial(self.service.passes.who, page_pass, space, slug)
            )
        if on_app_origin:
            return NOBODY  # the main origin's cookie never reaches an app's own origin
        session = request.cookies.get(self.session_cookie)
        if session:
            if "/api/" in request.url.path and request.headers.get("sec-fetch-site") in (
                "cross-site",
                "same-site",
            ):
                return NOBODY  # a page elsewhere fetching with the visitor's cookie
            if request.method == "POST":
                self.check_cookie_post(request)
            return await in_thread(
                functools.partial(self.service.people.caller_for_session, session)
            )
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
        """This server's own origins: its public URL's, and the one the request was sent to."""
        base = urlsplit(self.base)
        own = {f"{base.scheme}://{base.netloc}"}
        host = request.headers.get("host")
        if host:
            own.add(f"{request.url.scheme}://{host}")
        return own

    async def counted(self, caller: Caller, request: Request) -> Caller:
        """One call by a signed-in caller (TooMany past their limit); nobody, with the
        address they came from, which open apps' anonymous writes are counted by."""
        request_ids.named(caller.name)  # for the request's line in the log
        if caller.signed_in:
            limiter = self.service.limiter
            if not limiter.caller_at_once(caller):  # only the shared counts can tell
                await in_thread(functools.partial(limiter.caller, caller))
            return caller
        return replace(caller, address=client_address(request.scope))


__all__ = ["SESSION_COOKIE", "Who", "came_by", "client_address"]
