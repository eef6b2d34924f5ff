"""Live pages in Chromium, against real `pasture serve` processes sharing one PostgreSQL
database: the run club's page, subscribed on server A, shows a run an agent logs over
MCP through server B, as it stays open; a viewer taken out of the space is sent no more
of a private app's rows; a page's subscription lives through its server restarting."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client

from helpers import needs
from helpers.browser import board_drawn, chromium, in_chromium
from helpers.club import RUNS
from helpers.databases import fresh_database
from helpers.mcp_answers import ok
from helpers.processes import PASTURE, Pasture, free_port, server_env, wait_until_up
from mcp import Client

pytestmark = in_chromium

SHOWN = 60_000  # ms: a deadline only, as how soon a page shows a write depends on the machine
QUIET = 1_000  # ms: how long a page is watched for a row it must not show


@pytest.fixture
def shared(pg_url: str) -> str:
    """The one PostgreSQL database every server of a test shares."""
    return fresh_database(pg_url)


@contextmanager
def server(home: Path, database: str, port: int | None = None) -> Iterator[str]:
    """`pasture serve` on `port` (else a free one), on the shared database, until the block
    ends: stopped as a signal stops it."""
    port = port or free_port()
    env = server_env(home, PASTURE_USER="ada", PASTURE_DATABASE_URL=database)
    process = subprocess.Popen(
        [*PASTURE, "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(
            url, process, lambda: process.stderr.read().decode() if process.stderr else ""
        )
        yield url
    finally:
        process.terminate()
        assert process.wait(timeout=60) is not None


def sign_in_code(pasture: Pasture, user: str | None = None) -> str:
    """A one-time sign-in link's code (`pasture signin`), for the owner or `user`."""
    made = pasture("signin", "--json", *(["--user", user] if user else []))
    assert made.returncode == 0, made.stderr
    return str(json.loads(made.stdout)["link"]).rpartition("link=")[2]


def open_board(browser: Any, url: str, code: str, app: str = "ada/runs") -> Any:
    """A tab signed in by a sign-in link's `code`, on the run club's page at `app`."""
    page = browser.new_context().new_page()
    page.goto(f"{url}/signin?link={code}")
    page.wait_for_url(f"{url}/")
    # signed in on the app's own origin too (`pasture serve` on loopback gives it one)
    page.goto(f"{url}/signin/app?app={app}&next=/")
    board_drawn(page)
    return page


def log_run_over_mcp(url: str, token: str, who: str, miles: float, app: str = "ada/runs") -> None:
    """An agent's call: the `command` tool over streamable HTTP, the SDK's own client."""

    async def main() -> None:
        transport = streamable_http_client(
            f"{url}/mcp",
            http_client=httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {token}"}, timeout=30
            ),
        )
        async with Client(transport) as client:
            args = {"who": who, "miles": miles, "at": "2026-09-01"}
            ok(await client.call_tool("command", {"name": "log_run", "args": args, "app": app}))

    # In a thread of its own: Playwright's synchronous API holds this thread's event loop.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(anyio.run, main).result()


@pytest.mark.processes
def test_a_run_logged_over_mcp_on_one_server_appears_on_a_page_of_another(
    tmp_path: Path, shared: str
) -> None:
    pasture = Pasture(tmp_path / "a", PASTURE_USER="ada", PASTURE_DATABASE_URL=shared)
    assert pasture("deploy", str(RUNS), "--app", "runs").returncode == 0
    token = pasture("token", "new").stdout.split()[0]
    sync_api = needs.playwright()
    with (
        server(tmp_path / "a", shared) as a,
        server(tmp_path / "b", shared) as b,
        chromium() as browser,
    ):
        page = open_board(browser, a, sign_in_code(pasture))
        log_run_over_mcp(b, token, "Grace", 4.5)
        sync_api.expect(page.locator("#board")).to_contain_text("Grace — 4.5 miles", timeout=SHOWN)
        sync_api.expect(page.locator("#totals")).to_contain_text("Grace — 4.5 miles", timeout=SHOWN)


@pytest.mark.processes
def test_a_viewer_taken_out_of_the_space_sees_no_more_of_a_private_app(
    tmp_path: Path, shared: str
) -> None:
    pasture = Pasture(tmp_path / "a", PASTURE_USER="ada", PASTURE_DATABASE_URL=shared)
    made = pasture("deploy", str(RUNS), "--app", "private-runs", "--access", "private")
    assert made.returncode == 0, made.stderr
    ada = pasture("token", "new").stdout.split()[0]
    assert pasture("user", "new", "cy").returncode == 0
    assert pasture("member", "add", "ada", "cy", "viewer").returncode == 0
    sync_api = needs.playwright()
    with (
        server(tmp_path / "a", shared) as a,
        server(tmp_path / "b", shared) as b,
        chromium() as browser,
    ):
        page = open_board(browser, a, sign_in_code(pasture, "cy"), "ada/private-runs")
        log_run_over_mcp(b, ada, "Before", 1, "ada/private-runs")
        sync_api.expect(page.locator("#board")).to_contain_text("Before — 1 miles", timeout=SHOWN)

        out = pasture("member", "remove", "ada", "cy")
        assert out.returncode == 0, out.stderr
        # The page is told, in the words a query would now get.
        sync_api.expect(page.locator("#said")).to_contain_text("no app", timeout=SHOWN)
        log_run_over_mcp(b, ada, "After", 2, "ada/private-runs")
        page.wait_for_timeout(QUIET)
        assert "After" not in page.locator("#board").inner_text()


@pytest.mark.processes
def test_a_subscription_lives_through_its_server_restarting(tmp_path: Path, shared: str) -> None:
    pasture = Pasture(tmp_path / "a", PASTURE_USER="ada", PASTURE_DATABASE_URL=shared)
    assert pasture("deploy", str(RUNS), "--app", "runs").returncode == 0
    token = pasture("token", "new").stdout.split()[0]
    sync_api = needs.playwright()
    port = free_port()
    with chromium() as browser, server(tmp_path / "b", shared) as b:
        with server(tmp_path / "a", shared, port) as a:
            page = open_board(browser, a, sign_in_code(pasture))
        log_run_over_mcp(b, token, "Meanwhile", 2)  # while A is down
        with server(tmp_path / "a", shared, port):
            sync_api.expect(page.locator("#board")).to_contain_text(
                "Meanwhile — 2 miles", timeout=SHOWN
            )
            log_run_over_mcp(b, token, "Later", 3)
            sync_api.expect(page.locator("#board")).to_contain_text(
                "Later — 3 miles", timeout=SHOWN
            )
