"""Every test runs with its own data directory, never the machine's own, and its own
database, never the machine's (`$PASTURE_DATABASE_URL` is only what a test sets); a test
marked `helpers.browser.in_chromium` needs Chromium and Playwright (see helpers.needs).

Each test carries a marker for each part of the machine it needs beyond Python (`MARKS`),
so that `-m "not postgres and not browser"` (`make test-quick`) leaves those out: `postgres`
and `browser` are put on by what the test asks for (a PostgreSQL parameter or server, the
Chromium fixture); `processes`, `terminal` and `npm` are said by the test itself, and a test
that starts a process of pasture's own without saying `processes` fails, naming it.

The platform's databases (see helpers.databases): `database` runs a test on SQLite and on
a fresh PostgreSQL database, `module_database` a module's shared setup on each; the
PostgreSQL server (`pg_url`) is started once for the session, when a test first needs it.

tests/ is on sys.path so that every folder's tests import the shared `helpers` package."""

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from helpers import needs, pg_server  # noqa: E402
from helpers.databases import DATABASES, fresh_database  # noqa: E402

os.environ.pop("PASTURE_DATABASE_URL", None)

# No example is held to a time of its own: a loaded machine makes a fast one slow, and a
# property is about what comes out, not how soon (what is slow is benchmarks/' to say).
# On top of what the machine calls for (Hypothesis's own `ci` profile, under CI).
settings.register_profile("pasture", settings.default, deadline=None)
settings.load_profile("pasture")


MARKS = {
    "postgres": "runs on a PostgreSQL server the tests start (put on by its parameter)",
    "browser": "drives Debian's Chromium with Playwright (put on by the needs_chromium fixture)",
    "processes": "starts a process of its own: pasture (a server, a command line, an MCP "
    "client's child) or another Python",
    "terminal": "types into a real terminal (tmux)",
    "npm": "runs a client from the npm registry (the MCP Inspector, the MCP Apps bridge, the "
    "conformance suite, axe-core), "
    "installed in a cache",
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sqlite_only(reason): about SQLite alone; skipped under PostgreSQL, saying why"
    )
    for name, what in MARKS.items():
        config.addinivalue_line("markers", f"{name}: {what}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        on_postgres = "postgres" in params.values() or "pg_url" in item.fixturenames
        if on_postgres:
            item.add_marker(pytest.mark.postgres)
        if "needs_chromium" in item.fixturenames:
            item.add_marker(pytest.mark.browser)
        marker = item.get_closest_marker("sqlite_only")
        if marker is not None and on_postgres:
            item.add_marker(pytest.mark.skip(reason=str(marker.args[0])))


# A process started while a test runs says what the test needs: pasture or another Python
# (`processes`; the platform's own worker processes are not the test's to say), a
# PostgreSQL server (`postgres`) or Playwright's driver of Chromium (`browser`). A test that
# starts one without its marker fails, naming it.
_running: list[pytest.Item] = []
_unsaid: dict[str, tuple[str, str]] = {}


def _needs(args: str | Sequence[Any]) -> str | None:
    """The marker a process with these arguments calls for, or None."""
    words = [args] if isinstance(args, str) else [os.fsdecode(a) for a in args]
    line = " ".join(words)
    if "/postgresql/" in line:
        return "postgres"
    if "playwright/driver" in line:
        return "browser"
    if "pasture.platform.workers.worker_main" in line:
        return None
    if (words and words[0] == sys.executable) or "-m pasture" in line:
        return "processes"
    return None


_popen = subprocess.Popen.__init__


def _watched_popen(self: subprocess.Popen[Any], args: Any, *more: Any, **named: Any) -> None:
    needed = _needs(args)
    if needed and _running and _running[-1].get_closest_marker(needed) is None:
        shown = args if isinstance(args, str) else " ".join(os.fsdecode(a) for a in args)
        _unsaid.setdefault(_running[-1].nodeid, (needed, shown[:120]))
    _popen(self, args, *more, **named)


subprocess.Popen.__init__ = _watched_popen  # type: ignore[assignment,method-assign]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    # From before the first fixture is set up: a module's server started for this test is its.
    _running.append(item)
    yield
    _running.pop()


@pytest.fixture(autouse=True)
def _processes_said(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    unsaid = _unsaid.pop(request.node.nodeid, None)
    if unsaid is not None:
        needed, started = unsaid
        pytest.fail(
            f"this test starts a process of its own ({started}) — mark it "
            f"@pytest.mark.{needed} (or its module: pytestmark = pytest.mark.{needed})"
        )


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
