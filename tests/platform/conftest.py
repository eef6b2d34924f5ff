"""A real Service on a real data directory, with the run club deployed — on each platform
database: SQLite files in the data directory, and a fresh database of a throwaway
PostgreSQL server started once for the session (`$PASTURE_DATABASE_URL` points at it,
so a second Service or process made by a test meets the same one)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from platform_db import fresh_database

from helpers import pg_server
from pasture.caller import Caller
from pasture.platform.service import Service


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    with pg_server.server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The platform database this test's Service uses: "" (SQLite) or a PostgreSQL URL."""
    if request.param == "sqlite":
        monkeypatch.delenv("PASTURE_DATABASE_URL", raising=False)
        return ""
    url = fresh_database(request.getfixturevalue("pg_url"))
    monkeypatch.setenv("PASTURE_DATABASE_URL", url)
    return url


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> Iterator[Service]:
    monkeypatch.setenv("PASTURE_USER", "ada")
    svc = Service(tmp_path / "home")
    yield svc
    svc.close()


@pytest.fixture
def ada(service: Service) -> Caller:
    return service.local_owner()
