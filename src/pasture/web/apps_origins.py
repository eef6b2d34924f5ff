"""How the web door keeps each app's pages to themselves (`pasture.platform.apps.origins`).

Before routing, `place(scope)` reads where a request is going and notes it in
`scope["state"]` (what it asks the Service, it asks in a thread: the database may
keep it waiting):

- `app_origin`: `(space, slug)` when the Host is an app's own origin (with an
  apps domain). The request's path is then moved under `/<space>/<slug>/`, so
  the ordinary routes serve it; `/mcp`, the dashboard and sign-in are not
  there: on an app's origin they are only files the app does not have.
- `pass`: the pass a sandboxed page's address carries (`/<space>/<app>/~<pass>/…`),
  taken out of the path.

An app's origin has three addresses of the platform's own, under `/.pasture/`
(no app file can be there: a path never names a hidden folder):

    /.pasture/signin?next=/path    go and sign in on the main origin, and come back;
                                   the browser is given the secret the code is bound to
    /.pasture/session?code=…&next= the main origin's one-time code, exchanged (with
                                   that secret) for the pass this origin's cookie holds
    /.pasture/signout              end this origin's pass
"""

from __future__ import annotations

import secrets
from urllib.parse import quote, urlencode

from starlette.datastructures import Headers, QueryParams
from starlette.requests import cookie_parser
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import Scope

from pasture.errors import PastureError
from pasture.platform import PASS_MARK, SANDBOX, Service
from pasture.threads import in_thread
from pasture.web import own_pages


def cookie(name: str, secure: bool) -> str:
    """A cookie's name as this server sets and reads it: on HTTPS `__Host-<name>`, which a
    browser takes only from this very origin (Secure, Path=/, no Domain=), so no page on a
    sibling origin — another app's, under the same apps domain — can set one for it."""
    return f"__Host-{name}" if secure else name


PASS_COOKIE = "pasture_pass"  # on an app's own origin only: that app's pass
# On an app's own origin: the secret a sign-in's one-time code is bound to, for the minute
# between going to the main origin and coming back.
STATE_COOKIE = "pasture_state"
PLATFORM = "/.pasture/"


def safe_next(text: str | None) -> str:
    """A `next=` address as a path of this origin (never another site's)."""
    if not text or not text.startswith("/") or text.startswith("//") or "\\" in text:
        return "/"
    return text


async def place(service: Service, scope: Scope) -> Response | None:
    """Note where the request is going (see the module), or answer it here."""
    state = scope.setdefault("state", {})
    path: str = scope["path"]
    if service.origins.apps_domain:
        host = Headers(scope=scope).get("host")
        if service.origins.label_of(host) is not None:
            found = await in_thread(lambda: service.catalog.app_at(host))
            if found is None:
                sentence = f"no app is at {host} — the dashboard lists your apps"
                return HTMLResponse(own_pages.message_page("Not here", sentence), status_code=404)
            state["app_origin"] = found
            if path.startswith(PLATFORM):
                at, what = found, path[len(PLATFORM) :]
                return await in_thread(lambda: _platform_page(service, scope, at, what))
            space, slug = found
            _move(scope, f"/{space}/{slug}" + (path if path.startswith("/") else "/" + path))
            return None
    parts = path.split("/", 4)  # "", space, app, "~pass", rest
    if len(parts) >= 4 and parts[3].startswith(PASS_MARK) and len(parts[3]) > 1:
        state["pass"] = parts[3][1:]
        _move(
            scope, "/".join(parts[:3] + parts[4:]) if len(parts) == 5 else "/".join(parts[:3]) + "/"
        )
    return None


def _move(scope: Scope, path: str) -> None:
    scope["path"] = path
    scope["raw_path"] = quote(path).encode()


def sandbox_headers() -> dict[str, str]:
    """What a sandboxed app's every answer carries: an opaque origin, no referrer, readable."""
    return {
        "Content-Security-Policy": SANDBOX,
        "Referrer-Policy": "no-referrer",
        # Its pages fetch from an opaque origin, with no cookie; what they send
        # is authorised by the pass in the address, which only they were given.
        "Access-Control-Allow-Origin": "*",
    }


def preflight() -> Response:
    """A sandboxed page's JSON POST asks first; the answer is yes, for its own app's API."""
    return Response(
        status_code=204,
        headers={
            "Access-Control-Allow-Origin": "*",
            "Access-Control-Allow-Methods": "GET, POST",
            "Access-Control-Allow-Headers": "Accept, Content-Type, Authorization, Last-Event-ID",
            "Access-Control-Max-Age": "600",
        },
    )


def sign_in_hop(service: Service, space: str, slug: str, next_path: str) -> str:
    """Where signing a visitor in to an app's own origin starts: at that origin, which
    gives the browser the secret its one-time code will be bound to."""
    query = urlencode({"next": safe_next(next_path)})
    return f"{service.origins.origin(space, slug)}{PLATFORM}signin?{query}"


def _main_hop(service: Service, space: str, slug: str, next_path: str, state: str) -> str:
    """The main origin's address that makes the code, for the browser holding `state`."""
    query = urlencode({"app": f"{space}/{slug}", "next": safe_next(next_path), "state": state})
    return f"{service.base_url}/signin/app?{query}"


def _cookie(scope: Scope, wanted: str) -> str:
    return cookie_parser(Headers(scope=scope).get("cookie") or "").get(wanted, "")


def _platform_page(service: Service, scope: Scope, app: tuple[str, str], what: str) -> Response:
    space, slug = app
    query = QueryParams(scope.get("query_string", b"").decode("latin-1"))
    next_path = safe_next(query.get("next"))
    secure = service.base_url.startswith("https://")
    if what == "signin":
        # The code the main origin makes is worth a pass only with this secret, which only
        # this browser holds: a code sent in a link signs nobody in as its maker.
        state = secrets.token_urlsafe(24)
        hop = _main_hop(service, space, slug, next_path, state)
        response = RedirectResponse(hop, status_code=303)
        response.set_cookie(
            cookie(STATE_COOKIE, secure),
            state,
            max_age=600,
            path="/",  # as `__Host-` asks
            httponly=True,
            samesite="lax",
            secure=secure,
        )
        return response
    if what == "session":
        try:
            secret = service.passes.exchange(
                query.get("code") or "", space, slug, _cookie(scope, cookie(STATE_COOKIE, secure))
            )
        except PastureError as e:
            page = own_pages.message_page("Not signed in", e.sentence)
            return HTMLResponse(page, status_code=e.status)
        response = RedirectResponse(next_path, status_code=303)
        response.set_cookie(
            cookie(PASS_COOKIE, secure),
            secret,
            path="/",
            httponly=True,
            samesite="lax",
            secure=secure,
        )
        response.delete_cookie(cookie(STATE_COOKIE, secure), path="/", secure=secure)
        return response
    if what == "signout":
        held = _cookie(scope, cookie(PASS_COOKIE, secure))
        if held:
            service.end_pass(held)
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(cookie(PASS_COOKIE, secure), path="/", secure=secure)
        return response
    page = own_pages.message_page("Not here", f"nothing is at {PLATFORM}{what}")
    return HTMLResponse(page, status_code=404)
