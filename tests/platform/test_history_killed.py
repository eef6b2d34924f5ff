"""`kill -9` of a real `pasture undo` or `pasture app restore` process while it writes leaves
the app's data either all put back or not at all: each is one transaction, and the journal's
lines go with it. The next undo or restore then does all of it."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from helpers.club import RUNS
from helpers.processes import PASTURE, pasture, pasture_env
from pasture.platform.service import Service

pytestmark = pytest.mark.processes
ROWS = 20_000


def wal_of(home: Path) -> Path:
    """The app's store's write-ahead log (there only while a connection has the store open)."""
    found = [p for p in home.rglob("*.db") if p.parent != home]
    assert len(found) == 1, found
    return Path(f"{found[0]}-wal")


def size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def killed_while_writing(home: Path, *args: str) -> None:
    """Start `pasture ARGS…`, and kill it (-9) as soon as its transaction has written to the
    store's write-ahead log."""
    wal = wal_of(home)
    before = size(wal)
    process = subprocess.Popen(
        [*PASTURE, *args],
        env=pasture_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        if size(wal) > before:
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.0005)
    assert process.wait(timeout=60) == -signal.SIGKILL, "it ended before it was killed"


def count(home: Path) -> int:
    with Service(home) as service:
        answer = service.graph.query(service.local_owner(), "ada/runs", ".jog!&.count!")
        return int(answer.data["count"])


def test_kill_9_during_an_undo_or_a_restore_leaves_all_of_it_or_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    home = tmp_path / "home"
    with Service(home) as service:
        ada = service.local_owner()
        service.deploy(ada, RUNS, app="runs")
        service.apply(ada, "ada/runs", {"jog": {"who": "before"}})
        time.sleep(1.1)  # the moment to restore to is a second of its own
        moment = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        time.sleep(1.1)
        service.apply(ada, "ada/runs", [{"jog": {"who": f"r{i}", "miles": i}} for i in range(ROWS)])
        call = service.audit_log.read(app="ada/runs", limit=1)[-1]["call"]
    assert count(home) == ROWS + 1

    killed_while_writing(home, "undo", call)
    left = count(home)
    assert left in (ROWS + 1, 1)  # all of it or none
    done = pasture(home, "undo", call)
    if left == ROWS + 1:  # the killed undo kept nothing: this one does it all
        assert done.returncode == 0, done.stderr
    assert count(home) == 1

    # the undo undone (the rows back), then a restore to the moment killed partway
    with Service(home) as service:
        undo = service.audit_log.read(app="ada/runs", limit=1)[-1]["call"]
    assert pasture(home, "undo", undo).returncode == 0
    assert count(home) == ROWS + 1
    killed_while_writing(home, "app", "restore", "ada/runs", "--to", moment)
    assert count(home) in (ROWS + 1, 1)  # all of it or none
    restored = pasture(home, "app", "restore", "ada/runs", "--to", moment)
    assert restored.returncode == 0, restored.stderr
    assert count(home) == 1
