"""A single JSON request of the handshake generation, answered as one exchange: the same
reply, byte for byte, as the SDK's stateless path gives it (`pasture.web.mcp_exchange`).

Driven through the web door in process (Starlette's TestClient). A request posted with
its length is read whole, so it may be answered as one exchange; the same request posted
in chunks (no length) goes to the SDK's stateless path as ever. Both are asked, and the
two replies compared — for any request hypothesis makes of the methods, tools, ids and
arguments a client may send, well formed or not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp_talk import BASE_URL, Club
from starlette.testclient import TestClient

from pasture.web import create_app
from pasture.web.mcp_exchange import OneExchange

VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", None]  # None: no header (2025-03-26)


class Door:
    """The web door in process, counting the requests answered as one exchange."""

    def __init__(self, club: Club, monkeypatch: pytest.MonkeyPatch) -> None:
        self.exchanged = 0
        answered = OneExchange.answered

        async def counted(self_: OneExchange, *args: Any) -> bool:
            done = await answered(self_, *args)
            self.exchanged += done
            return done

        monkeypatch.setattr(OneExchange, "answered", counted)
        self.client = TestClient(create_app(club.service), base_url=BASE_URL)
        self.token = club.service.new_token(club.ada, "exchange")

    def post(self, body: bytes, headers: dict[str, str], *, whole: bool) -> Any:
        sent = {"Authorization": f"Bearer {self.token}", **headers}
        content: Any = body if whole else iter([body])
        return self.client.post("/mcp", content=content, headers=sent)


@pytest.fixture
def door(club: Club, monkeypatch: pytest.MonkeyPatch) -> Iterator[Door]:
    made = Door(club, monkeypatch)
    with made.client:
        yield made


def _reply(answer: Any) -> tuple[int, str | None, bytes]:
    return answer.status_code, answer.headers.get("content-type"), answer.content


TOOL_CALLS = st.sampled_from(
    [
        {"name": "commands", "arguments": {}},
        {"name": "commands", "arguments": {"app": "ada/runs"}},
        {"name": "command", "arguments": {"name": "leaderboard", "app": "ada/runs"}},
        {"name": "command", "arguments": {"name": "since", "args": {"since": "soon"}}},
        {"name": "command", "arguments": {"name": "no such", "app": "ada/runs"}},
        {"name": "command", "arguments": {}},
        {"name": "command", "arguments": {"name": 7}},
        {"name": "graph_query", "arguments": {"app": "ada/runs", "filter": ".jog!"}},
        {"name": "graph_query", "arguments": {"app": "ada/runs", "filter": ".jog.miles>"}},
        {"name": "graph_schema", "arguments": {"app": "club/runs"}},
        {"name": "app_list", "arguments": {}},
        {"name": "status", "arguments": {}},
        {"name": "no_such_tool", "arguments": {}},
        {"arguments": {}},
        {"name": "commands", "arguments": "not an object"},
    ]
)
REQUESTS = st.one_of(
    st.builds(lambda p: ("tools/call", p), TOOL_CALLS),
    st.sampled_from(
        [
            ("tools/list", {}),
            ("tools/list", None),
            ("resources/list", {}),
            ("resources/templates/list", {}),
            ("resources/read", {"uri": "ui://ada/runs/leaderboard.html"}),
            ("resources/read", {"uri": "ui://nobody/none/x.html"}),
            (
                "completion/complete",
                {
                    "ref": {"type": "ref/resource", "uri": "ui://{space}/{app}/{file}"},
                    "argument": {"name": "space", "value": "a"},
                },
            ),
            ("ping", None),
            ("no/such/method", {}),
            ("prompts/list", {}),
        ]
    ),
)
IDS = st.one_of(st.integers(-(2**53), 2**53), st.text(max_size=12))


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(asked=REQUESTS, request_id=IDS, version=st.sampled_from(VERSIONS))
def test_a_request_answered_as_one_exchange_gets_the_sdk_s_own_reply(
    door: Door, asked: tuple[str, Any], request_id: int | str, version: str | None
) -> None:
    method, params = asked
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    body = json.dumps(message).encode()
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    before = door.exchanged
    theirs = _reply(door.post(body, headers, whole=False))
    assert door.exchanged == before  # posted in chunks: the SDK's, as ever
    ours = _reply(door.post(body, headers, whole=True))
    # (a `commands` call asked before may be answered with the reply kept of it instead)
    if not (method == "tools/call" and params.get("name") == "commands"):
        assert door.exchanged == before + 1
    assert ours == theirs


ELSEWHERE = [
    # (what is posted, headers): each is the SDK's to answer
    (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', {}),
    (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', {}),
    (b'{"jsonrpc":"2.0","id":1,"method":', {}),
    (b'{"jsonrpc":"2.0","id":1,"result":{}}', {}),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"}', {"Accept": "text/html"}),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"}', {"Content-Type": "text/plain"}),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"}', {"Origin": "http://elsewhere.example"}),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"}', {"Host": "elsewhere.example"}),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"}', {"MCP-Protocol-Version": "1999-01-01"}),
]


@pytest.mark.parametrize(("body", "headers"), ELSEWHERE)
def test_what_is_not_one_plain_request_is_left_to_the_sdk(
    door: Door, body: bytes, headers: dict[str, str]
) -> None:
    sent = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
        **headers,
    }
    theirs = _reply(door.post(body, sent, whole=False))
    ours = _reply(door.post(body, sent, whole=True))
    assert door.exchanged == 0
    assert ours == theirs


def test_initialize_is_left_to_the_sdk_and_names_a_session(door: Door) -> None:
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    # as a client opens: no protocol version named yet
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    answer = door.post(json.dumps(hello).encode(), headers, whole=True)
    assert answer.status_code == 200, answer.text
    assert door.exchanged == 0
    assert answer.headers.get("mcp-session-id")
