"""WebMCP follows the app: an open tab's tools change as the app's commands do, no reload.

In Debian's Chromium with WebMCP on, against a real uvicorn with an apps domain: a
deploy that adds a command, drops one and rewords another changes the tab's tools to
match; a rollback brings the old ones back; a worker that registers a command from
another's `run`, and removes it again, adds and takes back that tool; a person taken
out of the space is offered none. First, in-process, the stream the page follows:
`./api/tools/follow` answers `./api/tools`' body as an event, and its tools' text.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import httpx
from test_web_browser import Served, served_apart
from web_site import Site

from helpers.browser import board_drawn, chromium, in_chromium
from helpers.club import EXAMPLES
from helpers.databases import IN_A_BROWSER, sqlite_only
from pasture.mcp import text_of
from pasture.result import Result

__all__ = ["served_apart"]  # test_web_browser's real server, as a fixture here

RUNS_TOOLS = ["leaderboard", "log_run", "since"]


# -- in-process ----------------------------------------------------------------------------


def test_a_webmcp_call_answers_the_text_an_mcp_tool_carries(site: Site) -> None:
    client = site.client(site.ada_token)
    call = {"name": "leaderboard", "args": {}}
    plain = client.post("/ada/runs/api/command", json=call).json()
    assert set(plain) == {"text", "data"}  # a page's own call: the Result as it is
    by_tool = client.post(
        "/ada/runs/api/command", json=call, headers={"X-Pasture-Door": "webmcp"}
    ).json()
    assert by_tool["tool_text"] == text_of(Result(by_tool["text"], by_tool["data"]))
    sentence, data = by_tool["tool_text"].split("\n")
    assert sentence == by_tool["text"]
    assert json.loads(data) == by_tool["data"]


# -- in Chromium ---------------------------------------------------------------------------


def _tab(browser: Any, served: Served, app: str, problems: list[str]) -> Any:
    """A tab signed in as the server's owner on `app`'s own origin."""
    service = served.service
    page = browser.new_context().new_page()
    page.set_default_timeout(30_000)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("console", lambda m: _console(m, problems))
    page.goto(f"{served.url}/signin?link={service.sign_in_link(service.local_owner())}")
    page.wait_for_url(f"{served.url}/")
    page.goto(f"{served.url}/signin/app?app={app}&next=/")
    page.wait_for_url(served.app_url(*app.split("/")))
    page.evaluate("window.stillHere = true")  # gone if the page were loaded again
    return page


def _console(message: Any, problems: list[str]) -> None:
    """Console errors, but for the favicon the browser asks for by itself."""
    at = str(message.location.get("url", ""))
    if message.type == "error" and not at.endswith("/favicon.ico"):
        problems.append(f"{message.text} at {at}")


def _tools_become(
    page: Any, names: list[str], described: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """The tab's tools, once their names are `names` and those `described` say so (a
    minute at most)."""
    for _ in range(600):
        tools = sorted(page.webmcp.tools(), key=lambda t: t["name"])
        said = {t["name"]: t["description"] for t in tools}
        if list(said) == names and all(said[k] == v for k, v in (described or {}).items()):
            return tools
        page.wait_for_timeout(100)
    raise AssertionError(f"the tab offers {page.webmcp.tools()}")


def _runs_v2(tmp_path: Path) -> Path:
    """The run club with `since` gone, `fastest` new, and `log_run` said anew."""
    folder = tmp_path / "runs"
    shutil.copytree(EXAMPLES / "runs", folder)
    tools = json.loads((folder / "tools.json").read_text())
    del tools["since"]
    tools["log_run"]["description"] = "Log a run, any distance"
    tools["fastest"] = {
        "description": "Runs of ten miles or more",
        "input": {},
        "query": ".jog!&.jog.miles>=10",
    }
    (folder / "tools.json").write_text(json.dumps(tools))
    return folder


@in_chromium
@sqlite_only(IN_A_BROWSER)
def test_an_open_tabs_tools_follow_deploys_and_rollbacks(
    served_apart: Served, tmp_path: Path
) -> None:
    served = served_apart
    service = served.service
    ada = service.local_owner()
    problems: list[str] = []
    with chromium(webmcp=True) as browser:
        page = _tab(browser, served, "ada/runs", problems)
        board_drawn(page)
        first = _tools_become(page, RUNS_TOOLS)
        assert first[1]["description"] == "Log a run for the club leaderboard"

        service.deploy(ada, _runs_v2(tmp_path), space="ada", app="runs")  # v2
        # the new one offered, the one gone taken back, the reworded one offered anew
        tools = _tools_become(
            page, ["fastest", "leaderboard", "log_run"], {"log_run": "Log a run, any distance"}
        )
        assert tools[0]["description"] == "Runs of ten miles or more"
        assert tools[0]["annotations"] == {"readOnly": True}
        service.run_command(ada, "log_run", {"who": "Ada", "miles": 12, "at": "2026-09-01"})
        fastest = page.webmcp.call_tool("fastest", {})
        assert [r["jog"]["who"] for r in fastest["structuredContent"]["rows"]] == ["Ada"]

        service.rollback(ada, "ada/runs", 1)
        back = _tools_become(page, RUNS_TOOLS, {"log_run": "Log a run for the club leaderboard"})
        assert back == first
        since = page.webmcp.call_tool("since", {"since": "2026-08-01"})
        assert "isError" not in since
        assert page.evaluate("window.stillHere") is True  # never reloaded
    assert problems == []


# A shop whose closing command is registered by opening it, and removed by closing it.
SHOP = """
def setup(app):
    held = {}

    def open_shop(args, ctx):
        if "close" not in held:
            held["close"] = app.register(
                "shop close", description="Close the shop", annotations={}, run=close_shop
            )
        return {"text": "open", "data": {}}

    def close_shop(args, ctx):
        held.pop("close")()
        return {"text": "closed", "data": {}}

    app.register("shop open", description="Open the shop", annotations={}, run=open_shop)
