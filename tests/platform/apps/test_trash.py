"""The trash: an app or a space removed is gone for every door, its name held, until it is
restored as it was, or until 30 days have gone and it is deleted for good — on SQLite and on
PostgreSQL (the `service` fixture runs each test on both).

bo owns the space `club` and its public `runs` (the run club); ed is an editor of club, cy
a viewer; di has only a space of her own; ada is the server's owner and in no space of bo's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from helpers.club import RUNS
from helpers.code_apps import code_app, deploy
from helpers.databases import sqlite_only
from mcp import Client
from pasture.caller import NOBODY, Caller
from pasture.errors import Conflict, Forbidden, NotFound, Refused, Unauthorized, UsageError
from pasture.mcp import build_server
from pasture.platform import Change
from pasture.platform.apps.trash import DAYS
from pasture.platform.service import Service
from pasture.web import create_app

RUN = {"who": "Bo", "miles": 5, "at": "2026-09-01"}
BASE = "http://127.0.0.1:8000"  # the service fixture's own address (the host is checked)
T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


@dataclass
class Club:
    service: Service
    ada: Caller  # the server's owner
    bo: Caller  # club's owner
    ed: Caller  # an editor of club
    cy: Caller  # a viewer of club
    di: Caller  # a stranger
    token: str  # bo's token for club alone


@pytest.fixture
def club(service: Service, ada: Caller) -> Club:
    bo = service.people.new_user(ada, "bo")
    ed = service.people.new_user(ada, "ed")
    cy = service.people.new_user(ada, "cy")
    di = service.people.new_user(ada, "di")
    service.spaces.new_space(bo, "club")
    service.add_member(bo, "club", "ed", "editor")
    service.add_member(bo, "club", "cy", "viewer")
    service.deploy(bo, RUNS, space="club", app="runs", access="public")
    service.deploy(bo, RUNS, space="club", app="runs", title="Run club, again")  # v2
    service.run_command(bo, "log_run", RUN, "club/runs")
    service.secrets.set(bo, "club/runs", "API_KEY", "s3cret")
    token = service.new_token(bo, "club only", spaces=["club"])
    service.trash.now = lambda: T0
    return Club(service, ada, bo, ed, cy, di, token)


# -- what each door shows ------------------------------------------------------------------
def mcp_sees(service: Service, caller: Caller) -> dict[str, Any]:
    """What the MCP connector shows `caller` of club/runs, over the SDK's in-memory client."""

    async def main() -> dict[str, Any]:
        async with Client(build_server(service, lambda: caller), mode="auto") as client:
            listing = await client.call_tool("commands", {})
            board = await client.call_tool("command", {"name": "leaderboard", "app": "club/runs"})
            resources = await client.list_resources()
            return {
                "listed": "club/runs" in str(listing.content),
                "command": not board.is_error,
                "views": [str(r.uri) for r in resources.resources if "club/runs" in str(r.uri)],
            }

    return anyio.run(main)


def web_sees(service: Service, token: str | None) -> dict[str, int]:
    """The status of club/runs' page, ./api/query and the WebMCP tools, with `token` or none."""
    client = TestClient(create_app(service), base_url=BASE, follow_redirects=False)
    if token is not None:
        client.headers["Authorization"] = f"Bearer {token}"
    return {
        "page": client.get("/club/runs/").status_code,
        "query": client.get("/club/runs/api/query?.jog!").status_code,
        "tools": client.get("/club/runs/api/tools").status_code,
    }


def refusal(run: Any) -> tuple[type[Refused], str]:
    try:
        run()
    except Refused as e:
        return type(e), e.sentence
    raise AssertionError("it was not refused")


