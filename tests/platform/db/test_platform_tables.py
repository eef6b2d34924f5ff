"""The platform's tables come from one description (`pasture.platform.db.platform_tables`):
both databases make the same tables and columns from it, and a database made before a column
was added gains it on opening."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from helpers.platform_db import kept
from pasture.platform.db import platform_tables as tables
from pasture.platform.db.platform_db import SqlitePlatformDB
from pasture.platform.service import Service


def _described(postgres: bool) -> dict[str, list[str]]:
    return {
        t.name: [c.name for c in t.columns]
        for t in tables.TABLES
        if postgres or not t.postgres_only
    }


def test_each_database_makes_the_tables_described(service: Service, database: str) -> None:
    if database:
        rows = kept(
            service,
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'pasture' AND table_name <> 'generation' "
            "ORDER BY table_name, ordinal_position",
        )
    else:
        rows = kept(
            service,
            "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p "
            "WHERE m.type = 'table' AND m.name <> 'generation' ORDER BY m.name, p.cid",
        )
    made: dict[str, list[str]] = {}
    for table, column in rows:
        made.setdefault(str(table), []).append(str(column))
    assert made == _described(postgres=bool(database))


def test_a_database_made_before_a_column_was_added_gains_it(tmp_path: Path) -> None:
    path = tmp_path / "platform.db"
    first = sqlite3.connect(path)
    for t in tables.TABLES:
        if t.postgres_only:
            continue
        # the table as the first release made it: without the columns added since
        old = tables.Table(t.name, tuple(c for c in t.columns if not c.added), t.key)
        first.executescript(";\n".join(tables.create(tables.SQLITE, [old])))
    first.execute("INSERT INTO spaces (name, created) VALUES ('ada', '2026-01-01T00:00:00Z')")
    first.commit()
    first.close()
    SqlitePlatformDB(path).close()
    with sqlite3.connect(path) as db:
        for table, columns in _described(postgres=False).items():
            have = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
            assert have == columns
        # a row made before the column holds its default
        assert db.execute("SELECT name, trusted FROM spaces").fetchall() == [("ada", 0)]
