"""WebMCP wherever `pasture serve` serves pages, and what it says as it starts.

A real `pasture serve` each time, and Debian's Chromium with WebMCP on:

- with no `--apps-domain`, on loopback (the guide's `pasture serve`): each app on
  an origin of its own under `localhost`, which the browser reaches with no setup,
  and its page offers the app's commands as tools;
- with `--apps-domain` a domain of the person's (here `apps.test`, which Chromium is
  told resolves to loopback, as a wildcard DNS name would): the same;
- sandboxed (`--apps-domain none`): the page's origin is opaque and it offers no
  tools, and both the start and the page's console say why and how to have them.

Served for others (a public URL that is not loopback) with no domain, pages are
sandboxed and the start says so in the same words.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from helpers import needs
from helpers.browser import CHROMIUM, LAUNCH_ARGS, board_drawn, in_chromium
from helpers.club import RUNS, as_user
from helpers.databases import IN_A_BROWSER, sqlite_only
from helpers.processes import PASTURE, free_port, server_env, wait_until_up
from pasture.platform import SANDBOXED_PAGES
from pasture.platform.service import Service

pytestmark = [pytest.mark.processes, sqlite_only(IN_A_BROWSER)]

RUNS_TOOLS = ["leaderboard", "log_run", "since"]


@dataclass
class Started:
    url: str  # the main origin
    said: list[str]  # what it printed as it started: where, then where apps' pages are
    link: str  # a one-time sign-in link of ada's


@pytest.fixture
def home(tmp_path: Path, database: str) -> Path:
    """A data directory with the run club deployed in ada's space."""
    home = tmp_path / "home"
    with as_user("ada"):
        service = Service(home)
        service.deploy(service.local_owner(), RUNS, space="ada", app="runs")
        service.close()
    return home


@contextmanager
def started(home: Path, *options: str) -> Iterator[Started]:
    """`pasture serve` on a free loopback port with `options`, as a person starts it."""
    port = free_port()
    process = subprocess.Popen(
        [*PASTURE, "serve", "--host", "127.0.0.1", "--port", str(port), *options],
        env=server_env(home, PASTURE_USER="ada"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process, lambda: process.stderr.read() if process.stderr else "")
        assert process.stdout is not None
        said = [process.stdout.readline().rstrip("\n") for _ in range(2)]
        with as_user("ada"):
            service = Service(home)
            link = service.sign_in_link(service.local_owner())
            service.close()
        yield Started(url, said, link)
    finally:
        process.terminate()
        process.wait(timeout=60)


@contextmanager
def browser(*args: str) -> Iterator[Any]:
    sync_api = needs.playwright()
    flags = [*LAUNCH_ARGS, "--enable-features=WebMCP", *args]
    with sync_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=flags)
        try:
            yield launched
        finally:
            launched.close()


def _tab(chromium: Any, served: Started, problems: list[str], said: list[str]) -> Any:
    page = chromium.new_context().new_page()
    page.set_default_timeout(30_000)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("console", lambda m: said.append(f"{m.type}: {m.text}"))
    page.goto(f"{served.url}/signin?link={served.link}")
    page.wait_for_url(f"{served.url}/")
    page.goto(f"{served.url}/signin/app?app=ada/runs&next=/")
    board_drawn(page)
    return page


def _offered(page: Any) -> list[str]:
    for _ in range(600):  # a minute at most
        names = sorted(t["name"] for t in page.webmcp.tools())
        if names == RUNS_TOOLS:
            break
        page.wait_for_timeout(100)
    return names


def _uses_the_run_club(page: Any) -> None:
    logged = page.webmcp.call_tool("log_run", {"who": "Ada", "miles": 4, "at": "2026-09-01"})
    assert logged["content"][0]["text"].startswith("log_run: wrote 1 entity in ada/runs")
    board = page.webmcp.call_tool("leaderboard", {})
    assert [r["jog"]["who"] for r in board["structuredContent"]["rows"]] == ["Ada"]


@in_chromium
def test_serve_with_no_domain_on_loopback_gives_each_app_an_origin_and_webmcp(
    home: Path,
) -> None:
    problems: list[str] = []
    with started(home) as served, browser() as chromium:
        port = served.url.rsplit(":", 1)[1]
        assert served.said[0] == f"pasture serving {home} at {served.url}/"
        assert served.said[1] == (
            f"each app on an origin of its own, as http://APP--SPACE.localhost:{port}/"
        )
        page = _tab(chromium, served, problems, [])
        assert page.url == f"http://runs--ada.localhost:{port}/"
        assert page.evaluate("origin") == f"http://runs--ada.localhost:{port}"
        assert _offered(page) == RUNS_TOOLS
        _uses_the_run_club(page)
    assert problems == []


@in_chromium
def test_serve_with_an_apps_domain_gives_each_app_an_origin_and_webmcp(home: Path) -> None:
    """A browser offers WebMCP only to a secure context — HTTPS, or loopback — so a domain
    of one's own is served over HTTPS; here Chromium is told to take the app's origin as
    secure, as it would with the certificate, and that the name resolves to loopback."""
    problems: list[str] = []
    with started(home, "--apps-domain", "apps.test") as served:
        port = served.url.rsplit(":", 1)[1]
        assert served.said[1] == (
            f"each app on an origin of its own, as http://APP--SPACE.apps.test:{port}/ "
            "(over plain HTTP a browser offers WebMCP only on localhost: serve the apps' "
            "origins over HTTPS for agents in the browser)"
        )
        resolve = "--host-resolver-rules=MAP *.apps.test 127.0.0.1"
        secure = f"--unsafely-treat-insecure-origin-as-secure=http://runs--ada.apps.test:{port}"
        with browser(resolve, secure) as chromium:
            page = _tab(chromium, served, problems, [])
            assert page.evaluate("origin") == f"http://runs--ada.apps.test:{port}"
            assert _offered(page) == RUNS_TOOLS
            _uses_the_run_club(page)
    assert problems == []


@in_chromium
def test_a_sandboxed_page_offers_no_tools_and_says_why(home: Path) -> None:
    problems: list[str] = []
    said: list[str] = []
    with started(home, "--apps-domain", "none") as served, browser() as chromium:
        assert served.said[1] == SANDBOXED_PAGES
        page = _tab(chromium, served, problems, said)
        assert page.url == f"{served.url}/ada/runs/"
        assert page.evaluate("origin") == "null"
        assert page.webmcp.tools() == []
        assert f"info: WebMCP: {SANDBOXED_PAGES}" in said
        sync_api = needs.playwright()
        sync_api.expect(page.locator("input[name=who]")).to_have_value("ada")  # it works
    assert problems == []


@pytest.mark.parametrize(
    "options",
    [["--public-url", "http://pasture.example:8000"], ["--apps-domain", "NONE"]],
    ids=["served for others", "none"],
)
def test_served_with_no_apps_domain_off_loopback_it_says_what_a_page_cannot_do(
    home: Path, options: list[str]
) -> None:
    with started(home, *options) as served:
        assert served.said[1] == SANDBOXED_PAGES
        assert "no WebMCP tools" in served.said[1] and "--apps-domain" in served.said[1]