# -- removed, then restored ----------------------------------------------------------------
def test_a_removed_app_is_gone_for_every_door_until_restored_as_it_was(club: Club) -> None:
    service, bo, cy = club.service, club.bo, club.cy
    assert mcp_sees(service, bo) == {
        "listed": True,
        "command": True,
        "views": ["ui://club/runs/leaderboard.html"],
    }
    assert web_sees(service, club.token) == {"page": 200, "query": 200, "tools": 200}

    removed = service.remove_app(bo, "club/runs")
    assert removed.text == (
        "club/runs is in the trash: gone for every door until pasture trash restore club/runs "
        "brings it back as it was; it goes for good on 2027-01-01"
    )
    for who in (bo, cy):
        assert mcp_sees(service, who) == {"listed": False, "command": False, "views": []}
    assert web_sees(service, club.token) == {"page": 404, "query": 404, "tools": 404}
    assert web_sees(service, None) == {"page": 404, "query": 404, "tools": 404}
    assert [a.at for a in service.gate.list_apps(bo)] == []
    kind, sentence = refusal(lambda: service.graph.query(bo, "club/runs", ".jog!"))
    assert kind is NotFound
    assert sentence == "no app club/runs — you have no apps yet; deploy one with pasture deploy"

    restored = service.restore_from_trash(bo, "club/runs")
    assert restored.text == (
        "club/runs is back as it was: its files, versions, data, members and secrets"
    )
    assert mcp_sees(service, bo)["views"] == ["ui://club/runs/leaderboard.html"]
    assert web_sees(service, club.token) == {"page": 200, "query": 200, "tools": 200}
    # its files, its versions (v2 serving, v1 still there to roll back to), its data
    files = service.apps.files(bo, "club/runs").text
    assert "leaderboard.html" in files and "index.html" in files
    assert service.gate.app_info(bo, "club/runs").version == 2
    assert service.gate.app_info(bo, "club/runs").title == "Run club, again"
    service.rollback(bo, "club/runs", 1)
    rows = service.graph.query(cy, "club/runs", ".jog!").data["rows"]
    assert [r["jog"]["who"] for r in rows] == ["Bo"]
    # its members as they were, the token made for club alone, its secrets
    assert service.spaces.role(club.ed, "club") == "editor"
    token_caller = service.caller_for_token(club.token)
    assert token_caller.spaces == frozenset({"club"})
    assert len(service.graph.query(token_caller, "club/runs", ".jog!").data["rows"]) == 1
    assert "API_KEY" in service.secrets.list(bo, "club/runs").text
    assert service.catalog.secrets("club", "runs") == {"API_KEY": "s3cret"}


def test_a_removed_spaces_apps_and_members_are_gone_until_it_is_restored(club: Club) -> None:
    service, bo, cy = club.service, club.bo, club.cy
    result = service.remove_space(bo, "club")
    assert result.text == (
        "club is in the trash with its 1 app: gone for every door until pasture trash restore "
        "club brings it back as it was; it goes for good on 2027-01-01"
    )
    assert mcp_sees(service, cy) == {"listed": False, "command": False, "views": []}
    assert web_sees(service, club.token) == {"page": 404, "query": 404, "tools": 404}
    assert service.spaces.role(cy, "club") is None
    assert "club" not in [s for s, _ in service.spaces.of(bo)]
    # an app of a space in the trash comes back with its space
    _kind, sentence = refusal(lambda: service.restore_from_trash(bo, "club/runs"))
    assert (
        sentence == "nothing named club/runs is in your trash — pasture trash lists what is there"
    )

    service.restore_from_trash(bo, "club")
    assert service.spaces.role(cy, "club") == "viewer"
    assert service.spaces.role(club.ed, "club") == "editor"
    assert mcp_sees(service, cy)["listed"] is True
    assert len(service.graph.query(cy, "club/runs", ".jog!").data["rows"]) == 1


def test_an_app_removed_before_its_space_stays_in_the_trash_when_the_space_comes_back(
    club: Club,
) -> None:
    service, bo = club.service, club.bo
    service.remove_app(bo, "club/runs")
    service.remove_space(bo, "club")
    _kind, sentence = refusal(lambda: service.restore_from_trash(bo, "club/runs"))
    assert sentence == (
        "club is in the trash itself — pasture trash restore club brings it back with its "
        "apps, then pasture trash restore club/runs"
    )
    service.restore_from_trash(bo, "club")
    assert [a.at for a in service.gate.list_apps(bo)] == []
    service.restore_from_trash(bo, "runs")  # a slug alone, in the trash once
    assert [a.at for a in service.gate.list_apps(bo)] == ["club/runs"]


