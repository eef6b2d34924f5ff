"""Every test runs with its own data directory, never the machine's own."""

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _own_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("pasture-home")
    monkeypatch.setenv("PASTURE_HOME", str(home))
    return home
