"""Taking a backup of the whole server while it serves.

On SQLite every database file of the data directory (`platform.db`, each app's
`store.db`, any other a part keeps there) is copied with SQLite's online backup API,
a few thousand pages a step, from a read transaction begun on every file at once
before the first is copied: each copy is of one moment, the same for all of them,
and the server's writes go on meanwhile (WAL: a reader holds no writer up). The
files that are not databases — apps' version folders — are added as they are.
What is only of the moment is left out: `limits.db` (how fast callers call) and
`changes.db` (the bus).

On PostgreSQL one REPEATABLE READ, READ ONLY transaction reads the platform's
schema and every app's schema, each table with COPY: one snapshot of all of it.

Apps' secrets are sealed in the archive (Fernet) with the data directory's
`backup.key`, made on the first backup: the archive alone does not give them away,
and a restore needs that key (`pasture restore --key`).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pasture.platform.backups import tables
from pasture.platform.backups.archive import FORMAT, VERSION, Writer, sweep_leftovers
from pasture.platform.db import platform_tables
from pasture.values import now
from pasture.version import __version__

KEY_FILE = "backup.key"
# Files of the data directory that are only of the moment, or are the key itself.
TRANSIENT = frozenset({"limits.db", "changes.db", KEY_FILE, "backup.lock"})
# Tables of the platform's schema that are only of the moment (PostgreSQL keeps the counts
# beside the rest: `platform_tables.COUNTS`; and its generation counter).
TRANSIENT_TABLES = frozenset({t.name for t in platform_tables.COUNTS} | {"generation"})
SECRETS = "secrets"  # the platform's table of apps' secrets, sealed in the archive
_STEP = 4096  # pages of a SQLite file copied in one step
_COMPANIONS = ("-wal", "-shm", "-journal")

Told = Callable[[int, int | None, str], None]  # (done, total, what) as a backup goes on


def backup_key(home: Path) -> bytes:
    """The data directory's backup key, made (readable by its owner alone) the first time."""
    from cryptography.fernet import Fernet

    path = home / KEY_FILE
    if not path.exists():
        key = Fernet.generate_key()
        temp = path.with_name(f".{KEY_FILE}.{os.getpid()}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(key + b"\n")
            out.flush()
            os.fsync(out.fileno())
        if not path.exists():
            os.replace(temp, path)
        else:
            temp.unlink()
    return path.read_bytes().strip()


def fingerprint(key: bytes) -> str:
    """What names a key without giving it away."""
    return hashlib.sha256(key).hexdigest()[:16]


def sealer(key: bytes) -> Callable[[str], str]:
    from cryptography.fernet import Fernet

    fernet = Fernet(key)
    return lambda value: fernet.encrypt(value.encode()).decode()


@dataclass
class Taken:
    """What a backup wrote."""

    path: Path
    size: int
    databases: int
    files: int
    apps: int
    secrets: int


def take(
    home: Path,
    database_url: str | None,
    final: Path,
    *,
    told: Told | None = None,
    leave_out: Path | None = None,
) -> Taken:
    """One archive of the whole server at `final`; `leave_out` is a folder of the data
    directory not to carry (the one scheduled backups are kept in)."""
    final = final.expanduser().absolute()
    final.parent.mkdir(parents=True, exist_ok=True)
    sweep_leftovers(final.parent, final.name)
    key = backup_key(home)
    seal = sealer(key)
    writer = Writer(final)
    try:
        files = _home_files(home, [final, *([leave_out] if leave_out else [])])
        manifest: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "made": now("seconds"),
            "pasture": __version__,
            "key": fingerprint(key),
        }
        if database_url:
            done = _postgres(database_url, writer, seal, told, manifest)
        else:
            done = _sqlite(home, writer, seal, told, manifest, files)
        for rel, path in files.others:
            writer.add_file(f"home/{rel}", path)
            done += path.stat().st_size
            _tell(told, done, files.total, "files")
        manifest["files"] = [rel for rel, _ in files.others]
        writer.finish(manifest)
    except BaseException:
        writer.abandon()
        raise
    return Taken(
        final,
        final.stat().st_size,
        len(manifest["databases"]),
        len(files.others),
        sum(1 for d in manifest["databases"] if d.get("app")),
        int(manifest["secrets"]),
    )


def _tell(told: Told | None, done: int, total: int | None, what: str) -> None:
    if told is not None:
        told(done, total, what)


@dataclass
class _Files:
    databases: list[tuple[str, Path]]
    others: list[tuple[str, Path]]
    total: int


def _home_files(home: Path, left_out: list[Path]) -> _Files:
    """The data directory's files to carry: its SQLite databases and everything else."""
    databases: list[tuple[str, Path]] = []
    others: list[tuple[str, Path]] = []
    total = 0
    skipped = [p.absolute() for p in left_out]
    for folder, dirs, names in os.walk(home):
        here = Path(folder)
        # a name that starts with a dot is something half made (a version, a backup)
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and (here / d).absolute() not in skipped
        )
        for name in sorted(names):
            path = here / name
            rel = path.relative_to(home).as_posix()
            if name.startswith(".") or rel in TRANSIENT or path.absolute() in skipped:
                continue
            if not path.is_file():
                continue
            if name.endswith(_COMPANIONS):
                continue
            with suppress(OSError):
                total += path.stat().st_size
            (databases if name.endswith(".db") else others).append((rel, path))
    return _Files(databases, others, total)


def app_of(rel: str) -> tuple[str, str] | None:
    """The (space, app) whose store a database of the data directory is."""
    parts = rel.split("/")
    if len(parts) == 4 and parts[0] == "apps" and parts[3] == "store.db":
        return parts[1], parts[2]
    return None


