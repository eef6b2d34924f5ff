"""What the connector advertises is what it serves, over each transport (stdio, streamable
HTTP) in each protocol generation: every method a capability promises answers (none is
"Method not found"), and every one it does not promise is "Method not found", so no client
comes to rely on it. That each stream the `listChanged` flags promise does carry a deploy
is tests/mcp/test_changes.py's and test_http_changes.py's."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_talk import MODES, set_up_club

from helpers.processes import running_server, server_env
from mcp import Client, StdioServerParameters
from pasture.platform.service import Service

VIEW = "ui://ada/runs/leaderboard.html"
TEMPLATE = types.ResourceTemplateReference(uri="ui://{space}/{app}/{file}")
NOT_FOUND = "Method not found"


@dataclass
class Home:
    path: Path
    token: str


@pytest.fixture
def home(tmp_path: Path, database: str) -> Iterator[Home]:
    path = tmp_path / "home"
    service = Service(path)
    club = set_up_club(service)
    token = service.new_token(club.ada)
    service.close()
    yield Home(path, token)


def _client(home: Home, transport: str, mode: str, url: str | None) -> Client:
    if transport == "stdio":
        stdio = StdioServerParameters(
            command=sys.executable,
            args=["-m", "pasture", "mcp", "--token", home.token],
            env=server_env(home.path),
        )
        return Client(stdio, mode=mode)
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {home.token}"}, timeout=30)
    return Client(streamable_http_client(f"{url}/mcp", http_client=http), mode=mode)


async def _answer(ask: Any) -> str:
    """What a request answered: "ok", or its error's message."""
    try:
        await ask
    except MCPError as error:
        return error.error.message
    return "ok"


async def _listens(client: Client, **kinds: Any) -> str:
    try:
        async with client.listen(**kinds) as stream:
            return "ok" if stream.honored is not None else "not honored"
    except MCPError as error:
        return error.error.message


async def _tried(client: Client, legacy: bool) -> dict[str, str]:
    """Every method a capability may promise, and what it answered."""
    tried = {
        "tools/list": await _answer(client.list_tools()),
        "tools/call": await _answer(client.call_tool("status", {})),
        "resources/list": await _answer(client.list_resources()),
        "resources/read": await _answer(client.read_resource(VIEW)),
        "resources/templates/list": await _answer(client.list_resource_templates()),
        "completion/complete": await _answer(
            client.complete(TEMPLATE, {"name": "space", "value": "a"})
        ),
        "prompts/list": await _answer(client.session.list_prompts()),
        "prompts/get": await _answer(client.session.get_prompt("ada_runs")),
    }
    with warnings.catch_warnings():  # the handshake generation's, gone from the newest
        warnings.simplefilter("ignore")
        tried["ping"] = await _answer(client.send_ping())
        if legacy:
            tried["resources/subscribe"] = await _answer(client.session.subscribe_resource(VIEW))
            tried["resources/unsubscribe"] = await _answer(
                client.session.unsubscribe_resource(VIEW)
            )
            tried["logging/setLevel"] = await _answer(client.session.set_logging_level("info"))
    if not legacy:
        tried["subscriptions/listen"] = await _listens(
            client,
            tools_list_changed=True,
            resources_list_changed=True,
            resource_subscriptions=[VIEW],
        )
    return tried


@pytest.mark.processes
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_every_advertised_method_is_served_and_no_other(
    home: Home, transport: str, mode: str
) -> None:
    legacy = mode == "legacy"

    async def main(url: str | None) -> tuple[types.ServerCapabilities, dict[str, str]]:
        async with _client(home, transport, mode, url) as client:
            return client.server_capabilities, await _tried(client, legacy)

    if transport == "http":
        with running_server(home.path) as url:
            capabilities, tried = anyio.run(main, url)
    else:
        capabilities, tried = anyio.run(main, None)

    assert capabilities.tools is not None and capabilities.tools.list_changed
    assert capabilities.resources is not None and capabilities.resources.list_changed
    assert capabilities.completions is not None
    # Each app is a prompt, whose list changes with a deploy, announced where the views'
    # list is; and each call is told in the client's log (the handshake generation's
    # level set by logging/setLevel, the newest's asked for by each request).
    assert capabilities.prompts is not None and capabilities.prompts.list_changed
    assert capabilities.logging is not None
    # Following a view: resources/subscribe where a connection lives on (stdio), the
    # listen stream's resource subscriptions in the newest protocol; neither on stateless
    # HTTP of the handshake generation.
    follows = not (legacy and transport == "http")
    assert capabilities.resources.subscribe is follows

    promised = [
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "completion/complete",
        "prompts/list",
        "prompts/get",
    ]
    if legacy:  # the newest protocol has no ping, nor logging/setLevel
        promised += ["ping", "logging/setLevel"]
    if legacy and follows:
        promised += ["resources/subscribe", "resources/unsubscribe"]
    if not legacy:
        promised += ["subscriptions/listen"]
    assert {method: tried[method] for method in promised} == dict.fromkeys(promised, "ok")
    unpromised = sorted(set(tried) - set(promised))
    assert {m: tried[m] for m in unpromised} == dict.fromkeys(unpromised, NOT_FOUND)
    assert ("ping" in unpromised) is not legacy
