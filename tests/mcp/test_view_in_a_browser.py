"""A view drawn the way an MCP client draws it: in a sandboxed frame of a host page, in Chromium.

The host page is served on loopback. It loads leaderboard.html's text as the
connector serves the resource into an iframe (`srcdoc`, sandboxed), answers the
view's `ui/initialize` — refusing it, as the MCP Apps bridge does, without the
view's `appInfo` and `appCapabilities` — with its own theme as the host context,
waits for `ui/notifications/initialized`, sends the leaderboard's answer as
`ui/notifications/tool-result`, and forwards the view's own `tools/call` to the
connector — as the person, like a real client would. The reference bridge itself
hosts the view in test_view_in_ext_apps.py.
"""

from __future__ import annotations

import concurrent.futures
import http.server
import threading
from collections.abc import Iterator
from typing import Any

import mcp_types as types
import pytest
from mcp_talk import Club, in_memory

from helpers.browser import CHROMIUM, LAUNCH_ARGS, in_chromium
from helpers.databases import IN_A_BROWSER, sqlite_only
from helpers.mcp_answers import ok
from mcp import Client

VIEW = "ui://ada/runs/leaderboard.html"
RUN = {"who": "Ada", "miles": "5", "at": "2026-09-01"}

HOST_PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>a host</title></head>
<body>
<iframe id="view" sandbox="allow-scripts" style="width: 360px; border: 0"></iframe>
<script>
  window.heard = []
  window.sizes = []
  const frame = document.getElementById('view')
  const send = (message) => frame.contentWindow.postMessage({ jsonrpc: '2.0', ...message }, '*')
  addEventListener('message', async (e) => {
    if (e.source !== frame.contentWindow) return
    const msg = e.data
    heard.push(msg)
    if (msg.method === 'ui/initialize') {
      const { appInfo, appCapabilities, protocolVersion } = msg.params || {}
      if (window.refuse || !appInfo || !appInfo.name || !appInfo.version || !appCapabilities
          || !protocolVersion) {
        return send({ id: msg.id, error: { code: -32602, message: 'Invalid params: appInfo' } })
      }
      send({ id: msg.id, result: {
        protocolVersion: msg.params.protocolVersion,
        hostInfo: { name: 'a host', version: '0' },
        hostCapabilities: { serverTools: {} },
        hostContext: {
          theme: 'dark',
          styles: { variables: { '--color-text-primary': 'rgb(1, 2, 3)' } },
        },
      } })
    } else if (msg.method === 'ui/notifications/initialized') {
      send({ method: 'ui/notifications/tool-result', params: window.answer })
    } else if (msg.method === 'ui/notifications/size-changed') {
      sizes.push(msg.params)
    } else if (msg.method === 'tools/call') {
      send({ id: msg.id, result: await window.callTool(msg.params.name, msg.params.arguments) })
    }
  })
  window.show = (html, answer, refuse) => {
    window.answer = answer
    window.refuse = refuse
    frame.srcdoc = html
  }
