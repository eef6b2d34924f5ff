"""What platform.db says about apps and members, with each app's version loaded and its store open.

Every other part of the platform asks here: which apps a person's spaces hold,
their role in a space, an app's current version ready to run (`Loaded`), its
store. Another process may deploy at any time, so a version is checked
against the database before it is used.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, cast

from pasture.caller import Caller
from pasture.errors import NotFound
from pasture.platform import deploy as _deploy
from pasture.platform.db import PlatformDB
from pasture.platform.model import Access, AppInfo, Loaded, Role

if TYPE_CHECKING:
    from pasture.store.base import Store


class Catalog:
    """Apps, members, loaded versions and open stores of one data directory."""

    def __init__(self, home: Path, base_url: str, db: PlatformDB) -> None:
        self.home = home
        self.base_url = base_url
        self.db = db
        self._lock = threading.RLock()
        self._stores: dict[tuple[str, str], Store] = {}
        self._loaded: dict[tuple[str, str], Loaded] = {}

    # -- where things are -------------------------------------------------------
    def app_dir(self, space: str, slug: str) -> Path:
        return self.home / "apps" / space / slug

    def url(self, space: str, slug: str) -> str:
        return f"{self.base_url}/{space}/{slug}/"

    # -- members ----------------------------------------------------------------
    def role(self, caller: Caller, space: str) -> Role | None:
        """The caller's role in a space, or None when they are not a member."""
        if not caller.signed_in:
            return None
        row = self.db.one(
            "SELECT role FROM members WHERE space = ? AND user = ?", space, caller.eid
        )
        return None if row is None else cast(Role, row["role"])

    def member_apps(self, caller: Caller) -> list[tuple[str, str]]:
        """Every app in every space the caller belongs to, by space then slug."""
        if not caller.signed_in:
            return []
        rows = self.db.all(
            "SELECT apps.space, apps.slug FROM apps JOIN members ON members.space = apps.space "
            "WHERE members.user = ? ORDER BY apps.space, apps.slug",
            caller.eid,
        )
        return [(r["space"], r["slug"]) for r in rows]

    # -- apps -------------------------------------------------------------------
    def access_of(self, space: str, slug: str) -> Access | None:
        """The app's access, or None when there is no such app."""
        row = self.db.one("SELECT access FROM apps WHERE space = ? AND slug = ?", space, slug)
        return None if row is None else cast(Access, row["access"])

    def store(self, space: str, slug: str) -> Store:
        from pasture.store import open_store

        key = (space, slug)
        with self._lock:
            store = self._stores.get(key)
            if store is None:
                path = self.app_dir(space, slug) / "store.db"
                path.parent.mkdir(parents=True, exist_ok=True)
                store = cast("Store", open_store(path))
                self._stores[key] = store
            return store

    def load(self, space: str, slug: str) -> Loaded:
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
            loaded = self.read_version(space, slug, version, row["title"], row["access"])
            self._loaded[key] = loaded
            return loaded

    def read_version(
        self, space: str, slug: str, version: int, title: str, access: Access
    ) -> Loaded:
        """One version of an app from its files on disk."""
        from pasture.commands import load_commands
        from pasture.store.vocab import Vocabulary

        files = _deploy.read_version(self.app_dir(space, slug) / f"v{version}")
        doc = json.loads(files["vocab.json"]) if "vocab.json" in files else None
        vocabulary = Vocabulary.from_json(doc)
        commands = load_commands(files, vocabulary, f"{space}/{slug}")
        return Loaded(version, title, access, commands, vocabulary)

    def remember(self, space: str, slug: str, loaded: Loaded) -> None:
        """This process just made `loaded` the app's current version."""
        with self._lock:
            self._loaded[(space, slug)] = loaded

    def info(self, space: str, slug: str) -> AppInfo:
        loaded = self.load(space, slug)
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
