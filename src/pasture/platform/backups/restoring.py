"""A backup restored into an empty data directory (SQLite) or an empty PostgreSQL database.

An archive of either database restores into either:

- SQLite from SQLite: each database file is put in place as it was copied;
- PostgreSQL, or from PostgreSQL: the platform's tables are made as a new server makes
  them, and each app's store as a new store is, its vocabulary declared (so its tables,
  indexes and full-text search are the target's own); then every table's rows are put
  in, generically (`pasture.platform.backups.tables`), each database in one transaction.
  Full text is filled again by the target (SQLite's triggers and a rebuild; PostgreSQL's
  generated column), as are the numbers PostgreSQL gives itself.

Apps' secrets come out of the archive sealed and are opened with the key of the server
that took it (`--key`), which the restored data directory keeps for its own backups. A
version's files are the data directory's on SQLite and also in the database on
PostgreSQL (`files`): each restore fills in whichever the archive lacks.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from pasture.errors import Forbidden, PastureError, Refused, UsageError
from pasture.platform.backups import tables
from pasture.platform.backups.archive import Archive
from pasture.platform.backups.taking import (
    KEY_FILE,
    SECRETS,
    TRANSIENT_TABLES,
    Told,
    fingerprint,
)
from pasture.platform.db import platform_tables
from pasture.platform.nouns import plural
from pasture.result import Result

_OWN_META = ("layout", "version")  # pasture_meta's rows each backend keeps for itself
_KEEP_META = "key IN ('layout', 'version')"
_PLATFORM_ORDER = [t.name for t in platform_tables.TABLES]  # made in this order: keys first


def restore(
    path: Path,
    home: Path,
    database_url: str | None,
    *,
    key_file: Path | None = None,
    without_secrets: bool = False,
    told: Told | None = None,
) -> Result:
    """Restore the archive at `path` into `home` (and `database_url`, when given), both
    empty; refused, with nothing written, when either holds a server already."""
    archive = Archive(path)
    try:
        manifest = archive.manifest
        _check_empty(home, database_url)
        opened = _opener(manifest, key_file, without_secrets)
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".restoring-", dir=home) as scratch:
            # the data directory is made aside and moved in whole, so a restore that fails
            # leaves the target as empty as it found it, to be restored into again
            staged = Path(scratch) / "home"
            staged.mkdir()
            into = _Restoring(archive, staged, Path(scratch), opened, told)
            try:
                if database_url:
                    into.postgres(database_url)
                else:
                    into.sqlite()
            except BaseException as failed:
                if database_url:
                    _drop_schemas(database_url, into.made)
                if isinstance(failed, PastureError) or not isinstance(failed, Exception):
                    raise
                raise _failure(path, home, database_url, failed) from None
            if key_file is not None and not without_secrets:
                _keep_key(staged, key_file.read_bytes().strip())
            _move_in(staged, home)
    finally:
        archive.close()
    apps = sum(1 for d in manifest["databases"] if d.get("app"))
    where = "the PostgreSQL database" if database_url else str(home)
    secrets = int(manifest.get("secrets") or 0)
    said = ""
    if secrets and without_secrets:
        said = f"; its {plural(secrets, 'secret was', 'secrets were')} left out"
    return Result(
        f"restored the backup of {manifest['made']} into {where}: "
        f"{plural(apps, 'app', 'apps')}{said} — "
        "serve it with pasture serve",
        {"made": manifest["made"], "apps": apps, "source": manifest["source"]},
    )


# -- before anything is written -------------------------------------------------------------


def _check_empty(home: Path, database_url: str | None) -> None:
    if database_url:
        _check_empty_database(database_url)
    held = [name for name in ("platform.db", "apps") if (home / name).exists()]
    if held:
        raise Refused(
            f"{home} already holds a server's data ({', '.join(held)}) — restore into an "
            "empty data directory: give a new one with --home"
        )


def _check_empty_database(url: str) -> None:
    from pasture.store import pool

    conn = pool.connect(url, unreachable=f"cannot reach {pool.where(url)} to restore into it")
    try:
        found = conn.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = 'pasture' "
            "OR table_name = 'pasture_meta' LIMIT 1"
        ).fetchone()
    finally:
        conn.close()
    if found is not None:
        raise Refused(
            f"that database on {pool.where(url)} already holds a pasture server's tables "
            "— restore into an empty database: make a new one (createdb) and give it "
            "with --database"
        )


def _opener(
    manifest: dict[str, Any], key_file: Path | None, without_secrets: bool
) -> Callable[[str], str] | None:
    """What opens a sealed secret; None when secrets are left out."""
    count = int(manifest.get("secrets") or 0)
    if without_secrets or not count:
        return None
    if key_file is None:
        raise UsageError(
            f"this backup holds {plural(count, 'secret', 'secrets')} of apps, sealed with the "
            "backup key of the "
            f"server it was taken from — give that key with --key FILE (its data "
            f"directory's {KEY_FILE}), or restore all else with --without-secrets"
        )
    try:
        key = key_file.read_bytes().strip()
    except OSError:
        raise UsageError(f"cannot read the key {key_file} — give the file with --key") from None
    if fingerprint(key) != manifest.get("key"):
        raise Forbidden(
            f"{key_file} is not the key this backup's secrets were sealed with — give the "
            f"{KEY_FILE} of the data directory it was taken from"
        )
    from cryptography.fernet import Fernet

    fernet = Fernet(key)
    return lambda sealed: fernet.decrypt(sealed.encode()).decode()


def _failure(path: Path, home: Path, database_url: str | None, failed: Exception) -> Refused:
    """Why a restore stopped part way, as a sentence; what it wrote is gone by now."""
    if isinstance(failed, OSError) and failed.strerror:
        return Refused(
            f"could not write into {home} ({failed.strerror.lower()}) — nothing was "
            "restored; make room or give another --home, and restore again"
        )
    if database_url and type(failed).__name__ == "OperationalError":
        from pasture.store import pool

        return Refused(
            f"lost {pool.where(database_url)} part way through the restore — nothing was "
            "restored; restore again once it answers"
        )
    return damaged(path, "it could not be read to the end")


def damaged(path: Path, why: str) -> Refused:
    return Refused(f"{path} is damaged ({why}) — nothing was restored; restore another backup")


def _check_database(path: Path, archive: Path, name: str) -> None:
    """A database file of the archive checked whole before it is put in place: a restore
    never leaves a server a store it cannot read."""
    conn = sqlite3.connect(path)
    try:
        checked = conn.execute("PRAGMA quick_check").fetchone()
    except sqlite3.DatabaseError:
        checked = None
    finally:
        conn.close()
    if checked != ("ok",):
        raise damaged(archive, f"its {name} cannot be read")


def _move_in(staged: Path, home: Path) -> None:
    """What was restored aside, moved into `home` — its database last, so a home that
    has a platform's database has everything else already."""
    names = sorted(os.listdir(staged), key=lambda name: name == "platform.db")
    for name in names:
        source, target = staged / name, home / name
        if source.is_dir() and target.is_dir():
            _move_in(source, target)  # a folder the empty home had already
        else:
            os.replace(source, target)


