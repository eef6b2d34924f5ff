"""Commands by name across a person's apps: the listing, and the spec's refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers.club import RECIPES, RUNS
from pasture.caller import NOBODY, Caller
from pasture.errors import NotFound, Refused, UsageError
from pasture.platform.service import Service


def test_the_listing_is_grouped_by_app(service: Service, ada: Caller) -> None:
    service.deploy(ada, RUNS)
    listing = service.listing.list_commands(ada)
    assert listing.text.splitlines()[:2] == [
        "## ada/runs",
        "log_run(who, miles, at) — Log a run for the club leaderboard — Run club, "
        "an app at 127.0.0.1:8000/ada/runs/",
    ]
    [first, *_] = listing.data["commands"]
    assert first["at"] == "ada/runs" and first["name"] == "log_run"
    assert first["title"] == "Run club" and first["readOnly"] is False


def test_a_command_runs_as_its_caller(service: Service, ada: Caller) -> None:
    service.deploy(ada, RUNS)
    wrote = service.run_command(ada, "log_run", {"who": "Ada", "miles": "5", "at": "2026-09-01"})
    assert len(wrote.data["entities"]) == 1
    [row] = service.run_command(ada, "leaderboard", {}).data["rows"]
    assert row["jog"]["miles"] == 5
    assert row["created"]["by"]["name"] == "ada"


def test_a_query_of_an_aggregate_says_its_number(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    app = tmp_path / "runs"
    shutil.copytree(RUNS, app)
    tools = json.loads((app / "tools.json").read_text())
    tools["club_size"] = {"description": "How many runs", "input": {}, "query": ".jog!&.count!"}
    tools["who_ran"] = {"description": "Runs by runner", "input": {}, "query": ".tally=jog.who"}
    tools["runners"] = {"description": "Who ran", "input": {}, "query": ".distinct=jog.who"}
    (app / "tools.json").write_text(json.dumps(tools))
    service.deploy(ada, app)
    for who in ("Ada", "Bo", "Ada"):
        service.run_command(ada, "log_run", {"who": who, "miles": 1, "at": "2026-09-01"})
    size = service.run_command(ada, "club_size", {})
    assert (size.text, size.data) == ("club_size: 3 entities in ada/runs", {"count": 3})
    ran = service.run_command(ada, "who_ran", {})
    assert (ran.text, ran.data) == (
        "who_ran: tally of jog.who in ada/runs: Ada 2, Bo 1",
        {"tally": {"Ada": 2, "Bo": 1}},
    )
    runners = service.run_command(ada, "runners", {})
    assert (runners.text, runners.data) == (
        "runners: 2 distinct jog.who in ada/runs: Ada, Bo",
        {"distinct": ["Ada", "Bo"]},
    )
    one = service.graph.query(ada, "ada/runs", ".jog.who=Bo&.count!")
    assert (one.text, one.data) == ("1 entity in ada/runs", {"count": 1})
    none = service.graph.query(ada, "ada/runs", ".jog.who=Cy&.distinct=jog.who")
    assert (none.text, none.data) == ("0 distinct jog.who in ada/runs", {"distinct": []})
    empty = service.graph.query(ada, "ada/runs", ".jog.who=Cy&.tally=jog.who")
    assert empty.text == "tally of jog.who in ada/runs: no values"


def test_an_unknown_name_lists_what_there_is(service: Service, ada: Caller) -> None:
    with pytest.raises(NotFound) as none:
        service.run_command(ada, "add_run", {})
    assert "deploy" in none.value.sentence
    service.deploy(ada, RUNS)
    with pytest.raises(NotFound) as unknown:
        service.run_command(ada, "add_run", {})
    assert unknown.value.sentence == (
        "no command add_run — your apps offer ada/runs: log_run, leaderboard, since. "
        "commands lists them with their arguments."
    )


def test_a_name_in_two_apps_asks_which(service: Service, ada: Caller) -> None:
    service.deploy(ada, RUNS)
    service.spaces.new_space(ada, "club")
    service.deploy(ada, RUNS, space="club")
    with pytest.raises(UsageError) as which:
        service.run_command(ada, "log_run", {"who": "A", "miles": 1, "at": "2026-09-01"})
    assert which.value.sentence == "log_run is a command of ada/runs and club/runs — say which app"
    service.run_command(ada, "log_run", {"who": "A", "miles": 1, "at": "2026-09-01"}, "club/runs")
    assert len(service.graph.query(ada, "club/runs", ".jog!").data["rows"]) == 1
    with pytest.raises(UsageError) as slug:
        service.listing.list_commands(ada, "runs")
    assert (
        slug.value.sentence == "runs is an app of ada and club — say which: ada/runs or club/runs"
    )
    assert {e["at"] for e in service.listing.list_commands(ada, "club/runs").data["commands"]} == {
        "club/runs"
    }


def test_generated_commands_come_from_the_vocabulary(service: Service, ada: Caller) -> None:
    result = service.deploy(ada, RECIPES)
    assert result.text.splitlines()[1] == "commands: add_recipe, find_recipe"


def test_signed_out_callers_are_told_to_sign_in(service: Service, ada: Caller) -> None:
    service.deploy(ada, RUNS)
    assert "sign in" in service.listing.list_commands(NOBODY).text
    with pytest.raises(Refused) as refused:
        service.run_command(NOBODY, "leaderboard", {})
    assert "sign in" in refused.value.sentence


def test_status_is_one_line_per_app(service: Service, ada: Caller) -> None:
    service.deploy(ada, RUNS)
    service.run_command(ada, "log_run", {"who": "Ada", "miles": 5, "at": "2026-09-01"})
    assert (
        service.listing.status(ada).text == "ada/runs v1 — Run club — 1 entity, 3 commands, public"
    )
