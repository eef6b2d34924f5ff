"""WebMCP: an app's commands offered to a browser agent by the page a person has open.

In-process first (Starlette's TestClient): `./api/tools` is what `pasture inspect`
prints, `./api/webmcp.js` is a JavaScript module, and every HTML page of an app
loads it exactly once, right after its `<base>`, unless it opts out. Then in
Debian's Chromium with WebMCP turned on, against a real uvicorn: the run club's
page registers `log_run`, `leaderboard` and `since`; an agent's calls run as the
person whose tab it is, and a refusal reaches the agent as the Service's sentence.
Without the flag the page offers nothing and logs nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_web_browser import Served, served, served_apart
from web_site import BASE, Site

from helpers import needs
from helpers.browser import board_drawn, chromium, in_chromium
from helpers.club import CART, EXAMPLES
from helpers.command_line import pasture_main as pasture
from helpers.databases import IN_A_BROWSER, sqlite_only
from helpers.pages import SCRIPT, Tags, modules
from pasture.mcp import text_of
from pasture.platform import SANDBOXED_PAGES
from pasture.platform.nouns import VIEWER_WRITES
from pasture.result import Result

__all__ = ["served", "served_apart"]  # test_web_browser's real servers, as fixtures here


# Pages that try to fool a rewrite that reads HTML as text.
TRICKY = """<!doctype html>
<!-- an old layout: <head><script src="x.js"></script></head> -->
<html lang="en">
<head data-note="<head>">
<title>Tricky &lt;head&gt;</title>
<script>const template = "<head><base href='/elsewhere/'><script>";</script>
</head>
<body><p>&lt;script&gt; is a tag; <code>&lt;head&gt;</code> too.</p></body>
</html>
"""
OPTED_OUT = """<!doctype html>
<html><head><meta name="pasture-webmcp" content="off"><title>Quiet</title></head>
<body>no agents here</body></html>
"""
OWN_BASE = """<!doctype html>
<html><head><base href="https://cdn.example/"><title>Own</title></head><body></body></html>
"""


@pytest.fixture(scope="module")
def tricky(site: Site) -> str:
    """An app of ada's whose pages try to fool the rewrite, with one command."""
    files = {
        "index.html": TRICKY,
        "quiet.html": OPTED_OUT,
        "own.html": OWN_BASE,
        "vocab.json": '{"$defs": {"note": {"properties": {"text": {"type": "string"}}}}}',
    }
    site.service.deploy(site.ada, files, space="ada", app="tricky", access="public")
    return "ada/tricky"


# -- ./api/tools ---------------------------------------------------------------------


def test_tools_lists_the_apps_commands_as_the_listing_does(site: Site) -> None:
    answer = site.client(site.ada_token).get("/ada/runs/api/tools")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    tools = answer.json()
    assert tools == site.service.listing.list_commands(site.ada, "ada/runs").data
    named = {c["name"]: c for c in tools["commands"]}
    assert list(named) == ["log_run", "leaderboard", "plan_run", "add_jog", "find_jog"]
    log_run, leaderboard, plan_run = named["log_run"], named["leaderboard"], named["plan_run"]
    assert log_run == {
        "at": "ada/runs",
        "name": "log_run",
        "title": "Run club",
        "description": "Log a run for the club leaderboard",
        "readOnly": False,
        "input": {
            "type": "object",
            "properties": {"who": {"type": "string"}, "miles": {"type": "number"}},
            "required": ["who", "miles"],
        },
    }
    assert (leaderboard["name"], leaderboard["readOnly"]) == ("leaderboard", True)
    assert (plan_run["name"], plan_run["readOnly"]) == ("plan_run", False)


def test_tools_is_what_pasture_inspect_prints(site: Site) -> None:
    inspected = pasture(site.home, "inspect", "ada/runs", "--json")
    assert inspected.returncode == 0, inspected.stderr
    served = site.client(site.ada_token).get("/ada/runs/api/tools").json()
    assert json.loads(inspected.stdout) == served


