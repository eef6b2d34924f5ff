"""The platform databases the suites run on: SQLite files in the data directory, and a
fresh database of the session's throwaway PostgreSQL server (tests/conftest.py's `pg_url`).

A test runs on each (the `database` fixture, or `module_database` for a module's shared
setup) with `$PASTURE_DATABASE_URL` set to its database, so that a second Service, or a
`pasture` process started through helpers.processes, meets the same one. A test about
SQLite alone says so with `sqlite_only("why")`: under PostgreSQL it is skipped with that
reason.
"""

from __future__ import annotations

import uuid

import pytest

__all__ = ["DATABASES", "IN_A_BROWSER", "fresh_database", "sqlite_only"]

DATABASES = ["sqlite", "postgres"]

# Why a Chromium-driven test runs on SQLite alone (a second run costs seconds, finds nothing).
IN_A_BROWSER = (
    "Chromium drives the page; the platform under it is what the in-process tests run on both"
)


def sqlite_only(reason: str) -> pytest.MarkDecorator:
    """Mark a test that is about SQLite alone (or gains nothing from a second run on
    PostgreSQL): under the postgres parameter it is skipped, saying `reason`."""
    return pytest.mark.sqlite_only(reason)


def fresh_database(server: str) -> str:
    """A new, empty database on the server; its URL."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    return server.rsplit("/", 1)[0] + "/" + name
