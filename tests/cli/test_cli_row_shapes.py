"""Rows of different shapes — one run with a title, one without — printed by the command
line as rows: each component's columns, blank where a row lacks them, never a repr."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers.club import RUNS
from helpers.command_line import PastureMain


def _club(tmp_path: Path) -> PastureMain:
    app = tmp_path / "runs"
    shutil.copytree(RUNS, app)
    tools = json.loads((app / "tools.json").read_text())
    tools["log_quiet"] = {  # a run with no doc: a row of another shape
        "description": "Log a run with no title",
        "input": {"who": "text", "miles": "number"},
        "apply": {"entity": {"eid": "$run"}, "jog": {"who": "$who", "miles": "$miles"}},
    }
    (app / "tools.json").write_text(json.dumps(tools))
    pasture = PastureMain(tmp_path / "home", COLUMNS="160")
    assert pasture("deploy", str(app)).returncode == 0
    assert pasture("command", "log_quiet", "Bo", "3").returncode == 0
    assert pasture("command", "log_run", "Ada", "5", "2026-09-01").returncode == 0
    return pasture


def _table(out: str) -> list[list[str]]:
    lines = [line.replace("┃", "│") for line in out.splitlines()]
    return [[c.strip() for c in line.split("│")] for line in lines if "│" in line]


def test_rows_lacking_a_component_print_its_columns_blank(tmp_path: Path) -> None:
    pasture = _club(tmp_path)
    read = pasture("query", "runs", ".jog!&.doc?")
    assert read.returncode == 0, read.stderr
    assert "{" not in read.stdout and "'" not in read.stdout
    heading, *rows = _table(read.stdout)
    assert heading == ["eid", "jog.who", "jog.miles", "jog.at", "doc.title", "doc.body"]
    assert [r[1:] for r in rows] == [
        ["Bo", "3", "", "", ""],
        ["Ada", "5", "2026-09-01", "Run by Ada", ""],
    ]


def test_rows_of_different_shapes_print_as_records_when_narrow(tmp_path: Path) -> None:
    pasture = _club(tmp_path)
    read = pasture("query", "runs", ".jog!&.doc?", COLUMNS="40")
    assert read.returncode == 0, read.stderr
    assert "{" not in read.stdout
    assert "doc.title  Run by Ada" in read.stdout
