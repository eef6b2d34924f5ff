"""pasture's `/mcp` against the servers people reach for, each serving the same two tools.

Five servers side by side in this one run, each its own uvicorn process on a loopback
port, stateless streamable HTTP with JSON replies, each on a SQLite file of its own:

- pasture: `pasture serve` with the run club deployed (`RUNS_ROWS` runs logged), the
  audit on, counting the limits, called as a bearer token's person (every check on):
  `command {name: log_run, args, app: runs}` (a write) and `command {name: leaderboard,
  app: runs}` (a read: every run, with who logged it);
- FastMCP (the `bench` extra pins it), the MCP SDK's high-level server (`MCPServer`) and
  its low-level server (`Server`), each with two tools, `log_run` and `leaderboard`, as
  their own guides write a tool: a plain function taking the arguments and answering a
  dict, over the hand-written schema `benchmarks/store.py` measures the store against
  (a typed table with an index on every column and full text over the title, a table of
  people), WAL and synchronous=NORMAL as the store opens its files, one connection;
  `leaderboard` answers the same rows as pasture's, laid out the same;
- the floor: a plain Starlette endpoint taking the same JSON-RPC body and doing the same
  insert or read, answering JSON-RPC — no MCP at all.

Each call is posted raw (httpx, a kept-alive connection, the headers an MCP client
sends, a new id each time) and its reply read whole, so the client's own work is left
out; sequential calls, `--rounds` rounds of `--calls` calls each, the servers taking
turns in an order that changes each round. Printed for each tool: each server's calls a
second and server CPU a call (read from /proc before and after, the steadiest figure on
a shared machine; split into the event loop's thread and the others), then for each peer
two ratios — its CPU a call ÷ pasture's (above 1: pasture spends less) and pasture's rate
÷ its rate (above 1: pasture answers faster) — with each round's own.

Goals: server CPU a call at most the SDK's high-level server's (≥ 1.0×), and at least
1.3× FastMCP's rate, for the write and the read.

    .venv/bin/python benchmarks/peers.py [--calls 400] [--rounds 5] [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path: keep it off (its names
# would hide nothing, but the benchmarks are not a package).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import httpx  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "examples" / "runs"
RUNS_ROWS = 20  # the runs `leaderboard` answers (log_run's own go to another app)
RUN = {"who": "Ada", "miles": 5, "at": "2026-09-01"}
PEERS = ("fastmcp", "sdk-high", "sdk-low", "floor")
NAMES = {
    "pasture": "pasture",
    "fastmcp": "FastMCP",
    "sdk-high": "MCP SDK, high-level",
    "sdk-low": "MCP SDK, low-level",
    "floor": "Starlette endpoint (floor)",
}
GOAL_CPU = 1.0  # the SDK's high-level server's CPU a call ÷ pasture's
GOAL_RATE = 1.3  # pasture's rate ÷ FastMCP's
# Each tool is called in both generations of the protocol: the handshake's (2025-11-25), and
# the newest (2026-07-28), whose every request carries its envelope, as the SDK's client sends it.
REVISIONS = ("2025-11-25", "2026-07-28")
NEWEST = REVISIONS[-1]
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": NEWEST,
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
UNREACHED = "1000000000/minute"  # limits counted, as every server counts them, never reached


def _store_bench() -> Any:
    spec = importlib.util.spec_from_file_location(
        "store_bench", Path(__file__).with_name("store.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the peers' tools, on the hand-written schema ------------------------------------------
class Club:
    """The hand-written side: one connection, shared by the threads under a lock."""

    def __init__(self, path: str) -> None:
        bench = _store_bench()
        self.insert = str(bench.INSERT)
        fresh = not Path(path).exists()
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = NORMAL")
        self.lock = threading.Lock()
        if fresh:
            for statement in bench.BASELINE:
                self.db.execute(statement)
            self.db.execute("INSERT INTO people VALUES (?, ?)", ("a" * 16, "ada"))

    def log_run(self, who: str, miles: float, at: str, *, listed: bool = False) -> dict[str, Any]:
        eid = uuid.uuid4().hex[:16]
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ")
        # a run logged through the tool is not on the board (pasture's go to another app)
        body = None if listed else "unlisted"
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(
                self.insert,
                (eid, who, miles, at, f"Run by {who}", body, now, "a" * 16, now, "a" * 16),
            )
            self.db.execute("COMMIT")
        return {"entities": [eid], "aliases": {"$run": eid}}

    def leaderboard(self) -> dict[str, Any]:
        with self.lock:
            found = self.db.execute(
                "SELECT r.eid, r.who, r.miles, r.at, r.created_at, p.eid, p.name FROM runs r "
                "LEFT JOIN people p ON p.eid = r.created_by WHERE r.body IS NULL ORDER BY r.id"
            ).fetchall()
        rows = [
            {
                "kind": "jog",
                "entity": {"eid": eid},
                "jog": {"who": who, "miles": miles, "at": at},
                "created": {"at": created, "by": {"eid": by, "name": name}},
            }
            for eid, who, miles, at, created, by, name in found
        ]
        return {"rows": rows}


INPUT = {
    "type": "object",
    "properties": {
        "who": {"type": "string"},
        "miles": {"type": "number"},
        "at": {"type": "string"},
    },
    "required": ["who", "miles", "at"],
}


def serve(kind: str, port: int, path: str) -> None:
    import logging

    import uvicorn

    os.environ["FASTMCP_LOG_LEVEL"] = "WARNING"
    logging.disable(logging.INFO)  # a line a call, at INFO, is work pasture does not do

    club = Club(path)
    app: Any
    if kind == "fastmcp":
        from fastmcp import FastMCP

        fast = FastMCP("club")

        @fast.tool
        def log_run(who: str, miles: float, at: str) -> dict[str, Any]:
            """Log a run for the club leaderboard"""
            return club.log_run(who, miles, at)

        @fast.tool
        def leaderboard() -> dict[str, Any]:
            """Every run logged so far, with who logged it"""
            return club.leaderboard()

        app = fast.http_app(path="/mcp", json_response=True, stateless_http=True)
    elif kind == "sdk-high":
        from mcp.server.mcpserver import MCPServer

        high = MCPServer("club")

        @high.tool()
        def log_run(who: str, miles: float, at: str) -> dict[str, Any]:
            """Log a run for the club leaderboard"""
            return club.log_run(who, miles, at)

        @high.tool()
        def leaderboard() -> dict[str, Any]:
            """Every run logged so far, with who logged it"""
            return club.leaderboard()

        app = high.streamable_http_app(json_response=True, stateless_http=True)
    elif kind == "sdk-low":
        app = low_level_app(club)
    else:
        app = floor_app(club)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def low_level_app(club: Club) -> Any:
    import anyio.to_thread
    import mcp_types as types
    from mcp.server import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    tools = [
        types.Tool(name="log_run", description="Log a run", input_schema=INPUT),
        types.Tool(
            name="leaderboard",
            description="Every run",
            input_schema={"type": "object", "properties": {}},
        ),
    ]
    schemas = {t.name: t.input_schema for t in tools}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        if params.name == "log_run":
            answer = await anyio.to_thread.run_sync(
                lambda: club.log_run(arguments["who"], float(arguments["miles"]), arguments["at"])
            )
        else:
            answer = await anyio.to_thread.run_sync(club.leaderboard)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(answer))],
            structured_content=answer,
        )

    server: Server[Any] = Server(
        "club",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await receive()
            async with manager.run():
                await send({"type": "lifespan.startup.complete"})
                await receive()
            await send({"type": "lifespan.shutdown.complete"})
            return
        await manager.handle_request(scope, receive, send)

    return app


def floor_app(club: Club) -> Any:
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def endpoint(request: Request) -> JSONResponse:
        body = await request.json()
        params = body["params"]
        if params["name"] == "log_run":
            a = params["arguments"]
            answer = await run_in_threadpool(club.log_run, a["who"], float(a["miles"]), a["at"])
        else:
            answer = await run_in_threadpool(club.leaderboard)
        text = json.dumps(answer)
        result = {"content": [{"type": "text", "text": text}], "structuredContent": answer}
        return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": result})

    return Starlette(routes=[Route("/mcp", endpoint, methods=["POST"])])


# -- the run -------------------------------------------------------------------------------
def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def started(args: list[str], env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    import socket

    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{args} did not start") from None
            time.sleep(0.1)


def cpu_seconds(pid: int, *, loop: bool = False) -> float:
    """CPU time a process has used (user + system), or -1 where /proc cannot say; `loop`:
    its main thread's alone, where each of these servers runs its event loop."""
    where = f"/proc/{pid}/task/{pid}/stat" if loop else f"/proc/{pid}/stat"
    try:
        fields = Path(where).read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return -1.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pasture_home() -> tuple[Path, str]:
    """The run club with `RUNS_ROWS` runs on its board, an app apart for what log_run
    writes (so the board stays the size it is), and a token of the owner's."""
    from pasture.platform.service import Service

    home = Path(tempfile.mkdtemp(prefix="pasture-peers-"))
    service = Service(home)
    owner = service.local_owner()
    service.deploy(owner, RUNS, app="runs", title="Run club")
    service.deploy(owner, RUNS, app="log", title="Run club's log")
    service.apply(owner, "runs", [bundle(n) for n in range(RUNS_ROWS)])
    token = service.new_token(owner, "bench")
    service.close()
    return home, token


