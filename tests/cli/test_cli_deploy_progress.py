"""A deploy of a big app shows a bar while its files are written, at a terminal only: not
when its output goes to a pipe or a file, and not with --json."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.processes import pasture_env

BAR = "deploying ada/big: MB written"


def _big_app(tmp_path: Path) -> Path:
    app = tmp_path / "big"
    app.mkdir()
    (app / "index.html").write_text("<!doctype html><title>Big</title>\n")
    for i in range(12):  # 12 MB in files each synced to disk
        (app / f"blob{i}.bin").write_bytes(os.urandom(1_000_000))
    return app


def _deploy(home: Path, *args: str, stdout_tty: bool) -> tuple[int, str, str]:
    """`pasture deploy ARGS…` with its stderr (and, with `stdout_tty`, its stdout) a
    terminal of its own; its exit code, what the terminal showed and what went to the pipe."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "pasture", "deploy", *args],
        env={**pasture_env(home), "COLUMNS": "120", "TERM": "xterm"},
        stdin=subprocess.DEVNULL,
        stdout=follower if stdout_tty else subprocess.PIPE,
        stderr=follower,
    )
    os.close(follower)
    shown = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end closed: the process ended
                break
            if not chunk:
                break
            shown += chunk
        elif process.poll() is not None:
            break
    piped = process.stdout.read().decode() if process.stdout else ""
    code = process.wait(timeout=120)
    os.close(leader)
    return code, shown.decode(errors="replace"), piped


@pytest.mark.processes
def test_a_big_deploy_draws_a_bar_at_a_terminal_only(tmp_path: Path) -> None:
    app = _big_app(tmp_path)
    home = tmp_path / "home"
    code, shown, _ = _deploy(home, str(app), stdout_tty=True)
    assert code == 0, shown
    assert BAR in shown and "deployed ada/big v1" in shown

    code, shown, piped = _deploy(home, str(app), stdout_tty=False)
    assert code == 0, shown
    assert piped.startswith("deployed ada/big v2")
    assert BAR not in shown and shown.strip() == ""

    code, shown, _ = _deploy(home, str(app), "--json", stdout_tty=True)
    assert code == 0, shown
    assert BAR not in shown and '"version": 3' in shown
