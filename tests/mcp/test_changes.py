"""A deploy made by another process reaches MCP clients of every server on the database
(pasture.mcp._changes): a listen stream of the newest protocol over HTTP, and a stdio
connection of the handshake generation that follows a view — on SQLite and PostgreSQL."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client

from helpers.club import RUNS
from helpers.processes import Pasture, running_server, server_env
from helpers.streams import Stream
from mcp import Client, StdioServerParameters

VIEW = "ui://ada/runs/leaderboard.html"

# resources/subscribe is the handshake generation's, which is what these connections speak.
pytestmark = pytest.mark.filterwarnings("ignore:resources/subscribe is removed")


@pytest.fixture
def env(database: str) -> dict[str, str]:
    """Who the processes act as (and `database`, the one they share, is in their
    environment through helpers.processes)."""
    return (
        {"PASTURE_USER": "ada", "PASTURE_DATABASE_URL": database}
        if database
        else {"PASTURE_USER": "ada"}
    )


def _deployed(home: Path, env: dict[str, str]) -> Pasture:
    pasture = Pasture(home, **env)
    done = pasture("deploy", str(RUNS), "--app", "runs")
    assert done.returncode == 0, done.stderr
    return pasture


def _over_http(url: str, token: str) -> Client:
    """The official SDK's client of `url`'s MCP over streamable HTTP, signed in by `token`."""
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return Client(streamable_http_client(f"{url}/mcp", http_client=client), mode="auto")


@pytest.mark.processes
def test_a_listen_stream_hears_a_deploy_made_by_another_process(
    tmp_path: Path, env: dict[str, str]
) -> None:
    home = tmp_path / "home"
    pasture = _deployed(home, env)
    token = pasture("token", "new").stdout.split()[0]

    async def main(url: str) -> list[object]:
        events: list[object] = []
        async with (
            _over_http(url, token) as client,
            client.listen(resources_list_changed=True, resource_subscriptions=[VIEW]) as heard,
        ):
            again = await anyio.to_thread.run_sync(
                lambda: pasture("deploy", str(RUNS), "--app", "runs")
            )
            assert again.returncode == 0, again.stderr
            with anyio.fail_after(60):  # a deadline only, so that a silent stream fails
                async for event in heard:
                    events.append(event)
                    if len(events) == 2:
                        break
        return events

    with running_server(home, **env) as url:
        events = anyio.run(main, url)
    assert sorted(type(e).__name__ for e in events) == ["ResourceUpdated", "ResourcesListChanged"]
    [updated] = [e for e in events if type(e).__name__ == "ResourceUpdated"]
    assert str(updated.uri) == VIEW


def _follow_then_deploy(
    home: Path, env: dict[str, str], pasture: Pasture, *options: str, view: bool = False
) -> list[IncomingMessage]:
    """`pasture mcp` (with `options`) over stdio, in the handshake generation, following the
    run club's view; the app deployed again by another process. What the connection heard
    until it heard the list change (and, with `view`, the view's own notice, which comes
    after it), and half a second more."""
    heard: list[IncomingMessage] = []
    awaited: list[type] = [types.ResourceListChangedNotification]
    if view:
        awaited.append(types.ResourceUpdatedNotification)

    async def handler(message: IncomingMessage) -> None:
        heard.append(message)

    async def main() -> None:
        stdio = StdioServerParameters(
            command=sys.executable,
            args=["-m", "pasture", "mcp", *options],
            env=server_env(home, **env),
        )
        async with Client(stdio, mode="legacy", message_handler=handler) as client:
            await client.list_tools()
            await client.subscribe_resource(VIEW)
            again = await anyio.to_thread.run_sync(
                lambda: pasture("deploy", str(RUNS), "--app", "runs")
            )
            assert again.returncode == 0, again.stderr
            with anyio.fail_after(60):  # a deadline only, so that a silent connection fails
                while not all(any(isinstance(m, kind) for m in heard) for kind in awaited):
                    await anyio.sleep(0.05)
            await anyio.sleep(0.5)  # a view's notice, were one to come, comes with it

    anyio.run(main)
    return heard


@pytest.mark.processes
def test_a_stdio_connection_following_a_view_hears_a_deploy_made_by_another_process(
    tmp_path: Path, env: dict[str, str]
) -> None:
    home = tmp_path / "home"
    heard = _follow_then_deploy(home, env, _deployed(home, env), view=True)
    [updated] = [m for m in heard if isinstance(m, types.ResourceUpdatedNotification)]
    assert str(updated.params.uri) == VIEW


@pytest.mark.processes
def test_a_view_another_person_cannot_read_is_not_said_to_change(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """bo follows ada's view by its address, but is in none of her spaces: he hears that the
    list may have changed (as anyone does), never that her view did."""
    home = tmp_path / "home"
    pasture = _deployed(home, env)
    assert pasture("user", "new", "bo").returncode == 0
    bo = pasture("token", "new", "--user", "bo").stdout.split()[0]
    heard = _follow_then_deploy(home, env, pasture, "--token", bo)
    assert any(isinstance(m, types.ResourceListChangedNotification) for m in heard)
    assert not [m for m in heard if isinstance(m, types.ResourceUpdatedNotification)]


@pytest.mark.processes
def test_a_listen_stream_hears_nothing_of_a_view_its_person_cannot_read(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The newest protocol's listen stream, as the handshake generation's follow: bo names
    ada's view, and hears that lists may have changed, never that her view did — not even
    that there is such a view."""
    home = tmp_path / "home"
    pasture = _deployed(home, env)
    ada = pasture("token", "new").stdout.split()[0]
    assert pasture("user", "new", "bo").returncode == 0
    bo = pasture("token", "new", "--user", "bo").stdout.split()[0]

    async def hear(
        url: str, token: str, heard: list[object], ready: anyio.Event, done: anyio.Event
    ) -> None:
        subscriptions = [VIEW, "ui://ada/runs/nothing-here.html"]
        async with (
            _over_http(url, token) as client,
            client.listen(resources_list_changed=True, resource_subscriptions=subscriptions) as s,
            anyio.create_task_group() as group,
        ):

            async def follow() -> None:
                async for event in s:
                    heard.append(event)

            group.start_soon(follow)
            ready.set()
            await done.wait()
            group.cancel_scope.cancel()

    async def main(url: str) -> dict[str, list[object]]:
        heard: dict[str, list[object]] = {"ada": [], "bo": []}
        done = anyio.Event()
        async with anyio.create_task_group() as group:
            readies = []
            for who, token in (("ada", ada), ("bo", bo)):
                ready = anyio.Event()
                readies.append(ready)
                group.start_soon(hear, url, token, heard[who], ready, done)
            for ready in readies:
                await ready.wait()
            again = await anyio.to_thread.run_sync(
                lambda: pasture("deploy", str(RUNS), "--app", "runs")
            )
            assert again.returncode == 0, again.stderr
            # The deploy's notices, however long the machine takes (a deadline only: what
            # was heard is checked after), and then a second for any more to come.
            with anyio.move_on_after(60):
                while len(heard["ada"]) < 2 or not heard["bo"]:
                    await anyio.sleep(0.05)
            await anyio.sleep(1)
            done.set()
        return heard

    with running_server(home, **env) as url:
        heard = anyio.run(main, url)
    kinds = {who: sorted(type(e).__name__ for e in events) for who, events in heard.items()}
    assert kinds == {
        "ada": ["ResourceUpdated", "ResourcesListChanged"],
        "bo": ["ResourcesListChanged"],
    }


