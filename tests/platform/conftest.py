"""A real Service on a real data directory, with the run club deployed — on each platform
database (tests/conftest.py's `database`: SQLite files in the data directory, and a fresh
database of the session's throwaway PostgreSQL server, in `$PASTURE_DATABASE_URL` so a
second Service or process made by a test meets the same one)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pasture.caller import Caller
from pasture.platform.service import Service


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> Iterator[Service]:
    monkeypatch.setenv("PASTURE_USER", "ada")
    svc = Service(tmp_path / "home")
    yield svc
    svc.close()


@pytest.fixture
def ada(service: Service) -> Caller:
    return service.local_owner()