def test_tools_of_a_public_app_reach_anyone_the_web_lets_in(site: Site) -> None:
    mine = site.client(site.ada_token).get("/ada/runs/api/tools").json()
    for client in (site.client(), site.client(site.bob_token), site.signed_in("bob")):
        answer = client.get("/ada/runs/api/tools")
        assert answer.status_code == 200
        assert answer.json() == mine


def test_tools_of_a_private_app_are_hidden_from_strangers(site: Site) -> None:
    answer = site.client(site.bob_token).get("/ada/secret/api/tools")
    assert answer.status_code == 404
    assert answer.json() == {"error": "no app ada/secret"}
    assert site.client().get("/ada/secret/api/tools").status_code == 404
    mine = site.client(site.ada_token).get("/ada/secret/api/tools")
    assert [c["name"] for c in mine.json()["commands"]][:3] == [
        "log_run",
        "leaderboard",
        "plan_run",
    ]


def test_tools_of_an_app_without_commands_is_an_empty_list(site: Site, tricky: str) -> None:
    answer = site.client(site.ada_token).get(f"/{tricky}/api/tools")
    assert answer.status_code == 200
    names = [c["name"] for c in answer.json()["commands"]]
    assert names == ["add_note", "find_note"]  # the generated ones of its vocabulary


# -- ./api/webmcp.js ---------------------------------------------------------------------


def test_the_module_is_javascript_that_waits_for_webmcp(site: Site) -> None:
    answer = site.client().get("/ada/runs/api/webmcp.js")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/javascript; charset=utf-8"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert "document?.modelContext" in answer.text
    assert "registerTool" in answer.text
    assert site.client(site.bob_token).get("/ada/secret/api/webmcp.js").status_code == 404


# -- the page loads it ---------------------------------------------------------------------


def test_an_apps_page_loads_the_module_right_after_its_base(site: Site) -> None:
    for path in ("/ada/runs/", "/ada/runs/sub/", "/ada/runs/nohead.html"):
        page = site.client().get(path).text
        assert page.count(SCRIPT) == 1, path
        assert f'<base href="{BASE}/ada/runs/">{SCRIPT}' in page, path


def test_a_page_that_mentions_head_and_script_gets_one_module_in_its_head(
    site: Site, tricky: str
) -> None:
    page = site.client().get(f"/{tricky}/").text
    assert page.count(SCRIPT) == 1
    assert f'<head data-note="<head>"><base href="{BASE}/{tricky}/">{SCRIPT}\n<title>' in page
    tags = [t for t, _ in Tags(page).tags]
    assert tags[:5] == ["html", "head", "base", "script", "title"]
    assert modules(page) == ["./api/webmcp.js"]
    # Nothing else of the page changed.
    assert page.replace(f'<base href="{BASE}/{tricky}/">{SCRIPT}', "") == TRICKY


def test_a_page_can_opt_out(site: Site, tricky: str) -> None:
    page = site.client().get(f"/{tricky}/quiet.html").text
    assert "webmcp.js" not in page
    assert f'<head><base href="{BASE}/{tricky}/"><meta name="pasture-webmcp"' in page


def test_a_page_with_its_own_base_loads_the_module_from_the_apps_address(
    site: Site, tricky: str
) -> None:
    page = site.client().get(f"/{tricky}/own.html").text
    assert page.count("<base ") == 1
    assert modules(page) == [f"{BASE}/{tricky}/api/webmcp.js"]


def test_other_files_and_mcp_views_get_no_module(site: Site) -> None:
    css = site.client().get("/ada/runs/style.css")
    assert "webmcp" not in css.text
    site.service.deploy(site.ada, EXAMPLES / "runs", space="ada", app="club", access="public")
    view = site.service.pages.view(site.ada, "ui://ada/club/leaderboard.html")
    assert b"<base " in view.body
    assert b"webmcp" not in view.body
    assert b"webmcp" in site.client().get("/ada/club/leaderboard.html").content


# -- in a real browser -------------------------------------------------------------------

TOOL_NAMES = ["leaderboard", "log_run", "since"]


