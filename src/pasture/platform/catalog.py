"""What platform.db says about apps and members, with each app's version loaded and its store open.

Every other part of the platform asks here: which apps a person's spaces hold,
their role in a space, an app's current version ready to run (`Loaded`), its
store. The apps and members tables are read whole into a `_Snapshot`, kept
while `PlatformDB.stamp()` stays the same: a deploy or a new member made by
this process or by another `pasture serve` on the same data is seen on the
next call, and a call in between asks the database one cheap question.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pasture.caller import Caller
from pasture.errors import NotFound
from pasture.platform.apps import versions as _deploy
from pasture.platform.apps.origins import Origins
from pasture.platform.db.platform_db import PlatformDB
from pasture.platform.nouns import Access, AppInfo, Loaded, Role
from pasture.platform.workers.dispatch import (
    WORKER,
    CodeSettings,
    Version,
    Workers,
    commands_of,
    tables_of,
)
from pasture.platform.workers.sandbox import Limits

if TYPE_CHECKING:
    from pasture.store.base import Store

logger = logging.getLogger("pasture.platform")

_TRASHED = "SELECT space, slug FROM trash"  # slug '': the whole space


@dataclass
class _Snapshot:
    """The apps, members, trusted spaces and apps' secrets as they were at `stamp`."""

    stamp: tuple[int, int]
    apps: dict[tuple[str, str], tuple[str, Access, int]]  # (space, slug) → title, access, version
    roles: dict[str, dict[str, Role]]  # user eid → space → role
    trusted: frozenset[str]  # spaces that may run code: the owner's own, and those they trust
    secrets: dict[tuple[str, str], dict[str, str]]  # (space, slug) → name → value
    member_apps: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # by user eid
    code: dict[tuple[str, str], CodeSettings] = field(default_factory=dict)  # made on first ask
    labels: dict[str, tuple[str, str]] | None = None  # an app origin's label → (space, slug)


