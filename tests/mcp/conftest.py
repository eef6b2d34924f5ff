"""A real Service with the run club deployed and four people around it, on each platform
database (tests/conftest.py's `database`: SQLite, and PostgreSQL).

- ada owns the `ada` space and its `runs` (the run club from examples/runs);
  she is also an editor of `club`, which has a `runs` of its own, so `log_run`
  is ambiguous for her and nobody else.
- bo is a viewer of `ada`: he reads the board and may not write.
- cy is in no space of ada's: none of her commands reach him.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_talk import BASE_URL, Club, set_up_club

from pasture.platform.service import Service


@pytest.fixture
def club(tmp_path: Path, database: str) -> Iterator[Club]:
    service = Service(tmp_path / "home", base_url=BASE_URL)
    try:
        yield set_up_club(service)
    finally:
        service.close()
