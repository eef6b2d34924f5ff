"""The one façade every door calls: `Service`, with a `Caller` on every call.

A door (command line, web, MCP) turns its input into a call here and renders
the `Result` in its own form. Access is decided here and nowhere else, and a
refusal is a `Refused` whose sentence is the same through every door.

Who reaches what (DESIGN §5):
- by command (`list_commands`, `run_command`, `apply`, `query`, `schema`
  without `via_web`): every app in every space the caller belongs to;
- on the web (`via_web=True`, `page`, `web_app`): also the public and open
  apps of other spaces; a private app of a space the caller is not in is
  hidden (NotFound), never forbidden.
Writing: `open` lets anyone who reached the app write; otherwise owners and
editors of its space write, and a viewer gets the spec's sentence.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from pasture.caller import NOBODY, Caller
from pasture.commands.model import Command, Context, Result
from pasture.errors import Conflict, DeployRefused, Forbidden, NotFound, Refused, UsageError
from pasture.platform import deploy as _deploy
from pasture.platform import identity as _id
from pasture.platform.db import PlatformDB

if TYPE_CHECKING:
    from pasture.store.base import Store
    from pasture.store.vocab import Vocabulary

Access = Literal["private", "public", "open"]
Role = Literal["owner", "editor", "viewer"]
ACCESSES: tuple[Access, ...] = ("private", "public", "open")
ROLES: tuple[Role, ...] = ("owner", "editor", "viewer")

VIEWER_WRITES = "you can read this app but not change it — its owner can make you an editor"
SIGN_IN = "sign in, or present a token (Authorization: Bearer …), to reach your apps"


@dataclass(frozen=True)
class AppInfo:
    """An app as listings show it."""

    space: str
    slug: str
    title: str
    access: Access
    version: int
    url: str  # the app's address, ending in "/"
    commands: list[str] = field(default_factory=list)
    views: list[str] = field(default_factory=list)  # pages a command names

    @property
    def at(self) -> str:
        return f"{self.space}/{self.slug}"


@dataclass(frozen=True)
class Page:
    """A file of an app as the web serves it."""

    body: bytes
    media_type: str


@dataclass
class _Loaded:
    """An app's current version, ready to run: no file is read on a command call."""

    version: int
    title: str
    access: Access
    commands: list[Command]
    vocabulary: Vocabulary

    def command(self, name: str) -> Command | None:
        for cmd in self.commands:
            if cmd.agent_name == name:
                return cmd
        return None


@dataclass(frozen=True)
class _Reached:
    """An app the caller reached, with their role in its space (None for a stranger)."""

    space: str
    slug: str
    role: Role | None

    @property
    def at(self) -> str:
        return f"{self.space}/{self.slug}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _and(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def _media_type(path: str) -> str:
    import mimetypes

    if path.endswith((".html", ".htm")):
        return "text/html; charset=utf-8"
    guessed, _ = mimetypes.guess_type(path)
    if guessed is None:
        return "application/octet-stream"
    if guessed.startswith("text/") or guessed in ("application/javascript", "application/json"):
        return f"{guessed}; charset=utf-8"
    return guessed


def with_base(body: bytes, url: str) -> bytes:
    """The page with a `<base href>` at the app's address, unless it carries its own."""
    text = body.decode("utf-8", "replace")
    if re.search(r"<base[\s>]", text, re.IGNORECASE):
        return body
    tag = f'<base href="{url}">'
    head = re.search(r"<head[^>]*>", text, re.IGNORECASE)
    if head:
        at = head.end()
    else:
        doctype = re.match(r"\s*<!doctype[^>]*>", text, re.IGNORECASE)
        at = doctype.end() if doctype else 0
    return (text[:at] + tag + text[at:]).encode()


