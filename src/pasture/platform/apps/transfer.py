"""One app moved between servers, and between SQLite and PostgreSQL: `pasture app export` and
`pasture app import`.

An export is one file, a gzip'd tar archive a person can open with `tar xzf`:

    manifest.json          the format and its version; the app (space, slug, title,
                           access, current version); each version kept (its title, who
                           deployed it and when, its code's manifest, its files); the
                           names of its secrets (never their values); the store's header
                           (its vocabulary, its tables' columns, how many entities)
    versions/v<N>/<path>   every file of every version kept
    data.jsonl             the store, one entity a line (`pasture.store.dump`)

Who may: the owners of the app's space export it; the owners of a space import into it.
An import checks the whole file first and refuses with every problem it finds, writing
nothing; it is refused too when the name is taken (by an app, or held by the trash). Then
the store is loaded in one transaction, the versions written to disk, and the platform
database made to know the app in one more (the commit point); anything failing before
that takes away what was written, so no half app is left. The imported store equals the
exported one row by row (eids, stamps, references, edges), on either database.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import shutil
import tarfile
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from pasture.caller import Caller
from pasture.errors import (
    Cancelled,
    Conflict,
    DeployRefused,
    Forbidden,
    NotFound,
    Refused,
    UsageError,
)
from pasture.long_calls import LongCall, progress_of
from pasture.names import check_slug, check_title
from pasture.platform.access.gate import Gate, require_writes
from pasture.platform.access.spaces import Spaces
from pasture.platform.apps import paths
from pasture.platform.apps import versions as _versions
from pasture.platform.apps.disk import Disk, megabytes
from pasture.platform.apps.trash import owners_named, refuse_held
from pasture.platform.auth.people import People
from pasture.platform.catalog import Catalog
from pasture.platform.db.platform_db import PlatformDB, SqlitePlatformDB
from pasture.platform.nouns import ACCESSES, plural
from pasture.platform.workers.dispatch import WORKER, untrusted
from pasture.result import Result
from pasture.values import now
from pasture.version import __version__

if TYPE_CHECKING:
    from pasture.platform.access.audit import Call
    from pasture.store.sqlstore import SqlStore

FORMAT = "pasture app export"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DATA = "data.jsonl"
VERSIONS = "versions/"
_MAX_MANIFEST = 64 * 1024 * 1024  # bytes of manifest.json read at most
_MAX_LINE = 256 * 1024 * 1024  # bytes of one data line: an entity, read whole
_AGAIN = "export the app again with pasture app export"


def file_shape(file: Any, known: Any = None) -> str:
    """An export's file as the audit keeps it: its name alone."""
    return Path(str(file)).name[:80]


