"""`command log_run` over MCP against a bare SDK server doing the same SQLite write.

Both servers run side by side in this one run, each as its own uvicorn process
on a loopback port, stateless streamable HTTP with JSON responses:

- pasture: `pasture serve` with the run club deployed, called as a bearer
  token's person: `command {name: log_run, args: {...}, app: runs}`;
- bare: the SDK's low-level server with one tool, `log_run`, whose handler
  inserts the same run into a SQLite file (WAL, synchronous=NORMAL, as the
  store opens its files) in one transaction, in two forms:
  - plain: one row in a table with no index and no full text — the least a
    server could write, though it could not answer the club's reads quickly;
  - indexed: the row in the hand-written schema `benchmarks/store.py` measures
    queries against (an index on every column, full text over the title) —
    what a hand-built server needs to answer the same reads as fast as the
    store does. This is the baseline the goal (≥ 0.8×) is read against.

Measured with the SDK's own client, sequentially and with 8 concurrent clients,
alternating the two servers over several rounds; the medians and their ratio
are printed, then each round's own ratio and, where /proc tells it, each
server's CPU time a call (less moved by other work on a shared machine than
the rates). Then `commands` against a pasture with 200 apps deployed.

    .venv/bin/python benchmarks/mcp.py [--calls 400] [--rounds 3] [--mode auto|legacy]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path and its name would hide the SDK's.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402
import httpx2  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from mcp import Client  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "examples" / "runs"
RUN = {"who": "Ada", "miles": "5", "at": "2026-09-01"}
CONCURRENT = 8


# -- the bare server (run as `mcp.py --bare PORT DB`) --------------------------
def hand_written_schema() -> tuple[list[str], str]:
    """The store benchmark's hand-written schema and insert, so both benchmarks share one."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "store_bench", Path(__file__).with_name("store.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.BASELINE), str(module.INSERT)


def serve_bare(port: int, db_path: str, indexed: bool) -> None:
    import mcp_types as types
    import uvicorn
    from mcp.server import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    db = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    if indexed:
        schema, insert = hand_written_schema()
        for statement in schema:
            db.execute(statement)
    else:
        db.execute(
            "CREATE TABLE IF NOT EXISTS runs (eid TEXT PRIMARY KEY, title TEXT, who TEXT, "
            "miles REAL, at TEXT, created_at TEXT, created_by TEXT)"
        )
    tool = types.Tool(
        name="log_run",
        description="Log a run",
        input_schema={
            "type": "object",
            "properties": {
                "who": {"type": "string"},
                "miles": {"type": "number"},
                "at": {"type": "string"},
            },
        },
    )

    lock = threading.Lock()  # one connection, shared by the worker threads, as the store does

    def write(arguments: dict[str, Any]) -> str:
        eid = uuid.uuid4().hex[:16]
        with lock:
            return _insert(eid, arguments)

    def _insert(eid: str, arguments: dict[str, Any]) -> str:
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ")
        who, miles, at = arguments["who"], float(arguments["miles"]), arguments["at"]
        db.execute("BEGIN IMMEDIATE")
        if indexed:
            # insert is the store benchmark's: eid, who, miles, at, title, body, stamps
            db.execute(
                insert, (eid, who, miles, at, f"Run by {who}", None, now, "a" * 16, now, "a" * 16)
            )
        else:
            db.execute(
                "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?)",
                (eid, f"Run by {who}", who, miles, at, now, "ada"),
            )
        db.execute("COMMIT")
        return eid

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        eid = await anyio.to_thread.run_sync(write, params.arguments or {})
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"log_run: wrote 1 entity: {eid}")],
            structured_content={"entities": [eid], "aliases": {"$run": eid}},
        )

    server: Server[Any] = Server(
        "bare",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        # As pasture does: no tools/list behind every call to check Mcp-Param headers.
        get_tool_input_schema=lambda name: tool.input_schema if name == tool.name else None,
    )
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            message = await receive()
            async with manager.run():
                await send({"type": "lifespan.startup.complete"})
                message = await receive()
            assert message["type"] == "lifespan.shutdown"
            await send({"type": "lifespan.shutdown.complete"})
            return
        await manager.handle_request(scope, receive, send)

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


# -- processes -----------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start(args: list[str], env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{args} did not start") from None
            time.sleep(0.1)


def pasture_home(apps: int) -> tuple[Path, str]:
    from pasture.platform.service import Service

    home = Path(tempfile.mkdtemp(prefix="pasture-bench-"))
    service = Service(home)
    owner = service.local_owner()
    service.deploy(owner, RUNS, app="runs", title="Run club")
    for n in range(1, apps):
        service.deploy(owner, RUNS, app=f"runs{n}", title=f"Run club {n}")
    token = service.new_token(owner, "bench")
    service.close()
    return home, token


def in_process_commands(home: Path, calls: int, rounds: int) -> float:
    """`Service.list_commands` called directly: what the listing costs before any door."""
    from pasture.platform.service import Service

    service = Service(home)
    owner = service.local_owner()
    service.list_commands(owner)
    rates = []
    for _ in range(rounds):
        began = time.perf_counter()
        for _ in range(calls):
            service.list_commands(owner)
        rates.append(calls / (time.perf_counter() - began))
    service.close()
    return statistics.median(rates)