# -- the name is held -------------------------------------------------------------------------
def test_a_name_in_the_trash_is_held_and_the_refusal_says_how_to_restore_it(club: Club) -> None:
    service, bo = club.service, club.bo
    service.remove_app(bo, "club/runs")
    kind, sentence = refusal(lambda: service.deploy(bo, RUNS, space="club", app="runs"))
    assert kind is Conflict
    assert sentence == (
        "club/runs is in the trash (removed by bo on 2026-12-02) — pasture trash restore "
        "club/runs brings it back; otherwise its name is free again on 2027-01-01"
    )
    service.remove_space(bo, "club")
    kind, sentence = refusal(lambda: service.spaces.new_space(bo, "club"))
    assert kind is Conflict
    assert sentence == (
        "club is in the trash (removed by bo on 2026-12-02) — pasture trash restore club "
        "brings it back; otherwise its name is free again on 2027-01-01"
    )
    # to someone who is not of the space: only when the name is free
    kind, sentence = refusal(lambda: service.spaces.new_space(club.di, "club"))
    assert sentence == "club is in the trash — its name is free again on 2027-01-01"


# -- who may ------------------------------------------------------------------------------------
NOT_OWNER = "you are {role} of club; only its owners (bo) can remove club/runs"


def test_only_the_owners_of_its_space_remove_or_restore_an_app(club: Club) -> None:
    service = club.service
    cases = {
        "editor": (club.ed, Forbidden, NOT_OWNER.format(role="editor")),
        "viewer": (club.cy, Forbidden, NOT_OWNER.format(role="viewer")),
        "stranger": (
            club.di,
            NotFound,
            "no app club/runs — you have no apps yet; deploy one with pasture deploy",
        ),
        "server's owner": (
            club.ada,
            NotFound,
            "no app club/runs — you have no apps yet; deploy one with pasture deploy",
        ),
        "nobody": (
            NOBODY,
            Unauthorized,
            "no app club/runs — sign in, or present a token (Authorization: Bearer …), "
            "to reach your apps",
        ),
    }
    for who, (caller, kind, sentence) in cases.items():
        assert refusal(lambda c=caller: service.remove_app(c, "club/runs")) == (kind, sentence), who
    assert service.gate.app_info(club.bo, "club/runs").at == "club/runs"  # nothing moved

    service.remove_app(club.bo, "club/runs")
    restoring = {
        "editor": (club.ed, "you are editor of club; only its owners (bo) can restore club/runs"),
        "viewer": (club.cy, "you are viewer of club; only its owners (bo) can restore club/runs"),
        "stranger": (
            club.di,
            "nothing named club/runs is in your trash — pasture trash lists what is there",
        ),
        "server's owner": (
            club.ada,
            "you are no member of club; only its owners (bo) can restore club/runs",
        ),
    }
    for who, (caller, sentence) in restoring.items():
        got = refusal(lambda c=caller: service.restore_from_trash(c, "club/runs"))
        assert got[1] == sentence, who
    assert refusal(lambda: service.restore_from_trash(NOBODY, "club/runs"))[0] is Unauthorized
    assert service.trash.listing(club.bo).data["trash"][0]["what"] == "club/runs"


def test_a_space_is_removed_by_its_owners_or_the_servers_owner(club: Club) -> None:
    service = club.service
    only = "only its owners (bo) or the server's owner can remove it"
    assert refusal(lambda: service.remove_space(club.cy, "club")) == (
        Forbidden,
        f"you are viewer of club; {only}",
    )
    assert refusal(lambda: service.remove_space(club.ed, "club")) == (
        Forbidden,
        f"you are editor of club; {only}",
    )
    assert refusal(lambda: service.remove_space(club.di, "club")) == (
        NotFound,
        "no space club of yours — pasture space new makes one",
    )
    assert refusal(lambda: service.remove_space(NOBODY, "club"))[0] is Unauthorized
    assert refusal(lambda: service.remove_space(club.bo, "bo")) == (
        UsageError,
        "bo is bo's own space, which cannot go to the trash — remove its apps one by one "
        "with pasture app remove",
    )
    service.remove_space(club.ada, "club")  # the server's owner may
    assert refusal(lambda: service.restore_from_trash(club.cy, "club"))[1] == (
        "you are viewer of club; only its owners (bo) or the server's owner can restore it"
    )
    service.restore_from_trash(club.ada, "club")
    assert service.spaces.role(club.bo, "club") == "owner"


