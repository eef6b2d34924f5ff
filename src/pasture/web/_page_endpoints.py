"""The web door's pages: the platform's own (dashboard, sign-in, tokens, audit, Tools tab, the
guide) and an app's files.

Each finds its visitor, calls the Service, and renders a page of the platform's
own (`pasture.web.own_pages`, served by `own_page`) or the app's file. A refusal or
a bug is raised and answered as a short page by the door
(`pasture.web._failures`); where a page shows a refusal inside its own form (the
sign-in page, the tokens page) it renders it here.
"""

from __future__ import annotations

import functools
import logging
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from pasture import calls
from pasture.caller import Caller
from pasture.errors import NotFound, PastureError, Refused, UsageError, echo
from pasture.names import SLUG
from pasture.platform import PASS_MARK, Service
from pasture.result import Result
from pasture.web import apps_origins, own_pages, webmcp
from pasture.web._api import Api
from pasture.web._failures import own_page, refused_page
from pasture.web._who import came_by, client_address
from pasture.web.endpoints import Endpoints

log = logging.getLogger("pasture.web")

TOKEN_IS_NO_SIGN_IN = (
    "a token does not sign a browser in — sign in with your name and password, or with a "
    "link from pasture signin"
)
AUDIT_FILTERS = ("person", "door", "outcome", "since", "until", "before")
AUDIT_PAGE = own_pages.AUDIT_PAGE
GUIDE = Path(__file__).resolve().parents[3] / "docs" / "guide.md"