# -- measuring -----------------------------------------------------------------
def cpu_seconds(pid: int) -> float:
    """CPU time a process has used (user + system), or -1 where /proc cannot say."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return -1.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


Call = Callable[[Client], Awaitable[Any]]


def client(url: str, token: str | None, mode: str) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=60)
    return Client(streamable_http_client(url, http_client=http), mode=mode)


async def rate(
    url: str, token: str | None, mode: str, call: Call, calls: int, clients: int
) -> float:
    """Calls per second: `calls` in all, shared by `clients` connected clients at once."""
    each = calls // clients
    async with AsyncExitStack() as stack:
        connected = [
            await stack.enter_async_context(client(url, token, mode)) for _ in range(clients)
        ]
        for c in connected:  # warm both ends up
            await call(c)

        async def run(c: Client) -> None:
            for _ in range(each):
                await call(c)

        began = time.perf_counter()
        async with anyio.create_task_group() as group:
            for c in connected:
                group.start_soon(run, c)
        took = time.perf_counter() - began
    return each * clients / took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mode", default="auto", choices=["auto", "legacy"])
    parser.add_argument("--apps", type=int, default=200)
    parser.add_argument("--bare", nargs=3, metavar=("PORT", "DB", "FORM"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.bare:
        serve_bare(int(options.bare[0]), options.bare[1], options.bare[2] == "indexed")
        return

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    homes: list[Path] = []
    processes: list[subprocess.Popen[bytes]] = []
    try:
        home, token = pasture_home(1)
        homes.append(home)
        pasture_port = free_port()
        serve = [sys.executable, "-m", "pasture", "serve", "--port", str(pasture_port)]
        processes.append(start(serve, {**env, "PASTURE_HOME": str(home)}, pasture_port))
        pasture_url = f"http://127.0.0.1:{pasture_port}/mcp"
        bares: dict[str, tuple[str, int]] = {}  # form -> (url, pid)
        for form in ("indexed", "plain"):
            port = free_port()
            bare = [sys.executable, __file__, "--bare", str(port), str(home / f"{form}.db"), form]
            processes.append(start(bare, env, port))
            bares[form] = (f"http://127.0.0.1:{port}/mcp", processes[-1].pid)

        async def log_run(c: Client) -> Any:
            result = await c.call_tool("command", {"name": "log_run", "args": RUN, "app": "runs"})
            assert not result.is_error, result
            return result

        async def bare_run(c: Client) -> Any:
            result = await c.call_tool("log_run", RUN)
            assert not result.is_error, result
            return result

        print(
            f"command log_run over streamable HTTP ({options.mode}), {options.calls} calls a run,"
        )
        print(f"median of {options.rounds} rounds, the servers alternating:")
        pasture_pid = processes[0].pid
        for clients in (1, CONCURRENT):
            label = "sequential" if clients == 1 else f"{clients} concurrent clients"
            ours: list[float] = []
            cpu_ours: list[float] = []
            theirs: dict[str, list[float]] = {form: [] for form in bares}
            cpu_theirs: dict[str, list[float]] = {form: [] for form in bares}
            for _ in range(options.rounds):
                used = cpu_seconds(pasture_pid)
                ours.append(
                    anyio.run(
                        rate, pasture_url, token, options.mode, log_run, options.calls, clients
                    )
                )
                cpu_ours.append((cpu_seconds(pasture_pid) - used) / options.calls)
                for form, (url, pid) in bares.items():
                    used = cpu_seconds(pid)
                    theirs[form].append(
                        anyio.run(rate, url, None, options.mode, bare_run, options.calls, clients)
                    )
                    cpu_theirs[form].append((cpu_seconds(pid) - used) / options.calls)
            a = statistics.median(ours)
            print(f"  {label:<22} pasture {a:8.1f}/s")
            for form in bares:
                b = statistics.median(theirs[form])
                # Each round's runs are side by side: their ratio is the least moved by
                # whatever else the machine is doing.
                paired = " ".join(f"{x / y:.2f}" for x, y in zip(ours, theirs[form], strict=True))
                line = f"  {'':<22} bare SDK, {form:<7} {b:8.1f}/s   ratio {a / b:.2f}x"
                print(f"{line}   (each round: {paired})")
                if cpu_ours[0] >= 0:
                    c = statistics.median(cpu_ours) * 1000
                    d = statistics.median(cpu_theirs[form]) * 1000
                    print(
                        f"  {'':<22}   server CPU a call: pasture {c:.2f} ms, bare {d:.2f} ms "
                        f"(ratio {d / c:.2f}x)"
                    )

        for process in processes:
            process.terminate()
            process.wait(timeout=20)
        processes.clear()

        many, token = pasture_home(options.apps)
        homes.append(many)
        port = free_port()
        serve = [sys.executable, "-m", "pasture", "serve", "--port", str(port)]
        processes.append(start(serve, {**env, "PASTURE_HOME": str(many)}, port))

        async def commands(c: Client) -> Any:
            result = await c.call_tool("commands", {})
            assert not result.is_error, result
            return result

        url = f"http://127.0.0.1:{port}/mcp"

        async def count(c: Client) -> int:
            result = await commands(c)
            return len(result.structured_content["commands"])

        async def listed() -> int:
            async with client(url, token, options.mode) as c:
                return await count(c)

        n = anyio.run(listed)
        rates = [
            anyio.run(rate, url, token, options.mode, commands, options.calls // 4, 1)
            for _ in range(options.rounds)
        ]
        r = statistics.median(rates)
        direct = in_process_commands(many, options.calls // 4, options.rounds)
        print(
            f"  commands, {options.apps} apps    pasture {r:8.1f}/s   ({1000 / r:.1f} ms a call, "
            f"{n} commands listed)"
        )
        print(
            f"  the same listing, Service in process {direct:8.1f}/s   "
            f"({1000 / direct:.2f} ms a call; the rest is the transport and the SDK)"
        )
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=20)
        for home in homes:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
