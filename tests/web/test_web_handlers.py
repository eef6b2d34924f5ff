"""examples/todos, an app written as handlers, through the web's doors of a real server.

`./api/call` runs any handler as the app's page calls it (not checked against its tool's
args), `./api/command` only the tools; in Chromium the page adds a todo with its own
untagged handler, and an agent in the person's tab sees the two tools — `todos` marked
read-only — lists the todo, and marks it done, as the person whose tab it is.
"""

from __future__ import annotations

from typing import Any

import httpx
from test_web_browser import Served, served, served_apart
from test_webmcp import _console

from helpers.browser import chromium, in_chromium
from helpers.club import TODOS
from helpers.databases import IN_A_BROWSER, sqlite_only

__all__ = ["served", "served_apart"]  # test_web_browser's real servers, as fixtures here


# Before any script of a page: note what each registerTool call is given, then pass it on.
OFFERED = """
window.__offered = [];
const context = document.modelContext;
if (context && typeof context.registerTool === "function") {
  const register = context.registerTool.bind(context);
  context.registerTool = (tool, options) => {
    window.__offered.push({
      name: tool.name, title: tool.title ?? null, annotations: tool.annotations ?? null,
    });
    return register(tool, options);
  };
}
"""


def _deployed(served: Served) -> str:
    service = served.service
    ada = service.local_owner()
    service.deploy(ada, TODOS, app="todos")
    return service.new_token(ada)


def _post(served: Served, path: str, token: str | None, body: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.post(f"{served.url}/ada/todos/api/{path}", json=body, headers=headers, timeout=60)


def test_the_api_calls_handlers_and_commands_are_only_the_tools(served: Served) -> None:
    token = _deployed(served)
    added = _post(served, "call", token, {"name": "add_todo", "args": {"text": "buy milk"}})
    assert added.status_code == 200, added.text
    todo = added.json()["data"]["result"]
    assert (todo["text"], todo["done"]) == ("buy milk", False)

    listed = _post(served, "command", token, {"name": "todos", "args": {}})
    assert listed.json()["data"]["result"] == [todo]
    unknown = _post(served, "command", token, {"name": "add_todo", "args": {"text": "x"}})
    assert unknown.status_code == 404
    assert unknown.json()["error"].startswith("no command add_todo")

    checked = _post(served, "command", token, {"name": "set_todo_done", "args": {"done": 1}})
    assert checked.status_code == 400
    assert checked.json()["error"] == "done is true or false; todo_id is required"
    page_call = _post(served, "call", token, {"name": "set_todo_done", "args": {"done": 1}})
    assert page_call.json()["error"].startswith("set_todo_done takes a todo_id")

    nobody = _post(served, "call", None, {"name": "todos", "args": {}})
    assert nobody.status_code == 401  # the app is public, but its todos are each person's
    assert (
        nobody.json()["error"] == "sign in to use todos — it acts for the person who is signed in"
    )
    missing = _post(served, "call", token, {"name": "nope", "args": {}})
    assert missing.json()["error"] == (
        "no handler nope in ada/todos — its handlers are add_todo, clear_done, set_todo_done, todos"
    )


@in_chromium
@sqlite_only(IN_A_BROWSER)
def test_the_page_adds_and_an_agent_in_the_tab_marks_done(served_apart: Served) -> None:
    served = served_apart
    _deployed(served)
    link = served.service.sign_in_link(served.service.local_owner())
    problems: list[str] = []
    with chromium(webmcp=True) as browser:
        page = browser.new_context().new_page()
        page.set_default_timeout(30_000)
        page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
        page.on("console", lambda m: _console(m, problems))
        page.add_init_script(OFFERED)
        page.goto(f"{served.url}/signin?link={link}")
        page.wait_for_url(f"{served.url}/")
        page.goto(f"{served.url}/signin/app?app=ada/todos&next=/")
        page.wait_for_url(served.app_url("ada", "todos"))
        # Not the network's idling: the page's WebMCP keeps following its tools' stream.
        page.get_by_label("New todo").wait_for()

        page.get_by_label("New todo").fill("water the plants")
        page.get_by_role("button", name="Add").click()
        box = page.get_by_label("water the plants")
        box.wait_for()
        assert not box.is_checked()

        tools: list[dict[str, Any]] = []
        for _ in range(600):  # a minute at most
            tools = sorted(page.webmcp.tools(), key=lambda t: t["name"])
            if len(tools) >= 3:
                break
            page.wait_for_timeout(100)
        assert [t["name"] for t in tools] == ["clear_done", "set_todo_done", "todos"]
        assert tools[2].get("annotations") == {"readOnly": True}
        # Chromium keeps only the WebMCP hints it knows (readOnly); what the page offered
        # for the consequential tool is MCP's destructiveHint, seen as registerTool got it.
        assert tools[0].get("annotations") is None and tools[1].get("annotations") is None
        offered = page.evaluate("window.__offered")
        assert {o["name"]: o["annotations"] for o in offered} == {
            "todos": {"readOnlyHint": True},
            "set_todo_done": None,
            "clear_done": {"destructiveHint": True},
        }
        # Each with its own short name for people, as the tool's title.
        assert {o["name"]: o["title"] for o in offered} == {
            "todos": "Your todos",
            "set_todo_done": "Mark a todo done",
            "clear_done": "Clear done todos",
        }
        assert tools[1]["inputSchema"]["required"] == ["todo_id", "done"]

        listed = page.webmcp.call_tool("todos", {})
        [todo] = listed["structuredContent"]["result"]
        assert todo["text"] == "water the plants"
        done = page.webmcp.call_tool("set_todo_done", {"todo_id": todo["id"], "done": True})
        assert "isError" not in done, done
        wrong = page.webmcp.call_tool("set_todo_done", {"todo_id": todo["id"]})
        assert wrong == {"content": [{"type": "text", "text": "done is required"}], "isError": True}

        page.reload()
        page.get_by_label("water the plants").wait_for()
        assert page.get_by_label("water the plants").is_checked()
    assert problems == []