def test_the_web_door_removes_and_restores_with_the_same_sentences(club: Club) -> None:
    service = club.service
    client = TestClient(create_app(service), base_url=BASE)
    tokens = {
        name: service.new_token(caller, name)
        for name, caller in (("bo", club.bo), ("cy", club.cy), ("di", club.di))
    }

    def post(path: str, body: Any, token: str | None) -> tuple[int, Any]:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        answer = client.post(path, json=body, headers=headers)
        return answer.status_code, answer.json()

    assert post("/api/trash/remove", {"app": "club/runs"}, tokens["cy"]) == (
        403,
        {"error": NOT_OWNER.format(role="viewer")},
    )
    status, said = post("/api/trash/remove", {"app": "club/runs"}, tokens["di"])
    assert (status, said["error"]) == (
        404,
        "no app club/runs — you have no apps yet; deploy one with pasture deploy",
    )
    status, said = post("/api/trash/remove", {"app": "club/runs"}, None)
    assert status == 401 and said["error"].startswith("no app club/runs — sign in")
    status, said = post("/api/trash/remove", {"space": "club"}, tokens["cy"])
    assert status == 403
    assert post("/api/trash/remove", {"what": 1}, tokens["bo"])[0] == 400

    status, said = post("/api/trash/remove", {"app": "club/runs"}, tokens["bo"])
    assert status == 200 and said["data"]["removed"] == "club/runs"
    listed = client.get("/api/trash", headers={"Authorization": f"Bearer {tokens['cy']}"})
    assert [t["what"] for t in listed.json()["data"]["trash"]] == ["club/runs"]
    listed = client.get("/api/trash", headers={"Authorization": f"Bearer {tokens['di']}"})
    assert listed.json()["data"]["trash"] == []
    assert post("/api/trash/restore", {"name": "club/runs"}, tokens["cy"])[0] == 403
    assert post("/api/trash/restore", {"name": "club/runs"}, None)[0] == 401
    status, said = post("/api/trash/restore", {"name": "club/runs"}, tokens["bo"])
    assert status == 200 and said["data"]["restored"] == "club/runs"
    assert client.get("/club/runs/").status_code == 200


def test_the_trash_lists_the_callers_spaces_and_the_server_owner_sees_all(club: Club) -> None:
    service = club.service
    own = service.deploy(club.di, RUNS, space="di", app="mine")
    assert own.data["at"] == "di/mine"
    service.remove_app(club.bo, "club/runs")
    service.remove_app(club.di, "mine")
    seen = {
        name: [t["what"] for t in service.trash.listing(c).data["trash"]]
        for name, c in (("bo", club.bo), ("cy", club.cy), ("di", club.di), ("ada", club.ada))
    }
    assert seen == {
        "bo": ["club/runs"],
        "cy": ["club/runs"],
        "di": ["di/mine"],
        "ada": ["club/runs", "di/mine"],
    }
    item = service.trash.listing(club.bo).data["trash"][0]
    assert item == {
        "what": "club/runs",
        "kind": "app",
        "removed_by": "bo",
        "removed_at": "2026-12-02T09:00:00Z",
        "purge_at": "2027-01-01T09:00:00Z",
    }
    assert service.trash.listing(club.bo).text == (
        "the trash holds 1 thing, oldest first:\n"
        "club/runs  (app)  removed by bo 2026-12-02 09:00  goes for good 2027-01-01\n"
        "pasture trash restore NAME brings one back"
    )
    # a token for club alone sees club's
    scoped = service.caller_for_token(club.token)
    assert [t["what"] for t in service.trash.listing(scoped).data["trash"]] == ["club/runs"]


def test_removing_and_restoring_are_in_the_audit(club: Club) -> None:
    service = club.service
    service.remove_app(club.bo, "club/runs")
    service.restore_from_trash(club.bo, "club/runs")
    records = service.audit(club.bo, "club/runs").data["records"]
    assert [r["action"] for r in records][-2:] == ["remove", "trash restore"]
    assert all(r["outcome"] == "ok" for r in records[-2:])


# -- for good -------------------------------------------------------------------------------
def _has_store(service: Service, database: str, space: str, slug: str) -> bool:
    if not database:
        return (service.catalog.app_dir(space, slug) / "store.db").exists()
    from pasture.platform.db.postgres_db import app_schema

    found = service.db.one("SELECT 1 FROM pg_namespace WHERE nspname = ?", app_schema(space, slug))
    return found is not None