@dataclass
class _Archive:
    """What an export's file holds, read and checked (but the data lines, read as needed)."""

    manifest: dict[str, Any]
    versions: dict[int, dict[str, bytes]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    has_data: bool = False  # it holds data.jsonl


class Transfer:
    """Exporting an app to one file, and importing one."""

    def __init__(
        self,
        db: PlatformDB,
        catalog: Catalog,
        people: People,
        spaces: Spaces,
        gate: Gate,
        disk: Disk,
    ) -> None:
        self.db = db
        self.catalog = catalog
        self.people = people
        self.spaces = spaces
        self.gate = gate
        self.disk = disk

    # -- export ----------------------------------------------------------------------------
    def export(
        self,
        caller: Caller,
        app: str,
        file: str | Path,
        *,
        noted: Call | None = None,
        long_call: LongCall | None = None,
    ) -> Result:
        """Write the app — every version kept, its data — to `file`, which must not be there
        yet; the owners of its space do this."""
        from pasture.store import dump

        reached = self.gate.reach(caller, app)
        if noted is not None:
            noted.app = reached.at
        space, slug, at = reached.space, reached.slug, reached.at
        if reached.role != "owner":
            raise Forbidden(
                f"only the owners of {space} ({self._owners(space)}) export its apps — you are "
                f"{reached.role} of {space}; ask one of them to export {at}"
            )
        target = Path(file)
        if target.exists():
            raise UsageError(
                f"{target} is there already — name a file that is not there yet, or remove it"
            )
        if not target.parent.is_dir():
            raise UsageError(f"there is no folder {target.parent} to write {target.name} in")
        row = self.db.one(
            "SELECT title, access, version FROM apps WHERE space = ? AND slug = ?", space, slug
        )
        if row is None:
            raise NotFound(f"no app {at}")
        kept = self.db.all(
            "SELECT version, title, deployed_by, deployed_at, code FROM versions "
            "WHERE space = ? AND slug = ? ORDER BY version",
            space,
            slug,
        )
        versions: list[dict[str, Any]] = []
        files: dict[int, dict[str, bytes]] = {}
        for r in kept:
            number = int(r["version"])
            found = _versions.read_version(self.catalog.version_dir(space, slug, number))
            if not found:
                continue  # a version whose files this server no longer has
            files[number] = found
            versions.append(
                {
                    "version": number,
                    "title": r["title"],
                    "deployed_by": r["deployed_by"],
                    "deployed_at": r["deployed_at"],
                    "code": None if r["code"] is None else json.loads(r["code"]),
                    "files": sorted(found),
                }
            )
        names = [
            str(r["name"])
            for r in self.db.all(
                "SELECT name FROM secrets WHERE space = ? AND slug = ? ORDER BY name", space, slug
            )
        ]
        store = self._sql_store(space, slug)
        tell = _teller(long_call, f"exporting {at}")
        partial = target.with_name(f".{target.name}.{secrets.token_hex(4)}.partial")
        try:
            with tempfile.TemporaryFile() as lines:
                header = dump.dump(store, lambda line: lines.write(line.encode()), tell)
                manifest = {
                    "format": FORMAT,
                    "format_version": FORMAT_VERSION,
                    "pasture": __version__,
                    "exported_at": now("seconds"),
                    "exported_by": caller.name,
                    "app": {
                        "space": space,
                        "slug": slug,
                        "title": row["title"],
                        "access": row["access"],
                        "version": int(row["version"]),
                    },
                    "versions": versions,
                    "secrets": names,
                    "store": {"backend": store.dialect.name, **header, "data": DATA},
                }
                with tarfile.open(partial, "w:gz") as tar:
                    _add(tar, MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False).encode())
                    for number, held in files.items():
                        for path in sorted(held):
                            _add(tar, f"{VERSIONS}v{number}/{path}", held[path])
                    size = lines.tell()
                    lines.seek(0)
                    info = _info(DATA, size)
                    tar.addfile(info, lines)
            os.replace(partial, target)
        except OSError as e:
            from pasture import faults

            raise faults.fault(e, target.parent) or e from None
        finally:
            with contextlib.suppress(OSError):
                partial.unlink()
        said = f"exported {at} v{row['version']} to {target}: " + ", ".join(
            [
                plural(len(versions), "version", "versions"),
                plural(header["entities"], "entity", "entities"),
            ]
        )
        if names:
            said += (
                f"\nits secrets are not in the file, only their names ({', '.join(names)}): "
                "set them again where it is imported, with pasture secret set"
            )
        return Result(
            said,
            {
                "at": at,
                "file": str(target),
                "version": int(row["version"]),
                "versions": [v["version"] for v in versions],
                "entities": header["entities"],
                "secrets": names,
            },
        )

    def _owners(self, space: str) -> str:
        """Who can: the space's owners, by name."""
        return owners_named(self.db, space)

    def _sql_store(self, space: str, slug: str) -> SqlStore[Any]:
        from pasture.store.sqlstore import SqlStore

        store = self.catalog.store(space, slug)
        assert isinstance(store, SqlStore)
        return store

    # -- import ----------------------------------------------------------------------------
    def import_(
        self,
        caller: Caller,
        file: str | Path,
        *,
        space: str | None = None,
        slug: str | None = None,
        noted: Call | None = None,
        long_call: LongCall | None = None,
    ) -> Result:
        """Make the app an export's `file` holds, in `space` (the caller's own by default) as
        `slug` (the name it had by default); the owners of a space do this. Refused with
        every problem of the file, or when the name is taken, with nothing written."""
        from pasture.store import dump
        from pasture.store.dialect import POSTGRES, SQLITE

        self.people.require_signed_in(caller)
        require_writes(caller)
        source = Path(file)
        if not source.is_file():
            raise NotFound(f"no file {source} — name the file pasture app export wrote")
        space = space or self.people.personal_space(caller)
        with _opened(source) as tar:
            archive = _read(tar, source.name)
            app = archive.manifest["app"]
            slug = slug or str(app["slug"])
            check_slug(slug)
            at = f"{space}/{slug}"
            if noted is not None:
                noted.app = at
            refuse_held(self.db, caller, space, slug)  # a name in the trash is held
            role = self.spaces.role(caller, space)
            if role is None:
                self.spaces.no_space(caller, space, "import apps into it")
            if role != "owner":
                raise Forbidden(
                    f"you are {role} of {space}; only its owners ({self._owners(space)}) import "
                    "apps into it — import it into a space of your own"
                )
            taken = _taken(at)
            if self.db.one("SELECT 1 FROM apps WHERE space = ? AND slug = ?", space, slug):
                raise Conflict(taken)
            problems = archive.problems
            runs_code = any(WORKER in held for held in archive.versions.values())
            if runs_code and not self.catalog.trusted(space):
                problems.append(f"{WORKER}: this app runs code, and {untrusted(space)}")
            problems.extend(self._room(space, archive))
            header = archive.manifest["store"]
            dialect = SQLITE if isinstance(self.db, SqlitePlatformDB) else POSTGRES
            tell = _teller(long_call, f"checking {source.name}", 0, 2)
            if archive.has_data:
                lines = _lines(tar, source.name, tell, header)
                problems.extend(dump.check(header, lines, dialect))
            if problems:
                raise DeployRefused([*problems, _AGAIN], prefix=f"{source.name} cannot be imported")
            return self._install(tar, source.name, archive, space, slug, long_call)

    def _room(self, space: str, archive: _Archive) -> list[str]:
        """The space's quota, with every version the file holds."""
        adding = sum(sum(map(len, held.values())) for held in archive.versions.values())
        used = sum(sum(v.values()) for v in self.disk.kept(space).values())
        if used + adding <= self.disk.space_quota * 1024 * 1024:
            return []
        return [
            f"its versions ({megabytes(adding)}) would take {space}'s apps to "
            f"{megabytes(used + adding)}, past the space's {self.disk.space_quota:,} MB — ask "
            "the server's owner for more room (pasture serve --space-quota)"
        ]

    def _install(
        self,
        tar: tarfile.TarFile,
        name: str,
        archive: _Archive,
        space: str,
        slug: str,
        long_call: LongCall | None,
    ) -> Result:
        from pasture.store import dump

        at = f"{space}/{slug}"
        app = archive.manifest["app"]
        header = archive.manifest["store"]
        app_dir = self.catalog.app_dir(space, slug)
        made: list[Path] = []
        store: SqlStore[Any] | None = None
        loaded = False
        with _versions.app_lock(app_dir):
            try:
                if self.db.one("SELECT 1 FROM apps WHERE space = ? AND slug = ?", space, slug):
                    raise Conflict(_taken(at))  # made meanwhile
                store = self._sql_store(space, slug)
                if not dump.is_empty(store):
                    raise Conflict(
                        f"{at} keeps the data of an app of that name that was never finished "
                        "— import it under another name with --as NAME"
                    )
                store.declare(header["vocabulary"])
                tell = _teller(long_call, f"importing {at}", int(header["entities"]), 2)
                count = dump.load(store, header, _lines(tar, name, None, header), tell)
                loaded = True
                _versions.sweep(app_dir, 0)  # what a deploy that died here left
                for number, held in sorted(archive.versions.items()):
                    made.append(_versions.write_version(app_dir, number, held))
                with self.db.transaction() as conn:
                    if conn.execute(
                        "SELECT 1 FROM apps WHERE space = ? AND slug = ?", (space, slug)
                    ).fetchone():
                        raise Conflict(_taken(at))
                    for v in archive.manifest["versions"]:
                        number = int(v["version"])
                        held = archive.versions[number]
                        self.db.keep_files(conn, space, slug, number, held)
                        code = None if v.get("code") is None else json.dumps(v["code"])
                        conn.execute(
                            "INSERT INTO versions (space, slug, version, title, deployed_by, "
                            "deployed_at, code, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            (
                                space,
                                slug,
                                number,
                                v["title"],
                                v.get("deployed_by"),
                                v["deployed_at"],
                                code,
                                sum(map(len, held.values())),
                            ),
                        )
                    conn.execute(
                        "INSERT INTO apps (space, slug, title, access, version) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (space, slug, app["title"], app["access"], int(app["version"])),
                    )
            except BaseException:
                # never known to the platform: what was written of it goes
                for folder in made:
                    shutil.rmtree(folder, ignore_errors=True)
                if store is not None and loaded:
                    with contextlib.suppress(Exception):
                        dump.empty(store)
                raise
        names = [str(n) for n in archive.manifest.get("secrets", [])]
        versions = sorted(archive.versions)
        url = self.catalog.url(space, slug)
        said = f"imported {at} v{app['version']}: {url}\n" + ", ".join(
            [plural(len(versions), "version", "versions"), plural(count, "entity", "entities")]
        )
        if names:
            said += (
                f"\nits secrets were not exported ({', '.join(names)}): set each with "
                f"pasture secret set {at} NAME"
            )
        return Result(
            said,
            {
                "at": at,
                "version": int(app["version"]),
                "versions": versions,
                "entities": count,
                "url": url,
                "secrets": names,
            },
        )