def _drop_schemas(url: str, schemas: list[str]) -> None:
    """The schemas a failed restore made, dropped: the database is empty again."""
    from pasture.store import pool

    if not schemas:
        return
    try:
        conn = pool.connect(url, unreachable=f"cannot reach {pool.where(url)}")
    except PastureError:
        return  # gone with the server: nothing more can be done from here
    try:
        with conn.transaction():
            for schema in schemas:
                conn.execute(f"DROP SCHEMA IF EXISTS {tables.q(schema)} CASCADE")
    finally:
        conn.close()


def _keep_key(home: Path, key: bytes) -> None:
    fd = os.open(home / KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(key + b"\n")


# -- the restore ---------------------------------------------------------------------------


class _Table:
    """One table of the archive, readable as rows in its columns' kinds."""

    def __init__(
        self,
        shape: tables.Shape,
        rows: Callable[[], Iterator[tuple[Any, ...]]],
        member: str | None = None,  # COPY text, which PostgreSQL may take as it is
    ) -> None:
        self.shape = shape
        self.rows = rows
        self.member = member


class _Restoring:
    def __init__(
        self,
        archive: Archive,
        home: Path,
        scratch: Path,
        opened: Callable[[str], str] | None,
        told: Told | None,
    ) -> None:
        self.archive = archive
        self.home = home
        self.scratch = scratch
        self.opened = opened
        self.told = told
        self.manifest = archive.manifest
        self.done = 0
        self.total = sum(
            archive.size(n) for n in archive.names() if not n.endswith("manifest.json")
        )
        self.stack = ExitStack()
        self.made: list[str] = []  # PostgreSQL schemas made so far, for a failure to drop

    def _tell(self, size: int, what: str) -> None:
        self.done += size
        if self.told is not None:
            self.told(self.done, self.total, what)

    def _home_files(self) -> None:
        for rel in self.manifest.get("files", []):
            member = f"home/{rel}"
            self.archive.extract(member, self.home / rel)
            self._tell(self.archive.size(member), "files")

    # -- tables as the archive holds them

    @contextmanager
    def _tables(self, entry: dict[str, Any]) -> Iterator[dict[str, _Table]]:
        """Each table of one database of the archive."""
        if entry["kind"] == "sqlite":
            copy = self.scratch / "copy.db"
            self.archive.extract(entry["member"], copy)
            conn = sqlite3.connect(copy)
            try:
                found: dict[str, _Table] = {}
                for shape in tables.sqlite_shapes(conn):
                    if entry["path"] == "platform.db" and shape.name in TRANSIENT_TABLES:
                        continue  # the target's own counter, made as a new server makes it

                    def rows(shape: tables.Shape = shape) -> Iterator[tuple[Any, ...]]:
                        return tables.sqlite_rows(conn, shape)

                    found[shape.name] = _Table(shape, rows)
                yield found
            finally:
                conn.close()
                copy.unlink()
            self._tell(self.archive.size(entry["member"]), entry["path"])
            return
        found = {}
        for data in entry["tables"]:
            shape = tables.Shape.from_data(data)

            def copied(
                shape: tables.Shape = shape, member: str = data["member"]
            ) -> Iterator[tuple[Any, ...]]:
                return tables.copy_rows(self.archive.open(member), shape)

            found[shape.name] = _Table(shape, copied, str(data["member"]))
        yield found
        for data in entry["tables"]:
            self._tell(self.archive.size(data["member"]), entry["schema"])

    @staticmethod
    def _vocab(found: dict[str, _Table]) -> Any:
        meta = found.get("pasture_meta")
        for key, value in meta.rows() if meta else ():
            if key == "vocab":
                return json.loads(value)
        return None

    # -- into SQLite

    def sqlite(self) -> None:
        from pasture.platform.db.platform_db import SqlitePlatformDB
        from pasture.store import open_store

        for entry in self.manifest["databases"]:
            if entry["kind"] == "sqlite":
                target = self.home / entry["path"]
                temp = target.with_name(f".{target.name}.restoring")
                self.archive.extract(entry["member"], temp)
                _check_database(temp, self.archive.path, entry["path"])
                os.replace(temp, target)
                self._tell(self.archive.size(entry["member"]), entry["path"])
                continue
            app = entry.get("app")
            if entry["schema"] == "pasture":
                path = self.home / "platform.db"
                SqlitePlatformDB(path).close()
                with self._tables(entry) as found:
                    self._into_sqlite(path, found, platform=True)
            elif app is not None:
                path = self.home / "apps" / app[0] / app[1] / "store.db"
                path.parent.mkdir(parents=True, exist_ok=True)
                with self._tables(entry) as found:
                    store = open_store(path)
                    vocab = self._vocab(found)
                    if vocab is not None:
                        store.declare(vocab)
                    store.close()
                    self._into_sqlite(path, found, platform=False)
        self._home_files()
        self._versions_from_database()
        self._open_secrets_sqlite(self.home / "platform.db")

    def _into_sqlite(self, path: Path, found: dict[str, _Table], *, platform: bool) -> None:
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("PRAGMA foreign_keys = OFF")
            conn.execute("BEGIN IMMEDIATE")
            for table in _in_order(found, platform):
                if platform and table.shape.name == "files":
                    continue  # the data directory's own on SQLite: `_versions_from_database`
                if table.shape.name == "pasture_meta":
                    rows: Any = (r for r in table.rows() if r[0] not in _OWN_META)
                    tables.sqlite_load(conn, table.shape, rows, keep=_KEEP_META)
                else:
                    tables.sqlite_load(conn, table.shape, table.rows())
            if not platform and _has(conn, "doc_fts"):
                conn.execute("INSERT INTO doc_fts(doc_fts) VALUES ('rebuild')")
            conn.execute("COMMIT")
        finally:
            conn.close()

    def _versions_from_database(self) -> None:
        """A version's files the archive keeps only in PostgreSQL's `files`, on disk."""
        for entry in self.manifest["databases"]:
            if entry.get("schema") != "pasture":
                continue
            for data in entry["tables"]:
                if data["name"] != "files":
                    continue
                shape = tables.Shape.from_data(data)
                at = {c: i for i, c in enumerate(shape.names)}
                for row in tables.copy_rows(self.archive.open(data["member"]), shape):
                    folder = self.home / "apps" / row[at["space"]] / row[at["slug"]]
                    target = folder / f"v{row[at['version']]}" / row[at["path"]]
                    if not target.exists():
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(row[at["body"]])

    def _open_secrets_sqlite(self, path: Path) -> None:
        conn = sqlite3.connect(path)
        try:
            with conn:
                rows = conn.execute(f"SELECT rowid, value FROM {SECRETS}").fetchall()
                if self.opened is None:
                    conn.execute(f"DELETE FROM {SECRETS}")
                    return
                opened = self.opened
                conn.executemany(
                    f"UPDATE {SECRETS} SET value = ? WHERE rowid = ?",
                    [(opened(str(value)), rowid) for rowid, value in rows],
                )
        finally:
            conn.close()

    # -- into PostgreSQL

    def postgres(self, url: str) -> None:
        from pasture.platform.db.postgres_db import SCHEMA, PostgresPlatformDB, app_schema
        from pasture.store import open_store, pool

        self.made.append(SCHEMA)
        PostgresPlatformDB(url).close()
        conn = pool.connect(url, unreachable=f"cannot reach {pool.where(url)} to restore into it")
        try:
            for entry in self.manifest["databases"]:
                app = entry.get("app")
                platform = entry.get("path") == "platform.db" or entry.get("schema") == SCHEMA
                if platform:
                    schema = SCHEMA
                elif app is not None:
                    schema = app_schema(app[0], app[1])
                elif entry.get("schema"):
                    schema = str(entry["schema"])  # a store no app names now (in the trash)
                else:
                    continue  # a database of the data directory that is no app's store
                with self._tables(entry) as found:
                    if not platform:
                        self.made.append(schema)
                        store = open_store(url, schema=schema)
                        vocab = self._vocab(found)
                        if vocab is not None:
                            store.declare(vocab)
                        store.close()
                    with conn.transaction():
                        self._into_postgres(conn, schema, found, platform=platform)
            self._home_files()
            with conn.transaction():
                self._versions_into_database(conn)
                self._open_secrets_postgres(conn)
        finally:
            conn.close()

    def _into_postgres(
        self, conn: Any, schema: str, found: dict[str, _Table], *, platform: bool
    ) -> None:
        from pasture.store.sqlstore import DOC_KIND

        for table in _in_order(found, platform):
            name = table.shape.name
            raw = None
            if table.member is not None and name != "pasture_meta":
                raw = self.archive.open(table.member)
            if name == "pasture_meta":
                rows: Any = (r for r in table.rows() if r[0] not in _OWN_META)
                tables.pg_load(conn, schema, table.shape, rows, keep=_KEEP_META)
            elif raw is not None:
                tables.pg_load(conn, schema, table.shape, table.rows(), raw)
            else:
                tables.pg_load(conn, schema, table.shape, table.rows())
        tables.renumber(conn, schema)
        if not platform:
            has_kind = conn.execute(
                "SELECT 1 FROM information_schema.columns WHERE table_schema = %s "
                "AND table_name = 'c_doc' AND column_name = '_kind'",
                (schema,),
            ).fetchone()
            if has_kind:
                conn.execute(f"SET LOCAL search_path = {tables.q(schema)}")
                conn.execute(DOC_KIND)

    def _versions_into_database(self, conn: Any) -> None:
        """A version's files the archive keeps only on disk, into PostgreSQL's `files`."""
        have = {
            (str(s), str(a), int(v))
            for s, a, v in conn.execute("SELECT DISTINCT space, slug, version FROM pasture.files")
        }
        versions = conn.execute("SELECT space, slug, version FROM pasture.versions").fetchall()
        with (
            conn.cursor() as cur,
            cur.copy("COPY pasture.files (space, slug, version, path, body) FROM STDIN") as copy,
        ):
            for space, slug, version in versions:
                if (space, slug, version) in have:
                    continue
                folder = self.home / "apps" / space / slug / f"v{version}"
                for file in sorted(folder.rglob("*")) if folder.is_dir() else []:
                    if file.is_file():
                        rel = file.relative_to(folder).as_posix()
                        copy.write_row((space, slug, version, rel, file.read_bytes()))

    def _open_secrets_postgres(self, conn: Any) -> None:
        rows = conn.execute("SELECT space, slug, name, value FROM pasture.secrets").fetchall()
        if self.opened is None:
            conn.execute("DELETE FROM pasture.secrets")
            return
        opened = self.opened
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE pasture.secrets SET value = %s WHERE space = %s AND slug = %s "
                "AND name = %s",
                [(opened(str(v)), s, a, n) for s, a, n, v in rows],
            )


def _in_order(found: dict[str, _Table], platform: bool) -> list[_Table]:
    """The platform's tables in the order they are made (a key before what names it), any
    other after them by name."""
    if not platform:
        return [found[n] for n in sorted(found)]
    known = [found[n] for n in _PLATFORM_ORDER if n in found]
    return known + [found[n] for n in sorted(found) if n not in _PLATFORM_ORDER]


def _has(conn: sqlite3.Connection, table: str) -> bool:
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    return found is not None


__all__ = ["restore"]