def test_after_30_days_an_app_goes_for_good_and_its_name_is_free(club: Club, database: str) -> None:
    service, bo = club.service, club.bo
    app_dir = service.catalog.app_dir("club", "runs")
    assert _has_store(service, database, "club", "runs")
    service.remove_app(bo, "club/runs")
    assert service.trash.sweep(T0 + timedelta(days=DAYS - 1)) == []
    assert _has_store(service, database, "club", "runs")
    assert app_dir.is_dir() or database  # on PostgreSQL the folder is a cache, let go of

    assert service.trash.sweep(T0 + timedelta(days=DAYS, seconds=1)) == ["club/runs"]
    assert not _has_store(service, database, "club", "runs")
    assert not app_dir.exists()
    assert service.trash.listing(bo).data["trash"] == []
    for table in ("apps", "versions", "secrets", "trash"):
        assert service.db.one(f"SELECT 1 FROM {table} WHERE space = 'club'") is None, table
    kind, _sentence = refusal(lambda: service.restore_from_trash(bo, "club/runs"))
    assert kind is NotFound
    # the name is free: a new app of that name starts with nothing of the old one's
    again = service.deploy(bo, RUNS, space="club", app="runs")
    assert again.data["version"] == 1
    assert service.graph.query(bo, "club/runs", ".jog!").data["rows"] == []
    assert service.secrets.list(bo, "club/runs").data.get("secrets", []) == []


def test_after_30_days_a_space_goes_for_good_with_its_apps_and_members(
    club: Club, database: str
) -> None:
    service, bo = club.service, club.bo
    service.remove_space(bo, "club")
    assert service.trash.sweep(T0 + timedelta(days=DAYS + 1)) == ["club"]
    assert not _has_store(service, database, "club", "runs")
    assert not (service.home / "apps" / "club").exists()
    for sql in (
        "SELECT 1 FROM members WHERE space = 'club'",
        "SELECT 1 FROM spaces WHERE name = 'club'",
    ):
        assert service.db.one(sql) is None, sql
    service.spaces.new_space(club.di, "club")  # free for anyone now
    assert service.spaces.role(club.di, "club") == "owner"
    assert service.spaces.role(club.cy, "club") is None


# -- another process on the same data ---------------------------------------------------------
def test_another_server_on_the_same_data_stops_serving_a_removed_app(
    club: Club, tmp_path: Path
) -> None:
    service = club.service
    other = Service(service.home)  # a second `pasture serve` on the same data directory/database
    try:
        heard: list[Change] = []
        stop = other.bus.listen(heard.append)
        assert [a.at for a in other.gate.list_apps(club.bo)] == ["club/runs"]
        other.run_command(club.bo, "leaderboard", {}, "club/runs")
        service.remove_app(club.bo, "club/runs")
        assert [a.at for a in other.gate.list_apps(club.bo)] == []
        assert refusal(lambda: other.run_command(club.bo, "leaderboard", {}, "club/runs"))
        deadline = time.monotonic() + 30
        while Change("deploy", "club", "runs") not in heard and time.monotonic() < deadline:
            time.sleep(0.02)
        assert Change("deploy", "club", "runs") in heard
        service.restore_from_trash(club.bo, "club/runs")
        assert len(other.graph.query(club.bo, "club/runs", ".jog!").data["rows"]) == 1
        stop()
    finally:
        other.close()


