"""A view drawn by the MCP Apps reference host: `AppBridge` of `@modelcontextprotocol/ext-apps`.

A tiny host page around the bridge is bundled with esbuild (both from npm, installed
once into a cache folder; neither is a dependency of pasture) and loaded in Chromium.
A real `pasture serve`, each app on an origin of its own, is read through the SDK's
client: the view's resource — its HTML, and `_meta.ui.csp`, which the host turns into
the frame's Content-Security-Policy — and the leaderboard's answer, which the bridge
sends the view once it took the view's `ui/initialize` (the bridge validates it: it
needs `appInfo` and `appCapabilities`). The view's own redraw is a `tools/call` of
`command` that the bridge hands the host, which forwards it to the server as the
person. ada has `since` in two apps, so that call must name the view's app, which the
view's address (`http://runs--ada.localhost:PORT/`) does not say.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fcntl
import http.server
import os
import shutil
import subprocess
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp_talk import refused, set_up_club

from helpers import needs
from helpers.browser import chromium, in_chromium
from helpers.databases import IN_A_BROWSER, sqlite_only
from helpers.mcp_answers import ok
from helpers.processes import running_server
from mcp import Client
from pasture.platform.service import Service

# The bridge and esbuild come from npm; the server is `pasture serve` in its own process.
pytestmark = [pytest.mark.npm, pytest.mark.processes]

T = TypeVar("T")

PACKAGES = ["@modelcontextprotocol/ext-apps@2.0.4", "esbuild@0.28.2"]
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pasture-tests"
FOLDER = CACHE / "ext-apps-2.0.4"

VIEW = "ui://ada/runs/leaderboard.html"
RUN = {"who": "Ada", "miles": 5, "at": "2026-09-01"}

# The host: the bridge, a sandboxed frame for the view with the resource's CSP, and the
# view's tool calls handed to `window.callTool` (the test's MCP client, as the person).
HOST = """
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge'

const sources = (domains, none) => (domains && domains.length ? domains.join(' ') : none)

