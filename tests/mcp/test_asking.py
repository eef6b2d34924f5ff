"""Over MCP, a command that is hard to undo runs only once the person says yes.

examples/todos' `clear_done` is `consequential`. A client that can ask its person (the
SDK's client given an elicitation callback, which stands for the person) is asked the
question first: inside the call on the older protocol, as an `input_required` answer on
the newest. Yes runs it; no, a closed question or a client that failed to ask runs
nothing. A client that cannot ask gets the sentence that says it was not run, what it
would run and how to confirm, and the command runs only when the call carries
`"confirm": true`. In memory, as a `pasture mcp` child over stdio, and over `pasture
serve`'s stateless HTTP, where the older protocol cannot ask.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.context import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_talk import MODES, in_memory, refused

from helpers.club import TODOS
from helpers.mcp_answers import ok
from helpers.processes import running_server, server_env
from mcp import Client, StdioServerParameters
from pasture import Registry, Result
from pasture.asking import CANCELLED
from pasture.caller import Caller
from pasture.mcp import build_registry_server
from pasture.platform.service import Service

AT = "ada/todos"
QUESTION = (
    "An agent is about to run Clear done todos (clear_done) on ada/todos, which is hard to "
    "undo. Run it?"
)
CLEAR = {"name": "clear_done", "args": {}}
UNCONFIRMED = (
    "clear_done is hard to undo, so it was not run: it would run Clear done todos "
    "(clear_done) on ada/todos with no arguments. Ask your person whether to run it, and "
    "only once they say yes call it again with the same arguments and confirm: true."
)


@dataclass
class Todos:
    service: Service
    ada: Caller
    home: Path
    token: str

    def texts(self) -> list[str]:
        rows = self.service.call_handler(self.ada, AT, "todos", {}).data["result"]
        return sorted(row["text"] for row in rows)


@pytest.fixture
def todos(tmp_path: Path, database: str) -> Iterator[Todos]:
    home = tmp_path / "home"
    service = Service(home)
    owner = service.local_owner()
    ada = service.people.new_user(owner, "ada")
    service.trust_space(owner, "ada")  # examples/todos is code
    service.deploy(ada, TODOS, space="ada", app="todos")
    for text in ("buy milk", "call bo"):
        added = service.call_handler(ada, AT, "add_todo", {"text": text}).data["result"]
        if text == "buy milk":
            service.run_command(ada, "set_todo_done", {"todo_id": added["id"], "done": True}, AT)
    try:
        yield Todos(service, ada, home, service.new_token(ada))
    finally:
        service.close()


@dataclass
class Person:
    """Stands at the client: answers each question it is asked with `action`."""

    action: str
    asked: list[str] = field(default_factory=list)

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.asked.append(params.message)
        if self.action == "fails":
            return types.ErrorData(code=types.INTERNAL_ERROR, message="the client broke")
        content: dict[str, Any] | None = {} if self.action == "accept" else None
        return types.ElicitResult(action=self.action, content=content)  # type: ignore[arg-type]


def _cleared_or_cancelled(todos: Todos, result: types.CallToolResult, action: str) -> None:
    if action == "accept":
        said, data = ok(result)
        assert said.startswith("cleared 1 done todo") and data == {"cleared": 1}
        assert todos.texts() == ["call bo"]
    else:
        assert refused(result) == (UNCONFIRMED if action == "unconfirmed" else CANCELLED)
        assert todos.texts() == ["buy milk", "call bo"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["accept", "decline", "cancel"])
def test_the_person_is_asked_before_a_command_that_is_hard_to_undo(
    todos: Todos, mode: str, action: str
) -> None:
    person = Person(action)

    async def talk(client: Client) -> types.CallToolResult:
        return await client.call_tool("command", CLEAR)

    result = in_memory(todos.service, todos.ada, mode, talk, elicitation_callback=person)
    assert person.asked == [QUESTION]
    _cleared_or_cancelled(todos, result, action)


@pytest.mark.parametrize("mode", MODES)
def test_the_question_names_the_arguments_and_an_ordinary_command_asks_nothing(
    todos: Todos, mode: str
) -> None:
    person = Person("accept")
    milk = todos.service.call_handler(todos.ada, AT, "todos", {}).data["result"][-1]

    async def talk(client: Client) -> list[types.CallToolResult]:
        return [
            await client.call_tool("command", {"name": "todos", "args": {}}),
            await client.call_tool(
                "command",
                {"name": "set_todo_done", "args": {"todo_id": milk["id"], "done": False}},
            ),
            await client.call_tool("command", {**CLEAR, "args": {"note": "é"}}),
        ]

    answers = in_memory(todos.service, todos.ada, mode, talk, elicitation_callback=person)
    assert [a.is_error for a in answers[:2]] == [False, False]
    assert person.asked == [QUESTION.replace(" on ada/todos", ' on ada/todos with {"note": "é"}')]


@pytest.mark.parametrize("mode", MODES)
def test_a_client_that_fails_to_ask_runs_nothing(todos: Todos, mode: str) -> None:
    person = Person("fails")

    async def talk(client: Client) -> types.CallToolResult | str:
        try:
            return await client.call_tool("command", CLEAR)
        except MCPError as error:  # the newest protocol: the client's own loop gives up
            return error.error.message

    result = in_memory(todos.service, todos.ada, mode, talk, elicitation_callback=person)
    assert person.asked == [QUESTION]
    if isinstance(result, str):
        assert result == "the client broke"
    else:
        assert refused(result) == CANCELLED
    assert todos.texts() == ["buy milk", "call bo"]


@pytest.mark.parametrize("mode", MODES)
def test_a_client_that_cannot_ask_is_told_so_and_runs_it_only_with_confirm(
    todos: Todos, mode: str
) -> None:
    async def talk(client: Client) -> tuple[list[types.CallToolResult], types.ListToolsResult]:
        answers = [
            await client.call_tool("command", CLEAR),
            await client.call_tool("command", {**CLEAR, "confirm": False}),
            await client.call_tool("command", {**CLEAR, "args": {"note": "é"}}),
            await client.call_tool("command", {**CLEAR, "confirm": "yes"}),
        ]
        before = todos.texts()
        answers.append(await client.call_tool("command", {**CLEAR, "confirm": True}))
        assert before == ["buy milk", "call bo"]
        return answers, await client.list_tools()

    (unasked, no, noted, wrong, confirmed), tools = in_memory(todos.service, todos.ada, mode, talk)
    assert refused(unasked) == refused(no) == UNCONFIRMED
    assert refused(noted) == UNCONFIRMED.replace("with no arguments", 'with note "é"')
    assert refused(wrong) == (
        "confirm is true, once the person said yes to a command that is hard to undo, or left out"
    )
    _cleared_or_cancelled(todos, confirmed, "accept")

    # What the agent is told of it: the tool's description, and `confirm` itself.
    command = next(tool for tool in tools.tools if tool.name == "command")
    assert command.annotations is not None and command.annotations.destructive_hint is True
    assert (
        command.description is not None
        and (
            "then ask your person, and only once they say yes call `command` again with the same "
            "`name` and `args` and `confirm: true`. Never set `confirm` without their yes."
        )
        in command.description
    )
    assert command.input_schema["properties"]["confirm"]["type"] == "boolean"
    assert "never on your own" in command.input_schema["properties"]["confirm"]["description"]
    assert "confirm" not in command.input_schema.get("required", [])


@pytest.mark.parametrize("mode", MODES)
def test_a_client_that_can_ask_is_asked_whatever_the_call_says(todos: Todos, mode: str) -> None:
    """`confirm` is for where nobody could be asked: a client that can ask is asked."""
    person = Person("decline")

    async def talk(client: Client) -> types.CallToolResult:
        return await client.call_tool("command", {**CLEAR, "confirm": True})

    result = in_memory(todos.service, todos.ada, mode, talk, elicitation_callback=person)
    assert person.asked == [QUESTION]
    _cleared_or_cancelled(todos, result, "decline")


def test_an_answer_sent_unasked_to_another_question_is_not_a_yes(todos: Todos) -> None:
    """The answer goes with the call that asked: a retry's `input_responses` holding a no,
    or something that is not an answer to a question, runs nothing."""
    server_said: list[Any] = []

    async def talk(client: Client) -> None:
        for responses in (
            {"confirm": types.ElicitResult(action="decline")},
            {"confirm": types.ListRootsResult(roots=[])},
            {"other": types.ElicitResult(action="accept", content={})},
        ):
            server_said.append(
                await client.session.call_tool(
                    "command", CLEAR, input_responses=responses, allow_input_required=True
                )
            )

    person = Person("accept")  # it can ask, though this call drives the rounds itself
    in_memory(todos.service, todos.ada, "auto", talk, elicitation_callback=person)
    assert person.asked == []
    assert refused(server_said[0]) == CANCELLED
    assert refused(server_said[1]) == CANCELLED
    assert isinstance(server_said[2], types.InputRequiredResult)  # asked, as if unanswered
    assert todos.texts() == ["buy milk", "call bo"]


def checkout() -> tuple[Registry, list[str]]:
    """A registry of one command that is hard to undo, and what it paid with."""
    registry, paid = Registry(), []
    registry.register(
        "cart checkout",
        title="Pay for the cart",
        description="Pay",
        input={
            "type": "object",
            "properties": {"card": {"type": "string"}},
            "additionalProperties": False,
        },
        annotations={"consequential": True},
        run=lambda args, ctx: paid.append(args["card"]) or Result("paid", {}),
    )
    registry.register(
        "cart status", description="What is in it", annotations={"readOnly": True}, run=print
    )
    return registry, paid


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["accept", "decline"])
def test_a_registry_served_on_its_own_asks_too(mode: str, action: str) -> None:
    registry, paid = checkout()
    person = Person(action)

    async def main() -> types.CallToolResult:
        async with Client(
            build_registry_server(registry), mode=mode, elicitation_callback=person
        ) as c:
            # Asked whatever the call says, as the connector asks.
            return await c.call_tool("cart_checkout", {"card": "visa", "confirm": True})

    result = anyio.run(main)
    assert person.asked == [
        'An agent is about to run Pay for the cart (cart_checkout) with {"card": "visa"}, '
        "which is hard to undo. Run it?"
    ]
    if action == "accept":
        assert ok(result)[0] == "paid" and paid == ["visa"]
    else:
        assert refused(result) == CANCELLED and paid == []


@pytest.mark.parametrize("mode", MODES)
def test_a_registry_served_to_a_client_that_cannot_ask_runs_it_only_with_confirm(
    mode: str,
) -> None:
    registry, paid = checkout()

    async def main() -> tuple[list[types.CallToolResult], types.ListToolsResult]:
        async with Client(build_registry_server(registry), mode=mode) as c:
            answers = [await c.call_tool("cart_checkout", {"card": "visa"})]
            answers.append(await c.call_tool("cart_checkout", {"card": "visa", "confirm": 1}))
            assert paid == []
            answers.append(await c.call_tool("cart_checkout", {"card": "visa", "confirm": True}))
            return answers, await c.list_tools()

    (unasked, wrong, confirmed), tools = anyio.run(main)
    assert refused(unasked) == (
        "cart_checkout is hard to undo, so it was not run: it would run Pay for the cart "
        '(cart_checkout) with card "visa". Ask your person whether to run it, and only once '
        "they say yes call it again with the same arguments and confirm: true."
    )
    assert refused(wrong) == (
        "confirm is true, once the person said yes to a command that is hard to undo, or left out"
    )
    assert ok(confirmed)[0].startswith("paid") and paid == ["visa"]
    # The command's own tool takes `confirm`, and only the one that is hard to undo does.
    by_name = {tool.name: tool for tool in tools.tools}
    schema = by_name["cart_checkout"].input_schema
    assert set(schema["properties"]) == {"card", "confirm"}
    assert "never on your own" in schema["properties"]["confirm"]["description"]
    assert "confirm" not in by_name["cart_status"].input_schema.get("properties", {})


# -- real processes --------------------------------------------------------------------


@pytest.mark.processes
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["accept", "decline", "unconfirmed", "confirmed"])
def test_over_stdio_the_person_is_asked(todos: Todos, mode: str, action: str) -> None:
    """Asked where the client can ask; where it cannot (`unconfirmed`, `confirmed`), run
    only with the call's `confirm`."""
    person = Person(action)
    child = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pasture", "mcp", "--token", todos.token],
        env=server_env(todos.home),
    )
    asks = action in ("accept", "decline")

    async def main() -> types.CallToolResult:
        async with Client(
            child, mode=mode, elicitation_callback=person if asks else None
        ) as client:
            return await client.call_tool(
                "command", {**CLEAR, "confirm": True} if action == "confirmed" else CLEAR
            )

    result = anyio.run(main)
    assert person.asked == ([QUESTION] if asks else [])
    _cleared_or_cancelled(todos, result, "accept" if action == "confirmed" else action)