</script>
</body></html>
"""


@pytest.fixture
def host_page() -> Iterator[str]:
    class Host(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(HOST_PAGE)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Host)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def _wire(result: types.CallToolResult) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


@in_chromium
@sqlite_only(IN_A_BROWSER)
def test_the_leaderboard_view_draws_the_answer_and_calls_back(club: Club, host_page: str) -> None:
    from playwright.sync_api import sync_playwright

    # ada has `since` in two apps (ada/runs and club/runs): the view's own call
    # must name its app, read from the <base href> the connector gives the page.
    service, ada = club.service, club.ada
    service.run_command(ada, "log_run", RUN, "ada/runs")
    service.run_command(ada, "log_run", {**RUN, "who": "Bo", "miles": 3}, "ada/runs")

    async def open_view(client: Client) -> tuple[str, types.CallToolResult]:
        read = await client.read_resource(VIEW)
        board = await client.call_tool(
            "command", {"name": "leaderboard", "args": {}, "app": "ada/runs"}
        )
        contents = read.contents[0]
        assert isinstance(contents, types.TextResourceContents)
        return contents.text, board

    html, board = in_memory(service, ada, "legacy", open_view)
    ok(board)
    calls: list[tuple[str, dict[str, Any]]] = []
    pool = concurrent.futures.ThreadPoolExecutor(1)

    def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        # What a client does with a view's tools/call: the same tool, as the same person.
        calls.append((name, arguments))

        async def call(client: Client) -> types.CallToolResult:
            return await client.call_tool(name, arguments)

        return _wire(pool.submit(in_memory, service, ada, "legacy", call).result())

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            page = browser.new_page()
            page.expose_function("callTool", call_tool)
            page.goto(host_page)
            page.evaluate("([html, answer]) => show(html, answer)", [html, _wire(board)])

            rows = page.frame_locator("#view").locator("#board li")
            rows.nth(1).wait_for()
            assert rows.all_inner_texts() == [
                "Ada — 5 miles · logged by ada",
                "Bo — 3 miles · logged by ada",
            ]
            methods = page.evaluate("heard.map((m) => m.method)")
            assert methods[0] == "ui/initialize"
            assert "ui/notifications/initialized" in methods
            hello = page.evaluate("heard[0].params")
            assert hello["appInfo"]["name"] and hello["appInfo"]["version"]
            assert hello["appCapabilities"] == {}
            view = page.frame_locator("#view")
            # The host's theme, taken from the host context the handshake answered.
            root = view.locator(":root")
            assert root.evaluate("(r) => r.style.colorScheme") == "dark"
            assert (
                root.evaluate("(r) => r.style.getPropertyValue('--color-text-primary')")
                == "rgb(1, 2, 3)"
            )
            assert view.locator('meta[name="pasture-app"]').get_attribute("content") == "ada/runs"
            assert view.locator("#said").inner_text() == ""
            page.wait_for_function("sizes.length > 0")
            size = page.evaluate("sizes[sizes.length - 1]")
            assert size["height"] > 0 and size["width"] > 0

            # The redraw goes back through the host, to the connector, as ada.
            service.run_command(ada, "log_run", {**RUN, "who": "Cy", "miles": 8}, "ada/runs")
            page.frame_locator("#view").locator("#today").click()
            rows.nth(2).wait_for()
            assert rows.all_inner_texts()[2] == "Cy — 8 miles · logged by ada"
        finally:
            browser.close()
            pool.shutdown()

    [(name, arguments)] = calls
    assert name == "command"
    assert arguments["name"] == "since"
    assert set(arguments["args"]) == {"since"}
    assert arguments["app"] == "ada/runs"


@in_chromium
@sqlite_only(IN_A_BROWSER)
def test_a_view_a_client_refuses_says_so_and_draws_from_the_text(
    club: Club, host_page: str
) -> None:
    from playwright.sync_api import sync_playwright

    service, ada = club.service, club.ada
    service.run_command(ada, "log_run", RUN, "ada/runs")

    async def open_view(client: Client) -> tuple[str, types.CallToolResult]:
        read = await client.read_resource(VIEW)
        board = await client.call_tool(
            "command", {"name": "leaderboard", "args": {}, "app": "ada/runs"}
        )
        contents = read.contents[0]
        assert isinstance(contents, types.TextResourceContents)
        return contents.text, board

    html, board = in_memory(service, ada, "legacy", open_view)
    # A client that forwards only the text: the rows are on its last line.
    text_only = {"content": _wire(board)["content"], "isError": False}

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            page = browser.new_page()
            page.goto(host_page)
            page.evaluate("([html, answer]) => show(html, answer, true)", [html, text_only])
            view = page.frame_locator("#view")
            said = view.locator("#said")
            said.filter(has_text="did not take").wait_for()
            assert said.inner_text() == (
                "the client did not take this view: Invalid params: appInfo"
            )
            methods = page.evaluate("heard.map((m) => m.method)")
            assert "ui/notifications/initialized" not in methods

            # It carries on: an answer sent anyway is drawn.
            page.evaluate(
                "() => send({ method: 'ui/notifications/tool-result', params: window.answer })"
            )
            view.locator("#board li").first.wait_for()
            assert view.locator("#board li").all_inner_texts() == ["Ada — 5 miles · logged by ada"]
        finally:
            browser.close()