# -- apps' code ---------------------------------------------------------------------------------
def _gone(pid: int) -> bool:
    """Whether the process has ended (or is only waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except FileNotFoundError:
        return True


@sqlite_only("worker processes are the same whichever database keeps the apps")
def test_a_removed_apps_worker_processes_are_retired(service: Service, tmp_path: Path) -> None:
    owner = service.local_owner()  # their own space runs code
    at = deploy(
        service, owner, code_app(tmp_path, "notes", "def setup(app):\n    register_notes(app)\n")
    )
    assert service.run_command(owner, "note_count", {}, at).data["count"] == 0
    (pool,) = service.catalog.workers._pools.values()
    pids = [process.pid for process in pool.idle]
    assert pids
    service.remove_app(owner, at)
    assert service.catalog.workers._pools == {}
    deadline = time.monotonic() + 60
    while not all(_gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(_gone(pid) for pid in pids)
    service.restore_from_trash(owner, at)
    assert service.run_command(owner, "note_count", {}, at).data["count"] == 0


# -- any order of removals and restores ---------------------------------------------------------
APPS = ("club/a", "club/b", "bo/c")
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("remove app"), st.sampled_from(APPS)),
        st.tuples(st.just("remove space"), st.just("club")),
        st.tuples(st.just("restore"), st.sampled_from([*APPS, "club"])),
    ),
    max_size=8,
)


def test_any_order_of_removals_and_restores_leaves_what_a_plain_reading_says(
    service: Service, ada: Caller
) -> None:
    bo = service.people.new_user(ada, "bo")
    service.spaces.new_space(bo, "club")
    for at in APPS:
        service.deploy(bo, RUNS, app=at)

    @settings(max_examples=25, deadline=None)
    @given(STEPS)
    def check(steps: list[tuple[str, str]]) -> None:
        for item in service.trash.listing(bo).data["trash"]:  # as it was before this example
            if item["kind"] == "space":
                service.restore_from_trash(bo, item["what"])
        for item in service.trash.listing(bo).data["trash"]:
            service.restore_from_trash(bo, item["what"])
        trashed: set[str] = set()
        for verb, name in steps:
            space_out = "club" in trashed
            if verb == "remove app":
                may = name not in trashed and not (name.startswith("club/") and space_out)
                run = lambda n=name: service.remove_app(bo, n)  # noqa: E731
            elif verb == "remove space":
                may = not space_out
                run = lambda: service.remove_space(bo, "club")  # noqa: E731
            else:
                may = name in trashed and not (name.startswith("club/") and space_out)
                run = lambda n=name: service.restore_from_trash(bo, n)  # noqa: E731
            try:
                run()
            except Refused:
                assert not may, (verb, name)
            else:
                assert may, (verb, name)
                if verb == "restore":
                    trashed.discard(name)
                else:
                    trashed.add(name)
            space_out = "club" in trashed
            shown = {
                at
                for at in APPS
                if at not in trashed and not (at.startswith("club/") and space_out)
            }
            assert {a.at for a in service.gate.list_apps(bo)} == shown
            listed = {t["what"] for t in service.trash.listing(bo).data["trash"]}
            assert listed == trashed

    check()


def test_a_name_gone_for_good_serves_the_new_apps_files_on_every_machine(
    club: Club, database: str, tmp_path: Path
) -> None:
    """On PostgreSQL another machine keeps versions' files only as a cache: once an app is
    removed it lets go of them, so a new app of the same name is never served the old's."""
    if not database:
        pytest.skip("on SQLite every server shares the one data directory")
    service, bo = club.service, club.bo
    other = Service(tmp_path / "another machine")  # the same database, its own folders
    try:
        assert b"Run club" in other.pages.page(bo, "club", "runs", "").body
        service.remove_app(bo, "club/runs")
        assert other.gate.list_apps(bo) == []
        service.trash.sweep(T0 + timedelta(days=DAYS + 1))
        fresh = {"index.html": "<html><head><title>New</title></head><body>new</body></html>"}
        service.deploy(bo, fresh, space="club", app="runs")
        assert b"new" in other.pages.page(bo, "club", "runs", "").body
        assert b"Run club" not in other.pages.page(bo, "club", "runs", "").body
    finally:
        other.close()


def test_a_grant_removes_only_within_its_reach(club: Club) -> None:
    service = club.service
    reads = service.caller_for_token(service.new_token(club.bo, "reads", writes=False))
    kind, sentence = refusal(lambda: service.remove_app(reads, "club/runs"))
    assert kind is Forbidden and "only reads" in sentence, sentence
    assert refusal(lambda: service.remove_space(reads, "club"))[0] is Forbidden
    # the server's owner, through a token for their own space alone, reaches no other
    own = service.caller_for_token(service.new_token(club.ada, "own", spaces=["ada"]))
    assert refusal(lambda: service.remove_space(own, "club")) == (
        NotFound,
        "no space club of yours — pasture space new makes one",
    )
    assert service.trash.listing(club.bo).data["trash"] == []


def test_two_removals_of_one_app_at_once_keep_the_first(club: Club) -> None:
    service = club.service
    service.trash._put(club.bo, "club", "runs")
    kind, sentence = refusal(lambda: service.trash._put(club.ed, "club", "runs"))
    assert (kind, sentence) == (
        Conflict,
        "club/runs is in the trash already — pasture trash lists it",
    )
    assert service.trash.listing(club.bo).data["trash"][0]["removed_by"] == "bo"
