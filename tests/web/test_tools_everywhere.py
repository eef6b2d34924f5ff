"""One list of tools wherever a person or a program looks: `pasture inspect APP --json` on
the machine, `pasture inspect --url` against a running server, an app's `./api/tools`, the
server's `/api/tools`, and the dashboard's Tools tab — against a real `pasture serve`."""

from __future__ import annotations

import json
import subprocess
from html.parser import HTMLParser
from typing import Any

import httpx
import pytest
from test_web_browser import EXAMPLES, Served, served

from helpers import processes

__all__ = ["served"]  # test_web_browser's real server, as a fixture here


def pasture(
    served: Served, *args: str, token: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {"PASTURE_TOKEN": token} if token is not None else None
    return processes.pasture(served.service.home, *args, env=env)


class ToolRows(HTMLParser):
    """The Tools tab's rows: each tool's name and its cells' text, app by app."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, str, list[str]]] = []
        self.app = ""
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "section" and found.get("data-app"):
            self.app = found["data-app"] or ""
        if tag == "tr" and found.get("data-tool"):
            self.rows.append((self.app, found["data-tool"] or "", []))
        if tag == "td" and self.rows:
            self.cell = []

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self.cell is not None:
            self.rows[-1][2].append("".join(self.cell))
            self.cell = None


def tab(served: Served, token: str, app: str | None = None) -> list[tuple[str, str, list[str]]]:
    page = httpx.get(
        f"{served.url}/tools",
        params={"app": app} if app else {},
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert page.status_code == 200, page.text
    rows = ToolRows()
    rows.feed(page.text)
    return rows.rows


def as_tab(commands: list[dict[str, Any]]) -> list[tuple[str, str, list[str]]]:
    """What the Tools tab should show of a listing: its rows, in its order."""
    out = []
    for c in commands:
        props = c["input"].get("properties", {})
        required = c["input"].get("required", [])
        args = ", ".join(a if a in required else f"{a}?" for a in props) or "none"
        kind = "reads" if c["readOnly"] else "hard to undo" if c.get("consequential") else "writes"
        cells = [c["name"], c.get("commandTitle", ""), c["description"], kind, args]
        out.append((c["at"], c["name"], [*cells, c.get("view", "")]))
    return out


@pytest.fixture
def token(served: Served) -> str:
    service = served.service
    ada = service.local_owner()
    service.deploy(ada, EXAMPLES / "todos", space="ada", app="todos")
    service.deploy(ada, EXAMPLES / "cart", space="ada", app="cart")
    return service.new_token(ada)


@pytest.mark.processes
def test_every_door_shows_the_same_tools(served: Served, token: str) -> None:
    bearer = {"Authorization": f"Bearer {token}"}
    app_tools = httpx.get(f"{served.url}/ada/todos/api/tools", headers=bearer, timeout=60).json()
    names = [c["name"] for c in app_tools["commands"]]
    assert names == ["todos", "set_todo_done", "clear_done"]

    everything = httpx.get(f"{served.url}/api/tools", headers=bearer, timeout=60).json()
    assert {c["at"] for c in everything["commands"]} == {"ada/runs", "ada/todos", "ada/cart"}
    narrowed = httpx.get(
        f"{served.url}/api/tools", params={"app": "todos"}, headers=bearer, timeout=60
    )
    assert narrowed.json() == app_tools

    for args, given in [
        (["inspect", "ada/todos", "--json"], None),  # the machine's own
        (["inspect", "--url", f"{served.url}/ada/todos/", "--json"], token),  # an app's address
        (["inspect", "todos", "--url", served.url, "--json", "--token", token], None),
    ]:
        inspected = pasture(served, *args, token=given)
        assert inspected.returncode == 0, inspected.stderr
        assert json.loads(inspected.stdout) == app_tools, args
    whole = pasture(served, "inspect", "--url", served.url, "--json", token=token)
    assert json.loads(whole.stdout) == everything

    # The dashboard's Tools tab: the same tools, in the same order, saying the same.
    assert tab(served, token, "ada/todos") == as_tab(app_tools["commands"])
    assert tab(served, token) == as_tab(everything["commands"])
    dashboard = httpx.get(f"{served.url}/", headers=bearer, timeout=60).text
    assert '<a href="/tools">Tools</a>' in dashboard
    assert '<a href="/tools?app=ada/todos">its tools</a>' in dashboard
    # The dashboard's forms name each command by its own title, and flag the one that is
    # hard to undo.
    assert "<strong>Mark a todo done</strong>: Mark one of" in dashboard
    clear = dashboard[dashboard.index('data-command="clear_done"') :]
    assert '<span class="tag">hard to undo</span>' in clear[: clear.index("</summary>")]

    # For people, the same list as a table, app by app.
    shown = pasture(served, "inspect", "todos").stdout
    assert shown.splitlines()[0] == "## ada/todos — Todos"
    for name in ("todos()", "set_todo_done(todo_id, done)", "clear_done()", "hard to undo"):
        assert name in shown, shown


@pytest.mark.processes
def test_who_may_not_see_is_told_how_to_sign_in(served: Served, token: str) -> None:
    anonymous = httpx.get(f"{served.url}/api/tools", timeout=60)
    assert anonymous.status_code == 401
    assert anonymous.json()["error"].startswith("no apps to list — ")
    refused = pasture(served, "inspect", "--url", served.url)
    assert refused.returncode != 0
    assert "pass --token or set PASTURE_TOKEN" in refused.stderr
    wrong = pasture(served, "inspect", "--url", served.url, token="not-a-token")
    assert wrong.returncode != 0 and "Traceback" not in wrong.stderr
    nowhere = pasture(served, "inspect", "--url", "http://127.0.0.1:9/")
    assert "could not reach http://127.0.0.1:9/api/tools" in nowhere.stderr
    bad = pasture(served, "inspect", "--url", "ftp://example.org/")
    assert bad.returncode != 0 and "--url is a server's address" in bad.stderr
    # Another person's app is in nobody else's list, by any of these doors.
    service = served.service
    service.people.new_user(service.local_owner(), "bo")
    bo_token = service.new_token(service.local_owner(), "bo's", user="bo")
    theirs = httpx.get(
        f"{served.url}/api/tools", headers={"Authorization": f"Bearer {bo_token}"}, timeout=60
    ).json()
    assert theirs == {"commands": []}
    assert tab(served, bo_token) == []
