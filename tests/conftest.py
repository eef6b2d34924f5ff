"""Every test runs with its own data directory, never the machine's own; a test marked
`helpers.browser.in_chromium` needs Chromium and Playwright (see helpers.needs).

tests/ is on sys.path so that every folder's tests import the shared `helpers` package."""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from helpers import needs  # noqa: E402


@pytest.fixture(autouse=True)
def _own_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("pasture-home")
    monkeypatch.setenv("PASTURE_HOME", str(home))
    return home


@pytest.fixture
def needs_chromium() -> None:
    needs.playwright()