@pytest.mark.processes
@pytest.mark.parametrize(("mode", "asks"), [("auto", True), ("legacy", False)])
def test_over_stateless_http_the_newest_protocol_asks(todos: Todos, mode: str, asks: bool) -> None:
    """The newest protocol asks by answering `input_required`, which needs nothing kept on
    the server; the older one would need the call's stream to carry a request back and its
    answer to reach the same call, which stateless HTTP cannot: it is not run, and the
    answer says how to confirm it — and with `confirm` it runs."""
    person = Person("decline")
    with running_server(todos.home) as url:

        async def main(call: dict[str, Any]) -> types.CallToolResult:
            transport = streamable_http_client(
                f"{url}/mcp",
                http_client=httpx2.AsyncClient(
                    headers={"Authorization": f"Bearer {todos.token}"}, timeout=30
                ),
            )
            async with Client(transport, mode=mode, elicitation_callback=person) as client:
                return await client.call_tool("command", call)

        result = anyio.run(main, CLEAR)
        assert person.asked == ([QUESTION] if asks else [])
        _cleared_or_cancelled(todos, result, "decline" if asks else "unconfirmed")
        if not asks:
            _cleared_or_cancelled(todos, anyio.run(main, {**CLEAR, "confirm": True}), "accept")


def test_a_fault_while_asking_runs_nothing_and_tells_no_internal(
    todos: Todos, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the internals: /srv/secret/path")

    monkeypatch.setattr(todos.service.listing, "resolve", broken)

    async def talk(client: Client) -> types.CallToolResult:
        return await client.call_tool("command", CLEAR)

    result = in_memory(
        todos.service, todos.ada, "auto", talk, elicitation_callback=Person("accept")
    )
    sentence = refused(result)
    fault = sentence.rpartition(" ")[2]  # the fault's id, which the server's log names too
    assert sentence == (
        "command failed on the server; nothing about it is your mistake — try again, and if it "
        f"keeps failing tell the person who runs this pasture, naming fault {fault}"
    )
    assert re.fullmatch(r"[0-9a-f]{8}", fault)
    assert todos.texts() == ["buy milk", "call bo"]