def _tab(browser: Any, served: Served, link: str, problems: list[str]) -> Any:
    """A tab signed in by a one-time sign-in link (`/signin?link=…`), on the run club.

    The run club is on its own origin (the server has an apps domain: tools of a
    sandboxed page are no agent's to call); the main origin signs the tab in there.
    """
    page = browser.new_context().new_page()
    page.set_default_timeout(30_000)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("console", lambda m: _console(m, problems))
    page.goto(f"{served.url}/signin?link={link}")
    page.wait_for_url(f"{served.url}/")
    page.goto(f"{served.url}/signin/app?app=ada/runs&next=/")
    page.wait_for_url(served.app_url("ada", "runs"))
    board_drawn(page)
    return page


def _console(message: Any, problems: list[str], kinds: tuple[str, ...] = ("error",)) -> None:
    """Console errors, but the ones the browser logs for a refusal's status or a favicon."""
    if message.type not in kinds:
        return
    at = str(message.location.get("url", ""))
    refused = "status of 400" in message.text or "status of 403" in message.text
    if (at.endswith("/api/command") and refused) or at.endswith("/favicon.ico"):
        return
    problems.append(f"{message.text} at {at}")


def _offered(page: Any) -> list[dict[str, Any]]:
    """The page's tools once it has offered them all (it fetches ./api/tools first), waited
    for a minute at most."""
    for _ in range(600):
        tools: list[dict[str, Any]] = page.webmcp.tools()
        if len(tools) >= len(TOOL_NAMES):
            return sorted(tools, key=lambda t: t["name"])
        page.wait_for_timeout(100)
    return page.webmcp.tools()  # type: ignore[no-any-return]


@in_chromium
@sqlite_only(IN_A_BROWSER)
def test_an_agent_in_the_persons_tab_uses_the_run_club(served_apart: Served) -> None:
    served = served_apart
    service = served.service
    ada = service.local_owner()
    cy = service.people.new_user(ada, "cy")
    service.add_member(ada, "ada", "cy", "viewer")
    problems: list[str] = []
    listing = {
        c["name"]: c for c in service.listing.list_commands(ada, "ada/runs").data["commands"]
    }
    with chromium(webmcp=True) as browser:
        page = _tab(browser, served, service.sign_in_link(ada), problems)

        tools = _offered(page)
        assert [t["name"] for t in tools] == TOOL_NAMES
        for tool in tools:
            command = listing[tool["name"]]
            assert tool["description"] == command["description"]
            assert tool["inputSchema"] == command["input"]
            assert tool.get("annotations") == ({"readOnly": True} if command["readOnly"] else None)
        assert tools[1]["inputSchema"]["required"] == ["who", "miles", "at"]

        logged = page.webmcp.call_tool("log_run", {"who": "Ada", "miles": "5", "at": "2026-09-01"})
        assert logged["content"][0]["text"].startswith("log_run: wrote 1 entity in ada/runs")
        assert "isError" not in logged
        [eid] = logged["structuredContent"]["entities"]

        board = page.webmcp.call_tool("leaderboard", {})
        [row] = board["structuredContent"]["rows"]
        assert row["entity"]["eid"] == eid
        assert row["jog"]["who"] == "Ada"
        assert row["jog"]["miles"] == 5
        assert row["created"]["by"]["name"] == "ada"  # written as the person whose tab it is

        refused = page.webmcp.call_tool(
            "log_run", {"who": "Ada", "miles": "many", "at": "2026-09-01"}
        )
        assert refused == {
            "content": [{"type": "text", "text": "miles is a number"}],
            "isError": True,
        }

        viewer = _tab(browser, served, service.sign_in_link(cy), problems)
        assert [t["name"] for t in _offered(viewer)] == TOOL_NAMES
        denied = viewer.webmcp.call_tool("log_run", {"who": "Cy", "miles": 3, "at": "2026-09-02"})
        assert denied == {"content": [{"type": "text", "text": VIEWER_WRITES}], "isError": True}
        read = viewer.webmcp.call_tool("leaderboard", {})
        assert [r["jog"]["who"] for r in read["structuredContent"]["rows"]] == ["Ada"]

        # Reloading offers the same tools once, not twice.
        page.reload()
        board_drawn(page)
        assert [t["name"] for t in _offered(page)] == TOOL_NAMES
    assert problems == []
    rows = service.graph.query(ada, "ada/runs", ".jog!").data["rows"]
    assert [r["jog"]["who"] for r in rows] == ["Ada"]


