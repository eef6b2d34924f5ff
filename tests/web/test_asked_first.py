"""A command that is hard to undo, called where nobody can be asked, is not run.

Through a real `pasture serve`: `./api/command` with a bearer token (an agent, or a
page's own script) and MCP's `command` over HTTP from a client that cannot ask its
person. Each answers the one sentence — hard to undo, what it would run, how to
confirm — and writes nothing; the same call with `"confirm": true` runs it. A
command written as code (examples/todos' `clear_done`) and one declared in tools.json
(`"consequential": true`) alike.
"""

from __future__ import annotations

import json
import shutil
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

from helpers.club import RUNS, TODOS
from helpers.mcp_answers import text
from helpers.processes import running_server
from mcp import Client
from pasture.caller import Caller
from pasture.platform.service import Service

pytestmark = pytest.mark.processes

TODOS_AT, RUNS_AT = "ada/todos", "ada/runs"
AGAIN = (
    "Ask your person whether to run it, and only once they say yes call it again with the "
    "same arguments and confirm: true."
)
CLEAR_DONE = (
    "clear_done is hard to undo, so it was not run: it would run Clear done todos "
    f"(clear_done) on ada/todos with no arguments. {AGAIN}"
)
LOG_RUN = (
    'log_run is hard to undo, so it was not run: it would run log_run on ada/runs with who "Bo", '
    f'miles 3 and at "2026-09-02". {AGAIN}'
)
NOT_A_YES = (
    "confirm is true, once the person said yes to a command that is hard to undo, or left out"
)
RUN = {"who": "Bo", "miles": 3, "at": "2026-09-02"}


@dataclass
class Apps:
    service: Service
    ada: Caller
    home: Path
    auth: dict[str, str]

    def todos(self) -> list[str]:
        rows = self.service.call_handler(self.ada, TODOS_AT, "todos", {}).data["result"]
        return sorted(row["text"] for row in rows)

    def runners(self) -> list[str]:
        rows = self.service.graph.query(self.ada, RUNS_AT, ".jog!").data["rows"]
        return [row["jog"]["who"] for row in rows]


@pytest.fixture
def apps(tmp_path: Path, database: str) -> Iterator[Apps]:
    home = tmp_path / "home"
    service = Service(home)
    owner = service.local_owner()
    ada = service.people.new_user(owner, "ada")
    service.trust_space(owner, "ada")  # examples/todos is code
    service.deploy(ada, TODOS, space="ada", app="todos")
    done = service.call_handler(ada, TODOS_AT, "add_todo", {"text": "buy milk"}).data["result"]
    service.run_command(ada, "set_todo_done", {"todo_id": done["id"], "done": True}, TODOS_AT)
    service.call_handler(ada, TODOS_AT, "add_todo", {"text": "call bo"})
    runs = tmp_path / "runs"
    shutil.copytree(RUNS, runs)
    tools = json.loads((runs / "tools.json").read_text())
    tools["log_run"]["consequential"] = True  # declared hard to undo
    (runs / "tools.json").write_text(json.dumps(tools))
    service.deploy(ada, runs, space="ada", app="runs")
    try:
        yield Apps(service, ada, home, {"Authorization": f"Bearer {service.new_token(ada)}"})
    finally:
        service.close()


def test_api_command_runs_it_only_with_the_persons_yes(apps: Apps) -> None:
    with running_server(apps.home) as url:

        def post(at: str, call: dict[str, Any]) -> httpx.Response:
            return httpx.post(f"{url}/{at}/api/command", json=call, headers=apps.auth, timeout=60)

        clear = {"name": "clear_done", "args": {}}
        log = {"name": "log_run", "args": RUN}
        for at, call, sentence in ((TODOS_AT, clear, CLEAR_DONE), (RUNS_AT, log, LOG_RUN)):
            for unasked in (call, {**call, "confirm": False}):
                answer = post(at, unasked)
                assert (answer.status_code, answer.json()) == (400, {"error": sentence})
            wrong = post(at, {**call, "confirm": "yes"})
            assert (wrong.status_code, wrong.json()) == (400, {"error": NOT_A_YES})
        assert apps.todos() == ["buy milk", "call bo"]
        assert apps.runners() == []

        cleared = post(TODOS_AT, {**clear, "confirm": True})
        assert cleared.status_code == 200, cleared.text
        assert cleared.json()["data"] == {"cleared": 1}
        logged = post(RUNS_AT, {**log, "confirm": True})
        assert logged.status_code == 200, logged.text
    assert apps.todos() == ["call bo"]
    assert apps.runners() == ["Bo"]


def test_a_declared_command_over_http_to_a_client_that_cannot_ask(apps: Apps) -> None:
    """The older protocol over stateless HTTP cannot ask: the sentence, then `confirm`."""
    with running_server(apps.home) as url:

        async def main() -> list[types.CallToolResult]:
            transport = streamable_http_client(
                f"{url}/mcp", http_client=httpx2.AsyncClient(headers=apps.auth, timeout=60)
            )
            async with Client(transport, mode="legacy") as client:
                call = {"name": "log_run", "args": RUN, "app": RUNS_AT}
                unasked = await client.call_tool("command", call)
                assert apps.runners() == []
                return [unasked, await client.call_tool("command", {**call, "confirm": True})]

        unasked, confirmed = anyio.run(main)
    assert unasked.is_error and text(unasked) == LOG_RUN
    assert not confirmed.is_error
    assert apps.runners() == ["Bo"]
