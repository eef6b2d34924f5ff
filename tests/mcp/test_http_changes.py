"""Deploys and rollbacks made by another process reach MCP clients over streamable HTTP, in
both protocol generations (pasture.web.mcp_events, pasture.mcp._changes): the newest's
`subscriptions/listen` stream, and the handshake generation's GET stream, which the SDK's
own client opens once `initialize` named a session — on SQLite and PostgreSQL."""

from __future__ import annotations

import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import anyio.abc
import httpx
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import Subscription

from helpers.club import RUNS
from helpers.processes import Pasture, running_server
from helpers.streams import Stream
from mcp import Client

DEADLINE = 30  # seconds: a deadline only, so that a silent stream fails


@pytest.fixture
def env(database: str) -> dict[str, str]:
    return (
        {"PASTURE_USER": "ada", "PASTURE_DATABASE_URL": database}
        if database
        else {"PASTURE_USER": "ada"}
    )


def _client(url: str, token: str, mode: str, heard: list[IncomingMessage]) -> Client:
    async def handler(message: IncomingMessage) -> None:
        heard.append(message)

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    transport = streamable_http_client(f"{url}/mcp", http_client=http)
    return Client(transport, mode=mode, message_handler=handler)


def _place_taken(url: str, token: str) -> None:
    """Until the person's one place among live streams is held (`--streams 1`): a page's
    stream is refused once the client's own stream is open."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        page = Stream(
            f"{url}/ada/runs/api/subscribe",
            {"filter": ".jog!"},
            {"Authorization": f"Bearer {token}"},
        )
        page.close()
        if page.status == 429:
            return
        time.sleep(0.05)
    raise AssertionError("the client's stream never opened")


@pytest.mark.processes
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_deploy_and_a_rollback_reach_a_client_listening_over_http(
    tmp_path: Path, env: dict[str, str], mode: str
) -> None:
    home = tmp_path / "home"
    pasture = Pasture(home, **env)
    assert pasture("deploy", str(RUNS), "--app", "runs").returncode == 0
    token = pasture("token", "new").stdout.split()[0]
    heard: list[IncomingMessage] = []

    def changed() -> int:
        return sum(isinstance(m, types.ResourceListChangedNotification) for m in heard)

    async def until(count: int, events: list[object]) -> None:
        """Until the stream of this generation said the views changed `count` times: the
        listen stream's events in the newest, the GET stream's notices in the other."""
        with anyio.fail_after(DEADLINE):
            while (len(events) if mode == "auto" else changed()) < count:
                await anyio.sleep(0.05)

    async def main(url: str) -> dict[str, object]:
        seen: dict[str, object] = {}
        events: list[object] = []
        async with _client(url, token, mode, heard) as client:
            seen["capabilities"] = client.server_capabilities
            async with anyio.create_task_group() as group:
                if mode == "auto":
                    listen = client.listen(resources_list_changed=True, tools_list_changed=True)
                    await group.start(_follow, listen, events)
                await anyio.to_thread.run_sync(lambda: _place_taken(url, token))
                deployed = await anyio.to_thread.run_sync(
                    lambda: pasture("deploy", str(RUNS), "--app", "runs")
                )
                assert deployed.returncode == 0, deployed.stderr
                await until(1, events)
                rolled = await anyio.to_thread.run_sync(
                    lambda: pasture("app", "rollback", "ada/runs", "1")
                )
                assert rolled.returncode == 0, rolled.stderr
                await until(2, events)
                group.cancel_scope.cancel()
            seen["views"] = [str(r.uri) for r in (await client.list_resources()).resources]
        seen["events"] = events
        return seen

    with running_server(home, "--streams", "1", **env) as url:
        seen = anyio.run(main, url)
    capabilities = seen["capabilities"]
    assert isinstance(capabilities, types.ServerCapabilities)
    assert capabilities.resources is not None and capabilities.resources.list_changed
    if mode == "auto":
        assert [type(e).__name__ for e in seen["events"]] == ["ResourcesListChanged"] * 2
    else:
        assert changed() == 2
        assert seen["events"] == []
    assert "ui://ada/runs/leaderboard.html" in seen["views"]


async def _follow(
    listen: AbstractAsyncContextManager[Subscription],
    events: list[object],
    *,
    task_status: anyio.abc.TaskStatus[None],
) -> None:
    async with listen as stream:
        task_status.started()
        async for event in stream:
            events.append(event)


@pytest.mark.processes
def test_the_get_stream_is_the_callers_own_and_checked_as_every_request(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Opened by hand as any client of the handshake generation may: no token is a 401
    with the sign-in challenge, a Host not the server's a 421, a client that takes no event
    stream a 406; with a token it is an event stream, and `initialize`'s reply names a
    session that any request may carry or not, answered the same."""
    home = tmp_path / "home"
    pasture = Pasture(home, **env)
    assert pasture("deploy", str(RUNS), "--app", "runs").returncode == 0
    token = pasture("token", "new").stdout.split()[0]
    signed_in = {"Authorization": f"Bearer {token}", "MCP-Protocol-Version": "2025-11-25"}
    events = {"Accept": "text/event-stream"}
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    listing = {"jsonrpc": "2.0", "id": 2, "method": "resources/list"}
    accept = {"Accept": "application/json, text/event-stream"}

    with running_server(home, **env) as url, httpx.Client(timeout=30) as http:
        nobody = http.get(f"{url}/mcp", headers=events)
        elsewhere = http.get(f"{url}/mcp", headers={**signed_in, **events, "Host": "evil.example"})
        no_events = http.get(f"{url}/mcp", headers={**signed_in, "Accept": "application/json"})
        with http.stream("GET", f"{url}/mcp", headers={**signed_in, **events}) as opened:
            opened_status = opened.status_code
            opened_type = opened.headers["content-type"]
        auth = {"Authorization": f"Bearer {token}", **accept}
        started = http.post(f"{url}/mcp", headers=auth, json=hello)
        session = started.headers.get("mcp-session-id")
        version = {"MCP-Protocol-Version": "2025-11-25"}
        with_it = http.post(
            f"{url}/mcp", headers={**auth, **version, "Mcp-Session-Id": str(session)}, json=listing
        )
        other = http.post(
            f"{url}/mcp", headers={**auth, **version, "Mcp-Session-Id": "another"}, json=listing
        )
        without = http.post(f"{url}/mcp", headers={**auth, **version}, json=listing)
        listed = http.post(f"{url}/mcp", headers={**auth, **version}, json=listing)
    assert nobody.status_code == 401
    assert nobody.headers["www-authenticate"].startswith("Bearer resource_metadata=")
    assert elsewhere.status_code == 421
    assert no_events.status_code == 406
    assert (opened_status, opened_type.split(";")[0]) == (200, "text/event-stream")
    assert started.status_code == 200 and session and len(session) == 32
    assert "mcp-session-id" not in listed.headers
    answers = [r.json()["result"]["resources"] for r in (with_it, other, without)]
    assert answers[0] == answers[1] == answers[2] != []
