"""How the web door answers what went wrong: the one place a refusal or a fault becomes a response.

`create_app` registers these as Starlette's exception handlers, so an endpoint
only raises. Whether the answer is JSON or a page goes by the route: the
platform's API (`/api/…`) and an app's (`/{space}/{app}/api/…`) answer JSON,

    {"error": sentence}    with the status its kind carries (`pasture.errors`: a
                           `Refused`'s, or a `Fault`'s), `Retry-After` on a 429

and every other route a short page with the same sentence and status. A
`BadToken` is JSON wherever it is raised: the caller is a program. Anything
that is not a `PastureError` is a bug: logged here with its traceback, answered
500 with `SERVER_FAULT` and nothing more.

A page that shows a refusal inside its own form (the sign-in page saying the
password was wrong) renders it itself, with `refused_page`.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from pasture.errors import BadToken, PastureError, TooMany
from pasture.request_ids import fault_id
from pasture.web import apps_origins, own_pages
from pasture.web._who import SESSION_COOKIE

log = logging.getLogger("pasture.web")

SERVER_FAULT = (
    "something went wrong on the server — it has been logged; "
    "try again, and if it keeps happening tell whoever runs this pasture"
)


def server_fault_sentence() -> str:
    """`SERVER_FAULT`, naming this request's fault: its id, in the server's log too."""
    return f"{SERVER_FAULT}, naming fault {fault_id()}"


_API = re.compile(r"/api/|/[^/]+/[^/]+/api/")  # the platform's API, an app's ./api/
_TITLES = {404: "Not here", 429: "Too many"}


def answers_json(path: str) -> bool:
    """Whether a route answers JSON (its API's) rather than pages."""
    return _API.match(path) is not None


def refusal_headers(e: PastureError) -> dict[str, str] | None:
    """`Retry-After` for a refusal that passes with time (`TooMany`)."""
    return {"Retry-After": str(e.retry_after)} if isinstance(e, TooMany) else None


def json_refusal(e: PastureError) -> Response:
    return JSONResponse({"error": e.sentence}, status_code=e.status, headers=refusal_headers(e))


def refusal(
    path: str, e: PastureError, sign_in: str | None = None, *, session: bool = False
) -> Response:
    """A refusal as the route at `path` answers one: JSON, or a short page (with where a
    signed-out visitor signs in, when `sign_in` says; with the navigation for a visitor
    holding a `session`)."""
    if isinstance(e, BadToken) or answers_json(path):
        return json_refusal(e)
    title = _TITLES.get(e.status, "Refused")
    page = own_pages.message_page(title, e.sentence, sign_in, session=session)
    return HTMLResponse(page, status_code=e.status, headers=refusal_headers(e))


def fault(path: str) -> Response:
    """A bug's answer: 500 and the one sentence, as JSON or a page by the route."""
    sentence = server_fault_sentence()
    if answers_json(path) or path == "/mcp" or path.startswith("/mcp/"):
        return JSONResponse({"error": sentence}, status_code=500)
    return HTMLResponse(own_pages.message_page("Something went wrong", sentence), status_code=500)


async def refused(request: Request, exc: Exception) -> Response:
    """Starlette's handler for a `PastureError` an endpoint raised: a refusal, or a fault
    whose sentence says what failed."""
    assert isinstance(exc, PastureError)
    path = request.url.path
    if isinstance(exc, BadToken) or answers_json(path):
        return json_refusal(exc)
    session = _holds_session(request)
    # signed in and refused all the same: signing in again would not help
    sign_in = sign_in_from(request) if not session or exc.status == 401 else None
    return refusal(path, exc, sign_in, session=session)


def _holds_session(request: Request) -> bool:
    """Whether the visitor sends a session cookie of the main origin (its pages' header then
    has the navigation and the sign-out; an app's own origin has neither)."""
    if request.scope.get("state", {}).get("app_origin") is not None:
        return False
    return any(name in request.cookies for name in (SESSION_COOKIE, f"__Host-{SESSION_COOKIE}"))


async def server_fault(request: Request, exc: Exception) -> Response:
    """Starlette's handler for anything else: a bug, logged with its traceback."""
    log.error(
        "unexpected error on %s %s (fault %s)",
        request.method,
        request.url.path,
        fault_id(),
        exc_info=exc,
    )
    return fault(request.url.path)


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such route, not this method, a body too large)."""
    assert isinstance(exc, HTTPException)
    sentences = {
        404: f"nothing is at {request.url.path} — the dashboard at / lists your apps",
        405: f"{request.method} is not how {request.url.path} is used",
        413: "that request is too large — send fewer bundles at a time",
    }
    sentence = sentences.get(exc.status_code, str(exc.detail))
    if "/api/" in request.url.path or request.url.path.startswith("/mcp"):
        return JSONResponse({"error": sentence}, status_code=exc.status_code, headers=exc.headers)
    page = own_pages.message_page("Not here" if exc.status_code == 404 else "Refused", sentence)
    return HTMLResponse(page, status_code=exc.status_code, headers=exc.headers)


def sign_in_from(request: Request) -> str:
    """Where a visitor of this page signs in: the main origin's page, or, on an app's own
    origin, the way through it and back."""
    if request.scope.get("state", {}).get("app_origin") is None:
        return "/signin"
    space, slug = request.path_params["space"], request.path_params["app"]
    here = request.url.path[len(f"/{space}/{slug}") :] or "/"
    return f"{apps_origins.PLATFORM}signin?" + urlencode({"next": here})


def own_page(
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


def refused_page(html: str, e: PastureError, status: int | None = None) -> Response:
    """One of the platform's own pages carrying a refusal in its own form: the refusal's
    status (`status` for any but too many tries) and `Retry-After` when it passes with time."""
    response = own_page(html, status=e.status if status is None or e.status == 429 else status)
    response.headers.update(refusal_headers(e) or {})
    return response


__all__ = [
    "SERVER_FAULT",
    "answers_json",
    "fault",
    "http_error",
    "json_refusal",
    "own_page",
    "refusal",
    "refusal_headers",
    "refused",
    "refused_page",
    "server_fault",
    "server_fault_sentence",
    "sign_in_from",
]