class Service:
    """Everything pasture does, as one person or nobody."""

    def __init__(
        self,
        home: str | Path,
        *,
        database_url: str | None = None,
        base_url: str = "http://127.0.0.1:8000",
    ) -> None:
        if database_url:
            raise UsageError(
                "this server keeps its data in SQLite under PASTURE_HOME; "
                "leave out --database and PASTURE_DATABASE_URL"
            )
        self.home = Path(home).expanduser()
        self.home.mkdir(parents=True, exist_ok=True)
        self.base_url = base_url.rstrip("/")
        self.db = PlatformDB(self.home / "platform.db")
        self._lock = threading.RLock()
        self._stores: dict[tuple[str, str], Store] = {}
        self._loaded: dict[tuple[str, str], _Loaded] = {}

    # -- who is asking ------------------------------------------------------
    def local_owner(self) -> Caller:
        """The machine's owner (created with a personal space on first use)."""
        row = self.db.one("SELECT eid, name FROM users WHERE admin = 1 ORDER BY created LIMIT 1")
        if row is not None:
            return Caller(row["eid"], row["name"])
        name = os.environ.get("PASTURE_USER") or getpass.getuser()
        _id.check_user_name(name)
        with self.db.transaction() as conn:
            # Another process may have made the owner between the read and the lock.
            found = conn.execute(
                "SELECT eid, name FROM users WHERE admin = 1 ORDER BY created LIMIT 1"
            ).fetchone()
            if found is not None:
                return Caller(found["eid"], found["name"])
            return self._create_user(conn, name, None, admin=True)

    def _create_user(self, conn: Any, name: str, password: str | None, *, admin: bool) -> Caller:
        from pasture.store.base import new_eid

        if conn.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone():
            raise Conflict(f"there is already a user named {name} — pick another name")
        space = _id.space_name_for(name)
        if (
            space in _id.RESERVED
            or conn.execute("SELECT 1 FROM spaces WHERE name = ?", (space,)).fetchone()
        ):
            raise Conflict(
                f"there is already a space named {space} — pick another name for the user"
            )
        eid = new_eid()
        conn.execute(
            "INSERT INTO users (eid, name, space, password, admin, created) VALUES (?,?,?,?,?,?)",
            (
                eid,
                name,
                space,
                _id.hash_password(password) if password else None,
                int(admin),
                _now(),
            ),
        )
        conn.execute("INSERT INTO spaces (name, created) VALUES (?, ?)", (space, _now()))
        conn.execute("INSERT INTO members (space, user, role) VALUES (?, ?, 'owner')", (space, eid))
        return Caller(eid, name)

    def caller_for_token(self, token: str | None) -> Caller:
        """The person a bearer token belongs to; nobody for None; Refused for a bad token."""
        if token is None or not token.strip():
            return NOBODY
        row = self.db.one(
            "SELECT users.eid, users.name FROM tokens JOIN users ON users.eid = tokens.user "
            "WHERE tokens.hash = ?",
            _id.secret_hash(token.strip()),
        )
        if row is None:
            raise _id.Unauthorized(
                "that token is not one this server gave out — make one with pasture token new"
            )
        return Caller(row["eid"], row["name"])

    def caller_for_session(self, session: str | None) -> Caller:
        """The person a session cookie belongs to, or nobody."""
        if not session:
            return NOBODY
        row = self.db.one(
            "SELECT users.eid, users.name FROM sessions JOIN users ON users.eid = sessions.user "
            "WHERE sessions.hash = ?",
            _id.secret_hash(session),
        )
        return NOBODY if row is None else Caller(row["eid"], row["name"])

    def sign_in(self, name: str, password: str) -> str:
        """A new session id for the web's cookie; Refused on a wrong name or password."""
        row = self.db.one("SELECT eid, name, password FROM users WHERE name = ?", name.strip())
        if row is None or not _id.check_password(password, row["password"]):
            raise _id.Unauthorized(
                "that name and password do not match — the owner sets a password with "
                "pasture password"
            )
        return self.new_session(Caller(row["eid"], row["name"]))

    def new_session(self, caller: Caller) -> str:
        """A new session id for a signed-in caller (the web's `/signin?token=…` uses it)."""
        self._require_signed_in(caller)
        session = _id.new_secret("pss")
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO sessions (hash, user, created) VALUES (?, ?, ?)",
                (_id.secret_hash(session), caller.eid, _now()),
            )
        return session

    def session_for_token(self, token: str) -> str:
        """A new session id for the person a token belongs to (the web's `/signin?token=…`)."""
        caller = self.caller_for_token(token)
        if not caller.signed_in:
            raise _id.Unauthorized("give a token to sign in with — make one with pasture token new")
        return self.new_session(caller)

    def sign_out(self, session: str | None) -> None:
        """Forget a session id; nothing happens for one this server never gave out."""
        if session:
            with self.db.transaction() as conn:
                conn.execute("DELETE FROM sessions WHERE hash = ?", (_id.secret_hash(session),))

    def new_token(self, caller: Caller, label: str = "agent") -> str:
        """A new bearer token for the caller (stored hashed, shown once)."""
        self._require_signed_in(caller)
        token = _id.new_secret("pst")
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO tokens (hash, user, label, created) VALUES (?, ?, ?, ?)",
                (_id.secret_hash(token), caller.eid, label, _now()),
            )
        return token

    def set_password(self, caller: Caller, password: str, user: str | None = None) -> Result:
        """Set the caller's web password (or, for the machine's owner, another user's)."""
        self._require_signed_in(caller)
        if len(password) < 8:
            raise UsageError("a password is at least 8 characters long")
        target = caller.name
        if user is not None and user.lower() != (caller.name or "").lower():
            self._require_admin(caller)
            target = user
        with self.db.transaction() as conn:
            done = conn.execute(
                "UPDATE users SET password = ? WHERE name = ?",
                (_id.hash_password(password), target),
            )
            if done.rowcount == 0:
                raise NotFound(f"no user {target} — add them with pasture user new {target}")
        return Result(f"password set for {target}: sign in at {self.base_url}/signin")

    def _require_signed_in(self, caller: Caller) -> None:
        if not caller.signed_in:
            raise _id.Unauthorized(SIGN_IN)

    def _require_admin(self, caller: Caller) -> None:
        self._require_signed_in(caller)
        row = self.db.one("SELECT admin FROM users WHERE eid = ?", caller.eid)
        if row is None or not row["admin"]:
            raise Forbidden("only the server's owner adds people — ask them")

    # -- people and spaces --------------------------------------------------
    def new_user(self, caller: Caller, name: str, password: str | None = None) -> Caller:
        """A new person (with a personal space of the same name); only the owner adds people."""
        self._require_admin(caller)
        _id.check_user_name(name)
        with self.db.transaction() as conn:
            return self._create_user(conn, name, password, admin=False)

    def new_space(self, caller: Caller, name: str) -> Result:
        self._require_signed_in(caller)
        _id.check_space_name(name)
        with self.db.transaction() as conn:
            if conn.execute("SELECT 1 FROM spaces WHERE name = ?", (name,)).fetchone():
                raise Conflict(f"there is already a space named {name} — pick another name")
            conn.execute("INSERT INTO spaces (name, created) VALUES (?, ?)", (name, _now()))
            conn.execute(
                "INSERT INTO members (space, user, role) VALUES (?, ?, 'owner')",
                (name, caller.eid),
            )
        return Result(
            f"space {name} made, with you as its owner: deploy into it with "
            f"pasture deploy DIR --space {name}",
            {"space": name, "role": "owner"},
        )

    def add_member(self, caller: Caller, space: str, user: str, role: Role) -> Result:
        if role not in ROLES:
            raise UsageError(f"{role} is not a role — say owner, editor or viewer")
        if self._role(caller, space) != "owner":
            self._no_space(caller, space, "add people to it")
        row = self.db.one("SELECT eid, name FROM users WHERE name = ?", user)
        if row is None:
            raise NotFound(f"no user {user} — the server's owner adds them with pasture user new")
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO members (space, user, role) VALUES (?, ?, ?) "
                "ON CONFLICT (space, user) DO UPDATE SET role = excluded.role",
                (space, row["eid"], role),
            )
        article = "an" if role in ("owner", "editor") else "a"
        return Result(
            f"{row['name']} is now {article} {role} of {space}",
            {"space": space, "user": row["name"], "role": role},
        )

    def spaces(self, caller: Caller) -> list[tuple[str, Role]]:
        """The spaces the caller belongs to, with their role in each."""
        if not caller.signed_in:
            return []
        rows = self.db.all(
            "SELECT space, role FROM members WHERE user = ? ORDER BY space", caller.eid
        )
        return [(r["space"], cast(Role, r["role"])) for r in rows]

    def role(self, caller: Caller, space: str) -> Role | None:
        """The caller's role in a space, or None when they are not a member."""
        return self._role(caller, space)

    def _role(self, caller: Caller, space: str) -> Role | None:
        if not caller.signed_in:
            return None
        row = self.db.one(
            "SELECT role FROM members WHERE space = ? AND user = ?", space, caller.eid
        )
        return None if row is None else cast(Role, row["role"])

    def _no_space(self, caller: Caller, space: str, doing: str) -> None:
        role = self._role(caller, space)
        if role is None:
            if not caller.signed_in:
                raise _id.Unauthorized(SIGN_IN)
            raise NotFound(f"no space {space} of yours — make one with pasture space new {space}")
        raise Forbidden(f"you are {role} of {space}; only its owners {doing}")

    def _personal_space(self, caller: Caller) -> str:
        self._require_signed_in(caller)
        row = self.db.one("SELECT space FROM users WHERE eid = ?", caller.eid)
        if row is None:
            raise _id.Unauthorized(SIGN_IN)
        return str(row["space"])

    # -- apps ---------------------------------------------------------------
    def _app_dir(self, space: str, slug: str) -> Path:
        return self.home / "apps" / space / slug

    def _url(self, space: str, slug: str) -> str:
        return f"{self.base_url}/{space}/{slug}/"

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
        from pasture.commands import load_commands
        from pasture.store.vocab import Vocabulary

        if app and "/" in app and space is None:
            space, _, app = app.partition("/")
        space = space or self._personal_space(caller)
        if isinstance(files, (str, Path)):
            folder = Path(files)
            slug = app or folder.resolve().name.lower()
            raw: dict[str, bytes] = _deploy.read_dir(folder)
            problems: list[str] = []
        else:
            if not app:
                raise UsageError("name the app to deploy these files as (app=…, or --app)")
            slug = app
            raw, problems = _deploy.normalise(files)
        _id.check_slug(slug)
        if access is not None and access not in ACCESSES:
            raise UsageError(f"{access} is not an access — say private, public or open")
        if self._role(caller, space) not in ("owner", "editor"):
            self._no_deploy(caller, space)
        at = f"{space}/{slug}"
        if not raw:
            raise DeployRefused(["there are no files to deploy — put index.html in the folder"])

        current = self.db.one("SELECT * FROM apps WHERE space = ? AND slug = ?", space, slug)
        previous: Vocabulary | None = None
        if current is not None:
            previous = self._load(space, slug).vocabulary

        # Check everything before anything is installed.
        vocab_doc: dict[str, Any] | None = None
        vocabulary: Vocabulary | None = None
        if "vocab.json" in raw:
            try:
                parsed = json.loads(raw["vocab.json"])
            except (ValueError, UnicodeDecodeError) as e:
                problems.append(f"vocab.json: not JSON — {e}")
            else:
                if isinstance(parsed, dict):
                    vocab_doc = parsed
                else:
                    problems.append("vocab.json: an object with $defs, one entry per component")
        if not any(p.startswith("vocab.json") for p in problems):
            try:
                vocabulary = Vocabulary.from_json(vocab_doc, previous=previous)
            except DeployRefused as e:
                problems.append(str(e))
        commands: list[Command] = []
        if vocabulary is not None:
            try:
                commands = load_commands(raw, vocabulary, at)
            except DeployRefused as e:
                problems.append(str(e))
        if "worker.py" in raw:
            problems.extend(_deploy.check_worker(raw["worker.py"]))
        if problems:
            raise DeployRefused(problems)
        assert vocabulary is not None

        app_title = title or _deploy.title_of(raw) or slug
        app_dir = self._app_dir(space, slug)
        with _deploy.app_lock(app_dir):
            row = self.db.one(
                "SELECT MAX(version) AS v FROM versions WHERE space = ? AND slug = ?", space, slug
            )
            recorded = int(row["v"]) if row is not None and row["v"] is not None else 0
            _deploy.sweep(app_dir, recorded)
            version = recorded + 1
            _deploy.write_version(app_dir, version, raw)
            # Components before commands: the store knows this release's vocabulary
            # before any of its commands can be called.
            self._store(space, slug).declare(vocab_doc or {})
            chosen: Access = access or (
                cast(Access, current["access"]) if current is not None else "public"
            )
            self._switch_version(caller, space, slug, version, app_title, chosen)
        with self._lock:
            self._loaded[(space, slug)] = _Loaded(version, app_title, chosen, commands, vocabulary)
        names = [c.agent_name for c in commands]
        url = self._url(space, slug)
        return Result(
            f"deployed {at} v{version}: {url}\ncommands: {', '.join(names) or 'none'}",
            {"at": at, "version": version, "url": url, "title": app_title, "commands": names},
        )

    def _switch_version(
        self, caller: Caller, space: str, slug: str, version: int, title: str, access: Access
    ) -> None:
        """The commit point of a deploy: one transaction makes the new version current."""
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO versions (space, slug, version, title, deployed_by, deployed_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (space, slug, version, title, caller.eid, _now()),
            )
            conn.execute(
                "INSERT INTO apps (space, slug, title, access, version) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (space, slug) DO UPDATE SET title = excluded.title, "
                "access = excluded.access, version = excluded.version",
                (space, slug, title, access, version),
            )

    def _no_deploy(self, caller: Caller, space: str) -> None:
        role = self._role(caller, space)
        if role is None:
            if not caller.signed_in:
                raise _id.Unauthorized(SIGN_IN)
            raise NotFound(
                f"no space {space} of yours — deploy into your own, or make one with "
                f"pasture space new {space}"
            )
        raise Forbidden(
            f"you can read the apps of {space} but not deploy to it — its owner can make you "
            "an editor"
        )

    def _store(self, space: str, slug: str) -> Store:
        from pasture.store import open_store

        key = (space, slug)
        with self._lock:
            store = self._stores.get(key)
            if store is None:
                path = self._app_dir(space, slug) / "store.db"
                path.parent.mkdir(parents=True, exist_ok=True)
                store = cast("Store", open_store(path))
                self._stores[key] = store
            return store

    def _load(self, space: str, slug: str) -> _Loaded:
        """The app's current version, loaded once per version (another process may switch it)."""
        row = self.db.one("SELECT * FROM apps WHERE space = ? AND slug = ?", space, slug)
        if row is None:
            raise NotFound(f"no app {space}/{slug}")
        key = (space, slug)
        version = int(row["version"])
        with self._lock:
            loaded = self._loaded.get(key)
            if loaded is not None and loaded.version == version:
                loaded.title = row["title"]
                loaded.access = row["access"]
                return loaded
            if loaded is not None:
                # Another process deployed: its store declared a vocabulary this one's
                # open store has not read, so the next call opens the store afresh.
                self._stores.pop(key, None)
            loaded = self._read_version(space, slug, version, row["title"], row["access"])
            self._loaded[key] = loaded
            return loaded

    def _read_version(
        self, space: str, slug: str, version: int, title: str, access: Access
    ) -> _Loaded:
        from pasture.commands import load_commands
        from pasture.store.vocab import Vocabulary

        files = _deploy.read_version(self._app_dir(space, slug) / f"v{version}")
        doc = json.loads(files["vocab.json"]) if "vocab.json" in files else None
        vocabulary = Vocabulary.from_json(doc)
        commands = load_commands(files, vocabulary, f"{space}/{slug}")
        return _Loaded(version, title, access, commands, vocabulary)

    def _info(self, space: str, slug: str) -> AppInfo:
        loaded = self._load(space, slug)
        views: list[str] = []
        for cmd in loaded.commands:
            if cmd.view and cmd.view not in views:
                views.append(cmd.view)
        return AppInfo(
            space=space,
            slug=slug,
            title=loaded.title,
            access=loaded.access,
            version=loaded.version,
            url=self._url(space, slug),
            commands=[c.agent_name for c in loaded.commands],
            views=views,
        )

    def _member_apps(self, caller: Caller) -> list[tuple[str, str]]:
        if not caller.signed_in:
            return []
        rows = self.db.all(
            "SELECT apps.space, apps.slug FROM apps JOIN members ON members.space = apps.space "
            "WHERE members.user = ? ORDER BY apps.space, apps.slug",
            caller.eid,
        )
        return [(r["space"], r["slug"]) for r in rows]

    def list_apps(self, caller: Caller) -> list[AppInfo]:
        """Every app in every space the caller belongs to."""
        return [self._info(space, slug) for space, slug in self._member_apps(caller)]

    def app_info(self, caller: Caller, app: str) -> AppInfo:
        """One app the caller can reach by command (`slug` or `space/slug`)."""
        reached = self._reach(caller, app)
        return self._info(reached.space, reached.slug)

    def _reach(self, caller: Caller, app: str, *, via_web: bool = False) -> _Reached:
        """The app `app` names, as this caller reaches it; NotFound when they cannot."""
        app = app.strip().strip("/")
        if "/" in app:
            space, _, slug = app.partition("/")
            row = self.db.one("SELECT access FROM apps WHERE space = ? AND slug = ?", space, slug)
            role = self._role(caller, space)
            if row is not None:
                if role is not None:
                    return _Reached(space, slug, role)
                if via_web and row["access"] != "private":
                    return _Reached(space, slug, None)
            if via_web:
                raise NotFound(f"no app {space}/{slug}")
            raise self._no_app(caller, app)
        found = [(s, a) for s, a in self._member_apps(caller) if a == app]
        if not found:
            raise self._no_app(caller, app)
        if len(found) > 1:
            ats = sorted(f"{s}/{a}" for s, a in found)
            raise UsageError(
                f"{app} is an app of {_and(sorted(s for s, _ in found))} — say which: "
                f"{' or '.join(ats)}"
            )
        space, slug = found[0]
        return _Reached(space, slug, self._role(caller, space))

    def _no_app(self, caller: Caller, app: str) -> Refused:
        if not caller.signed_in:
            return _id.Unauthorized(f"no app {app} — {SIGN_IN}")
        mine = [f"{s}/{a}" for s, a in self._member_apps(caller)]
        if not mine:
            return NotFound(f"no app {app} — you have no apps yet; deploy one with pasture deploy")
        return NotFound(f"no app {app} — your apps are {', '.join(mine)}")

    def _check_write(self, caller: Caller, reached: _Reached) -> None:
        loaded = self._load(reached.space, reached.slug)
        if loaded.access == "open" or reached.role in ("owner", "editor"):
            return
        if reached.role == "viewer":
            raise Forbidden(VIEWER_WRITES)
        if not caller.signed_in:
            raise _id.Unauthorized(
                f"sign in to change {reached.at} — anyone reads it, its space's editors change it"
            )
        raise Forbidden(VIEWER_WRITES)

    def files(self, caller: Caller, app: str, path: str | None = None) -> Result:
        """An app's source read back: the list of files, or one file's text."""
        reached = self._reach(caller, app)
        loaded = self._load(reached.space, reached.slug)
        root = self._app_dir(reached.space, reached.slug) / f"v{loaded.version}"
        if path is None or path.strip("/") == "":
            names = sorted(_deploy.read_dir(root))
            return Result(
                f"{reached.at} v{loaded.version}: {_plural(len(names), 'file', 'files')}\n"
                + "\n".join(names),
                {"at": reached.at, "version": loaded.version, "files": names},
            )
        clean = _deploy.clean_path(path)
        target = root / clean if clean else None
        if target is None or not target.is_file():
            raise NotFound(f"no file {path} in {reached.at} — app_files lists them")
        text = target.read_bytes().decode("utf-8", "replace")
        return Result(
            text, {"at": reached.at, "version": loaded.version, "path": clean, "text": text}
        )

    def rollback(self, caller: Caller, app: str, version: int) -> Result:
        from pasture.store.vocab import Vocabulary

        reached = self._reach(caller, app)
        if reached.role not in ("owner", "editor"):
            self._no_deploy(caller, reached.space)
        space, slug = reached.space, reached.slug
        row = self.db.one(
            "SELECT title FROM versions WHERE space = ? AND slug = ? AND version = ?",
            space,
            slug,
            version,
        )
        if row is None or not (self._app_dir(space, slug) / f"v{version}").is_dir():
            kept = [
                str(r["version"])
                for r in self.db.all(
                    "SELECT version FROM versions WHERE space = ? AND slug = ? ORDER BY version",
                    space,
                    slug,
                )
            ]
            raise NotFound(f"{reached.at} has no v{version} — it has v{', v'.join(kept)}")
        current = self._load(space, slug)
        loaded = self._read_version(space, slug, version, row["title"], current.access)
        files = _deploy.read_version(self._app_dir(space, slug) / f"v{version}")
        doc = json.loads(files["vocab.json"]) if "vocab.json" in files else None
        # The rows written since stay; the older vocabulary must still describe them.
        Vocabulary.from_json(doc, previous=current.vocabulary)
        self._store(space, slug).declare(doc or {})
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE apps SET version = ?, title = ? WHERE space = ? AND slug = ?",
                (version, row["title"], space, slug),
            )
        with self._lock:
            self._loaded[(space, slug)] = loaded
        names = [c.agent_name for c in loaded.commands]
        return Result(
            f"{reached.at} is back at v{version}: {self._url(space, slug)}\n"
            f"commands: {', '.join(names) or 'none'}",
            {"at": reached.at, "version": version, "commands": names},
        )

    # -- commands -----------------------------------------------------------
    def _commands_of(self, caller: Caller, app: str | None) -> list[tuple[AppInfo, Command]]:
        if app is not None:
            reached = self._reach(caller, app)
            pairs = [(reached.space, reached.slug)]
        else:
            pairs = self._member_apps(caller)
        out: list[tuple[AppInfo, Command]] = []
        for space, slug in pairs:
            info = self._info(space, slug)
            for cmd in self._load(space, slug).commands:
                out.append((info, cmd))
        return out

    def list_commands(self, caller: Caller, app: str | None = None) -> Result:
        """The spec's listing grouped by app; data `{commands: [{at, name, title, …}]}`."""
        if not caller.signed_in and app is None:
            return Result(f"no apps to list — {SIGN_IN}", {"commands": []})
        found = self._commands_of(caller, app)
        if not found:
            if app is not None:
                return Result(f"{app} has no commands yet", {"commands": []})
            if not self._member_apps(caller):
                return Result(
                    "you have no apps yet — deploy one with pasture deploy DIR", {"commands": []}
                )
            return Result("your apps have no commands yet", {"commands": []})
        blocks: list[str] = []
        listing: list[dict[str, Any]] = []
        current = ""
        for info, cmd in found:
            if info.at != current:
                blocks.append(f"## {info.at}")
                current = info.at
            address = info.url.split("://", 1)[-1]
            blocks[-1] += (
                f"\n{cmd.signature()} — {cmd.description} — {info.title}, an app at {address}"
            )
            listing.append(cmd.listing(info.at, info.title))
        return Result("\n\n".join(blocks), {"commands": listing})

    def resolve_command(
        self, caller: Caller, name: str, app: str | None = None, *, via_web: bool = False
    ) -> tuple[AppInfo, Command]:
        """The one command a call names, or the spec's refusal (ambiguous, unknown)."""
        name = name.strip().replace(" ", "_")
        if app is not None:
            reached = self._reach(caller, app, via_web=via_web)
            loaded = self._load(reached.space, reached.slug)
            cmd = loaded.command(name)
            if cmd is None:
                raise self._unknown(caller, name, [(reached.space, reached.slug)])
            return self._info(reached.space, reached.slug), cmd
        if not caller.signed_in:
            raise _id.Unauthorized(f"no command {name} — {SIGN_IN}")
        mine = self._member_apps(caller)
        matches: list[tuple[str, str, Command]] = []
        for space, slug in mine:
            cmd = self._load(space, slug).command(name)
            if cmd is not None:
                matches.append((space, slug, cmd))
        if not matches:
            raise self._unknown(caller, name, mine)
        if len(matches) > 1:
            ats = sorted(f"{s}/{a}" for s, a, _ in matches)
            raise UsageError(f"{name} is a command of {_and(ats)} — say which app")
        space, slug, cmd = matches[0]
        return self._info(space, slug), cmd

    def _unknown(self, caller: Caller, name: str, apps: list[tuple[str, str]]) -> Refused:
        offers = []
        for space, slug in apps:
            names = [c.agent_name for c in self._load(space, slug).commands]
            if names:
                offers.append(f"{space}/{slug}: {', '.join(names)}")
        if not apps:
            return NotFound(
                f"no command {name} — you have no apps yet; deploy one with pasture deploy DIR"
            )
        if not offers:
            return NotFound(
                f"no command {name} — your apps have no commands yet; give one a "
                "tools.json or a vocab.json and deploy it again"
            )
        return NotFound(
            f"no command {name} — your apps offer {'; '.join(offers)}. "
            "commands lists them with their arguments."
        )

    def run_command(
        self,
        caller: Caller,
        name: str,
        args: Mapping[str, Any],
        app: str | None = None,
        *,
        via_web: bool = False,
    ) -> Result:
        """Run a command as the caller; the refusals are the spec's sentences."""
        info, cmd = self.resolve_command(caller, name, app, via_web=via_web)
        if not cmd.read_only:
            self._check_write(caller, self._reach(caller, info.at, via_web=via_web))
        if not isinstance(args, Mapping):
            raise UsageError(f"{cmd.agent_name}'s args are an object of argument names to values")
        return cmd.run(args, Context(caller, self._store(info.space, info.slug), info.at))

    def status(self, caller: Caller) -> Result:
        """Every reachable app's state, one line each."""
        if not caller.signed_in:
            return Result(f"no apps to show — {SIGN_IN}", {"apps": []})
        lines: list[str] = []
        apps: list[dict[str, Any]] = []
        for info in self.list_apps(caller):
            entities = self._count(info.space, info.slug)
            lines.append(
                f"{info.at} v{info.version} — {info.title} — "
                f"{_plural(entities, 'entity', 'entities')}, "
                f"{_plural(len(info.commands), 'command', 'commands')}, {info.access}"
            )
            apps.append(
                {
                    "at": info.at,
                    "version": info.version,
                    "title": info.title,
                    "entities": entities,
                    "commands": info.commands,
                    "access": info.access,
                    "url": info.url,
                }
            )
        if not lines:
            return Result("you have no apps yet — deploy one with pasture deploy DIR", {"apps": []})
        return Result("\n".join(lines), {"apps": apps})

    def _count(self, space: str, slug: str) -> int:
        """How many things the app keeps: entities carrying its own components or a doc."""
        store = self._store(space, slug)
        count = getattr(store, "count", None)
        if callable(count):
            return int(count())
        names = [c.name for c in self._load(space, slug).vocabulary.declared()]
        eids: set[str] = set()
        for name in [*names, "doc"]:
            try:
                rows = store.query(f".{name}!", NOBODY)
            except Refused:
                continue
            eids.update(str(r.get("entity", {}).get("eid")) for r in rows)
        return len(eids)

    # -- the graph ----------------------------------------------------------
    # `via_web=True`: `app` is `space/slug` from a page's address, and a public or
    # open app of a space the caller is not in is reachable (as on the web).
    def apply(self, caller: Caller, app: str, bundles: Any, *, via_web: bool = False) -> Result:
        """Write bundles under the app's access; data `{entities, aliases}`."""
        reached = self._reach(caller, app, via_web=via_web)
        self._check_write(caller, reached)
        applied = self._store(reached.space, reached.slug).apply(bundles, caller)
        named = ", ".join(
            f"{k if k.startswith('$') else '$' + k}={v}" for k, v in applied.aliases.items()
        )
        text = f"wrote {_plural(len(applied.entities), 'entity', 'entities')} in {reached.at}"
        return Result(
            f"{text}: {named}" if named else text,
            {"entities": list(applied.entities), "aliases": dict(applied.aliases)},
        )

    def query(self, caller: Caller, app: str, filter: str, *, via_web: bool = False) -> Result:
        """Read under the app's access; data `{rows}`."""
        reached = self._reach(caller, app, via_web=via_web)
        rows = self._store(reached.space, reached.slug).query(filter, caller)
        return Result(f"{_plural(len(rows), 'row', 'rows')} in {reached.at}", {"rows": rows})

    def schema(self, caller: Caller, app: str, *, via_web: bool = False) -> Result:
        """Every component of the app with its columns and types."""
        reached = self._reach(caller, app, via_web=via_web)
        described = self._store(reached.space, reached.slug).schema()
        lines = [f"## {reached.at}"]
        components = described.get("components", described)
        if isinstance(components, Mapping):
            for name, spec in components.items():
                lines.append(f"{name}: {_columns_text(spec)}")
        return Result("\n".join(lines), dict(described))

    # -- the web ------------------------------------------------------------
    def web_app(self, caller: Caller, space: str, slug: str) -> AppInfo:
        """An app as the web reaches it: by its space, also public/open apps of other spaces.

        NotFound for a private app the caller is not a member of (hidden, not forbidden).
        """
        reached = self._reach(caller, f"{space}/{slug}", via_web=True)
        return self._info(reached.space, reached.slug)

    def page(self, caller: Caller, space: str, slug: str, path: str) -> Page:
        """A file of the app for the web; source files (tools.json, vocab.json, …) are NotFound.

        An HTML page comes with a `<base href>` at the app's address, unless it has its own.
        """
        info = self.web_app(caller, space, slug)
        path = path.lstrip("/")
        if path == "" or path.endswith("/"):
            path += "index.html"
        clean = _deploy.clean_path(path)
        missing = NotFound(f"no page {path} in {info.at}")
        if clean is None or clean in _deploy.SOURCE_FILES:
            raise missing
        target = self._app_dir(space, slug) / f"v{info.version}" / clean
        if not target.is_file():
            raise missing
        body = target.read_bytes()
        media = _media_type(clean)
        if media.startswith("text/html"):
            body = with_base(body, info.url)
        return Page(body, media)

    def view(self, caller: Caller, uri: str) -> Page:
        """A page a command names, by `ui://space/app/file`, for the MCP connector."""
        missing = NotFound(f"no resource {uri}")
        if not uri.startswith("ui://"):
            raise missing
        parts = uri[len("ui://") :].split("/", 2)
        if len(parts) != 3:
            raise missing
        space, slug, file = parts
        try:
            info = self.app_info(caller, f"{space}/{slug}")
        except Refused:
            raise missing from None
        if file not in info.views:
            raise missing
        target = self._app_dir(space, slug) / f"v{info.version}" / file
        if not target.is_file():
            raise missing
        return Page(with_base(target.read_bytes(), info.url), "text/html;profile=mcp-app")

    def views(self, caller: Caller) -> list[tuple[str, AppInfo]]:
        """Every `ui://…` view the caller can read, with its app."""
        return [
            (f"ui://{info.space}/{info.slug}/{v}", info)
            for info in self.list_apps(caller)
            for v in info.views
        ]

    def close(self) -> None:
        with self._lock:
            for store in self._stores.values():
                store.close()
            self._stores.clear()
            self._loaded.clear()
        self.db.close()


def _columns_text(spec: Any) -> str:
    if isinstance(spec, Mapping):
        cols = spec.get("columns", spec.get("properties", spec))
        if isinstance(cols, Mapping):
            parts = []
            for col, kind in cols.items():
                if isinstance(kind, Mapping):
                    kind = kind.get("type", "")
                parts.append(f"{col} {kind}".strip())
            return ", ".join(parts)
    return str(spec)


__all__ = ["Access", "AppInfo", "Page", "Role", "Service"]
