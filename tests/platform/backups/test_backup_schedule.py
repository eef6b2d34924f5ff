"""Backups on a schedule: taken when the newest is as old as `--backup-every` says, by one
process of those that share the data, the newest `--backup-keep` kept; `pasture serve
--backup-every` takes them while it serves."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from backup_data import runs_app
from hypothesis import given
from hypothesis import strategies as st

from helpers.command_line import PastureMain
from helpers.processes import running_server
from pasture.errors import Forbidden, UsageError
from pasture.platform import seconds_of
from pasture.platform.backups.archive import Archive
from pasture.platform.backups.scheduled import Schedule, archives, file_lock, prune
from pasture.platform.service import Service


@given(st.integers(1, 10_000), st.sampled_from(["s", "m", "min", "h", "d", "w", "H", "D"]))
def test_a_while_is_read_as_the_audit_reads_one(n: int, unit: str) -> None:
    each = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}[unit.lower()]
    assert seconds_of(f"{n}{unit}", "--backup-every") == n * each


@pytest.mark.parametrize("wrong", ["", "0d", "1 day", "d", "1y", "-1h", "1.5h"])
def test_a_while_that_is_not_one_is_refused(wrong: str) -> None:
    with pytest.raises(UsageError) as refused:
        seconds_of(wrong, "--backup-every")
    assert str(refused.value) == (
        f"--backup-every is a while: 90s, 30m, 1h, 1d or 1w (not {wrong!r})"
    )


def test_serve_refuses_a_while_that_is_not_one(tmp_path: Path) -> None:
    said = PastureMain(tmp_path / "home")("serve", "--backup-every", "daily")
    assert (said.returncode, said.stderr) == (
        2,
        "--backup-every is a while: 90s, 30m, 1h, 1d or 1w (not 'daily')\n",
    )


def test_the_newest_are_kept(tmp_path: Path) -> None:
    for day in range(1, 10):
        (tmp_path / f"pasture-202612{day:02d}T000000Z.tar").write_bytes(b"")
    (tmp_path / "mine.tar").write_bytes(b"")  # not one of the schedule's: left alone
    gone = prune(tmp_path, 3)
    assert [p.name for p in gone] == [f"pasture-202612{d:02d}T000000Z.tar" for d in range(1, 7)]
    assert [p.name for p in archives(tmp_path)] == [
        f"pasture-202612{d:02d}T000000Z.tar" for d in (7, 8, 9)
    ]
    assert (tmp_path / "mine.tar").exists()


def test_one_process_of_those_sharing_the_data_takes_each_backup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    home, folder = tmp_path / "home", tmp_path / "backups"
    taken: list[Path] = []
    started = threading.Event()
    go_on = threading.Event()

    def slow(path: Path) -> None:  # holds the lock until told to go on
        started.set()
        go_on.wait(30)
        path.write_bytes(b"archive")
        taken.append(path)

    def lock() -> object:
        return file_lock(home / "backup.lock")

    first = Schedule(slow, lock, folder, every=3600, keep=7)  # type: ignore[arg-type]
    second = Schedule(slow, lock, folder, every=3600, keep=7)  # type: ignore[arg-type]
    worker = threading.Thread(target=first.once)
    worker.start()
    assert started.wait(30)
    assert second.once() is None  # the other holds the lock: it does not take one too
    go_on.set()
    worker.join(30)
    assert len(taken) == 1
    assert second.once() is None  # the newest is not an hour old: none is due


def test_a_backup_is_due_when_the_newest_is_as_old_as_every_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    folder = tmp_path / "backups"
    with Service(tmp_path / "home") as service:
        owner = service.local_owner()
        runs_app(service, owner)
        schedule = service.backups.start_schedule(owner, 3600, 2, folder)
        deadline = time.monotonic() + 60
        while not archives(folder) and time.monotonic() < deadline:
            time.sleep(0.05)
        schedule.stop()
        assert len(archives(folder)) == 1  # none was there: one at once
        old = archives(folder)[0]
        an_hour_ago = time.time() - 3601
        os.utime(old, (an_hour_ago, an_hour_ago))
        for _ in range(2):
            newest = archives(folder)[-1]
            os.utime(newest, (an_hour_ago, an_hour_ago))
            time.sleep(1.1)  # archives are named by the second they are taken
            assert schedule.once() is not None
        assert len(archives(folder)) == 2  # the newest two kept
        assert old not in archives(folder)
        assert Archive(archives(folder)[-1]).manifest["source"] == "sqlite"


def test_only_the_servers_owner_schedules_backups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    with Service(tmp_path / "home") as service:
        bob = service.people.new_user(service.local_owner(), "bob")
        with pytest.raises(Forbidden) as refused:
            service.backups.start_schedule(bob, 3600, 7, tmp_path / "backups")
        assert str(refused.value) == "only the server's owner backs up the whole server — ask them"


@pytest.mark.processes
def test_serve_takes_backups_while_it_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    home, folder = tmp_path / "home", tmp_path / "backups"
    with Service(home) as service:
        runs_app(service, service.local_owner())
    options = ("--backup-every", "1d", "--backup-keep", "3", "--backup-dir", str(folder))
    with running_server(home, *options, PASTURE_USER="ada"):
        deadline = time.monotonic() + 120
        while not archives(folder) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(archives(folder)) == 1
        archive = Archive(archives(folder)[0])
        assert [d["path"] for d in archive.manifest["databases"]] == [
            "platform.db",
            "apps/ada/runs/store.db",
        ]
