"""Apps as versions: deploy (check everything, then install), read the source back, roll back.

A deploy checks the whole app before anything is installed and refuses with
every problem at once — the space's room for one more version among them
(`pasture.platform.apps.disk`); it installs components before commands, writes the
version's files, and makes it current in one transaction (`_switch_version`,
the commit point), which also lets go of the versions past those kept.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pasture import jsontext
from pasture.caller import Caller
from pasture.commands.model import Command
from pasture.errors import (
    Cancelled,
    DeployRefused,
    Forbidden,
    NotFound,
    Refused,
    Unauthorized,
    UsageError,
    echo,
)
from pasture.long_calls import LongCall, progress_of
from pasture.names import check_slug, check_title
from pasture.platform.access.gate import Gate, require_writes
from pasture.platform.access.spaces import Spaces
from pasture.platform.apps import paths
from pasture.platform.apps import versions as _deploy
from pasture.platform.apps.disk import Disk
from pasture.platform.apps.trash import refuse_held
from pasture.platform.auth.people import People
from pasture.platform.catalog import Catalog
from pasture.platform.db.platform_db import PlatformDB
from pasture.platform.db.platform_tables import REACH_MOVED
from pasture.platform.nouns import ACCESS_SAID, ACCESSES, SIGN_IN, Access, Loaded, plural
from pasture.platform.workers.dispatch import (
    WORKER,
    Version,
    clashes,
    commands_of,
    tables_of,
    untrusted,
)
from pasture.result import Result
from pasture.values import now

if TYPE_CHECKING:
    from pasture.platform.access.audit import Call
    from pasture.store.vocab import Vocabulary


class Apps:
    """Deploying, reading back and rolling back an app's versions."""

    def __init__(
        self,
        db: PlatformDB,
        catalog: Catalog,
        people: People,
        spaces: Spaces,
        gate: Gate,
        disk: Disk | None = None,
    ) -> None:
        self.db = db
        self.catalog = catalog
        self.people = people
        self.spaces = spaces
        self.gate = gate
        self.disk = disk or Disk(db, catalog.app_dir)

    def deploy(
        self,
        caller: Caller,
        files: Path | Mapping[str, bytes | str],
        *,
        space: str | None = None,
        app: str | None = None,
        access: Access | None = None,
        title: str | None = None,
        noted: Call | None = None,
        long_call: LongCall | None = None,
    ) -> Result:
        """Check the whole app, then install it as a new version, or refuse with every problem.

        `noted`: the audit's record of this call, told which app it is. `long_call`: the
        door's watch, told how far it has come (a big app's files take seconds to write)."""
        require_writes(caller)
        from pasture.commands import load_commands
        from pasture.commands.deploy_checks import declared_commands
        from pasture.commands.loader import read_tools
        from pasture.store.vocab import SCHEMA, VOCAB_FILE, merged, read_app

        if app and "/" in app and space is None:
            space, _, app = app.partition("/")
        space = space or self.people.personal_space(caller)
        if isinstance(files, (str, Path)):
            folder = Path(files)
            slug = app or folder.resolve().name.lower()
            if long_call is not None:
                long_call.report(progress_of(0, None, f"reading {folder}"))
            raw: dict[str, bytes] = _deploy.read_dir(folder)
            problems: list[str] = _deploy.too_big(raw)
        else:
            if not app:
                raise UsageError("name the app to deploy these files as (app=…, or --app)")
            slug = app
            raw, problems = _deploy.normalise(files)
        check_slug(slug)
        _check_access(access)
        if title is not None:
            check_title(title)
        at = f"{space}/{slug}"
        if noted is not None:
            noted.app = at
        refuse_held(self.db, caller, space, slug)  # a name in the trash is held
        if self.spaces.role(caller, space) not in ("owner", "editor"):
            self.spaces.no_deploy(caller, space)
        if not raw:  # none, or too many to look at (`too_big` said so)
            raise DeployRefused(
                problems or ["there are no files to deploy — put index.html in the folder"]
            )
        problems.extend(_deploy.foreign_workers(raw))  # code of another platform, never run

        current = self.db.one("SELECT * FROM apps WHERE space = ? AND slug = ?", space, slug)
        previous: Vocabulary | None = None
        if current is not None:
            previous = self.catalog.load(space, slug).vocabulary

        # Check everything before anything is installed.
        vocab_doc: dict[str, Any] | None = None
        vocabulary: Vocabulary | None = None
        if "vocab.json" in raw:
            try:
                parsed = json.loads(raw["vocab.json"])
                jsontext.check(parsed, "vocab.json")
            except (ValueError, UnicodeDecodeError) as e:
                problems.append(f"vocab.json: not JSON — {e}")
            except RecursionError:
                problems.append(jsontext.too_deep("vocab.json"))
            except Refused as e:
                problems.append(e.sentence)
            else:
                if isinstance(parsed, dict):
                    vocab_doc = parsed
                else:
                    problems.append("vocab.json: an object with $defs, one entry per component")
        # worker.py is set up first: its schema's tables are components of the vocabulary
        # (its problems are said after the other files')
        manifest: list[dict[str, Any]] | None = None
        code_names: list[str] = []
        in_code: list[str] = []
        warnings: list[str] = []  # said with the deploy, once: never when it is loaded
        if WORKER in raw:
            manifest, code_names = self._check_code(space, slug, raw, in_code, warnings)
        tables = tables_of(manifest)
        if not any(p.startswith("vocab.json") for p in problems):
            vocabulary, read = read_app(vocab_doc, tables, previous=previous)
            if read[VOCAB_FILE]:
                problems.append(str(DeployRefused(read[VOCAB_FILE], prefix="vocab.json")))
            if read[SCHEMA]:
                in_code.append(str(DeployRefused(read[SCHEMA], prefix=f"{WORKER}: schema")))
        commands: list[Command] = []
        if vocabulary is not None:
            # Checked against what vocab.json did read, so one message names tools.json's
            # problems beside vocab.json's.
            try:
                commands = load_commands(raw, vocabulary, at)
            except DeployRefused as e:
                problems.append(str(e))
        else:
            # vocab.json is not JSON: tools.json is checked for all but what it says of the
            # app's own components, so one message still names its problems too.
            try:
                found = read_tools(raw)
            except DeployRefused as e:
                problems.append(str(e))
            else:
                if found is not None:
                    name, doc = found
                    _, wrong = declared_commands(doc, None, set(raw))
                    if wrong:
                        problems.append(str(DeployRefused(wrong, prefix=name)))
        in_code.extend(f"{WORKER}: {p}" for p in clashes(code_names, commands))
        problems.extend(in_code)
        if not problems:  # room for it is asked last: what is wrong with it is said first
            try:
                self.disk.check_room(space, slug, raw)
            except DeployRefused as e:
                problems.extend(e.problems)
        if problems:
            raise DeployRefused(problems)
        assert vocabulary is not None

        app_title = title or _deploy.title_of(raw) or slug
        app_dir = self.catalog.app_dir(space, slug)
        with _deploy.app_lock(app_dir):
            row = self.db.one(
                "SELECT MAX(version) AS v FROM versions WHERE space = ? AND slug = ?", space, slug
            )
            recorded = int(row["v"]) if row is not None and row["v"] is not None else 0
            _deploy.sweep(app_dir, recorded)
            version = recorded + 1
            root = _deploy.write_version(app_dir, version, raw, _writing(long_call, at, raw))
            try:
                if manifest is not None:
                    code, _ = commands_of(
                        manifest, Version(space, slug, version, root), self.catalog.workers
                    )
                    commands = commands + code
                # Components before commands: the store knows this release's vocabulary
                # before any of its commands can be called.
                self.catalog.store(space, slug).declare(merged(vocab_doc, tables))
                chosen: Access = access or (
                    cast(Access, current["access"]) if current is not None else "public"
                )
                gone = self._switch_version(
                    caller, space, slug, version, app_title, chosen, raw, manifest
                )
            except BaseException:
                # Never made current: its folder goes, and the last version serves on.
                shutil.rmtree(root, ignore_errors=True)
                raise
            self.disk.forget(space, slug, gone)
            self.disk.keep_only(space, slug)
        if long_call is not None:
            long_call.flush(last=True)
        self.catalog.workers.retire(space, slug)  # the last version's processes stop
        self.catalog.remember(
            space, slug, Loaded(version, app_title, chosen, commands, vocabulary, manifest)
        )
        names = [c.agent_name for c in commands]
        url = self.catalog.url(space, slug)
        text = f"deployed {at} v{version}: {url}\ncommands: {', '.join(names) or 'none'}"
        data: dict[str, Any] = {
            "at": at,
            "version": version,
            "url": url,
            "title": app_title,
            "commands": names,
        }
        if warnings:
            text += "".join(f"\nwarning: {WORKER}: {w}" for w in warnings)
            data["warnings"] = [f"{WORKER}: {w}" for w in warnings]
        return Result(text, data)

    def _switch_version(
        self,
        caller: Caller,
        space: str,
        slug: str,
        version: int,
        title: str,
        access: Access,
        files: Mapping[str, bytes],
        manifest: list[dict[str, Any]] | None,
    ) -> list[int]:
        """The commit point of a deploy: one transaction makes the new version current and
        lets go of those past the versions kept; which those were."""
        code = None if manifest is None else json.dumps(manifest)
        weight = sum(len(body) for body in files.values())
        with self.db.transaction() as conn:
            self.db.keep_files(conn, space, slug, version, files)
            conn.execute(
                "INSERT INTO versions "
                "(space, slug, version, title, deployed_by, deployed_at, code, bytes) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (space, slug, version, title, caller.eid, now("seconds"), code, weight),
            )
            conn.execute(
                "INSERT INTO apps (space, slug, title, access, version) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (space, slug) DO UPDATE SET title = excluded.title, "
                "access = excluded.access, version = excluded.version",
                (space, slug, title, access, version),
            )
            conn.execute(REACH_MOVED)  # its access may be narrower now
            return self.disk.let_go(conn, space, slug, version)

    def _check_code(
        self,
        space: str,
        slug: str,
        files: dict[str, bytes],
        problems: list[str],
        warnings: list[str],
    ) -> tuple[list[dict[str, Any]] | None, list[str]]:
        """worker.py set up once, apart (only in a trusted space): the manifest of its commands
        (and its tables), and their agent names.

        Every problem is added to `problems`, each as `worker.py: …`; what its commands are
        warned of (input keywords not checked), to `warnings`.
        """
        if not self.catalog.trusted(space):
            problems.append(
                f"{WORKER}: this app runs code, and {untrusted(space)} — without "
                f"{WORKER} it deploys as it is"
            )
            return None, []
        at = f"{space}/{slug}"
        found, manifest = self.catalog.workers.check(files, at, self.catalog.secrets(space, slug))
        problems.extend(f"{WORKER}: {p}" for p in found)
        if found:
            return None, []
        # What the worker process says is held to the rules again, here.
        code, bad = commands_of(
            manifest, Version(space, slug, 0, Path()), self.catalog.workers, warnings
        )
        problems.extend(f"{WORKER}: {p}" for p in bad)
        return manifest, [c.agent_name for c in code]

    def files(self, caller: Caller, app: str, path: str | None = None) -> Result:
        """An app's source read back: the list of files, or one file's text."""
        reached = self.gate.reach(caller, app)
        loaded = self.catalog.load(reached.space, reached.slug)
        root = self.catalog.app_dir(reached.space, reached.slug) / f"v{loaded.version}"
        if path is None or path.strip("/") == "":
            names = sorted(_deploy.read_dir(root))
            return Result(
                f"{reached.at} v{loaded.version}: {plural(len(names), 'file', 'files')}\n"
                + "\n".join(names),
                {"at": reached.at, "version": loaded.version, "files": names},
            )
        target = paths.inside(root, path)
        if not target.is_file():
            raise NotFound(f"no file {paths.shown(path)} in {reached.at} — app_files lists them")
        text = target.read_bytes().decode("utf-8", "replace")
        return Result(
            text, {"at": reached.at, "version": loaded.version, "path": path, "text": text}
        )

    def rollback(
        self,
        caller: Caller,
        app: str,
        version: int,
        noted: Call | None = None,
        long_call: LongCall | None = None,
    ) -> Result:
        """Make a kept version current again; its components are declared to the store first
        (an index to make on a big table takes seconds: `long_call`, the door's watch, is
        told so)."""
        from pasture.store.vocab import Vocabulary, merged

        require_writes(caller)
        reached = self.gate.reach(caller, app)
        if noted is not None:
            noted.app = reached.at
        if reached.role not in ("owner", "editor"):
            self.spaces.no_deploy(caller, reached.space)
        space, slug = reached.space, reached.slug
        row = self.db.one(
            "SELECT title FROM versions WHERE space = ? AND slug = ? AND version = ?",
            space,
            slug,
            version,
        )
        if row is None or not self.catalog.version_dir(space, slug, version).is_dir():
            kept = [
                str(r["version"])
                for r in self.db.all(
                    "SELECT version FROM versions WHERE space = ? AND slug = ? ORDER BY version",
                    space,
                    slug,
                )
            ]
            raise NotFound(f"{reached.at} has no v{version} — it has v{', v'.join(kept)}")
        current = self.catalog.load(space, slug)
        loaded = self.catalog.read_version(space, slug, version, row["title"], current.access)
        files = _deploy.read_version(self.catalog.app_dir(space, slug) / f"v{version}")
        doc = json.loads(files["vocab.json"]) if "vocab.json" in files else None
        doc = merged(doc, tables_of(loaded.code))  # and the tables its worker.py declared
        # The rows written since stay; the older vocabulary must still describe them.
        Vocabulary.from_json(doc, previous=current.vocabulary)
        if long_call is not None:
            long_call.report(progress_of(0, None, f"rolling back {reached.at} to v{version}"))
        self.catalog.store(space, slug).declare(doc)
        if long_call is not None:
            long_call.flush(last=True)
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE apps SET version = ?, title = ? WHERE space = ? AND slug = ?",
                (version, row["title"], space, slug),
            )
        self.catalog.workers.retire(space, slug)
        self.catalog.remember(space, slug, loaded)
        names = [c.agent_name for c in loaded.commands]
        return Result(
            f"{reached.at} is back at v{version}: {self.catalog.url(space, slug)}\n"
            f"commands: {', '.join(names) or 'none'}",
            {"at": reached.at, "version": version, "commands": names},
        )

    def change(
        self,
        caller: Caller,
        app: str,
        *,
        title: str | None = None,
        access: Access | None = None,
        noted: Call | None = None,
    ) -> Result:
        """Set the app's title or access (or both) without a deploy; its space's owners and
        editors do this, as they deploy. The title is the current version's: a rollback to
        another version shows that version's. A narrower access holds at once, for every
        token and grant (`REACH_MOVED`)."""
        require_writes(caller)
        if title is None and access is None:
            raise UsageError("say what to change: --title T, --access private|public|open, or both")
        _check_access(access)
        if title is not None:
            title = title.strip()
            if not title:
                raise UsageError("the title is one line of text — say one, or leave it as it is")
            check_title(title)
        reached = self.gate.reach(caller, app)
        if noted is not None:
            noted.app = reached.at
        space, slug = reached.space, reached.slug
        if reached.role not in ("owner", "editor"):
            if not caller.signed_in:
                raise Unauthorized(SIGN_IN)
            whom = (
                f"its space's owners can make you an editor of {space}"
                if reached.role is not None
                else f"only the owners and editors of {space} can"
            )
            raise Forbidden(f"you can use {reached.at} but not change its settings — {whom}")
        current = self.catalog.load(space, slug)
        new_title = current.title if title is None else title
        new_access: Access = current.access if access is None else access
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE apps SET title = ?, access = ? WHERE space = ? AND slug = ?",
                (new_title, new_access, space, slug),
            )
            conn.execute(
                "UPDATE versions SET title = ? WHERE space = ? AND slug = ? AND version = ?",
                (new_title, space, slug, current.version),
            )
            conn.execute(REACH_MOVED)  # its access may be narrower now
        said = []
        if title is not None:
            said.append(f"its title is {new_title}")
        if access is not None:
            said.append(f"its access is {new_access} ({ACCESS_SAID[new_access]})")
        return Result(
            f"{reached.at}: {' and '.join(said)}",
            {"at": reached.at, "title": new_title, "access": new_access},
        )


def _check_access(access: str | None) -> None:
    """Refused unless `access` is one (None: not asked for), in one sentence at every door."""
    if access is not None and access not in ACCESSES:
        raise UsageError(f"{echo(access, 40)} is not an access — say private, public or open")


def _writing(
    long_call: LongCall | None, at: str, files: Mapping[str, bytes]
) -> Callable[[int], None] | None:
    """What `write_version` tells as each file is written: megabytes of the whole, to the
    door's watch (each file is synced to disk, so a big app takes seconds)."""
    if long_call is None:
        return None
    total = max(round(sum(len(b) for b in files.values()) / 1e6, 1), 0.1)
    said = f"deploying {at}: MB written"

    def wrote(done: int) -> None:
        if long_call.cancelled:  # Ctrl-C: the version never made current, its folder gone
            raise Cancelled(f"the deploy of {at} was stopped — nothing of it was installed")
        long_call.report(progress_of(min(max(round(done / 1e6, 1), 0.1), total), total, said))

    return wrote
