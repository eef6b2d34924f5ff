"""A real Service on a real data directory, with the run club deployed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pasture.caller import Caller
from pasture.platform.service import Service

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "examples" / "runs"


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    monkeypatch.setenv("PASTURE_USER", "ada")
    svc = Service(tmp_path / "home")
    yield svc
    svc.close()


@pytest.fixture
def ada(service: Service) -> Caller:
    return service.local_owner()
