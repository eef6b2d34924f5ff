"""Several servers in front of one PostgreSQL database: each a Service of its own, with a
data directory of its own (as on another machine), seeing what the others did."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from helpers.club import RUNS, RUNS_VOCAB
from helpers.databases import fresh_database
from pasture.errors import Unavailable
from pasture.platform.db.postgres_db import app_schema
from pasture.platform.service import Service
from pasture.store import open_store


@pytest.fixture
def two(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Service, Service]]:
    monkeypatch.setenv("PASTURE_USER", "ada")
    url = fresh_database(pg_url)
    one = Service(tmp_path / "one", database_url=url)
    other = Service(tmp_path / "other", database_url=url)
    yield one, other
    one.close()
    other.close()


def test_a_deploy_by_one_server_is_served_by_another(two: tuple[Service, Service]) -> None:
    one, other = two
    ada = one.local_owner()
    assert other.local_owner() == ada
    one.deploy(ada, RUNS)
    # the other server has never seen this version's files: it fetches them
    assert other.gate.app_info(ada, "runs").version == 1
    assert b"<title>" in other.pages.page(ada, "ada", "runs", "").body
    other.run_command(ada, "log_run", {"who": "Ada", "miles": 5, "at": "2026-09-01"})
    rows = one.run_command(ada, "leaderboard", {}).data["rows"]
    assert [r["jog"]["miles"] for r in rows] == [5]
    # a new version deployed by the other is what the first serves next
    one.run_command(ada, "leaderboard", {})
    other.deploy(ada, RUNS, title="Run club two")
    assert one.gate.app_info(ada, "runs").version == 2
    assert one.gate.app_info(ada, "runs").title == "Run club two"
    assert one.rollback(ada, "runs", 1).data["version"] == 1
    assert other.gate.app_info(ada, "runs").version == 1


def test_a_server_that_lost_its_data_directory_serves_every_version(
    two: tuple[Service, Service],
) -> None:
    one, _ = two
    ada = one.local_owner()
    one.deploy(ada, RUNS)
    one.deploy(ada, RUNS)
    one.close()
    shutil.rmtree(one.home)
    again = Service(one.home, database_url=one.database_url)
    try:
        assert again.gate.app_info(ada, "runs").version == 2
        assert "log_run" in again.apps.files(ada, "runs", "tools.json").text
        assert again.rollback(ada, "runs", 1).data["version"] == 1
    finally:
        again.close()


def test_a_token_made_by_one_server_works_on_another(two: tuple[Service, Service]) -> None:
    one, other = two
    ada = one.local_owner()
    bo = one.people.new_user(ada, "bo")
    token = one.new_token(bo)
    assert other.caller_for_token(token) == bo
    session = other.session_for_link(one.sign_in_link(bo))
    assert one.people.caller_for_session(session) == bo
    one.sign_out(session)
    assert other.people.caller_for_session(session).signed_in is False


def test_members_and_spaces_made_by_one_server_are_seen_by_another(
    two: tuple[Service, Service],
) -> None:
    one, other = two
    ada = one.local_owner()
    bo = one.people.new_user(ada, "bo")
    assert other.spaces.of(bo) == [("bo", "owner")]
    one.spaces.new_space(ada, "club")
    one.add_member(ada, "club", "bo", "viewer")
    assert other.spaces.role(bo, "club") == "viewer"
    other.add_member(ada, "club", "BO", "editor")  # user names ignore case, as on SQLite
    assert one.spaces.role(bo, "club") == "editor"


def test_each_app_has_a_schema_of_its_own(two: tuple[Service, Service]) -> None:
    one, _ = two
    ada = one.local_owner()
    one.spaces.new_space(ada, "run-club")
    one.deploy(ada, RUNS)
    one.deploy(ada, RUNS, space="run-club")
    assert one.database_url
    with psycopg.connect(one.database_url) as db:
        schemas = {r[0] for r in db.execute("SELECT nspname FROM pg_namespace")}
    assert {"pasture", "app_ada_runs", app_schema("run-club", "runs")} <= schemas


def test_schema_names_never_meet_and_fit() -> None:
    assert app_schema("ada", "runs") == "app_ada_runs"
    assert app_schema("a-b", "c") != app_schema("a", "b-c")
    long = app_schema("s" * 40, "t" * 40)
    assert len(long) <= 63 and long != app_schema("s" * 40, "t" * 39)


def test_a_database_that_is_not_there_is_a_sentence(tmp_path: Path) -> None:
    with pytest.raises(Unavailable) as refused:
        Service(tmp_path / "home", database_url="postgresql://nobody@127.0.0.1:1/none")
    assert "cannot reach the PostgreSQL database" in refused.value.sentence


def test_a_schema_named_as_before_takes_its_name_of_now_with_its_data(
    two: tuple[Service, Service],
) -> None:
    """Hashed schema names end in 64 bits of hash, no longer 40 (which a search of some
    days could match with another app's). An app's store made under the old name is
    renamed on first use, once, its rows in it."""
    one, other = two
    ada = one.local_owner()
    url = one.database_url
    assert url
    before = app_schema("ada", "club-runs", digits=10)
    now = app_schema("ada", "club-runs")
    assert before != now and len(now) - len(before) == 6
    kept = open_store(url, schema=before)
    kept.declare(RUNS_VOCAB)
    kept.apply({"entity": {"eid": "$j"}, "jog": {"who": "Before", "miles": 1}}, ada)
    kept.close()
    one.deploy(ada, RUNS, app="club-runs")
    assert [r["jog"]["who"] for r in other.graph.query(ada, "club-runs", ".jog!").data["rows"]] == [
        "Before"
    ]
    with psycopg.connect(url) as db:
        schemas = {r[0] for r in db.execute("SELECT nspname FROM pg_namespace")}
    assert now in schemas and before not in schemas
