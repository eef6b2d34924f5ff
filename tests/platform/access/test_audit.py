"""Every write and command call is kept in the audit: who, through what, how it went.

On both platform databases: the records a call leaves (and a refused one, with
its sentence), that no argument's value is kept anywhere, that only an app's
owners read its audit while each person reads their own, that old records are
swept, and that an audit which cannot write fails no call.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from helpers.club import RUNS
from helpers.platform_db import kept
from pasture.caller import Caller
from pasture.errors import Forbidden, NotFound, Refused, Unauthorized, Unavailable, UsageError
from pasture.platform.access.audit import args_shape, bundles_shape, since_of, unquoted
from pasture.platform.nouns import VIEWER_WRITES
from pasture.platform.service import Service

RUN = {"who": "Ada", "miles": "5", "at": "2026-09-01"}
SECRET = "sk-live-4f3c2a1b0c9d8e7f6a5b"


@pytest.fixture
def club(service: Service, ada: Caller) -> Service:
    service.deploy(ada, RUNS, app="runs")
    service.people.new_user(ada, "bo")
    service.add_member(ada, "ada", "bo", "viewer")
    service.people.new_user(ada, "cy")
    return service


def person(service: Service, name: str) -> Caller:
    """A person as a token of theirs names them, come by MCP."""
    owner = service.local_owner()
    return service.caller_for_token(service.new_token(owner, f"{name}'s", user=name)).at_door("mcp")


def records(service: Service, caller: Caller, app: str = "ada/runs") -> list[dict[str, Any]]:
    return list(service.audit(caller, app).data["records"])


def test_writes_and_commands_are_recorded_with_who_door_and_token(
    club: Service, ada: Caller
) -> None:
    token = club.new_token(ada, "laptop")
    agent = club.caller_for_token(token).at_door("mcp")
    club.run_command(agent, "log_run", RUN, "runs")
    club.run_command(ada, "leaderboard", {})
    club.apply(agent, "ada/runs", [{"entity": {"eid": "$j"}, "jog": {"who": "Bo", "miles": 2}}])

    deployed, logged, board, applied = records(club, ada)
    assert (deployed["action"], deployed["door"], deployed["via"]) == (
        "deploy",
        "cli",
        "command line",
    )
    assert (deployed["app"], deployed["args"], deployed["outcome"]) == (
        "ada/runs",
        "a folder",
        "ok",
    )
    token_id = club.tokens(ada).data["tokens"][0]["id"]
    assert {k: logged[k] for k in ("eid", "name", "door", "via", "app", "action", "command")} == {
        "eid": ada.eid,
        "name": "ada",
        "door": "mcp",
        "via": f"token {token_id}",
        "app": "ada/runs",  # asked for as `runs`
        "action": "command",
        "command": "log_run",
    }
    assert logged["args"] == "who text(3), miles text(1), at text(10)"
    assert logged["outcome"] == "ok" and logged["ms"] >= 0
    assert (board["command"], board["door"], board["args"]) == ("leaderboard", "cli", "")
    assert (applied["action"], applied["command"], applied["args"]) == (
        "apply",
        None,
        "1 bundle: entity, jog",
    )
    assert logged["at"] <= board["at"] <= applied["at"]
    assert logged["at"].endswith("Z") and len(logged["at"]) == len("2026-12-01T09:30:00.000Z")


def test_a_refused_call_is_recorded_with_its_sentence(club: Service, ada: Caller) -> None:
    bo = person(club, "bo")
    with pytest.raises(Forbidden):
        club.run_command(bo, "log_run", RUN, "ada/runs")
    with pytest.raises(NotFound):
        club.run_command(ada, "no_such_command", {}, "runs")
    with pytest.raises(UsageError):
        club.run_command(ada, "log_run", {**RUN, "miles": "five"}, "runs")
    viewer, unknown, wrong = records(club, ada)[1:]
    assert (viewer["name"], viewer["outcome"], viewer["command"]) == (
        "bo",
        VIEWER_WRITES,
        "log_run",
    )
    assert (unknown["app"], unknown["command"]) == ("ada/runs", "no_such_command")
    assert unknown["outcome"].startswith("no command no_such_command — your apps offer")
    assert wrong["outcome"] == "miles is a number"


def test_no_argument_value_is_kept_anywhere(club: Service, ada: Caller) -> None:
    club.run_command(ada, "log_run", {**RUN, "who": SECRET}, "runs")
    with pytest.raises(UsageError):
        club.run_command(ada, "log_run", {**RUN, "miles": SECRET}, "runs")
    club.run_command(ada, "log_run", {**RUN, SECRET: "x"}, "runs")  # a name that is a value
    club.apply(ada, "runs", [{"entity": {"eid": "$d"}, "doc": {"title": SECRET}}])
    with pytest.raises(Refused):
        club.apply(ada, "runs", [{"entity": {"eid": "$d"}, "doc": {"title": SECRET}, "nope": {}}])
    club.deploy(ada, {"index.html": f"<title>{SECRET}</title>"}, app="secret-page")
    shapes = [r["args"] for r in records(club, ada)[1:]]
    assert shapes[0] == f"who text({len(SECRET)}), miles text(1), at text(10)"
    assert shapes[2] == "who text(3), miles text(1), at text(10), ? text(1)"
    assert shapes[3] == "1 bundle: entity, doc"
    everything = repr(kept(club, "SELECT * FROM audit"))
    assert "ada/secret-page" in everything
    assert SECRET not in everything and SECRET[:12] not in everything


def test_a_refusal_that_quotes_a_value_keeps_it_out() -> None:
    said = f"no runner named {SECRET} — the club has Ada and Bo"
    assert (
        unquoted(said, {"who": SECRET, "miles": 5}) == "no runner named … — the club has Ada and Bo"
    )
    assert unquoted("miles is a number", {"who": "Ada"}) == "miles is a number"
    declared = {"n", "ok", "tags", "x"}
    assert args_shape({"n": 1, "ok": True, "tags": ["a"], "x": None, "o": {}}, declared) == (
        "n number, ok bool, tags list(1), x null, ? object(0)"
    )
    assert bundles_shape([{"entity": {"eid": "$a"}, SECRET: {}}] * 2) == "2 bundles: entity, ?"


def test_only_an_apps_owners_read_its_audit_and_each_person_their_own(
    club: Service, ada: Caller
) -> None:
    bo = person(club, "bo")
    club.run_command(bo, "leaderboard", {}, "ada/runs")
    with pytest.raises(Forbidden) as refused:
        club.audit(bo, "ada/runs")
    assert refused.value.sentence == (
        "only the owners of ada read ada/runs's audit — pasture audit --mine shows your own calls"
    )
    cy = person(club, "cy")
    with pytest.raises(NotFound):
        club.audit(cy, "ada/runs")
    with pytest.raises(Unauthorized):
        club.audit(Caller(), "ada/runs")
    mine = club.audit(bo, mine=True)
    assert [(r["name"], r["command"]) for r in mine.data["records"]] == [("bo", "leaderboard")]
    assert mine.text.startswith("bo's calls: the last 1, oldest first\n")
    assert club.audit(bo, "ada/runs", mine=True).data == mine.data
    assert club.audit(cy).text == "no cy's calls recorded"
    assert [r["name"] for r in records(club, ada)] == ["ada", "bo"]


def test_since_reads_from_a_moment(club: Service, ada: Caller) -> None:
    club.run_command(ada, "leaderboard", {}, "runs")
    assert len(club.audit(ada, "runs", "1h").data["records"]) == 2
    assert club.audit(ada, "runs", "2999-01-01").data["records"] == []
    assert len(club.audit(ada, "runs", "2000-01-01T00:00").data["records"]) == 2
    with pytest.raises(UsageError, match="--since is a moment"):
        club.audit(ada, "runs", "yesterday")
    moment = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert since_of("90m", moment) == "2026-12-01T10:30:00.000Z"
    assert since_of("2d", moment) == "2026-11-29T12:00:00.000Z"
    assert since_of("2026-12-01") == "2026-12-01T00:00:00.000Z"
    assert since_of("2026-12-01T09:30+01:00") == "2026-12-01T08:30:00.000Z"


def test_records_older_than_the_audit_keeps_are_swept(club: Service, ada: Caller) -> None:
    club.run_command(ada, "leaderboard", {}, "runs")
    assert club.audit_log.sweep(datetime.now(UTC) + timedelta(days=89)) == 0
    assert len(records(club, ada)) == 2
    assert club.audit_log.sweep(datetime.now(UTC) + timedelta(days=91)) == 2
    assert records(club, ada) == []
    assert kept(club, "SELECT COUNT(*) FROM audit") == [(0,)]


def test_a_shorter_keep_and_the_audit_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    short = Service(tmp_path / "short", audit_days=1)
    try:
        owner = short.local_owner()
        short.deploy(owner, RUNS)
        assert short.audit_log.sweep(datetime.now(UTC) + timedelta(hours=23)) == 0
        assert short.audit_log.sweep(datetime.now(UTC) + timedelta(hours=25)) == 1
    finally:
        short.close()
    monkeypatch.setenv("PASTURE_AUDIT", "off")
    off = Service(tmp_path / "off")
    try:
        owner = off.local_owner()
        off.deploy(owner, RUNS)
        off.run_command(owner, "log_run", RUN)
        assert off.audit(owner, "runs").data["records"] == []
    finally:
        off.close()


def test_an_audit_that_cannot_write_fails_no_call(
    club: Service, ada: Caller, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    club.audit_log.flush()

    def full(sql: str, rows: Any) -> int:
        raise Unavailable("the data directory's disk is full — nothing was written")

    monkeypatch.setattr(club.db, "write_aside", full)
    assert club.run_command(ada, "log_run", RUN, "runs").text.startswith("log_run: wrote 1 entity")
    club.audit_log.flush()
    assert "audit records could not be written and are lost" in caplog.text
    monkeypatch.undo()
    assert [r["action"] for r in records(club, ada)] == ["deploy"]


def test_records_are_written_when_the_service_closes(
    club: Service, ada: Caller, tmp_path: Path
) -> None:
    again = Service(club.home)
    owner = again.local_owner()
    again.run_command(owner, "leaderboard", {}, "runs")
    again.close()  # nothing read it back here: it is written on closing
    assert [r["action"] for r in records(club, ada)] == ["deploy", "command"]


def test_a_call_refused_before_it_reaches_an_app_is_only_its_callers_record(
    club: Service, ada: Caller
) -> None:
    """cy names ada's app, which is not there for him: the refusal was written for him (it
    names his own apps), so it is his record alone, never a line of ada's audit."""
    cy = person(club, "cy")
    club.deploy(cy, RUNS, space="cy", app="private-notes")
    before = records(club, ada)
    for app in ("ada/runs", "ada/nothing", "nope/runs"):
        with pytest.raises(NotFound):
            club.run_command(cy, "log_run", {"who": "x"}, app)
    assert records(club, ada) == before
    assert all("private-notes" not in str(r["outcome"]) for r in records(club, ada))
    mine = club.audit(cy, mine=True).data["records"]
    assert [(r["app"], r["command"]) for r in mine if r["action"] == "command"] == [
        (None, "log_run")
    ] * 3


def test_a_grant_for_some_spaces_reads_its_persons_audit_there_alone(
    club: Service, ada: Caller
) -> None:
    club.spaces.new_space(ada, "club")
    club.deploy(ada, RUNS, space="club", app="runs")
    club.run_command(ada, "leaderboard", {}, "ada/runs")
    club.run_command(ada, "leaderboard", {}, "club/runs")
    everywhere = club.audit(ada, mine=True).data["records"]
    assert {"ada/runs", "club/runs"} <= {r["app"] for r in everywhere}
    club_only = club.caller_for_token(club.new_token(ada, "club only", spaces=["club"]))
    seen = club.audit(club_only, mine=True).data["records"]
    assert seen and {r["app"] for r in seen} == {"club/runs"}
