"""The one façade every door calls: `Service`, with a `Caller` on every call.

A door (command line, web, MCP) turns its input into a call here and renders
the `Result` in its own form. Access is decided here and nowhere else, and a
refusal is a `Refused` whose sentence is the same through every door.

The work is done by one part per concept, each in its own module:

    people.People      who is asking: users, tokens, sessions, passwords
    spaces.Spaces      spaces and their members
    catalog.Catalog    what platform.db says about apps and members; loaded versions, stores
    access.Gate        which app a name reaches for a caller, and who may write to it
    apps.Apps          deploy, read the source back, roll back
    listing.Listing    the command listing, resolving a name, running a command, status
    graph.Graph        apply, query and schema on an app's store
    pages.Pages        an app's files for the web, views for MCP

Who reaches what (DESIGN §5, see `pasture.platform.access`):
- by command (`list_commands`, `run_command`, `apply`, `query`, `schema`
  without `via_web`): every app in every space the caller belongs to;
- on the web (`via_web=True`, `page`, `web_app`): also the public and open
  apps of other spaces; a private app of a space the caller is not in is
  hidden (NotFound), never forbidden.
Writing: `open` lets anyone who reached the app write; otherwise owners and
editors of its space write, and a viewer gets the spec's sentence.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pasture.caller import Caller
from pasture.commands.model import Command, Result
from pasture.platform.access import Gate
from pasture.platform.apps import Apps
from pasture.platform.catalog import Catalog
from pasture.platform.db import PlatformDB, SqlitePlatformDB
from pasture.platform.graph import Graph
from pasture.platform.listing import Listing
from pasture.platform.model import (
    ACCESSES,
    ROLES,
    SIGN_IN,
    VIEWER_WRITES,
    Access,
    AppInfo,
    Page,
    Role,
)
from pasture.platform.origins import Origins, apps_domain_of
from pasture.platform.pages import Pages
from pasture.platform.passes import Passes
from pasture.platform.people import People
from pasture.platform.rewrite import with_base
from pasture.platform.sandbox import Limits
from pasture.platform.secrets import Secrets
from pasture.platform.spaces import Spaces


class Service:
    """Everything pasture does, as one person or nobody."""

    def __init__(
        self,
        home: str | Path,
        *,
        database_url: str | None = None,
        base_url: str = "http://127.0.0.1:8000",
        limits: Limits | None = None,
        apps_domain: str | None = None,
    ) -> None:
        """`home` is the data directory. `database_url` (else `$PASTURE_DATABASE_URL`; ""
        for none) is a PostgreSQL database that keeps the platform's tables and every
        app's store, so several servers can share them. `limits` are what one call of
        an app's code may use (else the defaults, or `$PASTURE_WORKER_…`). With
        `apps_domain`, each app is served on an origin of its own under it
        (`pasture.platform.origins`); without, its pages are sandboxed."""
        if database_url is None:
            database_url = os.environ.get("PASTURE_DATABASE_URL") or None
        self.database_url = database_url
        self.home = Path(home).expanduser()
        self.home.mkdir(parents=True, exist_ok=True)
        self.base_url = base_url.rstrip("/")
        # PostgreSQL keeps everything but a cache of version files (and worker.py's
        # imports) in the data directory: see `pasture.platform.pgdb`
        self.db: PlatformDB
        if database_url:
            from pasture.platform.pgdb import PostgresPlatformDB

            self.db = PostgresPlatformDB(database_url)
        else:
            self.db = SqlitePlatformDB(self.home / "platform.db")
        self.origins = Origins(self.base_url, apps_domain_of(apps_domain))
        self._catalog = Catalog(self.home, self.origins, self.db, limits or Limits.from_env())
        self._passes = Passes(self.db)
        self._people = People(self.db, self.base_url)
        self._spaces = Spaces(self.db, self._catalog, self._people)
        self._gate = Gate(self._catalog)
        self._apps = Apps(self.db, self._catalog, self._people, self._spaces, self._gate)
        self._graph = Graph(self._catalog, self._gate)
        self._listing = Listing(self._catalog, self._gate, self._graph)
        self._pages = Pages(self._catalog, self._gate)
        self._secrets = Secrets(self.db, self._gate)

    # -- who is asking ------------------------------------------------------
    def local_owner(self) -> Caller:
        """The machine's owner (created with a personal space on first use)."""
        return self._people.local_owner()

    def caller_for_token(self, token: str | None) -> Caller:
        """The person a bearer token belongs to; nobody for None; Refused for a bad token."""
        return self._people.caller_for_token(token)

    def caller_for_session(self, session: str | None) -> Caller:
        """The person a session cookie belongs to, or nobody."""
        return self._people.caller_for_session(session)

    def sign_in(self, name: str, password: str) -> str:
        """A new session id for the web's cookie; Refused on a wrong name or password."""
        return self._people.sign_in(name, password)

    def new_session(self, caller: Caller) -> str:
        """A new session id for a signed-in caller (the web's `/signin?token=…` uses it)."""
        return self._people.new_session(caller)

    def session_for_token(self, token: str) -> str:
        """A new session id for the person a token belongs to (the web's `/signin?token=…`)."""
        return self._people.session_for_token(token)

    def sign_out(self, session: str | None) -> None:
        """Forget a session id, and every pass it made; nothing happens for an unknown one."""
        self._people.sign_out(session)
        if session:
            self._passes.end_session(session)

    # -- passes: a person's sign-in for one app's pages (pasture.platform.passes) ---------
    def new_pass(
        self, caller: Caller, space: str, slug: str, session: str | None, *, code: bool = False
    ) -> str:
        """A pass (or, with `code`, a one-time code for one) for the caller on one app."""
        return self._passes.make(
            caller, space, slug, kind="code" if code else "pass", session=session
        )

    def caller_for_pass(self, secret: str, space: str, slug: str) -> Caller:
        """The person a pass names on this app; Unauthorized when it names nobody here."""
        return self._passes.who(secret, space, slug)

    def pass_for_code(self, code: str, space: str, slug: str) -> str:
        """Spend a one-time code made for this app: a pass for the same person."""
        return self._passes.exchange(code, space, slug)

    def end_pass(self, secret: str) -> None:
        """End one pass (signing out of an app's own origin)."""
        self._passes.end(secret)

    def app_at(self, host: str | None) -> tuple[str, str] | None:
        """The app whose own origin a Host names (with an apps domain), or None."""
        return self._catalog.app_at(host)

    def new_token(self, caller: Caller, label: str = "agent") -> str:
        """A new bearer token for the caller (stored hashed, shown once)."""
        return self._people.new_token(caller, label)

    def set_password(self, caller: Caller, password: str, user: str | None = None) -> Result:
        """Set the caller's web password (or, for the machine's owner, another user's)."""
        return self._people.set_password(caller, password, user)

    # -- people and spaces --------------------------------------------------
    def new_user(self, caller: Caller, name: str, password: str | None = None) -> Caller:
        """A new person (with a personal space of the same name); only the owner adds people."""
        return self._people.new_user(caller, name, password)

    def new_space(self, caller: Caller, name: str) -> Result:
        """A new space with the caller as its owner."""
        return self._spaces.new_space(caller, name)

    def add_member(self, caller: Caller, space: str, user: str, role: Role) -> Result:
        """Make `user` a member of `space` in `role` (the space's owners do this)."""
        return self._spaces.add_member(caller, space, user, role)

    def trust_space(self, caller: Caller, space: str, trusted: bool = True) -> Result:
        """Let a space's apps run code, or stop them (`trusted=False`); the owner does this."""
        return self._spaces.trust(caller, space, trusted)

    def spaces(self, caller: Caller) -> list[tuple[str, Role]]:
        """The spaces the caller belongs to, with their role in each."""
        return self._spaces.spaces(caller)

    def role(self, caller: Caller, space: str) -> Role | None:
        """The caller's role in a space, or None when they are not a member."""
        return self._spaces.role(caller, space)

    # -- apps ---------------------------------------------------------------
    def deploy(
        self,
        caller: Caller,
        files: Path | Mapping[str, bytes | str],
        *,
        space: str | None = None,
        app: str | None = None,
        access: Access | None = None,
        title: str | None = None,
    ) -> Result:
        """Check the whole app, then install it as a new version; DeployRefused lists every problem.

        Result text: `deployed ada/runs v3: http://…/ada/runs/\\ncommands: log_run, …`.
        """
        return self._apps.deploy(caller, files, space=space, app=app, access=access, title=title)

    def files(self, caller: Caller, app: str, path: str | None = None) -> Result:
        """An app's source read back: the list of files, or one file's text."""
        return self._apps.files(caller, app, path)

    def rollback(self, caller: Caller, app: str, version: int) -> Result:
        """Make an earlier version of the app current again."""
        return self._apps.rollback(caller, app, version)

    def list_apps(self, caller: Caller) -> list[AppInfo]:
        """Every app in every space the caller belongs to."""
        return self._gate.list_apps(caller)

    def app_info(self, caller: Caller, app: str) -> AppInfo:
        """One app the caller can reach by command (`slug` or `space/slug`)."""
        return self._gate.app_info(caller, app)

    # -- apps' secrets --------------------------------------------------------
    def set_secret(self, caller: Caller, app: str, name: str, value: str) -> Result:
        """Keep a secret for an app's code (`ctx.secrets[name]`); never shown again."""
        return self._secrets.set(caller, app, name, value)

    def secrets(self, caller: Caller, app: str) -> Result:
        """An app's secrets by name and when each was set; never their values."""
        return self._secrets.list(caller, app)

    def remove_secret(self, caller: Caller, app: str, name: str) -> Result:
        """Forget one of an app's secrets."""
        return self._secrets.remove(caller, app, name)

    # -- commands -----------------------------------------------------------
    def list_commands(
        self, caller: Caller, app: str | None = None, *, via_web: bool = False
    ) -> Result:
        """The spec's listing grouped by app; data `{commands: [{at, name, title, …}]}`.

        `via_web=True`: `app` is `space/slug`, reached as the web reaches it.
        """
        return self._listing.list_commands(caller, app, via_web=via_web)

    def resolve_command(
        self, caller: Caller, name: str, app: str | None = None, *, via_web: bool = False
    ) -> tuple[AppInfo, Command]:
        """The one command a call names, or the spec's refusal (ambiguous, unknown)."""
        return self._listing.resolve_command(caller, name, app, via_web=via_web)

    def run_command(
        self,
        caller: Caller,
        name: str,
        args: Mapping[str, Any],
        app: str | None = None,
        *,
        via_web: bool = False,
        typed_text: bool = False,
    ) -> Result:
        """Run a command as the caller; the refusals are the spec's sentences.

        `typed_text=True` when the values are text a person typed (the command
        line, the console): code commands convert it to their declared types
        (`"2"` → 2, `yes` → true, `a,b` → a list). Values from an agent or code
        arrive typed and are never converted. Declared commands convert `"5"` → 5
        for anyone, as before.
        """
        return self._listing.run_command(
            caller, name, args, app, via_web=via_web, typed_text=typed_text
        )

    def status(self, caller: Caller) -> Result:
        """Every reachable app's state, one line each."""
        return self._listing.status(caller)

    # -- the graph ----------------------------------------------------------
    # `via_web=True`: `app` is `space/slug` from a page's address, and a public or
    # open app of a space the caller is not in is reachable (as on the web).
    def apply(self, caller: Caller, app: str, bundles: Any, *, via_web: bool = False) -> Result:
        """Write bundles under the app's access; data `{entities, aliases}`."""
        return self._graph.apply(caller, app, bundles, via_web=via_web)

    def query(self, caller: Caller, app: str, filter: str, *, via_web: bool = False) -> Result:
        """Read under the app's access; data `{rows}`."""
        return self._graph.query(caller, app, filter, via_web=via_web)

    def schema(self, caller: Caller, app: str, *, via_web: bool = False) -> Result:
        """Every component of the app with its columns and types."""
        return self._graph.schema(caller, app, via_web=via_web)

    # -- the web ------------------------------------------------------------
    def web_app(self, caller: Caller, space: str, slug: str) -> AppInfo:
        """An app as the web reaches it: by its space, also public/open apps of other spaces.

        NotFound for a private app the caller is not a member of (hidden, not forbidden).
        """
        return self._gate.web_app(caller, space, slug)

    def page(
        self,
        caller: Caller,
        space: str,
        slug: str,
        path: str,
        *,
        module: str | None = None,
        base: str | None = None,
    ) -> Page:
        """A file of the app for the web; source files (tools.json, vocab.json, …) are NotFound.

        An HTML page comes with a `<base href>` at the app's address, unless it has its own,
        and with `module` (a path under the app's address) a `<script type="module">`
        loading it, unless the page opts out (`pasture.platform.rewrite`). `base` is the
        address its `<base href>` names instead of the app's (a sandboxed page's pass).
        """
        return self._pages.page(caller, space, slug, path, module=module, base=base)

    def view(self, caller: Caller, uri: str) -> Page:
        """A page a command names, by `ui://space/app/file`, for the MCP connector."""
        return self._pages.view(caller, uri)

    def views(self, caller: Caller) -> list[tuple[str, AppInfo]]:
        """Every `ui://…` view the caller can read, with its app."""
        return self._pages.views(caller)

    def close(self) -> None:
        self._catalog.close()
        self.db.close()


__all__ = [
    "ACCESSES",
    "ROLES",
    "SIGN_IN",
    "VIEWER_WRITES",
    "Access",
    "AppInfo",
    "Limits",
    "Page",
    "Role",
    "Service",
    "with_base",
]
