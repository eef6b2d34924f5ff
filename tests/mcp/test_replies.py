"""`commands` asked again over HTTP: the SDK's reply, given again while the listing stands.

The listing is made once for each person, request and change; whatever changes
what they may list — a deploy, a rollback, a member taken out, here or by
another process on the same data — is in the very next reply, and every reply
carries its own request's id. Driven through the web door in process (Starlette's
TestClient), then against a real `pasture serve` with the SDK's client.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp_talk import BASE_URL, MODES, Club, refused, set_up_club
from starlette.testclient import TestClient

from helpers.club import RUNS
from helpers.mcp_answers import ok
from helpers.processes import running_server
from mcp import Client
from pasture.caller import Caller
from pasture.platform.service import Service
from pasture.result import Result
from pasture.web import create_app

HANDSHAKE_ERA = "2025-11-25"  # stateless: a tools/call needs no initialize first


def _call(n: int, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"name": "commands", "arguments": arguments or {}}
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}


class Door:
    """The web door of one Service in process, counting the listings it makes."""

    def __init__(self, service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
        self.made: list[str | None] = []
        listing: Callable[..., Result] = service.listing.list_commands

        def counted(caller: Caller, *args: Any, **kwargs: Any) -> Result:
            self.made.append(caller.name)
            return listing(caller, *args, **kwargs)

        monkeypatch.setattr(service.listing, "list_commands", counted)
        self.client = TestClient(create_app(service), base_url=BASE_URL)

    def post(self, token: str, n: int, arguments: dict[str, Any] | None = None) -> Any:
        answer = self.client.post(
            "/mcp",
            json=_call(n, arguments),
            headers={
                "Accept": "application/json, text/event-stream",
                "Authorization": f"Bearer {token}",
                "MCP-Protocol-Version": HANDSHAKE_ERA,
            },
        )
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"] == "application/json"
        assert int(answer.headers["content-length"]) == len(answer.content)
        return answer.json()


@pytest.fixture
def door(club: Club, monkeypatch: pytest.MonkeyPatch) -> Iterator[Door]:
    made = Door(club.service, monkeypatch)
    with made.client:  # entering it runs the lifespan
        yield made


def _ats(reply: Any) -> set[str]:
    return {entry["at"] for entry in reply["result"]["structuredContent"]["commands"]}


def _names(reply: Any, at: str) -> list[str]:
    return [e["name"] for e in reply["result"]["structuredContent"]["commands"] if e["at"] == at]


def _fewer_commands() -> dict[str, bytes]:
    """The run club with one command of its three: a version that lists differently."""
    files = {path.name: path.read_bytes() for path in RUNS.iterdir() if path.is_file()}
    tools = json.loads(files["tools.json"])
    files["tools.json"] = json.dumps({"leaderboard": tools["leaderboard"]}).encode()
    return files


def test_the_same_call_again_is_the_same_reply_with_its_own_id(club: Club, door: Door) -> None:
    token = club.service.new_token(club.ada, "agent")
    first = door.post(token, 1)
    again = door.post(token, 2)
    assert door.made == ["ada"]  # made once, given twice
    assert (first["id"], again["id"]) == (1, 2)
    assert {**again, "id": 1} == first
    assert _ats(first) == {"ada/runs", "club/runs"}
    text = door.post(token, "three")
    assert text["id"] == "three" and text["result"] == first["result"]

    one_app = door.post(token, 4, {"app": "ada/runs"})  # another request: its own reply
    assert _ats(one_app) == {"ada/runs"}
    assert door.made == ["ada", "ada"]


def test_each_person_has_their_own_listing(club: Club, door: Door) -> None:
    ada = door.post(club.service.new_token(club.ada, "agent"), 1)
    bo = door.post(club.service.new_token(club.bo, "agent"), 1)
    cy = door.post(club.service.new_token(club.cy, "agent"), 1)
    assert _ats(ada) == {"ada/runs", "club/runs"}
    assert _ats(bo) == {"ada/runs"}
    assert "structuredContent" in cy["result"] and _ats(cy) == set()


def test_a_deploy_and_a_member_taken_out_are_in_the_next_reply(club: Club, door: Door) -> None:
    service = club.service
    ada, bo = service.new_token(club.ada, "agent"), service.new_token(club.bo, "agent")
    assert _ats(door.post(ada, 1)) == {"ada/runs", "club/runs"}
    assert _ats(door.post(bo, 1)) == {"ada/runs"}

    service.deploy(club.ada, RUNS, space="ada", app="more", title="More runs")
    assert _ats(door.post(ada, 2)) == {"ada/runs", "ada/more", "club/runs"}
    service.remove_member(club.ada, "ada", "bo")
    assert _ats(door.post(bo, 2)) == set()
    service.deploy(club.ada, _fewer_commands(), space="ada", app="more")
    assert _names(door.post(ada, 3), "ada/more") == ["leaderboard"]
    service.rollback(club.ada, "ada/more", 1)
    assert _names(door.post(ada, 4), "ada/more") == ["log_run", "leaderboard", "since"]
    assert door.made == ["ada", "bo", "ada", "bo", "ada", "ada"]


def test_another_process_deploying_is_seen_at_once(club: Club, door: Door) -> None:
    token = club.service.new_token(club.ada, "agent")
    assert _ats(door.post(token, 1)) == {"ada/runs", "club/runs"}
    other = Service(club.service.home, base_url=BASE_URL)  # another server on the same data
    try:
        other.deploy(club.ada, RUNS, space="ada", app="elsewhere", title="Elsewhere")
    finally:
        other.close()
    assert _ats(door.post(token, 2)) == {"ada/runs", "ada/elsewhere", "club/runs"}


def test_a_refusal_is_not_given_again(club: Club, door: Door) -> None:
    token = club.service.new_token(club.ada, "agent")
    for n in (1, 2):
        reply = door.post(token, n, {"app": "nowhere"})
        assert reply["result"]["isError"] is True
    assert door.made == ["ada", "ada"]


@pytest.mark.processes
@pytest.mark.parametrize("mode", MODES)
def test_over_a_real_server_every_call_sees_the_apps_as_they_are(
    tmp_path: Path, mode: str, database: str
) -> None:
    home = tmp_path / "home"
    service = Service(home, base_url=BASE_URL)
    club = set_up_club(service)
    token = service.new_token(club.ada, "agent")
    service.close()

    async def listed(url: str) -> list[set[str]]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        seen: list[set[str]] = []
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http), mode=mode) as c:
            for _ in range(2):
                result = await c.call_tool("commands", {})
                seen.append({entry["at"] for entry in ok(result)[1]["commands"]})
            other = Service(home, base_url=BASE_URL)  # `pasture deploy` beside the server
            try:
                other.deploy(club.ada, RUNS, space="ada", app="more", title="More runs")
            finally:
                other.close()
            seen.append(
                {entry["at"] for entry in ok(await c.call_tool("commands", {}))[1]["commands"]}
            )
            result = await c.call_tool("commands", {"app": "nowhere"})
            assert "nowhere" in refused(result)
        return seen

    with running_server(home) as url:
        seen = anyio.run(listed, url)
    assert seen == [{"ada/runs", "club/runs"}] * 2 + [{"ada/runs", "ada/more", "club/runs"}]
