"""What the platform's database holds, read straight from it (SQLite or PostgreSQL)."""

from __future__ import annotations

from pasture.platform.service import Service


def kept(service: Service, sql: str) -> list[tuple[object, ...]]:
    """Rows read straight from the platform's database, as an intruder with a copy would."""
    if not service.database_url:
        import sqlite3

        with sqlite3.connect(service.home / "platform.db") as db:
            return list(db.execute(sql).fetchall())
    import psycopg

    with psycopg.connect(service.database_url, options="-c search_path=pasture") as db:
        return list(db.execute(sql).fetchall())


def everything_kept(service: Service) -> bytes:
    """All the platform's database holds: the SQLite file, or every row of its tables."""
    if not service.database_url:
        return (service.home / "platform.db").read_bytes()
    tables = ("users", "tokens", "sessions", "spaces", "members", "apps", "versions")
    return repr([kept(service, f"SELECT * FROM {t}") for t in tables]).encode()