def bundle(n: int) -> dict[str, Any]:
    who = f"runner {n % 17}"
    return {
        "entity": {"eid": f"$r{n}"},
        "doc": {"title": f"Run by {who}"},
        "jog": {"who": who, "miles": n % 26, "at": "2026-09-01"},
    }


@contextlib.contextmanager
def servers(env: dict[str, str]) -> Iterator[dict[str, tuple[str, dict[str, str], int]]]:
    """Each server started: name -> (url, headers, pid)."""
    home, token = pasture_home()
    processes: list[subprocess.Popen[bytes]] = []
    found: dict[str, tuple[str, dict[str, str], int]] = {}
    try:
        port = free_port()
        serve_env = {**env, "PASTURE_HOME": str(home)}
        serve_env.setdefault("PASTURE_RATE", UNREACHED)
        serve_env.setdefault("PASTURE_RATE_ADDRESS", UNREACHED)
        command = [sys.executable, "-m", "pasture", "serve", "--port", str(port)]
        processes.append(started(command, serve_env, port))
        headers = {**HEADERS, "Authorization": f"Bearer {token}"}
        found["pasture"] = (f"http://127.0.0.1:{port}/mcp", headers, processes[-1].pid)
        for kind in PEERS:
            port = free_port()
            db = home / f"{kind}.db"
            seed(db)
            command = [sys.executable, __file__, "--serve", kind, str(port), str(db)]
            processes.append(started(command, env, port))
            found[kind] = (f"http://127.0.0.1:{port}/mcp", dict(HEADERS), processes[-1].pid)
        yield found
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=20)
        import shutil

        shutil.rmtree(home, ignore_errors=True)


