"""Every test runs with its own data directory, never the machine's own, and its own
database, never the machine's (`$PASTURE_DATABASE_URL` is only what a test sets); a test
marked `helpers.browser.in_chromium` needs Chromium and Playwright (see helpers.needs).

The platform's databases (see helpers.databases): `database` runs a test on SQLite and on
a fresh PostgreSQL database, `module_database` a module's shared setup on each; the
PostgreSQL server (`pg_url`) is started once for the session, when a test first needs it.

tests/ is on sys.path so that every folder's tests import the shared `helpers` package."""

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from helpers import needs, pg_server  # noqa: E402
from helpers.databases import DATABASES, fresh_database  # noqa: E402

os.environ.pop("PASTURE_DATABASE_URL", None)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sqlite_only(reason): about SQLite alone; skipped under PostgreSQL, saying why"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        marker = item.get_closest_marker("sqlite_only")
        params = getattr(getattr(item, "callspec", None), "params", {})
        on = {params.get("database"), params.get("module_database")}
        if marker is not None and "postgres" in on:
            item.add_marker(pytest.mark.skip(reason=str(marker.args[0])))


@pytest.fixture(autouse=True)
def _own_home(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> Path:
    home = tmp_path_factory.mktemp("pasture-home")
    monkeypatch.setenv("PASTURE_HOME", str(home))
    if not {"database", "module_database"} & set(request.fixturenames):
        # a module's database is no concern of its tests that ask for none
        monkeypatch.delenv("PASTURE_DATABASE_URL", raising=False)
    return home


@pytest.fixture
def needs_chromium() -> None:
    needs.playwright()


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """The session's throwaway PostgreSQL server (its `postgres` database)."""
    with pg_server.server() as url:
        yield url


def _chosen(request: pytest.FixtureRequest) -> str:
    """The parameter's database: "" for SQLite, else a fresh one on the session's server."""
    if request.param == "sqlite":
        return ""
    return fresh_database(request.getfixturevalue("pg_url"))


@pytest.fixture(params=DATABASES)
def database(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The platform database this test's Services and processes use: "" (SQLite) or a
    PostgreSQL URL, in `$PASTURE_DATABASE_URL` for the test."""
    url = _chosen(request)
    if url:
        monkeypatch.setenv("PASTURE_DATABASE_URL", url)
    else:
        monkeypatch.delenv("PASTURE_DATABASE_URL", raising=False)
    return url


@pytest.fixture(scope="module", params=DATABASES)
def module_database(request: pytest.FixtureRequest) -> Iterator[str]:
    """The same for a module's shared setup: in `$PASTURE_DATABASE_URL` while it lasts."""
    url = _chosen(request)
    with pytest.MonkeyPatch.context() as mp:
        if url:
            mp.setenv("PASTURE_DATABASE_URL", url)
        else:
            mp.delenv("PASTURE_DATABASE_URL", raising=False)
        yield url


# The suite runs as root under CI, and a test that joins a generated path to its folder can
# reach the machine's own files ("/etc/passwd" as an app's file). Whatever a test writes
# stays under the temporary folders; this says so at the end, naming what moved.
_MACHINE_FILES = [Path("/etc/passwd"), Path("/etc/group"), Path("/etc/hosts")]


def _machine() -> dict[str, object]:
    seen: dict[str, object] = {"/": sorted(os.listdir("/"))}
    for file in _MACHINE_FILES:
        seen[str(file)] = file.read_bytes() if file.exists() else None
    return seen


@pytest.fixture(scope="session", autouse=True)
def _machine_untouched() -> Iterator[None]:
    before = _machine()
    yield
    after = _machine()
    moved = [what for what in before if before[what] != after[what]]
    assert not moved, f"the tests changed the machine's own files: {moved}"
