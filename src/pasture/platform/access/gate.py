"""Access: which app a name reaches for a caller, and whether they may write to it.

Who reaches what (DESIGN §5):
- by command: every app in every space the caller belongs to;
- on the web (`via_web=True`): also the public and open apps of other spaces;
  a private app of a space the caller is not in is hidden (NotFound), never
  forbidden.
Writing: `open` lets anyone who reached the app write (anonymous writers as
often as `pasture.platform.access.limits` lets an address); otherwise owners and
editors of its space write, and a viewer gets the spec's sentence.
"""

from __future__ import annotations

from pasture.caller import Caller
from pasture.errors import Forbidden, NotFound, Refused, Unauthorized, UsageError, echo
from pasture.platform.access.limits import Limiter
from pasture.platform.catalog import Catalog
from pasture.platform.nouns import (
    READ_ONLY_GRANT,
    SIGN_IN,
    VIEWER_WRITES,
    AppInfo,
    Loaded,
    Reached,
    and_,
)


def require_writes(caller: Caller) -> None:
    """Refused when the caller came with a grant that only reads (a token, an OAuth client)."""
    if not caller.writes:
        raise Forbidden(READ_ONLY_GRANT)


class Gate:
    """Decides, for one caller and one app name, what they reach and what they may do."""

    def __init__(self, catalog: Catalog, limiter: Limiter | None = None) -> None:
        self.catalog = catalog
        self.limiter = limiter

    def reach(self, caller: Caller, app: str, *, via_web: bool = False) -> Reached:
        """The app `app` names, as this caller reaches it; NotFound when they cannot."""
        app = app.strip().strip("/")
        if "/" in app:
            space, _, slug = app.partition("/")
            access, role = self.catalog.standing(caller, space, slug)
            if access is not None:
                if role is not None:
                    return Reached(space, slug, role)
                if via_web and access != "private":
                    return Reached(space, slug, None)
            if via_web:
                raise NotFound(f"no app {echo(f'{space}/{slug}')}")
            raise self.no_app(caller, app)
        mine, roles = self.catalog.mine(caller)
        found = [(s, a) for s, a in mine if a == app]
        if not found:
            raise self.no_app(caller, app)
        if len(found) > 1:
            ats = sorted(f"{s}/{a}" for s, a in found)
            raise UsageError(
                f"{app} is an app of {and_(sorted(s for s, _ in found))} — say which: "
                f"{' or '.join(ats)}"
            )
        space, slug = found[0]
        return Reached(space, slug, roles.get(space))

    def no_app(self, caller: Caller, app: str) -> Refused:
        app = echo(app)
        if not caller.signed_in:
            return Unauthorized(f"no app {app} — {SIGN_IN}")
        mine = [f"{s}/{a}" for s, a in self.catalog.member_apps(caller)]
        if not mine:
            return NotFound(f"no app {app} — you have no apps yet; deploy one with pasture deploy")
        return NotFound(f"no app {app} — your apps are {', '.join(mine)}")

    def check_write(self, caller: Caller, reached: Reached, loaded: Loaded | None = None) -> None:
        """Refused unless the caller may change the app they reached (`loaded`: its version)."""
        require_writes(caller)
        if loaded is None:
            loaded = self.catalog.load(reached.space, reached.slug)
        if reached.role in ("owner", "editor"):
            return
        if loaded.access == "open":
            if self.limiter is not None and not caller.signed_in:
                self.limiter.open_write(caller.address)  # anyone writes, but not endlessly
            return
        if reached.role == "viewer":
            raise Forbidden(VIEWER_WRITES)
        if not caller.signed_in:
            raise Unauthorized(
                f"sign in to change {reached.at} — anyone reads it, its space's editors change it"
            )
        raise Forbidden(VIEWER_WRITES)

    def list_apps(self, caller: Caller) -> list[AppInfo]:
        """Every app in every space the caller belongs to."""
        mine = self.catalog.member_apps(caller)
        return [
            self.catalog.describe(space, slug, loaded)
            for (space, slug), loaded in zip(mine, self.catalog.loads(mine), strict=True)
        ]

    def app_info(self, caller: Caller, app: str) -> AppInfo:
        """One app the caller can reach by command (`slug` or `space/slug`)."""
        reached = self.reach(caller, app)
        return self.catalog.info(reached.space, reached.slug)

    def web_app(self, caller: Caller, space: str, slug: str) -> AppInfo:
        """An app as the web reaches it: by its space, also public/open apps of other spaces."""
        reached = self.reach(caller, f"{space}/{slug}", via_web=True)
        return self.catalog.info(reached.space, reached.slug)