@in_chromium
@sqlite_only(IN_A_BROWSER)
def test_a_sandboxed_page_offers_no_tools(served: Served) -> None:
    """With no apps domain a page's origin is opaque, and no agent could call its tools:
    it offers none, and says why on the console."""
    problems: list[str] = []
    said: list[str] = []
    with chromium(webmcp=True) as browser:
        page = browser.new_context().new_page()
        page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
        page.on("console", lambda m: said.append(m.text) if m.type == "info" else None)
        link = served.service.sign_in_link(served.service.local_owner())
        page.goto(f"{served.url}/signin?link={link}")
        page.goto(f"{served.url}/ada/runs/")
        board_drawn(page)
        assert page.evaluate("origin") == "null"
        assert page.webmcp.tools() == []
        assert said == [f"WebMCP: {SANDBOXED_PAGES}"]
        sync_api = needs.playwright()
        sync_api.expect(page.locator("input[name=who]")).to_have_value("ada")  # it works
    assert problems == []


@in_chromium
@sqlite_only(IN_A_BROWSER)
def test_without_webmcp_the_page_offers_nothing_and_logs_nothing(served_apart: Served) -> None:
    served = served_apart
    problems: list[str] = []
    with chromium(webmcp=False) as browser:
        context = browser.new_context()
        page = context.new_page()
        asked: list[str] = []
        page.on("request", lambda r: asked.append(r.url))
        page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
        page.on("console", lambda m: _console(m, problems, ("error", "warning")))
        link = served.service.sign_in_link(served.service.local_owner())
        page.goto(f"{served.url}/signin?link={link}")
        page.goto(f"{served.url}/signin/app?app=ada/runs&next=/")
        board_drawn(page)
        assert page.evaluate("document.modelContext === undefined")
        app = served.app_url("ada", "runs")
        assert f"{app}api/webmcp.js" in asked
        assert f"{app}api/tools" not in asked
        with pytest.raises(Exception, match="WebMCP is not enabled"):
            page.webmcp.tools()
        # The page itself still works: signed in, its form is filled in through client.js.
        sync_api = needs.playwright()
        sync_api.expect(page.locator("input[name=who]")).to_have_value("ada")
    assert problems == []


def test_the_dashboard_links_each_apps_tools(site: Site) -> None:
    page = site.signed_in("ada").get("/").text
    link = '<a href="/tools?app=ada/runs">its tools</a>'
    assert link in page
    assert site.signed_in("ada").get("/ada/runs/api/tools").json()["commands"]


CART_TOOLS = ["cart_add", "cart_clear", "cart_remove", "cart_status"]


def _cart_tab(browser: Any, served: Served, problems: list[str]) -> Any:
    """A tab signed in as ada on the cart, an app with a command that is hard to undo."""
    service = served.service
    ada = service.local_owner()
    service.trust_space(ada, "ada", True)
    service.deploy(ada, CART, space="ada", app="cart")
    page = browser.new_context().new_page()
    page.set_default_timeout(30_000)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.goto(f"{served.url}/signin?link={service.sign_in_link(ada)}")
    page.wait_for_url(f"{served.url}/")
    page.goto(f"{served.url}/signin/app?app=ada/cart&next=/")
    page.wait_for_url(served.app_url("ada", "cart"))
    return page


