"""When the machine cannot do it, the caller is told why, and nothing is left half written.

A real full filesystem and a real read-only one (a small tmpfs mounted for the
test; skipped, with the reason, where the machine will not mount one), a
store held by another process, and a PostgreSQL server that goes away.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from helpers import pg_server
from helpers.club import RECIPES, RUNS
from helpers.command_line import pasture_main as pasture
from pasture.caller import Caller
from pasture.errors import Unavailable
from pasture.platform.service import Service
from pasture.web import create_app


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MB filesystem of its own, mounted for the test."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(disk: Path) -> None:
    with open(disk / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass


def counts(service: Service, owner: Caller) -> tuple[int, int, int]:
    rows = len(service.graph.query(owner, "runs", ".jog!").data["rows"])
    tokens = service.db.one("SELECT COUNT(*) AS n FROM tokens")
    versions = service.db.one("SELECT COUNT(*) AS n FROM versions")
    assert tokens is not None and versions is not None
    return rows, int(tokens["n"]), int(versions["n"])


def test_a_full_disk_is_said_and_nothing_is_half_written(
    disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    monkeypatch.delenv("PASTURE_DATABASE_URL", raising=False)
    home = disk / "home"
    service = Service(home)
    try:
        owner = service.local_owner()
        service.deploy(owner, RUNS)
        token = service.new_token(owner)
        before = counts(service, owner)
        fill(disk)
        full = "the data directory's disk is full"
        big = [
            {"entity": {"eid": f"$j{n}"}, "jog": {"who": "x" * 2000, "miles": n}}
            for n in range(3000)
        ]
        for attempt in (
            lambda: service.deploy(owner, RECIPES),
            lambda: service.apply(owner, "runs", big),
            lambda: service.new_token(owner),
        ):
            with pytest.raises(Unavailable) as refused:
                attempt()
            assert refused.value.sentence.startswith(full), refused.value.sentence
            assert "nothing was written; free some space and try again" in refused.value.sentence
        assert counts(service, owner) == before
        leftovers = [
            p.name for p in (home / "apps" / "ada").rglob("*") if p.name.startswith(".tmp")
        ]
        assert leftovers == []
        assert not (home / "apps" / "ada" / "recipes" / "v1").exists()
        # Through the web door: a 503 with the same sentence.
        client = TestClient(create_app(service), base_url="http://127.0.0.1:8000")
        answer = client.post(
            "/ada/runs/api/apply", json=big, headers={"Authorization": f"Bearer {token}"}
        )
        assert answer.status_code == 503
        assert answer.json()["error"].startswith(full)
        assert counts(service, owner) == before
        # Room again: it goes on as before.
        (disk / "filler").unlink()
        service.apply(owner, "runs", big[:3])
        assert counts(service, owner)[0] == before[0] + 3
    finally:
        service.close()


def test_a_read_only_data_directory_is_said_at_start_up(
    disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    monkeypatch.delenv("PASTURE_DATABASE_URL", raising=False)
    home = disk / "home"
    service = Service(home)
    owner = service.local_owner()
    service.deploy(owner, RUNS)
    service.close()
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    served = pasture(home, "serve", "--port", "0")
    assert served.returncode == 1
    assert served.stderr.strip().endswith(
        f"the data directory is read-only ({home}) — nothing was written; pasture writes "
        "there: make it writable, or serve another with --home"
    )
    assert "Traceback" not in served.stderr
    deploying = pasture(home, "deploy", str(RECIPES))
    assert deploying.returncode == 1
    assert "is read-only" in deploying.stderr and "Traceback" not in deploying.stderr


def test_a_store_held_by_another_process_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    monkeypatch.setenv("PASTURE_BUSY_TIMEOUT", "1")
    monkeypatch.delenv("PASTURE_DATABASE_URL", raising=False)
    service = Service(tmp_path / "home")
    try:
        owner = service.local_owner()
        service.deploy(owner, RUNS)
        store = tmp_path / "home" / "apps" / "ada" / "runs" / "store.db"
        holder = sqlite3.connect(store, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process's write, never finished
        try:
            with pytest.raises(Unavailable) as refused:
                service.apply(owner, "runs", {"entity": {"eid": "$j"}, "jog": {"who": "A"}})
            assert refused.value.sentence == (
                f"the data is held by another process for longer than 1 s ({store}) — nothing "
                "was written; try again, and look for a pasture process that is stuck"
            )
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        service.apply(owner, "runs", {"entity": {"eid": "$j"}, "jog": {"who": "A"}})
        assert len(service.graph.query(owner, "runs", ".jog!").data["rows"]) == 1
    finally:
        service.close()


@pytest.mark.postgres  # a server of its own, stopped under it
def test_a_postgresql_server_that_went_away_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    with pg_server.server() as url:
        service = Service(tmp_path / "home", database_url=url)
        owner = service.local_owner()
        service.deploy(owner, RUNS)
        pg_server.stop(url)
        try:
            for attempt in (
                lambda: service.graph.query(owner, "runs", ".jog!"),
                lambda: service.new_token(owner),
            ):
                with pytest.raises(Unavailable) as refused:
                    attempt()
                assert re.search(r"cannot (reach|be reached)", refused.value.sentence)
                assert "PostgreSQL" in refused.value.sentence
        finally:
            service.close()
