"""The OpenAI Agents SDK's MCP client (`openai-agents`), as an agent built on it is given
pasture, with no model: a real `pasture serve` over streamable HTTP with a bearer token,
and `pasture mcp` over stdio, on both databases.

By default (`use_structured_content=False`) the SDK hands a model a tool's `content`
alone, never its `structuredContent`: what a model would be given is what the SDK's own
function tool for an MCP tool answers (`MCPUtil.to_function_tool(…).on_invoke_tool`, as
its runner calls it). That text holds the rows. The SDK also checks the arguments against
a tool's required ones before it calls (`command` with a name alone), and its MCP session
checks every answer's structured content against the tool's `outputSchema`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from agents.mcp import MCPServer, MCPServerStdio, MCPServerStreamableHttp, MCPUtil
from agents.tool_context import ToolContext
from mcp_talk import TOOL_NAMES, set_up_club

from helpers.processes import running_server, server_env
from pasture.errors import Refused
from pasture.platform.service import Service

pytestmark = pytest.mark.processes

RUNS = [
    {"who": "Ada", "miles": 5, "at": "2026-09-01"},
    {"who": "Bo", "miles": 3, "at": "2026-09-02"},
]


@dataclass
class Home:
    path: Path
    token: str
    refusal: str  # what the store refuses `.nope!` with


@pytest.fixture
def home(tmp_path: Path, database: str) -> Iterator[Home]:
    path = tmp_path / "home"
    service = Service(path)
    club = set_up_club(service)
    token = service.new_token(club.ada)
    with pytest.raises(Refused) as refused:
        service.graph.query(club.ada, "ada/runs", ".nope!")
    service.close()
    yield Home(path, token, refused.value.sentence)


async def _model_text(server: MCPServer, name: str, arguments: dict[str, Any]) -> str:
    """The text the SDK would give a model for this call: its function tool's answer."""
    tool = next(t for t in await server.list_tools() if t.name == name)
    function = MCPUtil.to_function_tool(tool, server, convert_schemas_to_strict=False)
    said = json.dumps(arguments)
    context = ToolContext(context=None, tool_name=name, tool_call_id="call-1", tool_arguments=said)
    output = await function.on_invoke_tool(context, said)
    assert isinstance(output, dict) and output["type"] == "text", output
    text = output["text"]
    assert isinstance(text, str)
    return text


async def _talk(server: MCPServer) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with server:
        tools = await server.list_tools()
        seen["tools"] = [(t.name, t.output_schema is not None) for t in tools]
        for run in RUNS:
            seen.setdefault("logged", []).append(
                await _model_text(
                    server, "command", {"name": "log_run", "args": run, "app": "ada/runs"}
                )
            )
        # A command of no arguments, called with its name alone.
        seen["board"] = await _model_text(
            server, "command", {"name": "leaderboard", "app": "ada/runs"}
        )
        seen["query"] = await _model_text(
            server, "graph_query", {"app": "ada/runs", "filter": ".jog!&sort=-jog.miles"}
        )
        seen["count"] = await _model_text(
            server, "graph_query", {"app": "ada/runs", "filter": ".jog!&.count!"}
        )
        seen["refused"] = await _model_text(
            server, "graph_query", {"app": "ada/runs", "filter": ".nope!"}
        )
    return seen


def _rows(text: str, sentence: str) -> list[dict[str, Any]]:
    said, _, data = text.rpartition("\n")
    assert said == sentence, text
    rows: list[dict[str, Any]] = json.loads(data)["rows"]
    return rows


def _holds_the_rows(home: Home, seen: dict[str, Any]) -> None:
    assert seen["tools"] == [(name, True) for name in TOOL_NAMES]
    eids = []
    for text in seen["logged"]:
        said, _, data = text.rpartition("\n")
        assert said.startswith("log_run: wrote 1 entity in ada/runs: $run=")
        eids.append(json.loads(data)["aliases"]["$run"])
    board = _rows(seen["board"], "leaderboard: 2 rows in ada/runs")
    assert [(r["entity"]["eid"], r["jog"]) for r in board] == list(zip(eids, RUNS, strict=True))
    assert {r["created"]["by"]["name"] for r in board} == {"ada"}
    query = _rows(seen["query"], "2 rows in ada/runs")
    assert [r["jog"]["miles"] for r in query] == [5, 3]
    assert seen["count"] == '2 entities in ada/runs\n{"count":2}'
    assert seen["refused"] == home.refusal  # a refusal is its sentence alone


def test_over_http_the_text_a_model_gets_holds_the_rows(home: Home) -> None:
    with running_server(home.path) as url:
        server = MCPServerStreamableHttp(
            {"url": f"{url}/mcp", "headers": {"Authorization": f"Bearer {home.token}"}}
        )
        seen = anyio.run(_talk, server)
    _holds_the_rows(home, seen)


def test_over_stdio_the_text_a_model_gets_holds_the_rows(home: Home) -> None:
    server = MCPServerStdio(
        {
            "command": sys.executable,
            "args": ["-m", "pasture", "mcp", "--token", home.token],
            "env": server_env(home.path),
        },
        # The SDK waits 5 seconds for an answer by default; a loaded machine starting Python
        # may take longer, and nothing here is about how fast it is.
        client_session_timeout_seconds=120,
    )
    _holds_the_rows(home, anyio.run(_talk, server))


def test_every_tool_answers_what_its_output_schema_says(home: Home) -> None:
    """Each of the nine tools through the SDK's session, which checks each answer's
    structured content against the tool's outputSchema and raises when it does not fit."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("commands", {}),
        ("command", {"name": "log_run", "args": RUNS[0], "app": "ada/runs"}),
        ("command", {"name": "leaderboard", "app": "ada/runs"}),
        ("status", {}),
        ("graph_schema", {"app": "ada/runs"}),
        ("graph_query", {"app": "ada/runs", "filter": ".tally=jog.who"}),
        ("graph_apply", {"app": "ada/runs", "bundles": [{"jog": {"who": "Cy", "miles": 1}}]}),
        ("app_list", {}),
        ("app_files", {"app": "ada/runs", "path": "vocab.json"}),
        ("app_deploy", {"files": {"index.html": "<title>Notes</title>"}, "app": "notes"}),
    ]

    async def talk(server: MCPServer) -> list[Any]:
        async with server:
            return [await server.call_tool(name, arguments) for name, arguments in calls]

    with running_server(home.path) as url:
        server = MCPServerStreamableHttp(
            {"url": f"{url}/mcp", "headers": {"Authorization": f"Bearer {home.token}"}}
        )
        answers = anyio.run(talk, server)
    for (name, _), answer in zip(calls, answers, strict=True):
        assert not answer.is_error, (name, answer.content)
        assert isinstance(answer.structured_content, dict), name
    assert {name for name, _ in calls} == set(TOOL_NAMES)
    assert answers[5].structured_content == {"tally": {"Ada": 1}}
