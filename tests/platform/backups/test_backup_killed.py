"""`kill -9` of a real `pasture backup` process partway through leaves the last good archive
as it was and the server serving; the next backup sweeps what the killed one left."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from backup_data import runs_app

from helpers.processes import PASTURE, pasture_env, running_server
from pasture.platform import restore_backup
from pasture.platform.service import Service

pytestmark = pytest.mark.processes


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_kill_9_partway_leaves_the_last_good_backup_and_a_serving_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    home = tmp_path / "home"
    archive = tmp_path / "all.tar"
    with Service(home) as service:
        owner = service.local_owner()
        at = runs_app(service, owner)
        for _ in range(6):  # a store of some 70 MB: its copy takes a while
            service.apply(owner, at, [{"jog": {"who": os.urandom(400).hex()}} for _ in range(5000)])
        service.backups.take(owner, archive)  # the last good one
        good = digest(archive)

    with running_server(home) as url:
        backup = subprocess.Popen(
            [*PASTURE, "backup", str(archive)],
            env=pasture_env(home),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        partial: list[Path] = []
        deadline = time.monotonic() + 120
        # partway: the platform's database is in the new archive and the store is being copied
        while backup.poll() is None and time.monotonic() < deadline:
            partial = [p for p in tmp_path.glob(".all.tar.*.partial") if p.stat().st_size > 0]
            if partial:
                backup.send_signal(signal.SIGKILL)
                break
            time.sleep(0.001)
        assert backup.wait(timeout=60) == -signal.SIGKILL, "the backup ended before it was killed"
        assert partial, "no part of the new archive was seen"

        assert digest(archive) == good  # the last good backup, untouched
        assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200
        assert httpx.get(f"{url}/readyz", timeout=10).status_code == 200

        # the next backup, taken while the server serves, is whole and sweeps the leftovers
        again = subprocess.run(
            [*PASTURE, "backup", str(archive)],
            env=pasture_env(home),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert again.returncode == 0, again.stderr
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".all")) == []

    restored = tmp_path / "restored"
    restore_backup(archive, restored, key_file=home / "backup.key")
    with Service(restored) as service:
        assert service.graph.query(service.local_owner(), at, ".jog!&.count!").data == {
            "count": 30000
        }
