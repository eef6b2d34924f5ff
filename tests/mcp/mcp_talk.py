"""What the connector's tests share: the club, and talking to a connector with the SDK's
own client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import anyio
import mcp_types as types
from mcp.client.session import ElicitationFnT, IncomingMessage

from helpers.club import RUNS
from helpers.mcp_answers import text
from mcp import Client
from pasture.caller import Caller
from pasture.mcp import build_server
from pasture.platform.service import Service

T = TypeVar("T")

BASE_URL = "http://127.0.0.1:8000"


@dataclass
class Club:
    service: Service
    owner: Caller
    ada: Caller
    bo: Caller
    cy: Caller


def set_up_club(service: Service) -> Club:
    owner = service.local_owner()
    ada = service.people.new_user(owner, "ada")
    bo = service.people.new_user(owner, "bo")
    cy = service.people.new_user(owner, "cy")
    service.deploy(ada, RUNS, space="ada", app="runs", title="Run club")
    service.add_member(ada, "ada", "bo", "viewer")
    service.spaces.new_space(owner, "club")
    service.add_member(owner, "club", "ada", "editor")
    service.deploy(owner, RUNS, space="club", app="runs", title="Run club")
    return Club(service, owner, ada, bo, cy)


TOOL_NAMES = [
    "commands",
    "command",
    "status",
    "graph_schema",
    "graph_query",
    "graph_apply",
    "app_list",
    "app_files",
    "app_deploy",
]
MODES = ["legacy", "auto"]


def in_memory(
    service: Service,
    caller: Caller,
    mode: str,
    talk: Callable[[Client], Awaitable[T]],
    *,
    heard: list[IncomingMessage] | None = None,
    elicitation_callback: ElicitationFnT | None = None,
) -> T:
    """Run `talk` against the connector in this process, over the SDK's in-memory client
    (one that can ask its person, given `elicitation_callback`)."""

    async def handler(message: IncomingMessage) -> None:
        if heard is not None:
            heard.append(message)

    async def main() -> T:
        server = build_server(service, lambda: caller)
        async with Client(
            server,
            mode=mode,
            message_handler=handler,
            elicitation_callback=elicitation_callback,
        ) as client:
            return await talk(client)

    return anyio.run(main)


def refused(result: types.CallToolResult) -> str:
    assert result.is_error
    assert result.structured_content is None
    return text(result)
