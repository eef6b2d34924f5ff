"""The trash with `pasture serve` in processes of its own, on each platform database: two
servers on the same data both stop serving a removed app, and serve it again once it is
restored; a serving process deletes for good what has been in the trash 30 days."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from helpers.club import RUNS, as_user
from helpers.command_line import PastureMain
from helpers.processes import running_server
from pasture.platform.apps.trash import DAYS
from pasture.platform.service import Service

pytestmark = pytest.mark.processes


def _until(check: object, what: str) -> None:
    """Poll `check()` until it holds, a minute at most."""
    deadline = time.monotonic() + 60
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_two_servers_on_the_same_data_stop_serving_a_removed_app(
    tmp_path: Path, database: str
) -> None:
    home = tmp_path / "home"
    pasture = PastureMain(home)
    assert pasture("deploy", str(RUNS)).returncode == 0
    with running_server(home) as one, running_server(home) as two, httpx.Client() as client:

        def statuses(path: str = "/") -> list[int]:
            # on loopback each app has an origin of its own under localhost: its Host named
            return [
                client.get(
                    f"{url}{path}", headers={"Host": f"runs--ada.localhost:{url.rsplit(':')[-1]}"}
                ).status_code
                for url in (one, two)
            ]

        assert statuses() == [200, 200]
        assert pasture("app", "remove", "ada/runs").returncode == 0
        _until(lambda: statuses() == [404, 404], "a server still serves the removed app")
        assert statuses("/api/query?.jog!") == [404, 404]
        assert pasture("trash", "restore", "ada/runs").returncode == 0
        _until(lambda: statuses() == [200, 200], "a server does not serve the restored app")


def test_a_serving_process_deletes_for_good_what_has_been_in_the_trash_30_days(
    tmp_path: Path, database: str
) -> None:
    home = tmp_path / "home"
    with as_user("ada"), Service(home) as service:
        ada = service.local_owner()
        service.deploy(ada, RUNS, app="runs")
        service.trash.now = lambda: datetime.now(UTC) - timedelta(days=DAYS + 1)
        service.remove_app(ada, "runs")
        app_dir = service.catalog.app_dir("ada", "runs")
    # on SQLite its folders are the versions themselves; on PostgreSQL, whose database keeps
    # the files, a server lets go of its copies of a removed app's at once
    assert app_dir.is_dir() or database.startswith("postgresql://")
    pasture = PastureMain(home)
    assert "ada/runs" in pasture("trash").stdout
    with running_server(home):
        _until(lambda: not app_dir.exists(), "the serving process did not sweep the trash")
        _until(
            lambda: pasture("trash").stdout == "the trash is empty\n",
            "the trash still lists what went for good",
        )
    again = pasture("deploy", str(RUNS))
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("deployed ada/runs v1:")