@pytest.mark.processes
def test_a_listen_stream_holds_one_of_its_person_s_places(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Live streams one person may hold open are counted over pages and agents alike."""
    home = tmp_path / "home"
    pasture = _deployed(home, env)
    token = pasture("token", "new").stdout.split()[0]
    auth = {"Authorization": f"Bearer {token}"}
    sentence = (
        "too many live streams open — 1 at most for one person on this server; end one"
        " (a page that watches, an agent that listens), then try again"
    )

    def page(url: str) -> Stream:
        return Stream(f"{url}/ada/runs/api/subscribe", {"filter": ".jog!"}, auth)

    async def main(url: str) -> None:
        async with _over_http(url, token) as client, client.listen(resources_list_changed=True):
            refused = await anyio.to_thread.run_sync(lambda: page(url))
            assert (refused.status, refused.refusal) == (429, {"error": sentence})
            with pytest.raises(BaseException) as second:  # the SDK raises it in a group
                async with (
                    _over_http(url, token) as other,
                    other.listen(resources_list_changed=True),
                ):
                    pass
            assert sentence in _messages(second.value)
        deadline = time.monotonic() + 60  # the place comes back once the client has gone
        while time.monotonic() < deadline:
            opened = await anyio.to_thread.run_sync(lambda: page(url))
            opened.close()
            if opened.status == 200:
                return
            await anyio.sleep(0.05)
        raise AssertionError("the listen stream's place did not come back")

    with running_server(home, "--streams", "1", **env) as url:
        anyio.run(main, url)


def _messages(error: BaseException) -> list[str]:
    """Every message in an exception and the groups it is in."""
    inner = getattr(error, "exceptions", ())
    return [str(getattr(error, "message", error)), *(m for e in inner for m in _messages(e))]
