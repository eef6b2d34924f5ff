"""An app's settings page on the dashboard: `/settings?app=space/slug`.

What the app is (its title, access, schema, the versions kept, its secrets' names, where its
tools and audit are) and what its people may do to it from here: roll back to a version
kept, or remove it to the trash after a second click. It is one segment, `/settings`, and
takes the app in its query as `/data`, `/tools` and `/audit` do, so no address of it can be
an app's own (`/{space}/{app}/…`).

Every write is the signed-in person's call on the Service, whose rights checks decide; a
refusal is shown in the page as its sentence, and nothing is written. The POST comes with
the session cookie, so it is held to the same origin check as every dashboard form
(`Who.check_cookie_post`). The title and the access change here as `pasture app set` changes
them (its space's owners and editors), without a deploy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from pasture.caller import Caller
from pasture.errors import PastureError, UsageError
from pasture.platform import ACCESS_SAID, Access, AppInfo
from pasture.web import own_pages
from pasture.web._failures import own_page, refused_page
from pasture.web.endpoints import Endpoints


class SettingsEndpoints(Endpoints):
    """`GET /settings?app=S/A` and its forms' `POST /settings`."""

    async def settings(self, request: Request) -> Response:
        caller = await self.who.of_page(request)
        if not caller.signed_in:
            return RedirectResponse("/signin", status_code=303)
        app = request.query_params.get("app", "").strip()
        if not app:
            raise UsageError("say which app: /settings?app=space/slug, as the dashboard links")
        return own_page(await self.page_of(caller, app))

    async def change(self, request: Request) -> Response:
        """The page's forms: `do=change&title=T&access=A`, `do=rollback&version=N`,
        `do=remove` (asks again) and `do=remove&sure=yes` (moves it to the trash)."""
        fields = parse_qs((await request.body()).decode("utf-8", "replace"))
        caller = await self.who.of_page(request)  # a POST from another site is refused here
        if not caller.signed_in:
            return RedirectResponse("/signin", status_code=303)

        def one(name: str) -> str:
            return fields.get(name, [""])[0].strip()

        app, do = one("app"), one("do")
        try:
            if do == "change":
                access = one("access")  # the Service refuses any but the three
                done = await self.call(
                    self.service.change_app,
                    caller,
                    app,
                    title=fields.get("title", [""])[0],
                    access=cast(Access, access),
                )
                return own_page(await self.page_of(caller, app, done=done.text))
            if do == "rollback":
                version = one("version").removeprefix("v")
                if not version.isdigit():
                    raise UsageError(f"roll back to which version? {version[:20]!r} is none")
                done = await self.call(self.service.rollback, caller, app, int(version))
                return own_page(await self.page_of(caller, app, done=done.text))
            if do == "remove" and one("sure") != "yes":
                return own_page(await self.page_of(caller, app, asking=True))
            if do == "remove":
                done = await self.call(self.service.remove_app, caller, app)
                page = own_pages.message_page("Removed", done.text, session=True)
                return own_page(page)
            raise UsageError("this form can change the title and access, roll back or remove")
        except PastureError as e:  # said in the page, above what it is about
            return refused_page(await self.page_of(caller, app, problem=e.sentence), e)

    async def page_of(
        self,
        caller: Caller,
        app: str,
        *,
        done: str | None = None,
        problem: str | None = None,
        asking: bool = False,
    ) -> str:
        # reaching the app decides whether the page is shown at all (NotFound else)
        reached = await self.call(self.service.gate.reach, caller, app, via_web=True)
        schema = await self.call(self.service.graph.schema, caller, reached.at, via_web=True)
        at, space, slug = reached.at, reached.space, reached.slug
        info = await self.call(self.service.catalog.info, space, slug)
        # the versions kept, and what each weighs, as the space's quota counts them
        kept = await self.call(self.service.apps.disk.kept, space)
        roles = dict(await self.call(self.service.spaces.of, caller))
        secrets: list[Mapping[str, Any]] = []
        hidden = None
        if space not in roles:
            # Asked, the Service would say the app is not there for this person to change:
            # true, and no help beside the page they are reading.
            hidden = f"only the owners and editors of {space} see the names of its secrets"
        else:
            try:
                found = await self.call(self.service.secrets.list, caller, at)
                secrets = found.data.get("secrets", [])
            except PastureError as e:  # a viewer uses the app but is not shown its secrets
                hidden = e.sentence
        return settings_page(
            caller,
            info,
            schema.text,
            schema.data.get("components", {}),
            versions=sorted(kept.get(slug, {}).items(), reverse=True),
            secrets=secrets,
            secrets_hidden=hidden,
            owner=roles.get(space) == "owner",
            may_change=roles.get(space) in ("owner", "editor"),
            done=done,
            problem=problem,
            asking=asking,
        )


def settings_page(
    caller: Caller,
    app: AppInfo,
    schema_text: str,
    components: Mapping[str, Any],
    *,
    versions: Sequence[tuple[int, int]],
    secrets: Sequence[Mapping[str, Any]],
    secrets_hidden: str | None,
    owner: bool,
    may_change: bool = False,
    done: str | None,
    problem: str | None,
    asking: bool,
) -> str:
    """The page. Each component is shown as `graph_schema` and `pasture query` describe it
    (its line of the schema's text: columns, types, defaults, indexes)."""
    lines = dict(line.split(": ", 1) for line in schema_text.splitlines()[1:] if ": " in line)
    kinds = [
        {
            "name": name,
            "platform": bool(spec.get("platform")) if isinstance(spec, Mapping) else False,
            "columns": lines.get(name, ""),
        }
        for name, spec in components.items()
    ]
    kinds.sort(key=lambda k: (k["platform"], k["name"]))
    return own_pages._render(
        "app_settings.html",
        f"Settings of {app.at} · pasture",
        caller,
        "/",
        app={
            "at": app.at,
            "title": app.title or app.slug,
            "access": app.access,
            "version": app.version,
            "url": app.url,
            "code": app.code,
        },
        kinds=kinds,
        versions=[{"version": v, "kb": f"{b / 1024:.1f}"} for v, b in versions],
        secrets=[{"name": str(s["name"]), "updated": str(s.get("updated", ""))} for s in secrets],
        secrets_hidden=secrets_hidden,
        owner=owner,
        may_change=may_change,
        accesses=list(ACCESS_SAID.items()),
        done=done,
        problem=problem,
        asking=asking,
    )


__all__ = ["SettingsEndpoints", "settings_page"]