class Catalog:
    """Apps, members, loaded versions, open stores and worker processes of one data directory."""

    def __init__(
        self,
        home: Path,
        origins: Origins,
        db: PlatformDB,
        limits: Limits | None = None,
        *,
        max_rows: int | None = None,
        history_days: float | None = None,
    ) -> None:
        self.home = home
        self.origins = origins
        # the rows one answer of an app's store holds at most (`pasture.store.pages`)
        self.max_rows = max_rows
        # the days each store's journal keeps (`pasture.store.journal`), None for none
        self.history_days = history_days
        self.base_url = origins.base_url
        self.db = db
        self._lock = threading.RLock()
        self._stores: dict[tuple[str, str], Store] = {}
        self._loaded: dict[tuple[str, str], Loaded] = {}
        self._snapshot: _Snapshot | None = None
        # Moves whenever a loaded version changes but the database does not (a worker
        # describing its commands): what is kept by the database's stamp keeps by this too.
        self.changes = 0
        # Called (outside the catalog's lock) with an app's space and slug when a worker
        # changed its commands: the Service tells the bus (`Change("commands", …)`).
        self.on_commands: Callable[[str, str], None] | None = None
        self.workers = Workers(
            home,
            limits or Limits.from_env(),
            settings=self.code_settings,
            heard=self._heard,
        )

    def _now(self) -> _Snapshot:
        """The tables as they are now: the kept snapshot, unless the database moved since."""
        stamp = self.db.stamp()
        snapshot = self._snapshot
        if snapshot is not None and snapshot.stamp == stamp:
            return snapshot
        # The stamp is taken first: a change made while these are read moves it again.
        # What the trash holds is no app and no space of anyone's (`pasture.platform.apps.trash`):
        # every door reads what is here, so it is gone for all of them at once. The trash is
        # small, and set aside here cheaper than the database joins it to every app.
        trashed = {(str(r["space"]), str(r["slug"])) for r in self.db.all(_TRASHED)}
        spaces_out = {space for space, slug in trashed if slug == ""}
        apps = {
            (r["space"], r["slug"]): (str(r["title"]), cast(Access, r["access"]), int(r["version"]))
            for r in self.db.all("SELECT space, slug, title, access, version FROM apps")
            if r["space"] not in spaces_out and (r["space"], r["slug"]) not in trashed
        }
        roles: dict[str, dict[str, Role]] = {}
        for r in self.db.all("SELECT space, user, role FROM members"):
            if r["space"] not in spaces_out:
                roles.setdefault(r["user"], {})[r["space"]] = cast(Role, r["role"])
        trusted = frozenset(
            str(r["name"])
            for r in self.db.all(
                "SELECT name FROM spaces WHERE trusted = 1 "
                "OR name IN (SELECT space FROM users WHERE admin = 1)"
            )
        )
        secrets: dict[tuple[str, str], dict[str, str]] = {}
        for r in self.db.all("SELECT space, slug, name, value FROM secrets"):
            secrets.setdefault((r["space"], r["slug"]), {})[r["name"]] = str(r["value"])
        snapshot = _Snapshot(stamp, apps, roles, trusted, secrets)
        self._snapshot = snapshot
        with self._lock:
            gone = [key for key in self._loaded if key not in apps]
        for space, slug in gone:  # removed, here or by another process: let go of it here too
            self.forget(space, slug, close=False)
        return snapshot

    # -- code ---------------------------------------------------------------------
    def trusted(self, space: str) -> bool:
        """Whether the space may run code: the owner's own space, or one they trusted."""
        return space in self._now().trusted

    def secrets(self, space: str, slug: str) -> dict[str, str]:
        """An app's secrets by name, as its worker is given them."""
        return dict(self._now().secrets.get((space, slug), {}))

    def code_settings(self, space: str, slug: str) -> CodeSettings:
        """Whether an app's code may run, and its secrets: one look at the database."""
        snapshot = self._now()
        found = snapshot.code.get((space, slug))
        if found is None:
            secrets = snapshot.secrets.get((space, slug), {})
            found = snapshot.code[(space, slug)] = CodeSettings.of(
                space in snapshot.trusted, dict(secrets)
            )
        return found

    # -- where things are -------------------------------------------------------
    def app_dir(self, space: str, slug: str) -> Path:
        return self.home / "apps" / space / slug

    def url(self, space: str, slug: str) -> str:
        """The app's address: its own origin, or its path on the main one."""
        return self.origins.url(space, slug)

    def app_at(self, host: str | None) -> tuple[str, str] | None:
        """The app whose own origin a Host header names (with an apps domain), or None."""
        label = self.origins.label_of(host)
        if label is None:
            return None
        snapshot = self._now()
        if snapshot.labels is None:
            snapshot.labels = {self.origins.label(s, a): (s, a) for s, a in snapshot.apps}
        return snapshot.labels.get(label)

    # -- members ----------------------------------------------------------------
    # Each of these looks at the database once: a call asks a handful of them. A grant
    # limited to some spaces (`Caller.spaces`) is no member of the others.
    def role(self, caller: Caller, space: str) -> Role | None:
        """The caller's role in a space, or None when they are not a member."""
        if caller.eid is None or not caller.reaches(space):
            return None
        return self._now().roles.get(caller.eid, {}).get(space)

    def member_apps(self, caller: Caller) -> list[tuple[str, str]]:
        """Every app in every space the caller belongs to, by space then slug."""
        return self.mine(caller)[0]

    def mine(self, caller: Caller) -> tuple[list[tuple[str, str]], dict[str, Role]]:
        """The caller's apps (as `member_apps`) and their role in each of their spaces."""
        if caller.eid is None:
            return [], {}
        snapshot = self._now()
        roles = snapshot.roles.get(caller.eid, {})
        found = snapshot.member_apps.get(caller.eid)
        if found is None:
            found = sorted(key for key in snapshot.apps if key[0] in roles)
            snapshot.member_apps[caller.eid] = found
        if caller.spaces is not None:
            found = [key for key in found if key[0] in caller.spaces]
            roles = {s: r for s, r in roles.items() if s in caller.spaces}
        return list(found), dict(roles)

    def standing(self, caller: Caller, space: str, slug: str) -> tuple[Access | None, Role | None]:
        """The app's access (None: no such app) and the caller's role in its space."""
        snapshot = self._now()
        found = snapshot.apps.get((space, slug))
        role = None
        if caller.eid is not None and caller.reaches(space):
            role = snapshot.roles.get(caller.eid, {}).get(space)
        return (None if found is None else found[1]), role

    # -- apps -------------------------------------------------------------------
    def store(self, space: str, slug: str) -> Store:
        key = (space, slug)
        with self._lock:
            store = self._stores.get(key)
            if store is None:
                store = self.db.app_store(space, slug, self.app_dir(space, slug))
                if self.max_rows is not None:
                    store.max_rows = self.max_rows
                store.history = self.history_days
                self._stores[key] = store
            return store

    def version_dir(self, space: str, slug: str, version: int) -> Path:
        """A version's folder in the data directory; fetched from the database first
        when it keeps the files and this machine has not seen the version yet."""
        root = self.app_dir(space, slug) / f"v{version}"
        if not root.is_dir():
            files = self.db.version_files(space, slug, version)
            if files:
                try:
                    _deploy.write_version(self.app_dir(space, slug), version, files)
                except OSError:
                    if not root.is_dir():  # not another process fetching it at once
                        raise
        return root

    def load(self, space: str, slug: str) -> Loaded:
        """The app's current version, loaded once per version (another process may switch it)."""
        return self._load(self._now(), space, slug)

    def loads(self, apps: list[tuple[str, str]]) -> list[Loaded]:
        """`load` for each app, with one look at the database for them all."""
        snapshot = self._now()
        return [self._load(snapshot, space, slug) for space, slug in apps]

    def _load(self, snapshot: _Snapshot, space: str, slug: str) -> Loaded:
        key = (space, slug)
        found = snapshot.apps.get(key)
        if found is None:
            raise NotFound(f"no app {space}/{slug}")
        title, access, version = found
        with self._lock:
            loaded = self._loaded.get(key)
            if loaded is not None and loaded.version == version:
                loaded.title = title
                loaded.access = access
                return loaded
            if loaded is not None:
                # Another process deployed: its store declared a vocabulary this one's
                # open store has not read, so the next call opens the store afresh, the
                # old version's worker processes stop, and the folders of versions it
                # let go leave this machine too.
                self._stores.pop(key, None)
                self.workers.retire(space, slug)
                self._forget_older(space, slug)
            loaded = self.read_version(space, slug, version, title, access)
            self._loaded[key] = loaded
            return loaded

    def _forget_older(self, space: str, slug: str) -> None:
        row = self.db.one(
            "SELECT MIN(version) AS v FROM versions WHERE space = ? AND slug = ?", space, slug
        )
        if row is not None and row["v"] is not None:
            _deploy.forget_older(self.app_dir(space, slug), int(row["v"]))

    def version_of(self, space: str, slug: str, version: int) -> Version:
        """One version of an app, as its worker processes are found by."""
        return Version(space, slug, version, self.version_dir(space, slug, version))

    def read_version(
        self, space: str, slug: str, version: int, title: str, access: Access
    ) -> Loaded:
        """One version of an app from its files on disk (and its worker's manifest)."""
        from pasture.commands import load_commands
        from pasture.store.vocab import Vocabulary, merged

        root = self.version_dir(space, slug, version)
        files = _deploy.read_version(root)
        doc = json.loads(files["vocab.json"]) if "vocab.json" in files else None
        manifest: list[dict[str, Any]] | None = None
        if WORKER in files:
            manifest = self._manifest(space, slug, version, files)
        # its worker.py's tables are components as vocab.json's are
        vocabulary = Vocabulary.from_json(merged(doc, tables_of(manifest)))
        commands = load_commands(files, vocabulary, f"{space}/{slug}")
        if manifest is not None:
            code, problems = commands_of(
                manifest, self.version_of(space, slug, version), self.workers
            )
            if problems:
                logger.error("%s/%s v%s: worker.py: %s", space, slug, version, "; ".join(problems))
            commands = commands + code
        return Loaded(version, title, access, commands, vocabulary, manifest)

    def _manifest(
        self, space: str, slug: str, version: int, files: dict[str, bytes]
    ) -> list[dict[str, Any]]:
        """The commands a version's worker.py registered, as its deploy kept them."""
        row = self.db.one(
            "SELECT code FROM versions WHERE space = ? AND slug = ? AND version = ?",
            space,
            slug,
            version,
        )
        if row is not None and row["code"]:
            kept: list[dict[str, Any]] = json.loads(row["code"])
            return kept
        # A version deployed before manifests were kept: its worker is asked once, if
        # its space may run code at all.
        if not self.trusted(space):
            return []
        problems, manifest = self.workers.check(files, f"{space}/{slug}", self.secrets(space, slug))
        if problems:
            logger.error("%s/%s v%s: worker.py: %s", space, slug, version, "; ".join(problems))
            return []
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE versions SET code = ? WHERE space = ? AND slug = ? AND version = ?",
                (json.dumps(manifest), space, slug, version),
            )
        return manifest

    def _heard(self, version: Version, manifest: list[dict[str, Any]]) -> None:
        """A worker process of `version` described its commands: they are the app's now."""
        key = (version.space, version.slug)
        with self._lock:
            loaded = self._loaded.get(key)
            if loaded is None or loaded.version != version.version or loaded.code == manifest:
                return
            code, problems = commands_of(manifest, version, self.workers)
            if problems:
                logger.error("%s: worker.py's commands: %s", version.at, "; ".join(problems))
                return
            kept = [c for c in loaded.commands if c.family != "code"]
            self.changes += 1
            self._loaded[key] = Loaded(
                loaded.version,
                loaded.title,
                loaded.access,
                kept + code,
                loaded.vocabulary,
                manifest,
            )
        if self.on_commands is not None:
            self.on_commands(version.space, version.slug)

    def forget(self, space: str, slug: str, *, close: bool = True) -> None:
        """An app that is gone (to the trash, or for good): its loaded version and open store
        let go, its worker processes stopped. `close=False` leaves closing the store to
        whoever still reads from it (another thread's call that reached it first)."""
        with self._lock:
            self.changes += 1
            self._loaded.pop((space, slug), None)
            store = self._stores.pop((space, slug), None)
        self.workers.retire(space, slug)
        if store is not None and close:
            store.close()
        if self.db.keeps_files:
            # Only a cache of what the database keeps: fetched again if it comes back, and
            # never taken for the files of a new app of the same name once it went for good.
            shutil.rmtree(self.app_dir(space, slug), ignore_errors=True)

    def forget_space(self, space: str) -> None:
        """`forget` for every app of a space this process has at hand."""
        with self._lock:
            keys = {key for key in [*self._loaded, *self._stores] if key[0] == space}
        for key in sorted(keys):
            self.forget(*key)
        self.workers.retire_space(space)

    def remember(self, space: str, slug: str, loaded: Loaded) -> None:
        """This process just made `loaded` the app's current version."""
        with self._lock:
            self.changes += 1
            self._loaded[(space, slug)] = loaded

    def info(self, space: str, slug: str) -> AppInfo:
        return self.describe(space, slug, self.load(space, slug))

    def describe(self, space: str, slug: str, loaded: Loaded) -> AppInfo:
        """The listing's view of an app whose version is at hand."""
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
            url=self.url(space, slug),
            commands=[c.agent_name for c in loaded.commands],
            views=views,
            code=loaded.code is not None,
        )

    def close(self) -> None:
        self.workers.close()
        with self._lock:
            for store in self._stores.values():
                store.close()
            self._stores.clear()
            self._loaded.clear()
            self._snapshot = None
