"""`pasture audit`: an app's recorded calls, or your own, as a table or as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.club import RUNS
from helpers.command_line import PastureMain


@pytest.fixture
def pasture(tmp_path: Path) -> PastureMain:
    return PastureMain(tmp_path / "home")


def test_audit_shows_an_apps_calls_and_your_own(pasture: PastureMain) -> None:
    assert pasture("deploy", str(RUNS)).returncode == 0
    assert pasture("command", "log_run", "Ada", "5", "2026-09-01").returncode == 0
    refused = pasture("command", "log_run", "Ada", "five", "2026-09-01")
    assert refused.returncode != 0

    listed = pasture("audit", "runs", "--json")  # each command wrote its record as it ended
    assert listed.returncode == 0, listed.stderr
    records = json.loads(listed.stdout)["records"]
    assert [(r["action"], r["command"], r["outcome"]) for r in records] == [
        ("deploy", None, "ok"),
        ("command", "log_run", "ok"),
        ("command", "log_run", "miles is a number"),
    ]
    assert {(r["name"], r["door"], r["via"], r["app"]) for r in records} == {
        ("ada", "cli", "command line", "ada/runs")
    }
    assert records[1]["args"] == "who text(3), miles text(1), at text(10)"

    pasture.env["COLUMNS"] = "160"  # a wide terminal, so no cell wraps mid-sentence
    table = pasture("audit", "ada/runs", "--since", "1h")
    assert table.returncode == 0, table.stderr
    assert table.stdout.startswith("calls in ada/runs since ")
    assert "log_run" in table.stdout and "miles is a number" in table.stdout

    mine = pasture("audit", "--mine", "--limit", "1", "--json")
    assert [r["outcome"] for r in json.loads(mine.stdout)["records"]] == ["miles is a number"]
    assert pasture("audit", "runs", "--since", "2999-01-01").stdout == (
        "no calls in ada/runs recorded since 2999-01-01T00:00:00.000Z\n"
    )

    nothing = pasture("audit")
    assert nothing.returncode == 2
    assert nothing.stderr.strip() == (
        "name an app (pasture audit SPACE/APP), or say --mine for your own calls"
    )
    bad = pasture("audit", "runs", "--since", "soon")
    assert bad.returncode == 2 and bad.stderr.startswith("--since is a moment")
