"""How soon pasture answers: `pasture serve` from start to its first answer, and a deploy to
the first answer of the new version, each against a bare uvicorn app starting in the same run.

- start: `pasture serve` on a data directory holding the run club (SQLite), from the
  process started to the first answer of a `command leaderboard` over `/mcp`, against
  `python -m uvicorn` serving a one-route Starlette app (this file's `app`) from the process
  started to its first answer: what any Python web server pays to start, and what pasture
  adds to it (its database opened, its apps listed, its limits and audit set up); and
  against the MCP SDK's high-level server (`MCPServer`, stateless HTTP with JSON replies)
  serving one tool, from the process started to that tool's first answer: what any server
  on the official SDK pays, most of it importing the SDK (`import mcp` alone is timed too).
- deploy: on a running `pasture serve`, the run club's next version — its tools.json with
  one command more — deployed through `/mcp`'s `app_deploy` (as an agent deploys), from the
  request sent to the first answer of the new command; against the bare app started again
  (what a framework's server needs for new code: a new process).

Each start is timed `--runs` times, the four taking turns in an order that changes each
run; printed: each one's median, ÷ the bare app's, and pasture's ÷ the SDK server's.

    .venv/bin/python benchmarks/serving.py [--runs 7] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path: keep it off.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import httpx  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "examples" / "runs"
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
NEW_COMMAND = "longest"  # the next version's command more


async def _hello(request: Any) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse({"ok": True})


def _bare_app() -> Any:
    """The bare app: one route answering JSON, as small as a Starlette app is."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    return Starlette(routes=[Route("/", _hello)])


app = _bare_app()  # what `python -m uvicorn serving:app` serves


def _sdk_server(port: int) -> None:
    """The SDK's high-level server with one tool, as its guide writes one, on uvicorn."""
    import uvicorn
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("club")

    @server.tool()
    def hello() -> dict[str, Any]:
        """Say hello"""
        return {"ok": True}

    served = server.streamable_http_app(json_response=True, stateless_http=True)
    uvicorn.run(served, host="127.0.0.1", port=port, log_level="warning")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def until_answered(ask: Callable[[], bool], process: subprocess.Popen[bytes]) -> None:
    """Ask again and again (a refused connection, an error: again) until it answers."""
    deadline = time.monotonic() + 60
    while True:
        try:
            if ask():
                return
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the server did not answer")
        time.sleep(0.002)


def call(
    web: httpx.Client, url: str, token: str | None, name: str, arguments: dict[str, Any]
) -> Any:
    """A tool call's result, or None where the server did not answer 200; as `token`'s
    bearer, if any."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    body["params"] = {"name": name, "arguments": arguments}
    headers = {**HEADERS, "Authorization": f"Bearer {token}"} if token else HEADERS
    answer = web.post(url, headers=headers, content=json.dumps(body), timeout=60)
    if answer.status_code != 200:
        return None
    return answer.json().get("result")


def home_with_club() -> tuple[Path, str]:
    from pasture.platform.service import Service

    home = Path(tempfile.mkdtemp(prefix="pasture-serving-"))
    service = Service(home)
    owner = service.local_owner()
    service.deploy(owner, RUNS, app="runs", title="Run club")
    token = service.new_token(owner, "bench")
    service.close()
    return home, token


def serve(home: Path, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "pasture", "serve", "--port", str(port)]
    return subprocess.Popen(
        command,
        env={**env, "PASTURE_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stopped(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def timed_start(
    start: Callable[[], subprocess.Popen[bytes]], answered: Callable[[httpx.Client], bool]
) -> float:
    """Seconds from `start()` to the first time the process it started has `answered`."""
    with httpx.Client() as web:
        began = time.perf_counter()
        process = start()
        try:
            until_answered(lambda: answered(web), process)
            return time.perf_counter() - began
        finally:
            stopped(process)


def tool_answered(web: httpx.Client, url: str, token: str | None, name: str, args: Any) -> bool:
    result = call(web, url, token, name, args)
    return result is not None and not result.get("isError")


def pasture_start(home: Path, token: str, env: dict[str, str]) -> float:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    leaderboard = {"name": "leaderboard", "app": "runs"}
    return timed_start(
        lambda: serve(home, port, env),
        lambda web: tool_answered(web, url, token, "command", leaderboard),
    )


def bare_start(env: dict[str, str]) -> float:
    port = free_port()
    here = str(Path(__file__).resolve().parent)
    command = [sys.executable, "-m", "uvicorn", "--app-dir", here, "serving:app"]
    command += ["--port", str(port), "--log-level", "warning"]
    return timed_start(
        lambda: subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL),
        lambda web: web.get(f"http://127.0.0.1:{port}/").status_code == 200,
    )


def sdk_start(env: dict[str, str]) -> float:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    command = [sys.executable, __file__, "--sdk-server", str(port)]
    quiet = subprocess.DEVNULL  # its log lines
    return timed_start(
        lambda: subprocess.Popen(command, env=env, stdout=quiet, stderr=quiet),
        lambda web: tool_answered(web, url, None, "hello", {}),
    )


def sdk_import(env: dict[str, str]) -> float:
    """`python -c "import mcp"`, start to end: the SDK's own import, in a process of its own."""
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import mcp"], env=env, check=True)
    return time.perf_counter() - began