# -- SQLite ------------------------------------------------------------------------------


def _sqlite(
    home: Path,
    writer: Writer,
    seal: Callable[[str], str],
    told: Told | None,
    manifest: dict[str, Any],
    files: _Files,
) -> int:
    manifest["source"] = "sqlite"
    manifest["databases"] = []
    manifest["secrets"] = 0
    done = 0
    with ExitStack() as held:
        sources: list[tuple[str, sqlite3.Connection]] = []
        for rel, path in files.databases:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            held.callback(conn.close)
            conn.execute("PRAGMA busy_timeout = 30000")
            sources.append((rel, conn))
        for _, conn in sources:  # every file's moment taken before the first is copied
            conn.execute("BEGIN")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        for rel, conn in sources:
            copy = writer.scratch / "copy.db"
            copy.unlink(missing_ok=True)
            base = done
            page = conn.execute("PRAGMA page_size").fetchone()[0]

            def step(
                status: int, remaining: int, pages: int, base: int = base, page: int = page
            ) -> None:
                _tell(told, base + (pages - remaining) * page, files.total, "databases")

            target = sqlite3.connect(copy)
            try:
                conn.backup(target, pages=_STEP, progress=step)
                # (the copy says WAL as its source does: opened alone, it is whole all the same)
                entry: dict[str, Any] = {"kind": "sqlite", "path": rel, "member": f"sqlite/{rel}"}
                if rel == "platform.db":
                    target.execute("PRAGMA journal_mode = DELETE")  # no page of it left aside
                    manifest["secrets"] = _seal_sqlite(target, seal)
                app = app_of(rel)
                if app is not None:
                    entry["app"] = list(app)
                manifest["databases"].append(entry)
            finally:
                target.close()
            conn.execute("COMMIT")
            done = base + writer.add_file(f"sqlite/{rel}", copy)
            _tell(told, done, files.total, rel)
            copy.unlink()
    return done


def _seal_sqlite(conn: sqlite3.Connection, seal: Callable[[str], str]) -> int:
    """Each secret's value in the copy sealed, the plain one overwritten on disk too."""
    conn.execute("PRAGMA secure_delete = ON")
    rows = conn.execute(f"SELECT rowid, value FROM {SECRETS}").fetchall()
    with conn:
        conn.executemany(
            f"UPDATE {SECRETS} SET value = ? WHERE rowid = ?",
            [(seal(str(value)), rowid) for rowid, value in rows],
        )
    return len(rows)


# -- PostgreSQL --------------------------------------------------------------------------


def _postgres(
    url: str,
    writer: Writer,
    seal: Callable[[str], str],
    told: Told | None,
    manifest: dict[str, Any],
) -> int:
    from pasture.platform.db.postgres_db import SCHEMA, app_schema
    from pasture.store import pool

    manifest["source"] = "postgres"
    manifest["databases"] = []
    manifest["secrets"] = 0
    conn = pool.connect(url, unreachable=f"cannot reach {pool.where(url)} to back it up")
    try:
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        apps: dict[str, tuple[str, str]] = {}
        for space, slug in conn.execute(
            f"SELECT space, slug FROM {SCHEMA}.apps UNION SELECT space, slug FROM {SCHEMA}.versions"
        ):
            apps[app_schema(space, slug)] = (space, slug)
        schemas = [
            SCHEMA,
            *sorted(
                str(r[0])
                for r in conn.execute(
                    "SELECT DISTINCT table_schema FROM information_schema.tables "
                    "WHERE table_name = 'pasture_meta'"
                )
            ),
        ]
        sizes = {
            (str(s), str(t)): int(n)
            for s, t, n in conn.execute(
                "SELECT schemaname, relname, pg_relation_size(relid) FROM pg_stat_user_tables"
            )
        }
        total = sum(n for (s, _), n in sizes.items() if s in schemas)
        done = 0
        for schema in schemas:
            shapes = tables.pg_shapes(conn, schema)
            if schema == SCHEMA:
                shapes = [s for s in shapes if s.name not in TRANSIENT_TABLES]
            entry: dict[str, Any] = {"kind": "copy", "schema": schema, "tables": []}
            if schema in apps:
                entry["app"] = list(apps[schema])
            for shape in shapes:
                member = f"copy/{schema}/{shape.name}.copy"
                with writer.streamed(member) as out:
                    if schema == SCHEMA and shape.name == SECRETS:
                        manifest["secrets"] = _seal_postgres(conn, schema, shape, out, seal)
                    else:
                        tables.copy_out(conn, schema, shape, out)
                entry["tables"].append({**shape.as_data(), "member": member})
                done += sizes.get((schema, shape.name), 0)
                _tell(told, done, total, schema)
            manifest["databases"].append(entry)
        conn.execute("COMMIT")
    finally:
        conn.close()
    return done


def _seal_postgres(
    conn: Any, schema: str, shape: tables.Shape, out: IO[bytes], seal: Callable[[str], str]
) -> int:
    cols = ", ".join(tables.q(c) for c in shape.names)
    at = shape.names.index("value")
    count = 0
    for row in _rows(conn, f"SELECT {cols} FROM {tables.q(schema)}.{tables.q(shape.name)}"):
        values = list(row)
        values[at] = seal(str(values[at]))
        out.write(tables.copy_line(values))
        count += 1
    return count


def _rows(conn: Any, sql: str) -> Iterator[Any]:
    yield from conn.execute(sql).fetchall()


__all__ = ["KEY_FILE", "Taken", "app_of", "backup_key", "fingerprint", "sealer", "take"]
