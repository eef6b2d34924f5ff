"""The command line on PostgreSQL, end to end: each command line with a data directory of its
own (as on other machines), and a real `pasture serve` process, all keeping their data in one
throwaway database."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from helpers.club import RUNS
from helpers.command_line import pasture_main as pasture
from helpers.databases import fresh_database
from helpers.processes import free_port, pasture_env


@pytest.fixture(scope="module")
def database(pg_url: str) -> str:
    """A fresh database on the session's throwaway server for this module's tests."""
    return fresh_database(pg_url)


@pytest.mark.processes
def test_deploy_on_one_machine_command_and_serve_on_others(database: str, tmp_path: Path) -> None:
    deployed = pasture(tmp_path / "a", "deploy", str(RUNS), "--database", database)
    assert deployed.returncode == 0, deployed.stderr
    assert deployed.stdout.startswith("deployed ada/runs v1: ")

    # another machine: the address from the environment, an empty data directory
    env = {"PASTURE_DATABASE_URL": database}
    logged = pasture(tmp_path / "b", "command", "log_run", "Ada", "5", "2026-09-01", env=env)
    assert logged.returncode == 0, logged.stderr
    status = pasture(tmp_path / "b", "status", env=env)
    assert status.stdout == "ada/runs v1 — Run club — 1 entity, 3 commands, public\n"
    token = json.loads(
        pasture(tmp_path / "a", "--database", database, "token", "new", "--json").stdout
    )["token"]
    # nothing of it stays on the SQLite side
    assert pasture(tmp_path / "a", "app", "list").stdout.startswith("you have no apps yet")

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "pasture", "serve", "--port", str(port), "--database", database],
        env=pasture_env(tmp_path / "c"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        # on loopback each app has an origin of its own under localhost, which a browser
        # reaches with no setup; httpx is given the address and names the Host itself
        app = {"Host": f"runs--ada.localhost:{port}"}
        for _ in range(300):
            try:
                page = httpx.get(f"{base}/", headers=app, timeout=60)
                break
            except httpx.ConnectError:
                time.sleep(0.1)
        else:
            pytest.fail("pasture serve did not start")
        assert page.status_code == 200 and "<title>Run club</title>" in page.text
        # the token made by the first machine's command line signs in on this server
        me = httpx.get(
            f"{base}/ada/runs/api/me", headers={"Authorization": f"Bearer {token}"}, timeout=60
        )
        assert me.json()["name"] == "ada"
        rows = httpx.get(
            f"{base}/ada/runs/api/query",
            params={"filter": ".jog!"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        ).json()
        assert [r["jog"]["miles"] for r in rows["data"]["rows"]] == [5]
    finally:
        server.terminate()
        out, err = server.communicate(timeout=30)
    assert "pasture serving its PostgreSQL database at" in out
    assert "Traceback" not in err


def test_a_database_that_is_not_there_is_one_sentence(tmp_path: Path) -> None:
    done = pasture(tmp_path, "status", "--database", "postgresql://nobody@127.0.0.1:1/none")
    assert done.returncode != 0
    assert "cannot reach the PostgreSQL database" in done.stderr
    assert "Traceback" not in done.stderr