def next_version(n: int) -> dict[str, str]:
    """The run club's files, its tools.json with one command more (named anew each time, so
    every deploy is a new version with a command the last one lacked)."""
    tools = json.loads((RUNS / "tools.json").read_text())
    tools[f"{NEW_COMMAND}{n}"] = {
        "description": "The longest runs first",
        "input": {},
        "query": ".jog!&.created!",
    }
    files = {p.name: p.read_text() for p in RUNS.iterdir() if p.is_file()}
    files["tools.json"] = json.dumps(tools)
    return files


def pasture_deploys(home: Path, token: str, env: dict[str, str], runs: int) -> list[float]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    took: list[float] = []
    process = serve(home, port, env)
    try:
        with httpx.Client() as web:
            until_answered(lambda: call(web, url, token, "commands", {}) is not None, process)
            for n in range(runs):
                files = next_version(n)
                began = time.perf_counter()
                deployed = call(web, url, token, "app_deploy", {"app": "runs", "files": files})
                assert deployed is not None and not deployed.get("isError"), deployed

                arguments = {"name": f"{NEW_COMMAND}{n}", "app": "runs"}
                until_answered(
                    lambda a=arguments: tool_answered(web, url, token, "command", a), process
                )
                took.append(time.perf_counter() - began)
    finally:
        stopped(process)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, help="times each is timed (7; --quick 2)")
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    parser.add_argument("--sdk-server", type=int, metavar="PORT", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.sdk_server:
        _sdk_server(options.sdk_server)
        return
    runs = options.runs or (2 if options.quick else 7)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    # The limits are counted, as on any server, at rates the asking again never reaches.
    env.setdefault("PASTURE_RATE", "1000000000/minute")
    env.setdefault("PASTURE_RATE_ADDRESS", "1000000000/minute")
    home, token = home_with_club()
    try:
        bare_start(env)  # first runs fill the bytecode caches: not counted
        sdk_start(env)
        pasture_start(home, token, env)
        ours: list[float] = []
        theirs: list[float] = []
        sdks: list[float] = []
        imports: list[float] = []
        for n in range(runs):
            turn = [
                lambda: ours.append(pasture_start(home, token, env)),
                lambda: theirs.append(bare_start(env)),
                lambda: sdks.append(sdk_start(env)),
                lambda: imports.append(sdk_import(env)),
            ]
            for run in turn[n % 4 :] + turn[: n % 4]:
                run()
        deploys = pasture_deploys(home, token, env, runs)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    a, b, d = statistics.median(ours), statistics.median(theirs), statistics.median(deploys)
    k, i = statistics.median(sdks), statistics.median(imports)
    print(f"how soon a server answers, median of {runs} runs, taking turns:")
    print(f"  {'':<56} {'':>7}      {'÷ bare':>7} {'÷ SDK':>7}")
    print(f"  {'bare uvicorn app, start to first answer':<56} {b * 1000:7.0f} ms")
    line = "MCP SDK's high-level server, start to first tool answer"
    print(f"  {line:<56} {k * 1000:7.0f} ms   {k / b:6.2f}x")
    line = 'python -c "import mcp", start to end'
    print(f"  {line:<56} {i * 1000:7.0f} ms   {i / b:6.2f}x")
    line = "pasture serve, start to first command answer"
    print(f"  {line:<56} {a * 1000:7.0f} ms   {a / b:6.2f}x {a / k:6.2f}x")
    line = "a deploy over /mcp to the new version's first answer"
    print(f"  {line:<56} {d * 1000:7.0f} ms   {d / b:6.2f}x {d / k:6.2f}x")


if __name__ == "__main__":
    main()