def seed(db: Path) -> None:
    club = Club(str(db))
    for n in range(RUNS_ROWS):
        b = bundle(n)["jog"]
        club.log_run(b["who"], b["miles"], b["at"], listed=True)
    club.db.execute("ANALYZE")
    club.db.close()


def call_of(which: str, tool: str) -> dict[str, Any]:
    """The `tools/call` params of `tool` at `which`."""
    arguments: dict[str, Any] = dict(RUN) if tool == "log_run" else {}
    if which == "pasture":
        app = "log" if tool == "log_run" else "runs"
        return {"name": "command", "arguments": {"name": tool, "args": arguments, "app": app}}
    return {"name": tool, "arguments": arguments}


def answered(reply: bytes, tool: str) -> None:
    """A reply is the tool's answer, not an error (the read: `RUNS_ROWS` rows)."""
    result = json.loads(reply)["result"]
    assert not result.get("isError"), result
    if tool == "leaderboard":
        rows = result["structuredContent"]["rows"]
        assert len(rows) == RUNS_ROWS, f"{len(rows)} rows"


def measured(
    url: str,
    headers: dict[str, str],
    params: dict[str, Any],
    tool: str,
    calls: int,
    pid: int,
    revision: str,
) -> tuple[float, float, float]:
    """Calls a second, server CPU seconds a call and those of its event loop's thread,
    `calls` posted one after another."""
    headers = {**headers, "MCP-Protocol-Version": revision}
    if revision == NEWEST:
        params = {**params, "_meta": ENVELOPE}
        headers.update({"Mcp-Method": "tools/call", "Mcp-Name": params["name"]})
    body = {"jsonrpc": "2.0", "method": "tools/call", "params": params}
    with httpx.Client(timeout=60) as web:

        def once(n: int) -> bytes:
            reply = web.post(url, headers=headers, content=json.dumps({**body, "id": n}))
            assert reply.status_code == 200, (reply.status_code, reply.text[:500])
            return reply.content

        for n in range(3):  # warm up: the connection, the caches
            answered(once(-n - 1), tool)
        used, looped = cpu_seconds(pid), cpu_seconds(pid, loop=True)
        began = time.perf_counter()
        for n in range(calls):
            once(n)
        took = time.perf_counter() - began
        cpu = (cpu_seconds(pid) - used) / calls if used >= 0 else -1.0
        loop = (cpu_seconds(pid, loop=True) - looped) / calls if looped >= 0 else -1.0
    return calls / took, cpu, loop


