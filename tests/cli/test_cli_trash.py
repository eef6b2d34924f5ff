"""`pasture app remove`, `space remove`, `trash` and `trash restore` at the command line, on
each platform database: what is removed is gone for the command line's verbs until restored,
its name is held, and whoever may not is told who can."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.club import RUNS, as_user
from helpers.command_line import PastureMain
from pasture.platform.service import Service

HELD = (
    "ada/runs is in the trash (removed by ada on {day}) — pasture trash restore ada/runs "
    "brings it back; otherwise its name is free again on {free}"
)


@pytest.fixture
def pasture(tmp_path: Path, database: str) -> PastureMain:
    return PastureMain(tmp_path / "home")


def test_an_app_removed_at_the_command_line_is_gone_until_restored(pasture: PastureMain) -> None:
    assert pasture("deploy", str(RUNS)).returncode == 0
    assert pasture("command", "log_run", "Ada", "5", "2026-09-01").returncode == 0

    removed = pasture("app", "remove", "runs", "--json")
    assert removed.returncode == 0, removed.stderr
    data = json.loads(removed.stdout)
    assert (data["removed"], data["kind"]) == ("ada/runs", "app")
    free = data["purge_at"][:10]

    assert (
        pasture("app", "list").stdout
        == "you have no apps yet — deploy one with pasture deploy DIR\n"
    )
    board = pasture("command", "leaderboard")
    assert board.returncode != 0
    assert "no command leaderboard" in board.stderr or "no app" in board.stderr, board.stderr
    files = pasture("app", "files", "ada/runs")
    assert files.returncode != 0
    assert files.stderr.startswith("no app ada/runs")

    listed = pasture("trash")
    assert listed.returncode == 0
    lines = listed.stdout.splitlines()
    assert lines[0] == "the trash holds 1 thing, oldest first:"
    assert lines[1].startswith("ada/runs  (app)  removed by ada ")
    assert lines[1].endswith(f"goes for good {free}")
    assert json.loads(pasture("trash", "list", "--json").stdout)["trash"][0]["what"] == "ada/runs"

    again = pasture("deploy", str(RUNS))
    assert again.returncode != 0
    day = json.loads(pasture("trash", "--json").stdout)["trash"][0]["removed_at"][:10]
    assert again.stderr.strip() == HELD.format(day=day, free=free)

    restored = pasture("trash", "restore", "ada/runs")
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout == (
        "ada/runs is back as it was: its files, versions, data, members and secrets\n"
    )
    rows = pasture("command", "leaderboard", "--json")
    assert rows.returncode == 0, rows.stderr
    assert [r["jog"]["who"] for r in json.loads(rows.stdout)["rows"]] == ["Ada"]
    assert pasture("trash").stdout == "the trash is empty\n"


def test_a_space_removed_at_the_command_line_holds_its_name(pasture: PastureMain) -> None:
    assert pasture("space", "new", "club").returncode == 0
    assert pasture("deploy", str(RUNS), "--space", "club").returncode == 0
    removed = pasture("space", "remove", "club")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.startswith("club is in the trash with its 1 app: gone for every door")
    made = pasture("space", "new", "club")
    assert made.returncode != 0
    assert made.stderr.startswith("club is in the trash (removed by ada on ")
    assert "pasture trash restore club brings it back" in made.stderr
    assert "club/runs" not in pasture("app", "list").stdout
    assert pasture("trash", "restore", "club").returncode == 0
    assert "club/runs" in pasture("app", "list").stdout


def test_the_command_line_says_who_can(pasture: PastureMain, tmp_path: Path) -> None:
    # bo owns a space whose app the machine's owner (ada) only views
    with as_user("ada"), Service(tmp_path / "home") as service:
        ada = service.local_owner()
        bo = service.people.new_user(ada, "bo")
        service.deploy(bo, RUNS, space="bo", app="runs")
        service.add_member(bo, "bo", "ada", "viewer")
    refused = pasture("app", "remove", "bo/runs")
    assert refused.returncode != 0
    assert refused.stderr.strip() == "you are viewer of bo; only its owners (bo) can remove bo/runs"
    own = pasture("space", "remove", "bo")
    assert own.returncode == 2
    assert own.stderr.strip() == (
        "bo is bo's own space, which cannot go to the trash — remove its apps one by one with "
        "pasture app remove"
    )
    nothing = pasture("trash", "restore", "bo/runs")
    assert nothing.returncode != 0
    assert nothing.stderr.strip() == (
        "nothing named bo/runs is in your trash — pasture trash lists what is there"
    )


def test_every_trash_verb_has_help(pasture: PastureMain) -> None:
    for verb in (["app", "remove"], ["space", "remove"], ["trash"], ["trash", "restore"]):
        shown = pasture(*verb, "--help")
        assert shown.returncode == 0
        assert shown.stdout.startswith(f"usage: pasture {' '.join(verb)}")
