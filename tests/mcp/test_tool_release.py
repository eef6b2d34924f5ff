"""The fixed tool list and its releases: a deploy changes nobody's tools; a client that
listed the tools of an earlier release of pasture is told, once, on its next call —
`notifications/tools/list_changed` and a line on the reply — in memory, over stdio's
handshake and the newest protocol, and against a real `pasture serve` over HTTP (a
restart is the new release); and the handshake promises only what each transport carries."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client
from mcp_talk import TOOL_NAMES, Club, in_memory, set_up_club

from helpers.mcp_answers import ok
from helpers.processes import running_server
from mcp import Client
from pasture.mcp import build_server
from pasture.mcp._tools import CHANGED, RELEASE
from pasture.platform.db.tool_lists import client_of
from pasture.platform.service import Service

EARLIER = "0123456789abcdef"  # the release an earlier pasture listed


def as_if_listed_earlier(home: Path, client: str) -> None:
    """What the database holds once the client listed the tools of an earlier release."""
    url = os.environ.get("PASTURE_DATABASE_URL")
    if url:
        import psycopg

        with psycopg.connect(url, options="-c search_path=pasture") as pg:
            done = pg.execute(
                "UPDATE tool_lists SET release = %s WHERE client = %s", (EARLIER, client)
            )
            assert done.rowcount == 1
        return
    with sqlite3.connect(home / "platform.db") as db:
        db.execute("UPDATE tool_lists SET release = ? WHERE client = ?", (EARLIER, client))
        assert db.execute("SELECT changes()").fetchone()[0] == 1


async def first_event(subscription: AsyncIterable[object]) -> object:
    """The first notice a listen stream carries (a deadline only so a silent one fails)."""
    with anyio.fail_after(60):
        async for event in subscription:
            return event
    raise AssertionError("the listen stream ended with no notice")


def lines(result: types.CallToolResult) -> list[str]:
    return [b.text for b in result.content if isinstance(b, types.TextContent)]


@pytest.fixture
def home(tmp_path: Path, database: str) -> Iterator[Path]:
    service = Service(tmp_path / "home")
    set_up_club(service)
    service.close()
    yield tmp_path / "home"


def ada_of(service: Service) -> Any:
    return service.caller_for_token(service.new_token(service.local_owner(), "ada's", user="ada"))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_client_that_listed_an_earlier_release_is_told_once(home: Path, mode: str) -> None:
    service = Service(home)
    ada = ada_of(service)

    async def lists(client: Client) -> list[str]:
        return [t.name for t in (await client.list_tools()).tools]

    assert in_memory(service, ada, mode, lists) == TOOL_NAMES
    service.close()
    as_if_listed_earlier(home, client_of(ada) or "")

    service = Service(home)  # the new release starts
    heard: list[IncomingMessage] = []

    async def calls(client: Client) -> list[list[str]]:
        said = [lines(await client.call_tool("status", {})) for _ in range(2)]
        await anyio.sleep(0.05)
        return said

    if mode == "legacy":
        first, second = in_memory(service, ada, mode, calls, heard=heard)
        changed = [m for m in heard if isinstance(m, types.ToolListChangedNotification)]
        assert len(changed) == 1
    else:
        first, second, events = _listening(service, ada)
        assert [type(e).__name__ for e in events] == ["ToolsListChanged"]
    # The notice and a line on the next reply, and then never again.
    assert first[-1] == CHANGED and len(first) == 2
    assert CHANGED not in second and len(second) == 1
    service.close()


def _listening(service: Service, caller: Any) -> tuple[list[str], list[str], list[object]]:
    async def main() -> tuple[list[str], list[str], list[object]]:
        server = build_server(service, lambda: caller)
        events: list[object] = []
        async with (
            Client(server, mode="auto") as client,
            client.listen(tools_list_changed=True) as subscription,
        ):
            first = lines(await client.call_tool("status", {}))
            events.append(await first_event(subscription))
            second = lines(await client.call_tool("status", {}))
        return first, second, events

    return anyio.run(main)


def test_a_deploy_or_a_client_that_never_listed_hears_nothing(home: Path) -> None:
    service = Service(home)
    ada = ada_of(service)
    heard: list[IncomingMessage] = []

    async def talk(client: Client) -> tuple[list[str], list[str], list[str]]:
        never = lines(await client.call_tool("status", {}))  # never listed: nothing to tell
        before = [t.name for t in (await client.list_tools()).tools]
        files = {"index.html": "<!doctype html><title>Notes</title>"}
        ok(await client.call_tool("app_deploy", {"files": files, "app": "notes"}))
        after = [t.name for t in (await client.list_tools()).tools]
        assert before == after == TOOL_NAMES
        return never, lines(await client.call_tool("status", {})), after

    never, later, _ = in_memory(service, ada, "legacy", talk, heard=heard)
    assert CHANGED not in never and CHANGED not in later
    assert not [m for m in heard if isinstance(m, types.ToolListChangedNotification)]
    service.close()


def test_the_handshake_promises_what_each_transport_carries(club: Club) -> None:
    async def capabilities(client: Client) -> types.ServerCapabilities:
        return client.server_capabilities

    # In memory and over stdio the connection lives on: both notices can reach it.
    said = in_memory(club.service, club.ada, "legacy", capabilities)
    assert said.tools is not None and said.tools.list_changed is True
    assert said.resources is not None and said.resources.list_changed is True


# -- over HTTP, against a real pasture serve ------------------------------------------------
def _http(url: str, token: str, mode: str, heard: list[IncomingMessage]) -> Client:
    async def handler(message: IncomingMessage) -> None:
        heard.append(message)

    transport = streamable_http_client(
        f"{url}/mcp",
        http_client=httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30),
    )
    return Client(transport, mode=mode, message_handler=handler)


@pytest.mark.processes
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_over_http_a_restart_with_a_new_release_tells_the_client(home: Path, mode: str) -> None:
    service = Service(home)
    token = service.new_token(service.local_owner(), "ada's", user="ada")
    client = client_of(service.caller_for_token(token)) or ""
    service.close()
    heard: list[IncomingMessage] = []

    async def listing(url: str) -> tuple[list[str], types.ServerCapabilities]:
        async with _http(url, token, mode, heard) as mcp:
            return [t.name for t in (await mcp.list_tools()).tools], mcp.server_capabilities

    with running_server(home) as url:
        names, promised = anyio.run(listing, url)
    assert names == TOOL_NAMES
    # Over HTTP a release's notice rides the reply (an event stream), a deploy's the client's
    # own stream (tests/mcp/test_http_changes.py); no view is followed but on a listen stream.
    assert promised.tools is not None and promised.tools.list_changed is True
    assert promised.resources is not None and promised.resources.list_changed is True
    assert promised.resources.subscribe is (mode != "legacy")
    as_if_listed_earlier(home, client)

    async def legacy(url: str) -> tuple[list[str], list[str]]:
        async with _http(url, token, mode, heard) as mcp:
            first = lines(await mcp.call_tool("status", {}))
            return first, lines(await mcp.call_tool("status", {}))

    async def newest(url: str) -> tuple[list[str], list[str], list[object]]:
        events: list[object] = []
        async with (
            _http(url, token, mode, heard) as mcp,
            mcp.listen(tools_list_changed=True) as subscription,
        ):
            first = lines(await mcp.call_tool("status", {}))
            events.append(await first_event(subscription))
            return first, lines(await mcp.call_tool("status", {})), events

    with running_server(home) as url:  # the new release
        if mode == "legacy":
            first, second = anyio.run(legacy, url)
            changed = [m for m in heard if isinstance(m, types.ToolListChangedNotification)]
            assert len(changed) == 1
        else:
            first, second, events = anyio.run(newest, url)
            assert [type(e).__name__ for e in events] == ["ToolsListChanged"]
    assert first[-1] == CHANGED and CHANGED not in second


@pytest.mark.processes
def test_over_http_a_listen_stream_hears_a_deploy(home: Path) -> None:
    service = Service(home)
    token = service.new_token(service.local_owner(), "ada's", user="ada")
    service.close()

    async def main(url: str) -> list[object]:
        events: list[object] = []
        async with (
            _http(url, token, "auto", []) as mcp,
            mcp.listen(resources_list_changed=True) as subscription,
        ):
            files = {"index.html": "<!doctype html><title>Notes</title>"}
            ok(await mcp.call_tool("app_deploy", {"files": files, "app": "notes"}))
            events.append(await first_event(subscription))
        return events

    with running_server(home) as url:
        [event] = anyio.run(main, url)
    assert type(event).__name__ == "ResourcesListChanged"


def test_the_release_names_this_tool_list() -> None:
    assert len(RELEASE) == 16 and RELEASE != EARLIER