"""


@in_chromium
@sqlite_only(IN_A_BROWSER)
def test_an_open_tabs_tools_follow_a_worker_registering_and_removing(
    served_apart: Served,
) -> None:
    served = served_apart
    service = served.service
    ada = service.local_owner()
    service.trust_space(ada, "ada", True)
    shop = {"index.html": "<!doctype html><title>Shop</title><p>A shop</p>", "worker.py": SHOP}
    service.deploy(ada, shop, space="ada", app="shop")
    problems: list[str] = []
    with chromium(webmcp=True) as browser:
        page = _tab(browser, served, "ada/shop", problems)
        _tools_become(page, ["shop_open"])

        opened = page.webmcp.call_tool("shop_open", {})
        assert opened["content"][0]["text"] == "open"
        [close, _] = _tools_become(page, ["shop_close", "shop_open"])
        assert close["description"] == "Close the shop"

        closed = page.webmcp.call_tool("shop_close", {})
        assert closed["content"][0]["text"] == "closed"
        _tools_become(page, ["shop_open"])

        service.run_command(ada, "shop_open", {})  # through another door: the tab follows
        _tools_become(page, ["shop_close", "shop_open"])
        assert page.evaluate("window.stillHere") is True
    assert problems == []


@in_chromium
@sqlite_only(IN_A_BROWSER)
def test_a_person_taken_out_of_the_space_is_offered_no_tools(served_apart: Served) -> None:
    served = served_apart
    service = served.service
    ada = service.local_owner()
    cy = service.people.new_user(ada, "cy")
    service.add_member(ada, "ada", "cy", "viewer")
    service.deploy(ada, EXAMPLES / "runs", space="ada", app="runs", access="private")
    problems: list[str] = []
    with chromium(webmcp=True) as browser:
        page = browser.new_context().new_page()
        page.set_default_timeout(30_000)
        page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
        warned: list[str] = []
        page.on("console", lambda m: warned.append(m.text) if m.type == "warning" else None)
        page.goto(f"{served.url}/signin?link={service.sign_in_link(cy)}")
        page.wait_for_url(f"{served.url}/")
        page.goto(f"{served.url}/signin/app?app=ada/runs&next=/")
        board_drawn(page)
        _tools_become(page, RUNS_TOOLS)

        service.remove_member(ada, "ada", "cy")
        _tools_become(page, [])
        for _ in range(300):
            if warned:
                break
            page.wait_for_timeout(100)
        assert warned and warned[0].startswith("WebMCP: this app's commands are not offered: ")
    assert problems == []


@sqlite_only(IN_A_BROWSER)
def test_the_stream_of_tools_answers_the_listing_then_follows_a_deploy(
    served_apart: Served, tmp_path: Path
) -> None:
    """The stream itself, read with httpx from the app's own origin."""
    served = served_apart
    service = served.service
    ada = service.local_owner()
    token = service.new_token(ada)
    origin = served.app_url("ada", "runs")
    host = origin.split("//", 1)[1].rstrip("/")
    headers = {"Authorization": f"Bearer {token}", "Host": host, "Accept": "text/event-stream"}
    listing = service.listing.list_commands(ada, "ada/runs", via_web=True).data["commands"]
    with (
        httpx.Client(timeout=30) as client,
        client.stream("GET", f"{served.url}/api/tools/follow", headers=headers) as stream,
    ):
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        events = _events(stream.iter_lines())
        first = next(events)
        assert first["event"] == "tools"
        assert first["data"] == {"commands": listing}
        service.deploy(ada, _runs_v2(tmp_path), space="ada", app="runs")
        second = next(events)
        assert second["event"] == "tools"
        names = [c["name"] for c in second["data"]["commands"]]
        assert "fastest" in names and "since" not in names
        assert second["id"] != first["id"]


def _events(lines: Any) -> Any:
    """Each event of a Server-Sent Events stream: its event, id and data (comments skipped)."""
    event: dict[str, Any] = {}
    for line in lines:
        if not line:
            if "data" in event:
                yield event
            event = {}
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(": ")
            event[name] = json.loads(value) if name == "data" else value
