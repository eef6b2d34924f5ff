"""What the backup tests share: a server with an app, data written through it, and every
table of a server read back as plain rows, so a restore is compared with its source row
by row on either database."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from pasture.caller import Caller
from pasture.platform.backups import tables
from pasture.platform.backups.taking import TRANSIENT_TABLES
from pasture.platform.db.postgres_db import SCHEMA, app_schema
from pasture.platform.service import Service

VOCAB = """{
  "$defs": {
    "jog": {
      "properties": {
        "who": {"type": "string"},
        "miles": {"type": "number"},
        "done": {"type": "boolean"},
        "at": {"type": "string", "format": "date-time"}
      }
    }
  },
  "tools": false
}"""
APP = {
    "index.html": "<!doctype html><title>Runs</title><h1>Runs</h1>",
    "vocab.json": VOCAB,
    "style.css": "h1 { color: green }",
}
# What each database keeps for itself, not the server's data: compared apart, or not at all.
_OWN_COLUMNS = {"_kind"}  # PostgreSQL's c_doc carries its entity's kind
_OWN_META = {"layout", "version"}
_PLATFORM_OWN = TRANSIENT_TABLES | {"files"}  # `files`: PostgreSQL's copy of the versions


def runs_app(service: Service, owner: Caller, slug: str = "runs") -> str:
    service.deploy(owner, APP, app=slug)
    return f"{owner.name}/{slug}"


def _plain(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, memoryview | bytearray):
        return bytes(value)
    return value


def _read(conn: Any, shapes: list[tables.Shape], schema: str | None) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for shape in shapes:
        names = [c for c in shape.names if c not in _OWN_COLUMNS]
        cols = ", ".join(tables.q(c) for c in names)
        where = f"{tables.q(schema)}.{tables.q(shape.name)}" if schema else tables.q(shape.name)
        rows = [
            dict(zip(names, map(_plain, r), strict=True))
            for r in conn.execute(f"SELECT {cols} FROM {where}").fetchall()
        ]
        if shape.name == "pasture_meta":
            rows = [r for r in rows if r["key"] not in _OWN_META]
        found[shape.name] = sorted(rows, key=lambda r: repr(sorted(r.items())))
    return found


def store_tables(home: Path, url: str, at: str) -> dict[str, Any]:
    """Every table of an app's store, as plain rows."""
    space, slug = at.split("/")
    if url:
        import psycopg

        with psycopg.connect(url) as conn:
            schema = app_schema(space, slug)
            return _read(conn, tables.pg_shapes(conn, schema), schema)
    conn = sqlite3.connect(home / "apps" / space / slug / "store.db")
    try:
        return _read(conn, tables.sqlite_shapes(conn), None)
    finally:
        conn.close()


def platform_tables(home: Path, url: str) -> dict[str, Any]:
    """Every table of the platform's database that is the server's data, as plain rows."""
    if url:
        import psycopg

        with psycopg.connect(url) as conn:
            shapes = [s for s in tables.pg_shapes(conn, SCHEMA) if s.name not in _PLATFORM_OWN]
            return _read(conn, shapes, SCHEMA)
    conn = sqlite3.connect(home / "platform.db")
    try:
        shapes = [s for s in tables.sqlite_shapes(conn) if s.name not in _PLATFORM_OWN]
        return _read(conn, shapes, None)
    finally:
        conn.close()


def version_files(home: Path) -> dict[str, bytes]:
    """Every file of every app's versions on disk, by its path under the data directory."""
    apps = home / "apps"
    return {
        p.relative_to(home).as_posix(): p.read_bytes()
        for p in sorted(apps.rglob("*"))
        if p.is_file()
        and "/v" in p.relative_to(home).as_posix()
        and not p.name.startswith(".")
        and not p.name.startswith("store.db")
    }