class PageEndpoints(Endpoints):
    """The pages' endpoints; an address under an app's ./api/ goes on to `api`."""

    def __init__(self, service: Service, api: Api) -> None:
        super().__init__(service)
        self.api = api

    # -- the platform's own pages --------------------------------------------
    async def home(self, request: Request) -> Response:
        caller = await self.who.of_page(request)
        if not caller.signed_in:
            return own_page(own_pages.signed_out_dashboard())
        apps = await self.call(self.service.gate.list_apps, caller)
        commands: dict[str, list[dict[str, Any]]] = {}
        problems: dict[str, str] = {}
        for app in apps:
            try:
                listing = await self.call(self.service.listing.list_commands, caller, app=app.at)
            except PastureError as e:  # one app that cannot list its commands hides no other
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
        roles = await self.call(self.service.spaces.of, caller)
        owned = {space for space, role in roles if role == "owner"}
        page = own_pages.dashboard(caller, apps, commands, nonce, problems, opens, owned)
        return own_page(page, nonce)

    async def tools_tab(self, request: Request) -> Response:
        """The dashboard's Tools tab: what `/api/tools` gives, as a page."""
        app = request.query_params.get("app") or None
        caller = await self.who.of_page(request)
        if not caller.signed_in:
            return RedirectResponse("/signin", status_code=303)
        listing = await self.call(self.service.listing.list_commands, caller, app)
        entries = listing.data.get("commands", [])
        return own_page(own_pages.tools_page(caller, app, entries, listing.text))

    # -- the data browser ---------------------------------------------------------------
    async def data(self, request: Request) -> Response:
        """`/data?app=S/A&kind=K&filter=F&after=C`, or `&id=EID`: an app's rows read as the
        person, through the same query as `./api/query`; a refusal shown in the page."""
        caller = await self.who.of_page(request)
        if not caller.signed_in:
            return RedirectResponse("/signin", status_code=303)
        asked = request.query_params
        app = asked.get("app") or None
        if app is None:
            listed = await self.call(self.service.gate.list_apps, caller)
            page = own_pages.data_page(caller, None, apps=sorted(a.at for a in listed))
            return own_page(page)
        return await self.data_of(
            caller,
            app,
            asked.get("kind") or None,
            eid=asked.get("id", "").strip(),
            filter_text=asked.get("filter", "").strip(),
            after=asked.get("after") or None,
            sort=asked.get("sort", "").strip(),
        )

    async def data_of(
        self,
        caller: Caller,
        app: str,
        kind: str | None,
        *,
        eid: str = "",
        filter_text: str = "",
        after: str | None = None,
        sort: str = "",
        done: str | None = None,
        undo: str | None = None,
        problem: PastureError | None = None,
    ) -> Response:
        """The data browser's page of an app: a kind's rows, or one entity (`eid`); `done`
        and `undo` say how a write went and which call an Undo puts back, `problem` why one
        was refused (its sentence above the forms)."""
        schema = await self.call(self.service.graph.schema, caller, app, via_web=True)
        components = schema.data.get("components", {})
        # an app's own kinds, and the doc every app has
        kinds = [n for n, c in components.items() if not c.get("platform") or n == "doc"]
        if not eid and kind is None and kinds:
            kind = kinds[0]
        shown: dict[str, Any] = {"kinds": kinds, "kind": kind, "filter": filter_text, "sort": sort}
        shown.update(done=done, undo=undo, types=_types(components))
        said = None if problem is None else problem.sentence
        try:
            if eid:
                found = await self.call(
                    self.service.graph.query, caller, app, f"id={eid}", via_web=True
                )
                rows = found.data.get("rows") or []
                if not rows:
                    raise NotFound(f"no entity {eid[:40]} in {app}")
                page = own_pages.data_page(caller, app, **shown, entity=rows[0], problem=said)
                return _shown(page, problem)
            if kind is None or kind not in components:
                raise NotFound(f"{app} has no kind {kind or ''} — its kinds: {', '.join(kinds)}")
            columns = list(components[kind].get("columns", {}))
            shown["columns"] = columns
            text = f".{kind}!" + (f"&{filter_text}" if filter_text else "")
            if sort:  # a column's heading clicked: `miles`, or `-miles` for the most first
                column = sort.removeprefix("-")
                if column not in columns:
                    raise UsageError(
                        f"{kind} has no column {echo(column, 40)} to sort by "
                        f"— its columns: {', '.join(columns)}"
                    )
                text += f"&sort={'-' if sort.startswith('-') else ''}{kind}.{column}"
            if after:
                text += f"&after={after}"
            found = await self.call(self.service.graph.query, caller, app, text, via_web=True)
        except PastureError as e:  # said above the filter, which stays as it was typed
            return refused_page(own_pages.data_page(caller, app, **shown, problem=e.sentence), e)
        more = None
        if found.data.get("more") and found.data.get("cursor"):
            onward = {"app": app, "kind": kind, "filter": filter_text, "sort": sort}
            more = "/data?" + urlencode({**onward, "after": found.data["cursor"]})
        page = own_pages.data_page(
            caller,
            app,
            **shown,
            rows=found.data.get("rows") or [],
            more=more,
            said=found.text.split("\n")[0],
            problem=said,
        )
        return _shown(page, problem)

    async def data_change(self, request: Request) -> Response:
        """The data browser's forms, `POST /data` with `do`: `add` (a new row of a kind),
        `edit` (an entity's row of a kind), `delete` (the entity tombstoned), each one
        `apply` as the person, the very call `./api/apply` makes, so the app's access
        decides, and the page after it offers that call's Undo; `undo` (that Undo: the
        audit's undo of the call, as the person). One address of the platform's own, not
        `/data/…`, which is where a space named data would have its apps."""
        fields = parse_qs((await request.body()).decode("utf-8", "replace"), keep_blank_values=True)
        # by the web, with a session, as the audit tells of ./api/apply's callers
        caller = came_by(await self.who.of_page(request), request)
        if not caller.signed_in:
            return RedirectResponse("/signin", status_code=303)
        one = {k: v[0] for k, v in fields.items() if v}
        app, kind, eid = one.get("app", ""), one.get("kind") or None, one.get("id", "").strip()
        how = one.get("do", "")
        back = eid if how == "edit" else ""  # the page a refusal is said on
        try:
            if how == "undo":
                done = await self.call(
                    self.service.undo, caller, one.get("call", ""), app or None, via_web=True
                )
                return await self.data_of(caller, app, kind, done=done.text)
            if how == "delete":
                bundle: dict[str, Any] = {"entity": {"eid": eid}, "tombstone": {}}
            elif how in ("add", "edit"):
                schema = await self.call(self.service.graph.schema, caller, app, via_web=True)
                components = schema.data.get("components", {})
                if kind is None or kind not in components:
                    raise NotFound(f"{app} has no kind {kind or ''}")
                if how == "edit" and not eid:
                    raise NotFound("name the entity to change (its id)")
                columns = components[kind].get("columns", {})
                values = _row_of(fields, columns, whole=how == "edit")
                bundle = {"entity": {"eid": eid if how == "edit" else "$row"}, kind: values}
            else:
                raise Refused("say what to do with the data: add, edit, delete or undo")
            call, done = await self.call(_applied, self.service, caller, app, bundle)
        except PastureError as e:  # said in the page; a refused write wrote nothing
            return await self.data_of(caller, app, kind, eid=back, problem=e)
        if how == "add":  # the new row's page, which shows it whole
            back = str(done.data.get("aliases", {}).get("$row") or "")
        return await self.data_of(caller, app, kind, eid=back, done=done.text, undo=call)

    # -- a person's tokens ---------------------------------------------------------------
    async def tokens_of(
        self, caller: Caller, made: str | None = None, problem: str | None = None
    ) -> Response:
        if not caller.signed_in:
            return RedirectResponse("/signin", status_code=303)
        listed = await self.call(self.service.tokens, caller)
        spaces = [s for s, _ in await self.call(self.service.spaces.of, caller)]
        page = own_pages.tokens_page(caller, listed.data["tokens"], spaces, made, problem)
        return own_page(page, status=400 if problem else 200)

    async def tokens(self, request: Request) -> Response:
        return await self.tokens_of(await self.who.of_page(request))

    async def make_token(self, request: Request) -> Response:
        fields = parse_qs((await request.body()).decode("utf-8", "replace"))
        caller = await self.who.of_page(request)
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
        except PastureError as e:  # shown on the tokens page, beside its form
            return await self.tokens_of(caller, problem=e.sentence)
        return await self.tokens_of(caller, made=made)

    async def revoke_token(self, request: Request) -> Response:
        fields = parse_qs((await request.body()).decode("utf-8", "replace"))
        caller = await self.who.of_page(request)
        if not caller.signed_in:
            return RedirectResponse("/signin", status_code=303)
        await self.call(self.service.revoke_token, caller, fields.get("id", [""])[0])
        return RedirectResponse("/tokens", status_code=303)

    # -- the audit -----------------------------------------------------------------------
    async def audit(self, request: Request) -> Response:
        """`/audit?app=space/slug&person=&door=&outcome=&since=&until=&before=`: a page of an
        app's recorded calls (its space's owners), or of the person's own, newest first."""
        caller = await self.who.of_page(request)
        if not caller.signed_in:
            return RedirectResponse("/signin", status_code=303)
        asked = {k: request.query_params.get(k, "").strip() for k in AUDIT_FILTERS}
        return await self.audit_of(caller, request.query_params.get("app") or None, asked)

    async def audit_of(
        self,
        caller: Caller,
        app: str | None,
        asked: dict[str, str] | None = None,
        *,
        done: str | None = None,
        problem: str | None = None,
    ) -> Response:
        asked = {k: v for k, v in (asked or {}).items() if v}
        result = await self.call(
            functools.partial(
                self.service.audit_page,
                caller,
                app,
                since=asked.get("since"),
                until=asked.get("until"),
                person=asked.get("person"),
                door=asked.get("door"),
                outcome=asked.get("outcome"),
                before=asked.get("before"),
                limit=AUDIT_PAGE,
            )
        )
        # the app filter offers the apps whose whole audit the person reads: their spaces'
        owned = {
            space
            for space, role in await self.call(self.service.spaces.of, caller)
            if role == "owner"
        }
        listed = await self.call(self.service.gate.list_apps, caller)
        apps = [a.at for a in listed if a.space in owned]
        page = own_pages.audit_page(
            caller,
            app,
            result.data["records"],
            done=done,
            problem=problem,
            apps=sorted(apps),
            whole=result.data["whole"],
            filters=asked,
            older=None if result.data["next"] is None else str(result.data["next"]),
        )
        return own_page(page, status=400 if problem else 200)

    async def undo(self, request: Request) -> Response:
        """The audit page's Undo: the call put back, and the page again saying how it went."""
        fields = parse_qs((await request.body()).decode("utf-8", "replace"))
        caller = await self.who.of_page(request)
        if not caller.signed_in:
            return RedirectResponse("/signin", status_code=303)
        app = fields.get("app", [""])[0] or None
        call = fields.get("call", [""])[0]
        try:
            done = await self.call(self.service.undo, caller, call, via_web=True)
        except PastureError as e:  # said on the audit page, above its rows
            return await self.audit_of(caller, app, problem=e.sentence)
        return await self.audit_of(caller, app, done=done.text)

    # -- signing in and out --------------------------------------------------------------
    async def signin_form(self, request: Request) -> Response:
        link = request.query_params.get("link")
        if link is not None:  # a one-time sign-in link (`pasture signin`, `make run`)
            address = client_address(request.scope)
            try:
                session = await self.call(self.service.session_for_link, link, address)
            except PastureError as e:
                return refused_page(own_pages.signin_page(e.sentence), e)
            return self.signed_in(session)
        if request.query_params.get("token") is not None:
            # A token is a program's, with the scope it was made with: a browser signed in
            # by one would hold all of its person's rights, and outlive it.
            return own_page(own_pages.signin_page(TOKEN_IS_NO_SIGN_IN), status=400)
        return own_page(own_pages.signin_page())

    async def signin(self, request: Request) -> Response:
        origin = request.headers.get("origin")
        if origin is not None and origin not in self.who.origins(request):
            page = own_pages.signin_page("sign in on this server's own page, not another site's")
            return own_page(page, status=403)
        fields = parse_qs((await request.body()).decode("utf-8", "replace"))
        name = fields.get("name", [""])[0].strip()
        password = fields.get("password", [""])[0]
        if not name or not password:
            page = own_pages.signin_page("give your name and your password to sign in", name)
            return own_page(page, status=400)
        app = fields.get("app", [""])[0]
        onward = apps_origins.safe_next(fields.get("next", [""])[0])
        try:
            address = client_address(request.scope)
            session = await self.call(self.service.sign_in, name, password, address)
        except PastureError as e:  # shown on the sign-in form, with the name kept
            page = own_pages.signin_page(e.sentence, name, app=app, next_path=onward)
            return refused_page(page, e, 401)
        if app:  # on, to the app's own origin it was asked for from
            return self.signed_in(session, "/signin/app?" + urlencode({"app": app, "next": onward}))
        return self.signed_in(session, onward)

    async def signin_app(self, request: Request) -> Response:
        """The main origin's half of signing in to an app's own origin: a one-time code."""
        app = request.query_params.get("app", "")
        onward = apps_origins.safe_next(request.query_params.get("next"))
        space, _, slug = app.partition("/")
        if not (SLUG.fullmatch(space) and SLUG.fullmatch(slug)):
            # Only ever on to an app of this server: `/evil.example` would be `//evil.example`.
            sentence = (
                f"{app or 'nothing'} is not an app's address — write space/app, like ada/runs"
            )
            return own_page(own_pages.signin_page(sentence), status=400)
        caller = await self.who.of_page(request)
        if not self.service.origins.apps_domain:
            return RedirectResponse(f"/{space}/{slug}{onward}", status_code=303)
        state = request.query_params.get("state")
        if not state:  # start at the app's origin, which gives the browser its secret
            hop = apps_origins.sign_in_hop(self.service, space, slug, onward)
            return RedirectResponse(hop, status_code=303)
        if not caller.signed_in:
            return own_page(own_pages.signin_page(app=app, next_path=onward))
        await self.call(self.service.gate.web_app, caller, space, slug)
        session = request.cookies.get(self.session_cookie)
        code = await self.call(
            functools.partial(
                self.service.new_pass, caller, space, slug, session, code=True, bound=state
            )
        )
        origin = self.service.origins.origin(space, slug)
        query = urlencode({"code": code, "next": onward})
        return RedirectResponse(
            f"{origin}{apps_origins.PLATFORM}session?{query}",
            status_code=303,
            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
        )

    def signed_in(self, session: str, to: str = "/") -> Response:
        response = RedirectResponse(to, status_code=303)
        response.set_cookie(
            self.session_cookie,
            session,
            path="/",
            httponly=True,
            samesite="lax",
            secure=self.secure,
        )
        return response

    async def signout(self, request: Request) -> Response:
        try:
            await self.call(self.service.sign_out, request.cookies.get(self.session_cookie))
        except Exception:  # signing out forgets the cookie whatever the database says
            log.exception("unexpected error signing out")
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(
            self.session_cookie, path="/", httponly=True, samesite="lax", secure=self.secure
        )
        return response

    async def favicon(self, request: Request) -> Response:
        return Response(
            own_pages.favicon(),
            media_type="image/svg+xml",
            headers={"Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff"},
        )

    async def guide(self, request: Request) -> Response:
        if not GUIDE.is_file():
            raise HTTPException(404)
        return Response(GUIDE.read_bytes(), media_type="text/markdown; charset=utf-8")

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
            return await self.api.no_api(request, space, slug, path)

        origins = self.service.origins
        state = request.scope.get("state", {})
        if origins.apps_domain and state.get("app_origin") is None:
            # On the main origin an app has no pages: they are at its own origin.
            onward = "/" + str(request.path_params["path"])
            if request.url.query:
                onward += "?" + request.url.query
            if (
                request.cookies.get(self.session_cookie)
                and (await self.who.of_page(request)).signed_in
            ):
                # signed in here: signed in there too, as the dashboard's own link does
                hop = apps_origins.sign_in_hop(self.service, space, slug, onward)
                return RedirectResponse(hop, status_code=303)
            return RedirectResponse(origins.origin(space, slug) + onward, status_code=307)

        caller = await self.who.of_page(request)
        base = None
        if origins.sandboxed and caller.themselves and path.endswith((".html", ".htm")):
            # What this page fetches acts as its visitor on this app only: a pass in
            # its address (the one it came with, or a new one).
            page_pass = state.get("pass") or await self.call(
                self.service.new_pass,
                caller,
                space,
                slug,
                request.cookies.get(self.session_cookie),
            )
            base = f"{self.base}/{space}/{slug}/{PASS_MARK}{page_pass}/"
        page = await self.call(
            self.service.pages.page, caller, space, slug, path, module=webmcp.MODULE, base=base
        )
        return Response(
            page.body,
            media_type=page.media_type,
            headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"},
        )


