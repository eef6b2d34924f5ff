"""The one façade every door calls: `Service`, with a `Caller` on every call.

A door (command line, web, MCP) turns its input into a call here and renders
the `Result` in its own form. Access is decided in the platform, by the part
that owns what is asked for, never by a door; a refusal is a `Refused` whose
sentence is the same through every door.

A door holds the parts it uses, each a concept of its own, or calls a method of
`Service` that does what no one part can (records the call in the audit, tells
every server of a change, or asks two parts at once):

    people     who is asking: users, passwords, sessions  (pasture.platform.auth.people)
    passes     a person's sign-in for one app's pages     (pasture.platform.auth.app_passes)
    oauth      agents signed in with OAuth 2.1            (pasture.platform.auth.oauth)
    spaces     spaces and their members                   (pasture.platform.access.spaces)
    gate       which app a name reaches for a caller      (pasture.platform.access.gate)
    limiter    how fast anyone may call                   (pasture.platform.access.limits)
    audit_log  every write and command call, kept         (pasture.platform.access.audit)
    apps       an app's versions: its files read back     (pasture.platform.apps.lifecycle)
    secrets    apps' secrets, by name                     (pasture.platform.apps.app_secrets)
    transfer   an app moved to one file and back          (pasture.platform.apps.transfer)
    backups    the whole server's, its owner's            (pasture.platform.backups)
    pages      an app's files for the web, views for MCP  (pasture.platform.apps.pages)
    listing    the commands of a caller's apps, found     (pasture.platform.listing)
    graph      reading an app's store, and its schema     (pasture.platform.graph)
    history    one call undone, an app restored to a time (pasture.platform.history)
    catalog    what the platform database says of apps    (pasture.platform.catalog)
    bus        every change, told to every server         (pasture.platform.db.bus)
    trash      removed apps and spaces, held 30 days      (pasture.platform.apps.trash)

Who reaches what (DESIGN §5, see `pasture.platform.access.gate`):
- by command (without `via_web`): every app in every space the caller belongs to;
- on the web (`via_web=True`): also the public and open apps of other spaces; a
  private app of a space the caller is not in is hidden (NotFound), never forbidden.
Writing: `open` lets anyone who reached the app write; otherwise owners and
editors of its space write, and a viewer gets the spec's sentence.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pasture.caller import NOBODY, Caller
from pasture.errors import Forbidden, NotFound, PastureError, Refused, Unauthorized, UsageError
from pasture.long_calls import LongCall
from pasture.platform.access.audit import (
    Audit,
    args_shape,
    bundles_shape,
    files_shape,
    lines,
    since_of,
)
from pasture.platform.access.gate import Gate
from pasture.platform.access.limits import Limiter, Rates
from pasture.platform.access.spaces import Spaces
from pasture.platform.apps.app_secrets import Secrets
from pasture.platform.apps.disk import Disk
from pasture.platform.apps.lifecycle import Apps
from pasture.platform.apps.origins import Origins, apps_domain_of
from pasture.platform.apps.pages import Pages
from pasture.platform.apps.transfer import Transfer, file_shape
from pasture.platform.apps.trash import Trash
from pasture.platform.auth.app_passes import Passes
from pasture.platform.auth.people import People
from pasture.platform.auth.tokens import ID as TOKEN_ID
from pasture.platform.auth.tokens import Tokens
from pasture.platform.backups import Backups
from pasture.platform.catalog import Catalog
from pasture.platform.db.bus import Change
from pasture.platform.db.platform_db import PlatformDB, SqlitePlatformDB
from pasture.platform.db.tool_lists import ToolLists
from pasture.platform.graph import Graph
from pasture.platform.history import History
from pasture.platform.listing import Listing
from pasture.platform.nouns import ACCESSES, OAUTH_ACCESS_PREFIX, Access, Resolved, Role
from pasture.platform.running import Running
from pasture.platform.workers.sandbox import Limits
from pasture.result import Result
from pasture.store import pages
from pasture.store.journal import history_days as history_days_of

if TYPE_CHECKING:
    from pasture.platform.auth.oauth import OAuth


AUDIT_DOORS = ("web", "webmcp", "mcp", "cli")  # Caller.door


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
        audit_days: float | None = None,
        audit: bool | None = None,
        rates: Rates | None = None,
        versions_kept: int | None = None,
        space_quota: int | None = None,
        max_rows: int | None = None,
        history_days: float | None = None,
    ) -> None:
        """`home` is the data directory. `database_url` (else `$PASTURE_DATABASE_URL`; ""
        for none) is a PostgreSQL database that keeps the platform's tables and every
        app's store, so several servers can share them. `limits` are what one call of
        an app's code may use (else the defaults, or `$PASTURE_WORKER_…`). With
        `apps_domain`, each app is served on an origin of its own under it
        (`pasture.platform.apps.origins`); without, its pages are sandboxed. The audit keeps
        `audit_days` days of calls (else `$PASTURE_AUDIT_DAYS`, else 90); `audit=False`
        (or `$PASTURE_AUDIT=off`) keeps none (`pasture.platform.access.audit`). `rates` are how
        fast a token, an address and anonymous writers may call (else the defaults, or
        `$PASTURE_RATE…`): the doors and the gate ask `self.limiter`
        (`pasture.platform.access.limits`), which also slows and stops repeated failed sign-ins.
        Each app keeps its newest `versions_kept` versions (else `$PASTURE_VERSIONS_KEPT`,
        else 20), and a space's apps at most `space_quota` megabytes of them (else
        `$PASTURE_SPACE_QUOTA`, else 1,024; `pasture.platform.apps.disk`). A read answers
        at most `max_rows` rows, and says how to read on (else `$PASTURE_MAX_ROWS`, else
        1,000; `pasture.store.pages`). Each store's journal keeps what calls changed
        `history_days` days (else `$PASTURE_HISTORY_DAYS`, else 30; `pasture.store.journal`),
        which is how far `undo` and `app restore` reach."""
        if database_url is None:
            database_url = os.environ.get("PASTURE_DATABASE_URL") or None
        self.database_url = database_url
        # whole: a worker's sandbox names its folders, which a relative path cannot
        self.home = Path(home).expanduser().absolute()
        self.home.mkdir(parents=True, exist_ok=True)
        self.base_url = base_url.rstrip("/")
        # PostgreSQL keeps everything but a cache of version files (and worker.py's
        # imports) in the data directory: see `pasture.platform.db.postgres_db`
        self.db: PlatformDB
        if database_url:
            from pasture.platform.db.postgres_db import PostgresPlatformDB

            self.db = PostgresPlatformDB(database_url)
        else:
            self.db = SqlitePlatformDB(self.home / "platform.db")
        self.origins = Origins(self.base_url, apps_domain_of(apps_domain))
        self.catalog = Catalog(
            self.home,
            self.origins,
            self.db,
            limits or Limits.from_env(),
            max_rows=pages.max_rows(max_rows),
            history_days=history_days_of(history_days),
        )
        self.passes = Passes(self.db)
        self._tokens = Tokens(self.db)
        self._oauth_provider: OAuth | None = None  # made on first use: it loads the MCP SDK
        self.people = People(self.db, self.base_url)
        self.spaces = Spaces(self.db, self.catalog, self.people)
        # counted with every process on the same data (`pasture.platform.access.leases`)
        rates = Rates.from_env() if rates is None else rates
        self.limiter = Limiter(rates, counts=self.db.counts())
        self.gate = Gate(self.catalog, self.limiter)
        disk = Disk(
            self.db, self.catalog.app_dir, versions_kept=versions_kept, space_quota=space_quota
        )
        self.apps = Apps(self.db, self.catalog, self.people, self.spaces, self.gate, disk)
        self.transfer = Transfer(self.db, self.catalog, self.people, self.spaces, self.gate, disk)
        # Every write, deploy and change of who reaches what, told to every server.
        self.bus = self.db.bus()
        # A worker that registered or removed a command: told as the app's commands moving.
        self.catalog.on_commands = lambda space, slug: self.bus.publish(
            Change("commands", space, slug)
        )
        self.graph = Graph(self.catalog, self.gate, self.bus)
        self._running = Running(self.catalog, self.gate, self.graph)
        self.listing = Listing(self.catalog, self.gate, self._running)
        self.pages = Pages(self.catalog, self.gate)
        self.secrets = Secrets(self.db, self.gate)
        self.audit_log = Audit(self.db, days=audit_days, on=audit)
        # Undo of one call, restore to a moment (`pasture.platform.history`).
        self.history = History(self.catalog, self.gate, self.people, self.audit_log, self.bus)
        # What was removed, held 30 days (`pasture.platform.apps.trash`).
        self.trash = Trash(self.db, self.catalog, self.people, self.gate)
        # Which release of the MCP connector's tools each client listed (`pasture.mcp`).
        self.tool_lists = ToolLists(self.db)
        # The whole server's backups, its owner's (`pasture.platform.backups`).
        self.backups = Backups(self.home, database_url, self.people, self.audit_log.flush)
        self._closed = False

    def reach_version(self) -> int:
        """How many times who may reach what has been taken away, on any server (a member
        taken out, a token or session ended, an app's access changed: `tables.REACH_MOVES`).
        Read after reading an app, the same number as before means nobody lost it before
        that read, whether or not the bus has told this process yet."""
        row = self.db.one("SELECT version FROM reach WHERE one = 1")
        return int(row[0]) if row is not None else 0

    # -- who is asking ------------------------------------------------------
    def local_owner(self) -> Caller:
        """The machine's owner (created with a personal space on first use), at the command
        line: the audit says so of their calls."""
        return self.people.local_owner().at_door("cli", "command line")

    def caller_for_token(self, token: str | None) -> Caller:
        """The person a bearer token belongs to; nobody for None; Refused for a bad token."""
        if token is None or not token.strip():
            return NOBODY
        found = self._tokens.caller_for(token.strip()) or self._oauth.caller_for(token.strip())
        if found is None:
            raise Unauthorized(
                "that token is not one this server gave out — make one with pasture token new"
            )
        return found

    def caller_at_once(self, token: str) -> Caller | None:
        """`caller_for_token`'s answer when memory holds it and the database says without
        waiting that it still stands: no lock waited on, no round trip, no write — an event
        loop may ask. None when only `caller_for_token`, in a thread, can tell."""
        token = token.strip()
        if not token:
            return NOBODY
        if token.startswith(OAUTH_ACCESS_PREFIX):
            provider = self._oauth_provider  # made on first use, which is not here
            return None if provider is None else provider.caller_at_once(token)
        return self._tokens.caller_at_once(token)

    def sign_in(self, name: str, password: str, address: str | None = None) -> str:
        """A new session id for the web's cookie; Refused on a wrong name or password, and
        TooMany after too many failures for the name or the `address` it came from."""
        return self._trying(name, address, lambda: self.people.sign_in(name, password))

    def _trying(self, name: str | None, address: str | None, sign_in: Callable[[], str]) -> str:
        """One try to sign in, counted by the limiter: slowed, then refused, after failures."""
        tries = self.limiter.sign_in
        tries.attempt(name, address)
        try:
            session = sign_in()
        except Unauthorized:
            raise  # a failure, and counted as one
        except BaseException:
            tries.not_counted(name, address)
            raise
        tries.succeeded(name, address)
        return session

    def new_session(self, caller: Caller) -> str:
        """A new session id for a person signed in themselves (never from a token)."""
        self.people.require_themselves(caller, "sign a browser in")
        return self.people.new_session(caller)

    def sign_out(self, session: str | None) -> None:
        """Forget a session id, and every pass it made; nothing happens for an unknown one."""
        self.people.sign_out(session)
        if session:
            self.passes.end_session(session)
            self.bus.publish(Change("access"))

    # -- passes: a person's sign-in for one app's pages (auth.app_passes) --------------
    def new_pass(
        self,
        caller: Caller,
        space: str,
        slug: str,
        session: str | None,
        *,
        code: bool = False,
        bound: str = "",
    ) -> str:
        """A pass (or, with `code`, a one-time code for one, `bound` to the browser that
        asked for it) for the caller on one app."""
        self.people.require_themselves(caller, "open an app's pages as you")
        return self.passes.make(
            caller, space, slug, kind="code" if code else "pass", session=session, bound=bound
        )

    def end_pass(self, secret: str) -> None:
        """End one pass (signing out of an app's own origin)."""
        self.passes.end(secret)
        self.bus.publish(Change("access"))

    def new_token(
        self,
        caller: Caller,
        label: str = "agent",
        *,
        writes: bool = True,
        spaces: list[str] | None = None,
        user: str | None = None,
    ) -> str:
        """A new bearer token (stored hashed, shown once): the caller's own, or, for the
        server's owner, `user`'s. It reads and writes, or only reads; in all of its person's
        spaces or in `spaces`; never more than the caller's own sign-in."""
        self.people.require_themselves(caller, "make a token")
        who = self._person(caller, user)
        member_of = {s for s, _ in self.spaces.of(who)}
        return self._tokens.new(
            caller, who, label, writes=writes, spaces=spaces, member_of=member_of
        )

    def tokens(self, caller: Caller, user: str | None = None) -> Result:
        """A person's tokens and OAuth grants: id, label, scope, made, last used; no secret."""
        self.people.require_themselves(caller, "see your tokens and grants")
        who = self._person(caller, user)
        listed = self._tokens.listing(who)
        grants = self._oauth.grants(who)
        if not grants:
            return listed
        # a grant's calls are recorded as `client NAME (ID)`: its last one is its last use
        used = self.audit_log.last_uses(who.eid or "", "client ")
        for grant in grants:
            mark = f"({grant['id'][:TOKEN_ID]})"
            seen = [at for via, at in used.items() if via.endswith(mark)]
            grant["last_used"] = max(seen) if seen else None
        lines = "".join(
            f"\n{g['id']}  {g['label']} — {g['scope']}; approved {g['created']}, "
            f"last used {g['last_used'] or 'never'}"
            for g in grants
        )
        text = listed.text if listed.data["tokens"] else f"{who.name}:"
        return Result(text + lines, {"tokens": listed.data["tokens"] + grants})

    def revoke_token(self, caller: Caller, token_id: str, user: str | None = None) -> Result:
        """End a token, or an OAuth client's grant, by the id `tokens` shows: at once."""
        self.people.require_themselves(caller, "end a token or a grant")
        who = self._person(caller, user)
        if self._oauth.end_grant(token_id.strip().lower(), who):
            result = Result(
                f"grant {token_id.strip()} is revoked: its client's tokens sign nobody in "
                "from now on",
                {"id": token_id.strip()},
            )
        else:
            result = self._tokens.revoke(who, token_id)
        self.bus.publish(Change("access"))  # what the token had open ends too
        return result

    def _person(self, caller: Caller, user: str | None) -> Caller:
        """The caller, or — for the server's owner — the person named `user`."""
        self.people.require_signed_in(caller)
        if user is None or user.lower() == (caller.name or "").lower():
            return caller
        self.people.require_admin(caller, "acts for another person")
        found = self.people.by_name(user)
        if found is None:
            raise NotFound(f"no user {user} — pasture user new {user} adds them")
        return found

    # -- OAuth: the consent page's questions (auth.oauth) ------------------------------
    @property
    def oauth(self) -> OAuth:
        """The provider the web door's OAuth routes (the MCP SDK's) ask."""
        return self._oauth

    @property
    def _oauth(self) -> OAuth:
        if self._oauth_provider is None:
            from pasture.platform.auth.oauth import OAuth

            self._oauth_provider = OAuth(self.db, self.base_url)
        return self._oauth_provider

    def oauth_decide(
        self,
        caller: Caller,
        request: str,
        *,
        approve: bool,
        writes: bool,
        spaces: list[str] | None,
    ) -> str:
        """The signed-in person's answer to a client; the address to send the browser to."""
        self.people.require_themselves(caller, "approve an agent")
        member_of = {s for s, _ in self.spaces.of(caller)}
        return self._oauth.decide(
            caller, request, approve=approve, writes=writes, spaces=spaces, member_of=member_of
        )

    # -- people and spaces --------------------------------------------------
    def add_member(self, caller: Caller, space: str, user: str, role: Role) -> Result:
        """Make `user` a member of `space` in `role` (the space's owners do this)."""
        result = self.spaces.add_member(caller, space, user, role)
        self.bus.publish(Change("access", space))
        return result

    def trust_space(self, caller: Caller, space: str, trusted: bool = True) -> Result:
        """Let a space's apps run code, or stop them (`trusted=False`); the owner does this."""
        result = self.spaces.trust(caller, space, trusted)
        self.bus.publish(Change("access", space))
        return result

    def remove_member(self, caller: Caller, space: str, user: str) -> Result:
        """Take a person out of a space (its owners do this)."""
        result = self.spaces.remove_member(caller, space, user)
        self.bus.publish(Change("access", space))
        return result

    def remove_user(self, caller: Caller, name: str) -> Result:
        """Take a person off the server: their sessions, tokens and grants end at once."""
        user = self.people.remove_user(caller, name)
        self.people.sessions.end_all(user)
        self._tokens.end_all(user)
        self._oauth.end_all(user)
        self.people.forget_user(user)
        self.bus.publish(Change("access"))
        return Result(
            f"{user.name} is removed: their sessions, tokens and agents' grants have ended; "
            "what they wrote stays in the apps",
            {"user": user.name},
        )

    def sign_in_link(self, caller: Caller, user: str | None = None) -> str:
        """A one-time link code (ten minutes) that signs a browser in as the caller, or —
        for the server's owner — as `user`."""
        self.people.require_themselves(caller, "make a sign-in link")
        return self.people.sessions.new_link(self._person(caller, user))

    def session_for_link(self, code: str, address: str | None = None) -> str:
        """Spend a sign-in link: a new session id; Unauthorized when it is spent or old, and
        TooMany after too many failures from `address`."""
        return self._trying(None, address, lambda: self.people.sessions.session_for_link(code))

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
        long_call: LongCall | None = None,
    ) -> Result:
        """Check the whole app, then install it as a new version; DeployRefused lists every problem.

        Result text: `deployed ada/runs v3: http://…/ada/runs/\\ncommands: log_run, …`.
        `long_call`: the door's watch (a bar for a big app).
        """
        with self.audit_log.call(caller, "deploy", None, files, files_shape) as noted:
            result = self.apps.deploy(
                caller,
                files,
                space=space,
                app=app,
                access=access,
                title=title,
                noted=noted,
                long_call=long_call,
            )
        self._deployed(result)
        return result

    def rollback(
        self, caller: Caller, app: str, version: int, *, long_call: LongCall | None = None
    ) -> Result:
        """Make an earlier version of the app current again (`long_call`: the door's watch)."""
        with self.audit_log.call(caller, "rollback", None, version, _version) as noted:
            result = self.apps.rollback(caller, app, version, noted, long_call)
        self._deployed(result)
        return result

    def change_app(
        self,
        caller: Caller,
        app: str,
        *,
        title: str | None = None,
        access: Access | None = None,
    ) -> Result:
        """Set an app's title or access without a deploy (its space's owners and editors)."""
        asked = {"title": title, "access": access}
        with self.audit_log.call(caller, "app set", None, asked, _settings) as noted:
            result = self.apps.change(caller, app, title=title, access=access, noted=noted)
        self._deployed(result)  # every server's listing and live tool lists hear of it
        return result

    # -- an app moved to one file and back (apps.transfer) ---------------------------
    def export_app(
        self, caller: Caller, app: str, file: str | Path, *, long_call: LongCall | None = None
    ) -> Result:
        """Write an app — every version kept, its data as JSON lines — to one new file; its
        space's owners do this. `long_call`: the door's watch (a bar, a stop)."""
        with self.audit_log.call(caller, "export", None, file, file_shape) as noted:
            return self.transfer.export(caller, app, file, noted=noted, long_call=long_call)

    def import_app(
        self,
        caller: Caller,
        file: str | Path,
        *,
        space: str | None = None,
        slug: str | None = None,
        long_call: LongCall | None = None,
    ) -> Result:
        """Make the app an export holds, in a space the caller owns (their own by default),
        as `slug` (its own name by default); refused with every problem, nothing written."""
        with self.audit_log.call(caller, "import", None, file, file_shape) as noted:
            result = self.transfer.import_(
                caller, file, space=space, slug=slug, noted=noted, long_call=long_call
            )
        self._deployed(result)
        return result

    # -- the trash (apps.trash) ------------------------------------------------------
    def remove_app(self, caller: Caller, app: str) -> Result:
        """Move an app to the trash for `trash.DAYS` days (its space's owners do this)."""
        with self.audit_log.call(caller, "remove", None, app, _named) as noted:
            result = self.trash.remove_app(caller, app, noted)
        space, _, slug = str(result.data["removed"]).partition("/")
        self.bus.publish(Change("deploy", space, slug))  # gone, on every server
        return result

    def remove_space(self, caller: Caller, space: str) -> Result:
        """Move a space and its apps to the trash (its owners, or the server's owner)."""
        with self.audit_log.call(caller, "remove", None, space, _named):
            result = self.trash.remove_space(caller, space)
        self.bus.publish(Change("deploy", str(result.data["removed"])))
        return result

    def restore_from_trash(self, caller: Caller, name: str) -> Result:
        """Bring an app or a space back from the trash as it was."""
        with self.audit_log.call(caller, "trash restore", None, name, _named) as noted:
            result = self.trash.restore(caller, name, noted)
        space, _, slug = str(result.data["restored"]).partition("/")
        self.bus.publish(Change("deploy", space, slug or None))
        return result

    def _deployed(self, result: Result) -> None:
        space, _, slug = str(result.data["at"]).partition("/")
        self.bus.publish(Change("deploy", space, slug))

    # -- commands -----------------------------------------------------------
    def listing_version(self, *, at_once: bool = False) -> tuple[object, ...] | None:
        """A value that changes whenever `list_commands` may answer anybody differently:
        the database's stamp (a deploy, a rollback, a member added or taken out, here or in
        another process) and the catalog's own changes (a worker describing its commands).
        Taken before the listing it is to vouch for. `at_once`: only if it can be read
        without waiting (`PlatformDB.stamp_at_once`), else None."""
        stamp = self.db.stamp_at_once() if at_once else self.db.stamp()
        return None if stamp is None else (stamp, self.catalog.changes)

    def run_command(
        self,
        caller: Caller,
        command: str | Resolved,
        args: Mapping[str, Any],
        app: str | None = None,
        *,
        via_web: bool = False,
        typed_text: bool = False,
        confirmed: bool = False,
        long_call: LongCall | None = None,
    ) -> Result:
        """Run a command as the caller, recorded in the audit; the refusals are the spec's
        sentences.

        `command` is its name, found here among the caller's apps (in `app` when given),
        or what `listing.resolve` found for this caller, run as it is: a door that
        showed it or asked about it first does not have it looked up again.

        `typed_text=True` when the values are text a person typed (the command
        line, the console): code commands convert it to their declared types
        (`"2"` → 2, `yes` → true, `a,b` → a list). Values from an agent or code
        arrive typed and are never converted. Declared commands convert `"5"` → 5
        for anyone, as before.

        `confirmed=True` when the person said yes to running it — asked by the door, or
        `"confirm": true` in the call where nothing could ask them. A command that is hard
        to undo (`consequential`) is otherwise not run: the refusal says what it would run
        and how to confirm it (`pasture.asking.unconfirmed`).

        `long_call` is the door's watch on the call (`pasture.long_calls`): what the code
        reports with `ctx.progress` reaches its listener, and `cancel()` stops it.
        """
        name = command.found.agent_name if isinstance(command, Resolved) else command
        with self.audit_log.call(caller, "command", name, args, args_shape) as noted:
            resolved = (
                command
                if isinstance(command, Resolved)
                else self.listing.resolve(caller, command, app, via_web=via_web, noted=noted)
            )
            return self._running.run(
                caller,
                resolved,
                args,
                typed_text=typed_text,
                confirmed=confirmed,
                noted=noted,
                long_call=long_call,
            )

    def call_handler(
        self,
        caller: Caller,
        app: str,
        name: str,
        args: Any,
        *,
        via_web: bool = False,
        long_call: LongCall | None = None,
    ) -> Result:
        """Run one of an app's handlers (`worker.py`'s `@query`, `@mutation`, `@action`) as its
        pages call them, as the caller: its input is the handler's to check, not its tool's
        args. Data: `{result}` (or what the handler answered as `{text, data}`). `long_call`
        as for `run_command`."""
        with self.audit_log.call(caller, "handler", name, args, args_shape) as noted:
            return self._running.call_handler(
                caller, app, name, args, via_web=via_web, noted=noted, long_call=long_call
            )

    # -- the graph ----------------------------------------------------------
    # `via_web=True`: `app` is `space/slug` from a page's address, and a public or
    # open app of a space the caller is not in is reachable (as on the web).
    def apply(self, caller: Caller, app: str, bundles: Any, *, via_web: bool = False) -> Result:
        """Write bundles under the app's access; data `{entities, aliases}`."""
        with self.audit_log.call(caller, "apply", None, bundles, bundles_shape) as noted:
            return self.graph.apply(caller, app, bundles, via_web=via_web, noted=noted)

    # -- views ------------------------------------------------------------
    def view_uris(self, space: str, slug: str) -> list[str]:
        """The `ui://` addresses of an app's views, to say they changed: names only, and
        none for an app that is gone (reading a view asks who reads)."""
        try:
            views = self.catalog.info(space, slug).views
        except Refused:
            return []
        return [f"ui://{space}/{slug}/{view}" for view in views]

    # -- undo and restore (history) ------------------------------------------------
    def undo(
        self,
        caller: Caller,
        call: str,
        app: str | None = None,
        *,
        via_web: bool = False,
        long_call: LongCall | None = None,
    ) -> Result:
        """Put back what one call changed (`pasture.platform.history`); itself a call, which
        can be undone. `long_call`: the door's watch (a bar, a stop)."""
        with self.audit_log.call(caller, "undo", call.strip().lower()[:40], call) as noted:
            return self.history.undo(
                caller, call, app, via_web=via_web, noted=noted, long_call=long_call
            )

    def restore_app(
        self, caller: Caller, app: str, when: str, *, long_call: LongCall | None = None
    ) -> Result:
        """Put an app's data back as it was at `when` (`pasture.platform.history`); itself a
        call, which can be undone. `long_call`: the door's watch (a bar, a stop)."""
        with self.audit_log.call(caller, "restore", None, when) as noted:
            return self.history.restore(caller, app, when, noted=noted, long_call=long_call)

    # -- the audit (access.audit) ------------------------------------------------------
    def audit(
        self,
        caller: Caller,
        app: str | None = None,
        since: str | None = None,
        *,
        mine: bool = False,
        limit: int = 100,
    ) -> Result:
        """The newest `limit` calls recorded of an app, for the owners of its space; or, with
        `mine` or no app, the caller's own, through every door, token and client. `since`
        is `2026-12-01`, `2026-12-01T09:30` or a while ago (`1h`, `2d`). Data `{records}`."""
        self.people.require_signed_in(caller)
        after = None if since is None else since_of(since)
        at = None
        if app is not None:
            reached = self.gate.reach(caller, app)
            at = reached.at
            if reached.role != "owner" and not mine:
                raise Forbidden(
                    f"only the owners of {reached.space} read {at}'s audit — pasture audit "
                    "--mine shows your own calls"
                )
        user = caller.eid if mine or at is None else None
        # a grant for some spaces reads of those alone
        records = self.audit_log.read(
            app=at, user=user, since=after, spaces=caller.spaces, limit=limit
        )
        whose = f"{caller.name}'s calls" if user is not None else "calls"
        where = f" in {at}" if at is not None else ""
        when = f" since {after}" if after is not None else ""
        if not records:
            return Result(f"no {whose}{where} recorded{when}", {"records": []})
        head = f"{whose}{where}{when}: the last {len(records)}, oldest first"
        text = "\n".join([head, *lines(records, apps=at is None)])
        return Result(text, {"records": records})

    def audit_page(
        self,
        caller: Caller,
        app: str | None = None,
        *,
        since: str | None = None,
        until: str | None = None,
        person: str | None = None,
        door: str | None = None,
        outcome: str | None = None,
        before: str | None = None,
        limit: int = 50,
        mine: bool = False,
    ) -> Result:
        """One page of the audit, newest first: an app's calls for the owners of its space
        (narrowed to one `person`'s), or with `mine` or no app the caller's own;
        by `door`, `outcome` (`ok`, `refused`) and time. Data `{records, next, whole}`:
        `next` is the cursor (`before=`) of the older page, or None; `whole` whether it is
        the app's whole audit rather than the caller's own calls."""
        self.people.require_signed_in(caller)
        after = None if since is None else since_of(since)
        try:
            ending = None if until is None else since_of(until)
        except UsageError as e:
            raise UsageError(e.sentence.replace("--since", "--until")) from None
        if door is not None and door not in AUDIT_DOORS:
            raise Refused(f"door is one of {', '.join(AUDIT_DOORS)}, not {door[:40]}")
        if outcome is not None and outcome not in ("ok", "refused"):
            raise Refused(f"outcome is ok or refused, not {outcome[:40]}")
        if before is not None and not before.isdigit():
            raise Refused("that page's address is not one the audit gave — start from its first")
        at, whole = None, False
        if app is not None:
            reached = self.gate.reach(caller, app)
            at, whole = reached.at, reached.role == "owner" and not mine
            if reached.role != "owner" and not mine:
                raise Forbidden(
                    f"only the owners of {reached.space} read {at}'s audit — pasture audit "
                    "--mine shows your own calls"
                )
        records, cursor = self.audit_log.page(
            app=at,
            user=None if whole else caller.eid,
            spaces=caller.spaces,
            since=after,
            until=ending,
            person=person if whole else None,
            door=door,
            outcome=outcome,
            before=None if before is None else int(before),
            limit=limit,
        )
        whose = "calls" if whole else f"{caller.name}'s calls"
        where = f" in {at}" if at is not None else ""
        text = (
            f"{len(records)} of {whose}{where}, newest first" if records else f"no {whose}{where}"
        )
        return Result(text, {"records": records, "next": cursor, "whole": whole})

    def readiness(self) -> dict[str, str]:
        """Whether this server can serve a call, for `/readyz`: its database answers, and a
        worker process for apps' code can start — each `ok`, or the sentence why not."""
        if self._closed:
            return {"database": "this server is stopping", "workers": "this server is stopping"}
        said = {"database": "ok", "workers": self.catalog.workers.can_start() or "ok"}
        try:
            self.db.stamp()
        except PastureError as e:  # a database gone, a disk full: its sentence
            said["database"] = e.sentence
        except Exception as e:  # anything else, by its kind
            said["database"] = f"it does not answer ({type(e).__name__})"
        return said

    def close(self) -> None:
        """End what this Service started (worker processes, the bus's listener), writing
        what the audit still holds first; a second close does nothing."""
        if self._closed:
            return
        self._closed = True
        self.backups.close()  # a scheduled backup under way ends with the process
        self.bus.close()
        self.limiter.close()  # what it holds of the shared counts given back
        self.audit_log.close()  # what is still queued is written first
        self.catalog.close()
        self.db.close()

    def __enter__(self) -> Service:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _version(version: Any, known: Any = None) -> str:
    return f"v{version}"


def _settings(asked: Any, known: Any = None) -> str:
    """What `app set` was asked to change: which settings, and the access (never the title
    itself, which could be anything a caller typed)."""
    said = []
    if isinstance(asked, Mapping):
        if asked.get("title") is not None:
            said.append("title")
        if asked.get("access") in ACCESSES:
            said.append(f"access {asked['access']}")
    return ", ".join(said) or "nothing"


def _named(name: Any, known: Any = None) -> str:
    return str(name)[:200]


__all__ = ["Service"]
