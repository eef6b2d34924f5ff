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
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from pasture.caller import Caller
from pasture.commands.model import Command
from pasture.errors import DeployRefused, NotFound
from pasture.platform import deploy as _deploy
from pasture.platform import workers as _workers
from pasture.platform.db import PlatformDB
from pasture.platform.model import Access, AppInfo, Loaded, Role

if TYPE_CHECKING:
    from pasture.store.base import Store

logger = logging.getLogger("pasture.platform")


@dataclass
class _Snapshot:
    """The apps and members tables as they were at `stamp`."""

    stamp: tuple[int, int]
    apps: dict[tuple[str, str], tuple[str, Access, int]]  # (space, slug) → title, access, version
    roles: dict[str, dict[str, Role]]  # user eid → space → role
    member_apps: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # by user eid


class Catalog:
    """Apps, members, loaded versions and open stores of one data directory."""

    def __init__(self, home: Path, base_url: str, db: PlatformDB) -> None:
        self.home = home
        self.base_url = base_url
        self.db = db
        self._lock = threading.RLock()
        self._stores: dict[tuple[str, str], Store] = {}
        self._loaded: dict[tuple[str, str], Loaded] = {}
        self._snapshot: _Snapshot | None = None

    def _now(self) -> _Snapshot:
        """The tables as they are now: the kept snapshot, unless the database moved since."""
        stamp = self.db.stamp()
        snapshot = self._snapshot
        if snapshot is not None and snapshot.stamp == stamp:
            return snapshot
        # The stamp is taken first: a change made while these are read moves it again.
        apps = {
            (r["space"], r["slug"]): (str(r["title"]), cast(Access, r["access"]), int(r["version"]))
            for r in self.db.all("SELECT space, slug, title, access, version FROM apps")
        }
        roles: dict[str, dict[str, Role]] = {}
        for r in self.db.all("SELECT space, user, role FROM members"):
            roles.setdefault(r["user"], {})[r["space"]] = cast(Role, r["role"])
        snapshot = _Snapshot(stamp, apps, roles)
        self._snapshot = snapshot
        return snapshot

    # -- where things are -------------------------------------------------------
    def app_dir(self, space: str, slug: str) -> Path:
        return self.home / "apps" / space / slug

    def url(self, space: str, slug: str) -> str:
        return f"{self.base_url}/{space}/{slug}/"

    # -- members ----------------------------------------------------------------
    # Each of these looks at the database once: a call asks a handful of them.
    def role(self, caller: Caller, space: str) -> Role | None:
        """The caller's role in a space, or None when they are not a member."""
        if caller.eid is None:
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
        return list(found), dict(roles)

    def standing(self, caller: Caller, space: str, slug: str) -> tuple[Access | None, Role | None]:
        """The app's access (None: no such app) and the caller's role in its space."""
        snapshot = self._now()
        found = snapshot.apps.get((space, slug))
        role = None if caller.eid is None else snapshot.roles.get(caller.eid, {}).get(space)
        return (None if found is None else found[1]), role

    # -- apps -------------------------------------------------------------------
    def store(self, space: str, slug: str) -> Store:
        key = (space, slug)
        with self._lock:
            store = self._stores.get(key)
            if store is None:
                store = self.db.app_store(space, slug, self.app_dir(space, slug))
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
                # open store has not read, so the next call opens the store afresh.
                self._stores.pop(key, None)
            loaded = self.read_version(space, slug, version, title, access)
            self._loaded[key] = loaded
            return loaded

    def read_version(
        self, space: str, slug: str, version: int, title: str, access: Access
    ) -> Loaded:
        """One version of an app from its files on disk."""
        from pasture.commands import load_commands
        from pasture.store.vocab import Vocabulary

        root = self.version_dir(space, slug, version)
        files = _deploy.read_version(root)
        doc = json.loads(files["vocab.json"]) if "vocab.json" in files else None
        vocabulary = Vocabulary.from_json(doc)
        commands = load_commands(files, vocabulary, f"{space}/{slug}")
        if _workers.WORKER in files:
            try:
                commands = commands + self.worker_commands(space, slug, version)
            except DeployRefused:
                # It passed at deploy; the app keeps its declared commands meanwhile.
                logger.exception("%s/%s v%s: worker.py no longer loads", space, slug, version)
        return Loaded(version, title, access, commands, vocabulary)

    def worker_commands(self, space: str, slug: str, version: int) -> list[Command]:
        """Load a version's worker.py into this process; its commands, kept up to date.

        A command the worker registers or removes later (from its own code)
        joins or leaves the app's commands while that version is current.
        """
        root = self.version_dir(space, slug, version)
        registry, commands = _workers.load(root / _workers.WORKER, f"{space}/{slug}")

        def changed() -> None:
            key = (space, slug)
            with self._lock:
                loaded = self._loaded.get(key)
                if loaded is None or loaded.version != version:
                    return
                kept = [c for c in loaded.commands if c.family != "code"]
                self._loaded[key] = Loaded(
                    version,
                    loaded.title,
                    loaded.access,
                    kept + registry.commands(),
                    loaded.vocabulary,
                )

        registry.on_change(changed)
        return commands

    def remember(self, space: str, slug: str, loaded: Loaded) -> None:
        """This process just made `loaded` the app's current version."""
        with self._lock:
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
        )

    def close(self) -> None:
        with self._lock:
            for store in self._stores.values():
                store.close()
            self._stores.clear()
            self._loaded.clear()
            self._snapshot = None