@in_chromium
@sqlite_only(IN_A_BROWSER)
def test_a_tool_that_is_hard_to_undo_runs_only_once_the_person_says_yes(
    served_apart: Served,
) -> None:
    service, problems = served_apart.service, []
    ada = service.local_owner()
    with chromium(webmcp=True) as browser:
        page = _cart_tab(browser, served_apart, problems)
        for _ in range(600):  # a minute at most
            if len(page.webmcp.tools()) >= len(CART_TOOLS):
                break
            page.wait_for_timeout(100)
        assert sorted(t["name"] for t in page.webmcp.tools()) == CART_TOOLS
        added = page.webmcp.call_tool("cart_add", {"sku": "V60-02"})
        # The text an MCP tool's answer carries: the sentence, then the data as JSON.
        assert added["content"][0]["text"] == (
            'Added 1 × V60-02; 1 in the cart.\n{"sku":"V60-02","qty":1}'
        )

        asked: list[str] = []

        def answer(yes: bool) -> Any:
            def said(dialog: Any) -> None:
                asked.append(dialog.message)
                dialog.accept() if yes else dialog.dismiss()

            return said

        page.once("dialog", answer(False))
        assert page.webmcp.call_tool("cart_clear", {}) == {
            "content": [{"type": "text", "text": "cancelled — nothing was run"}],
            "isError": True,
        }
        assert asked == [
            "An agent is about to run Empty the cart (cart_clear), which is hard to undo. Run it?"
        ]
        assert service.run_command(ada, "cart_status", {}).text == "1 item of 1 product"

        page.once("dialog", answer(True))
        cleared = page.webmcp.call_tool("cart_clear", {})
        assert cleared["content"][0]["text"] == text_of(
            Result("Emptied the cart: 1 product taken out.", cleared["structuredContent"])
        )
        assert len(asked) == 2

        # The page's own script reaches ./api/command as the tools do: a command that is
        # hard to undo runs only with the person's yes, {confirm: true}.
        service.run_command(ada, "cart_add", {"sku": "V60-02"})
        by_page = page.evaluate(
            """async () => {
              const { command } = await import("./api/client.js");
              const unasked = await command("cart_clear").catch((e) => [e.status, e.message]);
              const left = await command("cart_status");
              const cleared = await command("cart_clear", {}, { confirm: true });
              return [unasked, left.count, cleared];
            }"""
        )
        assert by_page[0] == [
            400,
            "cart_clear is hard to undo, so it was not run: it would run Empty the cart "
            "(cart_clear) on ada/cart with no arguments. Ask your person whether to run it, and "
            "only once they say yes call it again with the same arguments and confirm: true.",
        ]
        assert by_page[1] == 1 and by_page[2]["removed"] == 1

        page.on("dialog", answer(False))  # what is not hard to undo asks nobody
        status = page.webmcp.call_tool("cart_status", {})
        assert status["content"][0]["text"] == text_of(
            Result("the cart is empty", status["structuredContent"])
        )
        assert len(asked) == 2
    assert problems == []


# Where a browser puts WebMCP on navigator instead: a stand-in that keeps what is offered.
NAVIGATOR_WEBMCP = """
Object.defineProperty(navigator, "modelContext", { value: {
  offered: [],
  registerTool(tool) { this.offered.push(tool); return Promise.resolve(); },
} });
"""


@in_chromium
@sqlite_only(IN_A_BROWSER)
def test_webmcp_on_navigator_is_offered_the_tools_too(served_apart: Served) -> None:
    problems: list[str] = []
    with chromium(webmcp=False) as browser:
        context = browser.new_context()
        context.add_init_script(NAVIGATOR_WEBMCP)
        page = context.new_page()
        page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
        service = served_apart.service
        page.goto(f"{served_apart.url}/signin?link={service.sign_in_link(service.local_owner())}")
        page.wait_for_url(f"{served_apart.url}/")
        page.goto(f"{served_apart.url}/signin/app?app=ada/runs&next=/")
        board_drawn(page)
        assert page.evaluate("document.modelContext === undefined")
        offered = "navigator.modelContext.offered"
        page.wait_for_function(f"{offered}.length >= {len(TOOL_NAMES)}")
        assert sorted(page.evaluate(f"{offered}.map((t) => t.name)")) == TOOL_NAMES
        board = page.evaluate(f"{offered}.find((t) => t.name === 'leaderboard').execute({{}})")
        assert board["structuredContent"] == {"rows": []}
    assert problems == []