# -- the file --------------------------------------------------------------------------------


def _taken(at: str) -> str:
    return (
        f"there is an app {at} already — import it under another name with --as NAME, or "
        "into another space with --space SPACE"
    )


def _info(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mode = 0o644
    info.mtime = int(time.time())
    return info


def _add(tar: tarfile.TarFile, name: str, body: bytes) -> None:
    tar.addfile(_info(name, len(body)), io.BytesIO(body))


def _not_an_export(name: str, why: str) -> DeployRefused:
    return DeployRefused([why, _AGAIN], prefix=f"{name} cannot be imported")


@contextlib.contextmanager
def _opened(source: Path) -> Iterator[tarfile.TarFile]:
    """The export's archive; refused, saying so, when the file is not one."""
    try:
        tar = tarfile.open(source, "r:*")  # noqa: SIM115 (closed below, after the block)
    except (tarfile.TarError, OSError, EOFError, zlib.error):
        raise _not_an_export(
            source.name, "it is not an app export (a tar archive with manifest.json)"
        ) from None
    with tar:
        yield tar


_DAMAGED = (tarfile.TarError, OSError, EOFError, zlib.error)


def _read(tar: tarfile.TarFile, name: str) -> _Archive:
    """The archive's manifest and every version's files, each problem named; refused at once
    when there is no manifest to read, or the archive is cut short."""
    try:
        members = tar.getmembers()
        manifest_member = next((m for m in members if m.name == MANIFEST), None)
        if manifest_member is None:
            raise _not_an_export(name, f"it is not an app export: it holds no {MANIFEST}")
        manifest = _manifest(tar, manifest_member, name)
        archive = _Archive(manifest)
        listed = {
            int(v["version"]): set(v["files"]) for v in manifest["versions"] if isinstance(v, dict)
        }
        weight: dict[int, int] = {}  # bytes of each version's files
        over: set[int] = set()  # versions past a deploy's bounds
        for m in members:
            if m.name == MANIFEST:
                continue
            if m.name == DATA and m.isfile():
                archive.has_data = True
                continue
            number, path = _version_path(m.name)
            if number is None or not m.isfile() or number not in listed:
                archive.problems.append(f"it holds {paths.shown(m.name)}, which no export has")
                continue
            if path not in listed[number]:
                archive.problems.append(
                    f"v{number} holds {paths.shown(path)}, which its manifest does not list"
                )
                continue
            held = archive.versions.setdefault(number, {})
            weight[number] = weight.get(number, 0) + m.size
            if weight[number] > _versions.MAX_BYTES or len(held) >= _versions.MAX_FILES:
                # read no further than a deploy would take (`versions.too_big` says it)
                held[path] = b""
                over.add(number)
                continue
            body = tar.extractfile(m)
            assert body is not None
            held[path] = body.read()
    except DeployRefused:
        raise
    except _DAMAGED:
        raise _not_an_export(name, "it is cut short or damaged: it is no whole archive") from None
    if not archive.has_data:
        archive.problems.append(f"it holds no {DATA}, the app's data")
    for number in sorted(listed):
        held = archive.versions.setdefault(number, {})
        missing = sorted(listed[number] - set(held))
        if missing:
            archive.problems.append(
                f"v{number} lacks {', '.join(paths.shown(p) for p in missing[:5])}"
                + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            )
        if number in over:
            archive.problems.append(
                f"v{number} is more than an app may be: at most {_versions.MAX_FILES:,} files "
                f"and {_versions.MAX_BYTES // 2**20} MB"
            )
            continue
        files, wrong = _versions.normalise(held)
        archive.problems.extend(f"v{number}: {p}" for p in wrong)
        if not wrong:
            archive.versions[number] = files
    return archive


def _version_path(name: str) -> tuple[int | None, str]:
    """`versions/v3/index.html` → (3, "index.html")."""
    if not name.startswith(VERSIONS):
        return None, ""
    head, _, path = name[len(VERSIONS) :].partition("/")
    if not head.startswith("v") or not head[1:].isdigit() or not path:
        return None, ""
    return int(head[1:]), path


def _manifest(tar: tarfile.TarFile, member: tarfile.TarInfo, name: str) -> dict[str, Any]:
    """manifest.json read and held to what an export's says; refused with every problem."""
    from pasture.store.dump import check_header

    def wrong(*why: str) -> DeployRefused:
        return DeployRefused([*why, _AGAIN], prefix=f"{name} cannot be imported")

    body = tar.extractfile(member) if member.isfile() else None
    if body is None or member.size > _MAX_MANIFEST:
        raise wrong(f"its {MANIFEST} is not a file of at most {_MAX_MANIFEST // 2**20} MB")
    try:
        manifest = json.loads(body.read())
    except (ValueError, RecursionError):
        raise wrong(f"its {MANIFEST} is not JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise wrong(f"its {MANIFEST} is not an app export's (format: {FORMAT!r})")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        if isinstance(version, int) and not isinstance(version, bool) and version > 1:
            raise wrong(
                f"it is an export of format {version}, newer than this pasture reads "
                f"({FORMAT_VERSION}) — import it with a newer pasture"
            )
        raise wrong(f"its {MANIFEST} names no format version pasture reads")
    problems: list[str] = []
    app = manifest.get("app")
    if not isinstance(app, dict):
        raise wrong(f"its {MANIFEST} does not describe the app (space, slug, title, …)")
    for what, check in (("slug", check_slug), ("title", check_title)):
        try:
            check(app.get(what))  # type: ignore[arg-type]
        except (Refused, TypeError, AttributeError) as e:
            said = e.sentence if isinstance(e, Refused) else "it is not text"
            problems.append(f"the app's {what}: {said}")
    if app.get("access") not in ACCESSES:
        problems.append("the app's access is not private, public or open")
    versions = manifest.get("versions")
    numbers: list[int] = []
    if not isinstance(versions, list) or not versions:
        problems.append("it lists no versions")
        versions = []
    for v in versions:
        if not (
            isinstance(v, dict)
            and isinstance(v.get("version"), int)
            and not isinstance(v["version"], bool)
            and v["version"] >= 1
            and isinstance(v.get("title"), str)
            and isinstance(v.get("deployed_at"), str)
            and (v.get("deployed_by") is None or isinstance(v["deployed_by"], str))
            and (v.get("code") is None or isinstance(v["code"], list))
            and isinstance(v.get("files"), list)
            and all(isinstance(p, str) for p in v["files"])
        ):
            problems.append(
                "a version is not {version, title, deployed_at, deployed_by, code, files}"
            )
            continue
        if v["version"] in numbers:
            problems.append(f"v{v['version']} is listed twice")
        numbers.append(v["version"])
    if app.get("version") not in numbers and numbers:
        problems.append(f"its current version, {app.get('version')!r}, is not one it lists")
    names = manifest.get("secrets", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        problems.append("its secrets are not a list of names")
    problems.extend(check_header(manifest.get("store")))
    if problems:
        raise wrong(*problems)
    manifest["versions"] = [v for v in versions if isinstance(v, dict)]
    return manifest


def _lines(
    tar: tarfile.TarFile,
    name: str,
    tell: Callable[[int, int], None] | None,
    header: Mapping[str, Any],
) -> Iterator[bytes]:
    """The data's lines, read from the archive as they are needed."""
    body: IO[bytes] | None = tar.extractfile(DATA)
    assert body is not None
    total = int(header["entities"])
    try:
        for done, line in enumerate(iter(lambda: body.readline(_MAX_LINE + 1), b""), 1):
            if len(line) > _MAX_LINE:
                raise DeployRefused(
                    [f"data line {done} is longer than {_MAX_LINE // 2**20} MB", _AGAIN],
                    prefix=f"{name} cannot be imported",
                )
            yield line
            if tell is not None and done % 1000 == 0:
                tell(done, total)
        if tell is not None:
            tell(total, total)  # to its end
    except _DAMAGED:
        raise DeployRefused(
            [f"its {DATA} is cut short or damaged", _AGAIN], prefix=f"{name} cannot be imported"
        ) from None


def _teller(
    long_call: LongCall | None, doing: str, before: int = 0, parts: int = 1
) -> Callable[[int, int], None] | None:
    """How far it has come, told to the door's watch (a bar at a terminal): `done` of
    `total` entities, after `before` counted by a part before this one, of `parts` parts
    (an import reads its data twice: checking it, then writing it). A stop asked for ends
    it, keeping nothing."""
    if long_call is None:
        return None

    def tell(done: int, total: int) -> None:
        if long_call.cancelled:
            raise Cancelled(f"{doing} was stopped — nothing of it was kept")
        said = f"{doing}: {done:,} of {total:,} entities"
        long_call.report(progress_of(before + done, total * parts or None, said))

    return tell


__all__ = ["FORMAT", "FORMAT_VERSION", "Transfer", "file_shape"]
