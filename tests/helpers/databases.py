"""The platform databases the suites run on: SQLite files in the data directory, and a
fresh database of the session's throwaway PostgreSQL server (tests/conftest.py's `pg_url`).

A test runs on each (the `database` fixture, or `module_database` for a module's shared
setup) with `$PASTURE_DATABASE_URL` set to its database, so that a second Service, or a
`pasture` process started through helpers.processes, meets the same one. A test about
SQLite alone says so with `sqlite_only("why")`: under PostgreSQL it is skipped with that
reason.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

import pytest

__all__ = ["DATABASES", "IN_A_BROWSER", "fresh_database", "sqlite_only", "throwaway_postgres"]

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


@contextlib.contextmanager
def throwaway_postgres(url: str | None = None) -> Iterator[str | None]:
    """For a benchmark: `url`, or a fresh database of a throwaway server started as the tests
    start one, for the block; None (and a line saying why) where this machine has none."""
    if url:
        yield url
        return
    with contextlib.ExitStack() as stack:
        database: str | None = None
        try:
            from helpers import pg_server

            database = fresh_database(stack.enter_context(pg_server.server()))
        except Exception as e:  # no PostgreSQL here: said, and its figures left out
            print(f"  (no PostgreSQL: {str(e).splitlines()[0] if str(e) else type(e).__name__})")
        yield database  # what goes wrong while it is used is not taken for its absence