// The frame's policy from the resource's `_meta.ui.csp`, as the extension maps it.
const policy = (csp = {}) => {
  const resources = sources(csp.resourceDomains, '')
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${resources}`,
    `style-src 'unsafe-inline' ${resources}`,
    `img-src data: ${resources}`,
    `font-src ${sources(csp.resourceDomains, "'none'")}`,
    `media-src ${sources(csp.resourceDomains, "'none'")}`,
    `connect-src ${sources(csp.connectDomains, "'none'")}`,
    `frame-src ${sources(csp.frameDomains, "'none'")}`,
    `base-uri ${sources(csp.baseUriDomains, "'self'")}`,
  ].join('; ')
}

// The policy goes first in the document (after its doctype), before the view's <base>.
const guarded = (html, csp) => {
  const tag = `<meta http-equiv="Content-Security-Policy" content="${policy(csp)}">`
  const doctype = /^\\s*<!doctype[^>]*>/i.exec(html)
  const at = doctype ? doctype[0].length : 0
  return html.slice(0, at) + tag + html.slice(at)
}

window.sizes = []
window.show = async ({ html, csp, input, answer, hostContext }) => {
  const frame = document.createElement('iframe')
  frame.id = 'view'
  frame.setAttribute('sandbox', 'allow-scripts')
  frame.style.cssText = 'width: 360px; border: 0'
  document.body.append(frame)
  const bridge = new AppBridge(
    null, { name: 'a test host', version: '1.0.0' }, { serverTools: {} }, { hostContext })
  window.bridge = bridge
  bridge.oncalltool = (params) => window.callTool(params.name, params.arguments || {})
  bridge.onsizechange = (size) => window.sizes.push(size)
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: input })
    await bridge.sendToolResult(answer)
    window.answered = true
  }
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow))
  frame.srcdoc = guarded(html, csp)
}
"""

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>a host</title></head>
<body><script src="/host.js"></script></body></html>
"""


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One test process at a time in the cache folder (tests run side by side)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="module")
def host_script() -> str:
    """The host bundled for the browser: AppBridge and what it needs, in one script."""
    npm = shutil.which("npm")
    if npm is None:
        needs.missing("the MCP Apps host test needs npm", needs.apt("nodejs npm"))
    esbuild = FOLDER / "node_modules" / ".bin" / "esbuild"
    installed, wanted = FOLDER / "installed", " ".join(PACKAGES)  # written once npm has
    with _locked(CACHE / "ext-apps.lock"):
        if not (esbuild.exists() and installed.is_file() and installed.read_text() == wanted):
            FOLDER.mkdir(parents=True, exist_ok=True)
            quiet = ["--silent", "--no-audit", "--no-fund"]
            subprocess.run(
                [npm, "install", *quiet, "--prefix", str(FOLDER), *PACKAGES],
                check=True,
                timeout=600,
            )
            installed.write_text(wanted)
    # The entry is read from stdin and resolved from the cache folder, its node_modules.
    bundled = subprocess.run(
        [str(esbuild), "--bundle", "--format=iife", "--platform=browser", "--log-level=error"],
        input=HOST,
        cwd=FOLDER,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return bundled.stdout


@pytest.fixture
def host_page(host_script: str) -> Iterator[str]:
    files = {"/": (PAGE, "text/html"), "/host.js": (host_script, "text/javascript")}

    class Host(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body, media = files.get(self.path, ("", "text/plain"))
            self.send_response(200 if self.path in files else 404)
            self.send_header("content-type", f"{media}; charset=utf-8")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Host)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture
def served(tmp_path: Path, database: str) -> Iterator[tuple[str, str]]:
    """`pasture serve` with each app on an origin of its own, and ada's token."""
    home = tmp_path / "home"
    service = Service(home)
    try:
        token = service.new_token(set_up_club(service).ada)
    finally:
        service.close()
    with running_server(home, "--apps-domain", "localhost") as url:
        yield url, token


def _wire(result: types.CallToolResult) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


@pytest.fixture
def pool() -> Iterator[concurrent.futures.ThreadPoolExecutor]:
    """A thread for the test's MCP calls: Playwright's own loop runs in the test's."""
    with concurrent.futures.ThreadPoolExecutor(1) as threads:
        yield threads


@in_chromium
@sqlite_only(IN_A_BROWSER)
def test_the_reference_bridge_draws_the_view_and_its_redraw_names_its_app(
    served: tuple[str, str], host_page: str, pool: concurrent.futures.ThreadPoolExecutor
) -> None:
    url, token = served

    def talk(do: Callable[[Client], Awaitable[T]]) -> T:
        async def main() -> T:
            transport = streamable_http_client(
                f"{url}/mcp",
                http_client=httpx2.AsyncClient(
                    headers={"Authorization": f"Bearer {token}"}, timeout=30
                ),
            )
            async with Client(transport, mode="auto") as client:
                return await do(client)

        return pool.submit(anyio.run, main).result()

    def command(name: str, args: dict[str, Any], app: str | None = None) -> Any:
        arguments = {"name": name, "args": args, **({"app": app} if app else {})}
        return talk(lambda client: client.call_tool("command", arguments))

    ok(command("log_run", RUN, "ada/runs"))
    ok(command("log_run", {**RUN, "who": "Bo", "miles": 3}, "ada/runs"))
    ok(command("log_run", {**RUN, "who": "Di", "miles": 1}, "club/runs"))
    # `since` is a command of both apps: asked without its app, it is ambiguous.
    assert refused(command("since", {"since": "2026-01-01"})) == (
        "since is a command of ada/runs and club/runs — say which app"
    )

    async def open_view(client: Client) -> tuple[Any, Any, Any]:
        tools = (await client.list_tools()).tools
        read = await client.read_resource(VIEW)
        board = await client.call_tool(
            "command", {"name": "leaderboard", "args": {}, "app": "ada/runs"}
        )
        return tools, read, board

    tools, read, board = talk(open_view)
    [contents] = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.meta is not None
    address = contents.meta["ui"]["csp"]["baseUriDomains"][0]
    port = url.rsplit(":", 1)[1]
    assert address == f"http://runs--ada.localhost:{port}/"  # no path says which app
    [command_tool] = [t for t in tools if t.name == "command"]
    input_args = {"name": "leaderboard", "args": {}, "app": "ada/runs"}
    host_context = {
        "theme": "dark",
        "styles": {"variables": {"--color-text-primary": "rgb(1, 2, 3)"}},
        "displayMode": "inline",
        "toolInfo": {"tool": command_tool.model_dump(by_alias=True, mode="json")},
    }

    calls: list[tuple[str, dict[str, Any]]] = []

    def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        # The host forwards the view's call to the server, as the person.
        calls.append((name, arguments))
        return _wire(talk(lambda client: client.call_tool(name, arguments)))

    with chromium() as browser:
        page = browser.new_page()
        page.expose_function("callTool", call_tool)
        page.goto(host_page)
        page.evaluate(
            "(shown) => show(shown)",
            {
                "html": contents.text,
                "csp": contents.meta["ui"]["csp"],
                "input": input_args,
                "answer": _wire(board),
                "hostContext": host_context,
            },
        )
        view = page.frame_locator("#view")
        rows = view.locator("#board li")
        rows.nth(1).wait_for()
        assert rows.all_inner_texts() == [
            "Ada — 5 miles · logged by ada",
            "Bo — 3 miles · logged by ada",
        ]
        # The bridge took the handshake: it knows the view by its appInfo.
        page.wait_for_function("window.answered === true")
        app_info = page.evaluate("bridge.getAppVersion()")
        assert app_info["name"] and app_info["version"]
        assert page.evaluate("bridge.getAppCapabilities()") == {}
        assert view.locator("#said").inner_text() == ""
        page.wait_for_function("sizes.length > 0")
        assert page.evaluate("sizes[sizes.length - 1].height") > 0

        # The view is where the connector said, and knows its app though that says none.
        root = view.locator(":root")
        assert root.evaluate("() => document.baseURI") == address
        assert view.locator('meta[name="pasture-app"]').get_attribute("content") == "ada/runs"

        # It dresses as the host does, and follows the host when that changes.
        assert root.evaluate("(r) => r.style.colorScheme") == "dark"
        assert root.evaluate("(r) => r.style.getPropertyValue('--color-text-primary')") == (
            "rgb(1, 2, 3)"
        )
        page.evaluate(
            "(context) => bridge.setHostContext(context)", {**host_context, "theme": "light"}
        )
        [frame] = [f for f in page.frames if f.parent_frame is not None]
        frame.wait_for_function("document.documentElement.style.colorScheme === 'light'")

        # The redraw: `since`, through the bridge and the host to the server, for ada/runs.
        ok(command("log_run", {**RUN, "who": "Cy", "miles": 8}, "ada/runs"))
        view.locator("#today").click()
        rows.nth(2).wait_for()
        assert rows.all_inner_texts() == [
            "Ada — 5 miles · logged by ada",
            "Bo — 3 miles · logged by ada",
            "Cy — 8 miles · logged by ada",
        ]

    [(name, arguments)] = calls
    assert name == "command"
    assert arguments["name"] == "since" and arguments["app"] == "ada/runs"
    assert arguments["args"].keys() == {"since"}
