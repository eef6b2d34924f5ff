"""The `pasture` command line end to end, as a person runs it, on a fresh home: once as a
process of its own, as a shell starts it, and the rest through `pasture.cli.main` in this
process (`helpers.command_line`), which prints and exits the same."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers.club import RUNS
from helpers.command_line import PastureMain
from helpers.processes import Pasture


@pytest.fixture
def pasture(tmp_path: Path) -> PastureMain:
    return PastureMain(tmp_path / "home")


@pytest.mark.processes
def test_deploy_list_and_run_a_command(tmp_path: Path) -> None:
    pasture = Pasture(tmp_path / "home")  # each call a process of its own
    deployed = pasture("deploy", str(RUNS))
    assert deployed.returncode == 0, deployed.stderr
    assert deployed.stdout == (
        "deployed ada/runs v1: http://127.0.0.1:8000/ada/runs/\n"
        "commands: log_run, leaderboard, since\n"
    )

    listed = pasture("commands")
    assert listed.returncode == 0
    assert listed.stdout.splitlines()[:2] == [
        "## ada/runs",
        "log_run(who, miles, at) — Log a run for the club leaderboard — Run club, "
        "an app at 127.0.0.1:8000/ada/runs/",
    ]

    logged = pasture("command", "log_run", "Ada", "5", "2026-09-01")
    assert logged.returncode == 0, logged.stderr
    assert "wrote 1 entity in ada/runs" in logged.stdout
    named = pasture("command", "log_run", "--who=Bo", "--miles", "3", "--at=2026-09-02", "--json")
    assert named.returncode == 0, named.stderr
    assert list(json.loads(named.stdout)) == ["entities", "aliases"]

    board = pasture("command", "leaderboard", "--json")
    rows = json.loads(board.stdout)["rows"]
    assert [(r["jog"]["who"], r["jog"]["miles"]) for r in rows] == [("Ada", 5), ("Bo", 3)]
    table = pasture("command", "leaderboard")
    assert "Ada" in table.stdout and "Bo" in table.stdout

    status = pasture("status")
    assert status.stdout == "ada/runs v1 — Run club — 2 entities, 3 commands, public\n"
    files = pasture("app", "files", "ada/runs", "tools.json")
    assert json.loads(files.stdout) == json.loads((RUNS / "tools.json").read_text())
    inspected = json.loads(pasture("inspect", "--json").stdout)
    assert [c["name"] for c in inspected["commands"]] == ["log_run", "leaderboard", "since"]


def test_a_command_answering_an_aggregate_prints_its_line(
    pasture: PastureMain, tmp_path: Path
) -> None:
    app = tmp_path / "runs"
    shutil.copytree(RUNS, app)
    tools = json.loads((app / "tools.json").read_text())
    tools["who_ran"] = {"description": "Runs by runner", "input": {}, "query": ".tally=jog.who"}
    tools["club_size"] = {"description": "How many runs", "input": {}, "query": ".jog!&.count!"}
    (app / "tools.json").write_text(json.dumps(tools))
    assert pasture("deploy", str(app)).returncode == 0
    for who in ("Ada", "Bo", "Ada"):
        assert pasture("command", "log_run", who, "5", "2026-09-01").returncode == 0
    ran = pasture("command", "who_ran")
    assert (ran.returncode, ran.stdout) == (
        0,
        "who_ran: tally of jog.who in ada/runs: Ada 2, Bo 1\n",
    )
    size = pasture("command", "club_size", "--json")
    assert (size.returncode, json.loads(size.stdout)) == (0, {"count": 3})


@pytest.mark.parametrize(
    ("args", "code", "sentence"),
    [
        (
            ("command", "add_run"),
            1,
            "no command add_run — your apps offer ada/runs: log_run, leaderboard, since. "
            "commands lists them with their arguments.",
        ),
        (("command", "log_run", "Ada", "lots", "2026-09-01"), 2, "miles is a number"),
        (("command", "log_run", "a", "b", "c", "d"), 2, "log_run takes who, miles, at"),
        (("app", "rollback", "ada/runs", "9"), 1, "ada/runs has no v9 — it has v1"),
        (("deploy", "/no/such/folder"), 2, "/no/such/folder is not a folder"),
        (("member", "add", "ada", "nobody-here", "editor"), 1, "no user nobody-here"),
        (("mcp", "--token", "pst_wrong"), 1, "that token is not one this server gave out"),
    ],
)
def test_refusals_print_their_sentence_and_exit_non_zero(
    pasture: PastureMain, args: tuple[str, ...], code: int, sentence: str
) -> None:
    assert pasture("deploy", str(RUNS)).returncode == 0
    done = pasture(*args)
    assert done.returncode == code
    assert sentence in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_a_refused_deploy_says_every_problem(pasture: PastureMain, tmp_path: Path) -> None:
    app = tmp_path / "broken"
    app.mkdir()
    (app / "index.html").write_text("<title>Broken</title>")
    (app / "tools.json").write_text('{"x": {"description": "X", "input": {}}}')
    (app / "worker.py").write_text("def (:\n")
    done = pasture("deploy", str(app))
    assert done.returncode == 1
    assert "tools.json: " in done.stderr and "worker.py: line 1: " in done.stderr
    assert "Traceback" not in done.stderr
    assert pasture("app", "list").stdout.startswith("you have no apps yet")


def test_an_app_carrying_worker_js_is_refused_saying_where_its_code_goes(
    pasture: PastureMain, tmp_path: Path
) -> None:
    app = tmp_path / "cart"
    shutil.copytree(RUNS, app)
    (app / "worker.js").write_text("export function setup(app) { app.register('cart add') }\n")
    done = pasture("deploy", str(app))
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        "worker.js: pasture runs an app's code from worker.py, in Python, and never runs "
        'worker.js — write its commands in worker.py (the guide\'s "Commands written as code", '
        "/docs.md), or give a script of the app's pages another name\n"
    )
    assert pasture("app", "list").stdout.startswith("you have no apps yet")


def test_spaces_members_users_and_tokens(pasture: PastureMain) -> None:
    assert pasture("user", "new", "bo").returncode == 0
    made = pasture("space", "new", "club")
    assert made.stdout.startswith("space club made")
    assert pasture("member", "add", "club", "bo", "viewer").stdout == "bo is now a viewer of club\n"
    token = pasture("token", "new", "--json")
    assert json.loads(token.stdout)["token"].startswith("pst_")
    assert pasture("password", "--password", "a long password").returncode == 0
    assert pasture("deploy", str(RUNS), "--space", "club", "--access", "private").returncode == 0
    assert "club/runs" in pasture("app", "list").stdout


def test_help_is_there_without_a_home(pasture: PastureMain) -> None:
    done = pasture("--help")
    assert done.returncode == 0 and "deploy" in done.stdout