def compare(
    found: dict[str, tuple[str, dict[str, str], int]],
    tool: str,
    calls: int,
    rounds: int,
    revision: str,
) -> dict[str, float]:
    """Each server's median rate and CPU a call for `tool`, printed with the ratios; the
    ratios the goals read (CPU against the SDK's high-level server, rate against FastMCP)."""
    rates: dict[str, list[float]] = {which: [] for which in found}
    cpus: dict[str, list[float]] = {which: [] for which in found}
    loops: dict[str, list[float]] = {which: [] for which in found}
    names = list(found)
    for n in range(rounds):
        order = names[n % len(names) :] + names[: n % len(names)]
        if n % 2:
            order.reverse()
        for which in order:
            url, headers, pid = found[which]
            r, c, o = measured(url, headers, call_of(which, tool), tool, calls, pid, revision)
            rates[which].append(r)
            cpus[which].append(c)
            loops[which].append(o)
    what = "a write" if tool == "log_run" else f"a read of {RUNS_ROWS} rows"
    print(f"\n{tool} ({what}), protocol {revision}:")
    # The CPU a call split: the event loop's thread (HTTP, MCP, the door) and the others
    # (the tool run in a thread, and pasture's writers of the audit and the bus).
    print(
        f"  {'':<28} {'calls/s':>9} {'CPU ms':>8} {'loop':>6} {'rest':>6}   "
        f"{'CPU ÷ ours':>10} {'our rate ÷':>10}"
    )
    rate = {w: statistics.median(v) for w, v in rates.items()}
    cpu = {w: statistics.median(v) for w, v in cpus.items()}
    loop = {w: statistics.median(v) for w, v in loops.items()}
    ratios: dict[str, float] = {}
    for which in found:
        line = f"  {NAMES[which]:<28} {rate[which]:9.1f} {cpu[which] * 1000:8.2f}"
        line += f" {loop[which] * 1000:6.2f} {(cpu[which] - loop[which]) * 1000:6.2f}"
        if which != "pasture":
            c = cpu[which] / cpu["pasture"]
            r = rate["pasture"] / rate[which]
            each = " ".join(
                f"{a / b:.2f}/{x / y:.2f}"
                for a, b, x, y in zip(
                    cpus[which], cpus["pasture"], rates["pasture"], rates[which], strict=True
                )
            )
            line += f"   {c:9.2f}x {r:9.2f}x   (each round, CPU/rate: {each})"
            ratios[which] = c if which == "sdk-high" else r
        print(line)
    high, fast = cpu["sdk-high"] / cpu["pasture"], rate["pasture"] / rate["fastmcp"]
    print(
        f"  goals: CPU a call ≤ the SDK's high-level server's: {high:.2f}x (≥ {GOAL_CPU:.1f}x, "
        f"{'met' if high >= GOAL_CPU else 'not met'}); rate ≥ {GOAL_RATE}x FastMCP's: "
        f"{fast:.2f}x ({'met' if fast >= GOAL_RATE else 'not met'})"
    )
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, help="calls a run (400; --quick 40)")
    parser.add_argument("--rounds", type=int, help="rounds, each server once a round (5; 2)")
    parser.add_argument("--quick", action="store_true", help="fewer calls and rounds")
    parser.add_argument("--only", choices=["log_run", "leaderboard"], action="append")
    parser.add_argument("--revision", choices=REVISIONS, action="append")
    parser.add_argument("--serve", nargs=3, metavar=("KIND", "PORT", "DB"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve:
        serve(options.serve[0], int(options.serve[1]), options.serve[2])
        return
    try:
        import fastmcp  # noqa: F401
    except ImportError:
        raise SystemExit(
            "benchmarks/peers.py needs the bench extra: .venv/bin/pip install -e '.[bench]'"
        ) from None
    calls = options.calls or (40 if options.quick else 400)
    rounds = options.rounds or (1 if options.quick else 5)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    print(
        f"{calls} calls a run, posted raw one after another over stateless streamable HTTP "
        f"(JSON replies); median of {rounds} rounds, the servers taking turns:"
    )
    with servers(env) as found:
        for tool in options.only or ["log_run", "leaderboard"]:
            for revision in options.revision or REVISIONS:
                compare(found, tool, calls, rounds, revision)


if __name__ == "__main__":
    main()
