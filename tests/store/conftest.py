"""A real store in a real SQLite file, with the run club's vocabulary."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from store_fixtures import RUNS

from pasture.store import SqliteStore, open_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = open_store(tmp_path / "app.db")
    s.declare(RUNS)
    yield s
    s.close()