def _shown(page: str, problem: PastureError | None) -> Response:
    return own_page(page) if problem is None else refused_page(page, problem)


def _types(components: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """Each kind's columns and their types, as the app's vocab declares them."""
    return {
        name: {str(c): str(t) for c, t in spec.get("columns", {}).items()}
        for name, spec in components.items()
        if isinstance(spec, Mapping)
    }


def _row_of(
    fields: Mapping[str, list[str]], columns: Mapping[str, Any], *, whole: bool
) -> dict[str, Any]:
    """A row of a kind from a form's `col.<name>` fields, each typed as its column is: a
    number as a number, a box as a bool; a value that is not its type goes as typed, for
    the app's vocab to refuse with its sentence. An empty field is left out of a new row
    and clears its column in a changed one (`whole`)."""
    row: dict[str, Any] = {}
    for column, kind in columns.items():
        if kind == "bool":
            if whole or f"col.{column}" in fields:
                row[column] = bool(fields.get(f"col.{column}"))
            continue
        text = (fields.get(f"col.{column}") or [""])[0]
        if not text.strip():
            if whole:
                row[column] = None
            continue
        row[column] = _number(text) if kind == "number" else text
    return row


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def _applied(service: Service, caller: Caller, app: str, bundle: Any) -> tuple[str, Result]:
    """`service.apply`, the call `./api/apply` makes, under a call id chosen here: the
    audit keeps the apply under it, so the page can offer that one call's Undo."""
    mark = calls.CallMark(calls.new_id(), caller.eid, caller.door)
    token = calls.mark(mark)
    try:
        return mark.id, service.apply(caller, app, bundle, via_web=True)
    finally:
        calls.unmark(token)


__all__ = ["GUIDE", "PageEndpoints"]
