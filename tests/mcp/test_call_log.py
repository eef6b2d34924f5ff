"""Each tool call told in its client's log (`pasture.mcp._call_log`): `notifications/message`
on the call's own channel, at or above the level the client set (`logging/setLevel`, the
handshake generation) or asked for with the call (`_meta`, the newest) — in memory over
the SDK's client, and over HTTP, where a reply that is an event stream carries them and
one in JSON carries nothing but itself."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp_talk import Club, set_up_club

from helpers.processes import running_server
from mcp import Client
from pasture.client_asks import Level
from pasture.mcp import build_server
from pasture.platform.service import Service

Heard = list[tuple[str, Any]]

REFUSED = "command nope refused: no command nope"


async def _calls(client: Client, *, streamed: bool = False) -> None:
    """A command that answers, and one that is refused (each with a progress token, so
    over HTTP its reply is an event stream, where `streamed`)."""

    async def progress(_done: float, _total: float | None, _message: str | None) -> None:
        return None

    callback = progress if streamed else None
    await client.call_tool(
        "command", {"name": "leaderboard", "app": "ada/runs"}, progress_callback=callback
    )
    await client.call_tool(
        "command", {"name": "nope", "app": "ada/runs"}, progress_callback=callback
    )


def _levels(heard: Heard) -> list[str]:
    return [level for level, _ in heard]


def _in_memory(club: Club, mode: str, set_to: Level | None, ask: Level | None) -> Heard:
    heard: Heard = []

    async def log(params: types.LoggingMessageNotificationParams) -> None:
        heard.append((params.level, params.data))

    async def main() -> None:
        server = build_server(club.service, lambda: club.ada)
        async with Client(server, mode=mode, logging_callback=log, log_level=ask) as client:
            if set_to is not None:
                await client.session.set_logging_level(set_to)
            await _calls(client)

    anyio.run(main)
    return heard


@pytest.mark.filterwarnings("ignore:The logging capability")
def test_the_handshake_generation_hears_from_the_level_it_set(club: Club) -> None:
    every = _in_memory(club, "legacy", None, None)
    assert _levels(every) == ["debug", "info", "debug", "warning"]
    assert every[0][1] == 'command leaderboard called with {"name":"leaderboard","app":"ada/runs"}'
    assert str(every[1][1]).startswith("command leaderboard: ")
    assert str(every[3][1]).startswith(REFUSED)
    assert _levels(_in_memory(club, "legacy", "info", None)) == ["info", "warning"]
    assert _levels(_in_memory(club, "legacy", "warning", None)) == ["warning"]
    assert _levels(_in_memory(club, "legacy", "error", None)) == []


def test_the_newest_hears_what_each_call_asks_for(club: Club) -> None:
    assert _levels(_in_memory(club, "auto", None, None)) == []  # asked for none
    assert _levels(_in_memory(club, "auto", None, "info")) == ["info", "warning"]
    assert _levels(_in_memory(club, "auto", None, "debug")) == ["debug", "info", "debug", "warning"]
    assert _levels(_in_memory(club, "auto", None, "warning")) == ["warning"]


@pytest.fixture
def home(tmp_path: Path, database: str) -> Iterator[tuple[Path, str]]:
    path = tmp_path / "home"
    service = Service(path)
    club = set_up_club(service)
    token = service.new_token(club.ada)
    service.close()
    yield path, token


@pytest.mark.processes
@pytest.mark.filterwarnings("ignore:The logging capability")
def test_over_http_a_streamed_reply_carries_its_log(home: tuple[Path, str]) -> None:
    path, token = home

    async def heard_by(url: str, mode: str, set_to: Level | None, ask: Level | None) -> Heard:
        heard: Heard = []

        async def log(params: types.LoggingMessageNotificationParams) -> None:
            heard.append((params.level, params.data))

        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        transport = streamable_http_client(f"{url}/mcp", http_client=http)
        async with Client(transport, mode=mode, logging_callback=log, log_level=ask) as client:
            if set_to is not None:
                await client.session.set_logging_level(set_to)
            await _calls(client, streamed=True)
            heard.append(("json", None))
            await _calls(client)  # answered in JSON: no channel for a log line
        return heard

    async def main(url: str) -> dict[str, Heard]:
        return {
            "legacy": await heard_by(url, "legacy", None, None),
            "legacy warning": await heard_by(url, "legacy", "warning", None),
            "auto info": await heard_by(url, "auto", None, "info"),
            "auto": await heard_by(url, "auto", None, None),
        }

    with running_server(path) as url:
        heard = anyio.run(main, url)
    assert _levels(heard["legacy"]) == ["debug", "info", "debug", "warning", "json"]
    assert _levels(heard["legacy warning"]) == ["warning", "json"]
    assert str(heard["legacy warning"][0][1]).startswith(REFUSED)
    assert _levels(heard["auto info"]) == ["info", "warning", "json"]
    assert _levels(heard["auto"]) == ["json"]
