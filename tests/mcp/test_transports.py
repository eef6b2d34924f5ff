"""The connector over real transports, driven by the SDK's own client.

- stdio: `pasture mcp` as a child process, as any MCP client configures it;
- streamable HTTP: `pasture serve` under uvicorn on a free loopback port, the
  caller named by a bearer token, in both protocol generations.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_talk import MODES, TOOL_NAMES, Club, refused, set_up_club

from helpers.mcp_answers import ok
from helpers.processes import running_server, server_env
from mcp import Client, StdioServerParameters
from pasture.platform.apps.origins import Origins
from pasture.platform.service import Service

RUN = {"who": "Ada", "miles": "5", "at": "2026-09-01"}


# -- stdio ---------------------------------------------------------------------
@dataclass
class Home:
    path: Path
    club: Club
    tokens: dict[str, str]


@pytest.fixture
def home(tmp_path: Path, database: str) -> Iterator[Home]:
    path = tmp_path / "home"
    service = Service(path)
    club = set_up_club(service)
    tokens = {who.name or "": service.new_token(who) for who in (club.ada, club.bo, club.cy)}
    yield Home(path, club, tokens)
    service.close()


def _stdio(home: Home, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "pasture", "mcp", *args], env=server_env(home.path)
    )


@pytest.mark.processes
@pytest.mark.parametrize("mode", MODES)
def test_pasture_mcp_over_stdio_acts_as_the_owner_or_a_tokens_person(home: Home, mode: str) -> None:
    async def main() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with Client(_stdio(home), mode=mode) as owner:
            seen["tools"] = [t.name for t in (await owner.list_tools()).tools]
            seen["owner status"] = await owner.call_tool("status", {})
        async with Client(_stdio(home, "--token", home.tokens["ada"]), mode=mode) as ada:
            seen["ada tools"] = [t.name for t in (await ada.list_tools()).tools]
            seen["log"] = await ada.call_tool(
                "command", {"name": "log_run", "args": RUN, "app": "ada/runs"}
            )
            seen["board"] = await ada.call_tool(
                "command", {"name": "leaderboard", "args": {}, "app": "ada/runs"}
            )
            seen["ambiguous"] = await ada.call_tool("command", {"name": "log_run", "args": RUN})
            seen["views"] = [r.uri for r in (await ada.list_resources()).resources]
            seen["view"] = await ada.read_resource("ui://ada/runs/leaderboard.html")
        async with Client(_stdio(home, "--token", home.tokens["bo"]), mode=mode) as bo:
            seen["viewer"] = await bo.call_tool("command", {"name": "log_run", "args": RUN})
        return seen

    seen = anyio.run(main)
    assert seen["tools"] == seen["ada tools"] == TOOL_NAMES
    assert ok(seen["owner status"])[0].startswith("club/runs v1")
    said, data = ok(seen["log"])
    assert said.startswith("log_run: wrote 1 entity in ada/runs")
    said, data = ok(seen["board"])
    assert data["rows"][0]["created"]["by"]["name"] == "ada"
    assert data["rows"][0]["jog"]["miles"] == 5
    assert refused(seen["ambiguous"]) == (
        "log_run is a command of ada/runs and club/runs — say which app"
    )
    assert "ui://ada/runs/leaderboard.html" in seen["views"]
    assert "<base href=" in seen["view"].contents[0].text
    assert refused(seen["viewer"]) == (
        "you can read this app but not change it — its owner can make you an editor"
    )


@pytest.mark.processes
def test_pasture_mcp_with_a_bad_token_says_why_and_exits(home: Home) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pasture", "mcp", "--token", "not-a-token"],
        env=server_env(home.path),
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert done.stderr.strip()


# -- streamable HTTP -----------------------------------------------------------
@dataclass
class Served:
    url: str
    home: Home


@pytest.fixture
def served(home: Home) -> Iterator[Served]:
    with running_server(home.path) as url:
        yield Served(url, home)


def _http(served: Served, token: str | None, mode: str) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = streamable_http_client(
        f"{served.url}/mcp", http_client=httpx2.AsyncClient(headers=headers, timeout=30)
    )
    return Client(transport, mode=mode)


@pytest.mark.processes
@pytest.mark.parametrize("mode", MODES)
def test_mcp_over_http_names_the_caller_by_bearer_token(served: Served, mode: str) -> None:
    tokens = served.home.tokens

    async def main() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for who, token in (("ada", tokens["ada"]), ("bo", tokens["bo"])):
            async with _http(served, token, mode) as client:
                seen[f"{who} tools"] = [t.model_dump() for t in (await client.list_tools()).tools]
                seen[f"{who} commands"] = await client.call_tool("commands", {})
                seen[f"{who} log"] = await client.call_tool(
                    "command", {"name": "log_run", "args": RUN, "app": "ada/runs"}
                )
                seen[f"{who} views"] = [r.uri for r in (await client.list_resources()).resources]
                seen["protocol"] = client.protocol_version
        async with _http(served, tokens["ada"], mode) as client:
            seen["board"] = await client.call_tool(
                "command", {"name": "leaderboard", "args": {}, "app": "ada/runs"}
            )
            seen["view"] = await client.read_resource("ui://ada/runs/leaderboard.html")
            with pytest.raises(MCPError) as error:
                await client.read_resource("ui://ada/runs/style.css")
            seen["no resource"] = error.value.error.message
        try:  # signed out, a client is told to sign in before anything
            async with _http(served, None, mode) as client:
                await client.list_tools()
        except BaseException as raised:
            seen["nobody"] = _mcp_error(raised).error.message
        return seen

    seen = anyio.run(main)
    assert seen["protocol"] == ("2026-07-28" if mode == "auto" else "2025-11-25")
    assert [t["name"] for t in seen["ada tools"]] == TOOL_NAMES
    assert seen["ada tools"] == seen["bo tools"]
    listing, _ = ok(seen["ada commands"])
    assert "## ada/runs" in listing and "## club/runs" in listing
    assert seen["nobody"].startswith("sign in first: this server's MCP takes an OAuth sign-in")
    assert ok(seen["ada log"])[0].startswith("log_run: wrote 1 entity in ada/runs")
    assert refused(seen["bo log"]) == (
        "you can read this app but not change it — its owner can make you an editor"
    )
    rows = ok(seen["board"])[1]["rows"]
    assert [row["created"]["by"]["name"] for row in rows] == ["ada"]
    assert "ui://ada/runs/leaderboard.html" in seen["ada views"]
    text = seen["view"].contents[0].text
    # `pasture serve` on loopback gives each app an origin of its own, under localhost.
    app = Origins(served.url, "localhost").url("ada", "runs")
    assert f'<base href="{app}"' in text
    assert seen["view"].contents[0].meta["ui"]["csp"]["resourceDomains"] == [app]
    assert seen["no resource"].startswith("no resource")


@pytest.mark.processes
@pytest.mark.parametrize("mode", MODES)
def test_a_bad_token_is_refused_with_the_services_sentence(served: Served, mode: str) -> None:
    with pytest.raises(Exception) as refusal:
        served.home.club.service.caller_for_token("not-a-token")
    sentence = str(refusal.value)

    async def main() -> str:
        try:
            async with _http(served, "not-a-token", mode) as client:
                await client.list_tools()
        except BaseException as raised:  # the client's task group wraps what it raises
            return _mcp_error(raised).error.message
        raise AssertionError("a bad token was let in")

    assert anyio.run(main) == sentence

    answer = httpx.post(
        f"{served.url}/mcp",
        headers={
            "Authorization": "Bearer not-a-token",
            "Accept": "application/json, text/event-stream",
        },
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        timeout=60,
    )
    assert answer.status_code == 401
    assert answer.json()["error"]["message"] == sentence
    metadata = f'resource_metadata="{served.url}/.well-known/oauth-protected-resource/mcp"'
    assert answer.headers["www-authenticate"].startswith(f"Bearer {metadata}")
    assert 'error="invalid_token"' in answer.headers["www-authenticate"]
    signed_out = httpx.post(
        f"{served.url}/mcp",
        headers={"Accept": "application/json, text/event-stream"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        timeout=60,
    )
    assert signed_out.status_code == 401
    assert signed_out.headers["www-authenticate"] == f"Bearer {metadata}"
    described = httpx.get(
        f"{served.url}/.well-known/oauth-protected-resource/mcp", timeout=60
    ).json()
    assert described["resource"] == f"{served.url}/mcp"
    assert described["authorization_servers"] == [f"{served.url}/"] or described[
        "authorization_servers"
    ] == [served.url]


def _mcp_error(raised: BaseException) -> MCPError:
    while isinstance(raised, BaseExceptionGroup):
        raised = raised.exceptions[0]
    assert isinstance(raised, MCPError), raised
    return raised


def _post(served: Served, **headers: str) -> httpx.Response:
    body: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    token = f"Bearer {served.home.tokens['ada']}"
    return httpx.post(
        f"{served.url}/mcp",
        headers={
            "Accept": "application/json, text/event-stream",
            "Authorization": token,
            **headers,
        },
        json=body,
        timeout=60,
    )


@pytest.mark.processes
def test_host_and_origin_are_checked_and_loopback_is_allowed(served: Served) -> None:
    assert _post(served).status_code == 200
    assert _post(served, Origin=served.url).status_code == 200
    assert _post(served, Origin="http://localhost:5173").status_code == 200
    assert _post(served, Host="localhost:1234").status_code == 200
    assert _post(served, Host="evil.example").status_code == 421
    assert _post(served, Origin="https://evil.example").status_code == 403


@pytest.mark.processes
def test_stateless_any_request_is_answered_without_a_session(served: Served) -> None:
    # Straight to tools/call, no initialize first: what a second process behind a balancer sees.
    answer = httpx.post(
        f"{served.url}/mcp",
        headers={
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {served.home.tokens['ada']}",
            "MCP-Protocol-Version": "2025-11-25",
        },
        json={
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "commands", "arguments": {"app": "ada/runs"}},
        },
        timeout=60,
    )
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/json")
    assert "mcp-session-id" not in answer.headers
    result = types.CallToolResult.model_validate(answer.json()["result"])
    assert ok(result)[0].startswith("## ada/runs")
