"""examples/todos over MCP: its tagged handlers are commands an agent lists and runs with
`command`, as the person the agent acts for; the page's own handler is no agent's."""

from __future__ import annotations

import json
from typing import Any

from mcp_talk import MODES, Club, in_memory, refused

from helpers.club import TODOS
from helpers.mcp_answers import ok
from mcp import Client


def test_an_agent_lists_and_marks_its_persons_todos(club: Club) -> None:
    service, owner = club.service, club.owner
    at = f"{owner.name}/todos"
    service.deploy(owner, TODOS, app="todos")
    todo = service.call_handler(owner, at, "add_todo", {"text": "file taxes"}).data["result"]

    for mode in MODES:

        async def talk(client: Client) -> list[Any]:
            return [
                await client.call_tool("commands", {"app": at}),
                await client.call_tool("command", {"name": "todos", "args": {}, "app": at}),
                await client.call_tool(
                    "command",
                    {"name": "set_todo_done", "args": {"todo_id": todo["id"], "done": True}},
                ),
                await client.call_tool(
                    "command", {"name": "add_todo", "args": {"text": "x"}, "app": at}
                ),
                await client.call_tool(
                    "command", {"name": "set_todo_done", "args": {"todo_id": "nope"}, "app": at}
                ),
            ]

        listing, listed, done, hidden, wrong = in_memory(service, owner, mode, talk)
        text, data = ok(listing)
        assert [c["name"] for c in data["commands"]] == ["todos", "set_todo_done", "clear_done"]
        assert "add_todo" not in text
        said, data = ok(listed)
        assert [t["text"] for t in data["result"]] == ["file taxes"]
        assert json.loads(said) == data["result"]  # a handler's JSON is its text, said once
        said, data = ok(done)
        assert data == {"result": {"id": todo["id"], "done": True}}
        assert json.loads(said) == data["result"]
        assert refused(hidden).startswith("no command add_todo")
        assert refused(wrong) == "todo_id matches the pattern ^[0-9a-f]{16}$; done is required"
