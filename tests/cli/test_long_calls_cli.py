"""Long calls at the command line and the console: a progress bar at a real terminal, none
when piped or with --json, and Ctrl-C stopping the call — its code sees `ctx.cancelled`,
what the mutation wrote is not kept, and `pasture command` exits 130."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_console import Pane

from helpers.command_line import pasture_main as pasture

WORKER = """
import time

from pasture import mutation, number, query, string, table

schema = {"notes": table(text=string())}


@mutation(tool={"description": "Write a note, then report progress until stopped"})
def write_then_wait(ctx):
    ctx.db.notes.insert({"text": "written before the stop"})
    n = 0
    while not ctx.cancelled:
        n += 1
        ctx.progress(n, total=1000, message=f"step {n}")
        time.sleep(0.05)
    return {"steps": n}


@mutation(tool={"description": "Report 1..n of n, then answer", "args": {"n": number()}})
def counts(ctx, args):
    for n in range(1, int(args["n"]) + 1):
        ctx.progress(n, total=args["n"], message="counting")
    return n


@query(tool={"description": "The notes kept"})
def notes(ctx):
    return [row["text"] for row in ctx.db.notes.query().collect()]
"""

STOPPED = "write_then_wait was stopped, as asked — nothing it wrote was kept"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    app = tmp_path / "long"
    app.mkdir()
    (app / "worker.py").write_text(WORKER)
    done = pasture(home, "deploy", str(app))
    assert done.returncode == 0, done.stderr
    return home


def _notes(home: Path) -> list[str]:
    done = pasture(home, "command", "notes", "--json")
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout)["result"])


def test_piped_or_with_json_no_bar_is_drawn(home: Path) -> None:
    done = pasture(home, "command", "counts", "500")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    with_json = pasture(home, "command", "counts", "500", "--json")
    assert json.loads(with_json.stdout) == {"result": 500}
    assert with_json.stderr == ""


def _pane(home: Path, tmp_path: Path, *words: str) -> Pane:
    command = shlex.join(
        ["env", f"PASTURE_HOME={home}", "PASTURE_USER=ada", sys.executable, "-m", "pasture", *words]
    )
    return Pane(tmp_path / "tmux.sock", command + '; echo "it left with $?"; sleep 30')


@pytest.fixture
def pane_of(home: Path, tmp_path: Path) -> Iterator[list[Pane]]:
    panes: list[Pane] = []
    yield panes
    for pane in panes:
        pane.close()


@pytest.mark.processes
@pytest.mark.terminal
def test_pasture_command_draws_progress_and_ctrl_c_stops_it(
    home: Path, tmp_path: Path, pane_of: list[Pane]
) -> None:
    pane = _pane(home, tmp_path, "command", "write_then_wait")
    pane_of.append(pane)
    screen = pane.wait_for("step ")
    assert " of 1000" in screen  # how far of the total, beside the bar
    pane.send("C-c")
    pane.wait_for("stopping it — Ctrl-C again ends it now")
    screen = pane.wait_for("it left with 130")
    assert STOPPED in screen
    assert _notes(home) == []


@pytest.mark.processes
@pytest.mark.terminal
def test_at_the_console_ctrl_c_stops_a_call_and_the_console_goes_on(
    home: Path, tmp_path: Path, pane_of: list[Pane]
) -> None:
    pane = _pane(home, tmp_path, "console")
    pane_of.append(pane)
    pane.wait_for("ada>")
    pane.send("write_then_wait", "Enter")
    pane.wait_for("step ")
    pane.send("C-c")
    pane.wait_for(STOPPED)  # in red, and the prompt again
    pane.send("C-d")
    pane.wait_for("it left with 0")
    assert _notes(home) == []
