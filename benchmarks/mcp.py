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

Beside them, in the same pasture, a code command: `club log`, registered by a
`worker.py` in an app of the owner's own space (trusted), writes the same row
as `log_run` (a jog {who, miles, at} with the doc title "Run by <who>") through
`ctx.store.apply`. It runs in the app's worker processes (confined by
bubblewrap where that works): a call goes from the server to an idle worker,
the write comes back to the server as the caller, then the reply. Its rate is
read as a ratio against the declared `log_run` measured in the same rounds
(goal ≥ 0.8×), with the CPU a call of the server and of its worker processes.

Measured with the SDK's own client, sequentially and with 8 concurrent clients,
alternating the servers over several rounds; the medians and their ratio
are printed, then each round's own ratio and, where /proc tells it, each
server's CPU time a call (less moved by other work on a shared machine than
the rates).

Then what the sign-in and the audit cost: `command log_run` called with an OAuth
access token on a server with the audit on, against the same called with a
static token (`pasture token new`) on a server with the audit off
(`PASTURE_AUDIT=off`): two `pasture serve`, side by side, each with its own
PASTURE_HOME and the run club deployed. The access token is got the way an
agent gets one, over HTTP: dynamic client registration (`POST /register`),
`GET /authorize` with PKCE (S256, scope `read write`, the resource `…/mcp`),
the consent page signed in to as a browser is with `pasture signin`'s one-time
link, approved (read and write, every space), and the code exchanged at
`POST /token`. The two are measured in the same rounds, sequentially and with
8 clients, the order alternating; printed: the medians, their ratio (goal
≥ 0.95×), each round's, and each server's CPU a call (the audit's writer thread
is in it: the CPU is read a moment after the calls, once their records are
written). Then each server's audit is read back (`pasture audit runs --json`,
the servers stopped): the audit-on one must hold a record of every call made
to it, the other none.

Every `pasture serve` here counts calls against its rate limits
(`pasture.platform.access.limits`) as any server does, at limits no run reaches
(unless $PASTURE_RATE or $PASTURE_RATE_ADDRESS says otherwise).

Then what an operator turns on costs: `command log_run` on a server counting the limits
(shared by every process on its data), serving `/metrics` and logging JSON lines to a
file, against one with the limits off, no metrics and the text log (to a file too): two
`pasture serve` side by side, in the same rounds (goal ≥ 0.95×); the JSON log is read
back, a line a request.

Last, `commands` on a pasture with 200 apps deployed (the run club's three
commands each, from its tools.json, spread over four spaces of one person:
600 commands), against a bare SDK server (the low-level server, one tool) whose
`commands` returns the same answer, made once before the run: what the
transport and the SDK cost a call of that size. Both over stateless
streamable HTTP with JSON responses, called by the SDK's client, sequentially,
alternating over the rounds; printed: each one's milliseconds a call (goal for
pasture ≤ 4 ms), their ratio, each round's, each server's CPU a call, and the
listing itself called in process.

Then what carrying the data in the text costs: `command leaderboard` over HTTP on a
server whose answers' text is the sentence followed by the data as JSON (as every
server's is), against one answering the text alone, as answers were before — the same
`pasture serve`, its answers' text made without the JSON (`--text-alone`, which only this
script starts): two servers side by side with the same runs, at 20 rows and at a full page
of 1,000 (whose text carries what fits in 64,000 characters of JSON), measured in the same
rounds; printed: the medians, their ratio, each round's, each server's CPU a call, and the
bytes of each answer and of its text.

And what finding a token's person costs a request on the event loop: asked of
memory at once (what the MCP door does first), looked up inline (what it may
not do: the lookup can wait on the database), and looked up in a thread (what it
does when memory cannot tell), each a request's share, in process.

    .venv/bin/python benchmarks/mcp.py [--calls 400] [--rounds 3] [--mode auto|legacy]
    .venv/bin/python benchmarks/mcp.py --quick   # 50 calls, 1 round, 20 apps: a look
    .venv/bin/python benchmarks/mcp.py --only oauth   # OAuth + audit against static, alone
    .venv/bin/python benchmarks/mcp.py --only operator   # shared limits, metrics, JSON logs
    .venv/bin/python benchmarks/mcp.py --only commands   # `commands`, 200 apps, alone
    .venv/bin/python benchmarks/mcp.py --only lookup   # a token's person: at once, in a thread
    .venv/bin/python benchmarks/mcp.py --only text   # the data in the text vs the text alone
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import secrets
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
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

# Run as a script, this file's folder comes first on sys.path and its name would hide the SDK's.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402
import httpx  # noqa: E402
import httpx2  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from mcp import Client  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "examples" / "runs"
RUN = {"who": "Ada", "miles": "5", "at": "2026-09-01"}
# An agent's values reach a code command as they are sent (only typed text is converted).
CODE_RUN = {"who": "Ada", "miles": 5, "at": "2026-09-01"}
CONCURRENT = 8
# Limits every pasture here counts calls against, and no run reaches (see the docstring).
UNREACHED = "1000000000/minute"
GOAL_OAUTH = 0.95  # OAuth with the audit on, against a static token with the audit off
GOAL_OPERATOR = 0.95  # shared limits, metrics and JSON logs, against all three off
GOAL_TEXT = 0.90  # `command leaderboard` with the data in the text, against the text alone
TEXT_ROWS = (20, 1000)  # the runs `leaderboard` answers: a small board, and a full page
CALLBACK = "http://127.0.0.1:9/cb"  # nothing listens: the code is read off the redirect

# The code command's app: the run club's vocabulary and this worker.py, nothing else.
CODE_APP = "clubcode"
CODE_COMMAND = "club log"
CODE_WORKER = """
from pasture import Result


def log(args, ctx):
    who = args["who"]
    applied = ctx.store.apply(
        {
            "entity": {"eid": "$run"},
            "doc": {"title": f"Run by {who}"},
            "jog": {"who": who, "miles": args["miles"], "at": args["at"]},
        }
    )
    return Result(
        f"club log: wrote 1 entity: {applied.entities[0]}",
        {"entities": list(applied.entities), "aliases": dict(applied.aliases)},
    )


def setup(app):
    app.register(
        "club log",
        description="Log a run for the club leaderboard",
        input={
            "type": "object",
            "properties": {
                "who": {"type": "string"},
                "miles": {"type": "number"},
                "at": {"type": "string"},
            },
            "required": ["who", "miles", "at"],
        },
        annotations={},
        run=log,
    )
"""


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

    serve_one_tool(port, tool, list_tools, call_tool)


def serve_one_tool(port: int, tool: Any, list_tools: Any, call_tool: Any) -> None:
    """The SDK's low-level server offering one tool over stateless streamable HTTP (JSON
    replies, as pasture's `/mcp`), on uvicorn at `port`."""
    import uvicorn
    from mcp.server import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

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


def serve_bare_answer(port: int, answer_path: str) -> None:
    """The SDK's low-level server with one tool, `commands`, answering every call with the
    answer read from `answer_path` (pasture's own, as it was once): the transport and the
    SDK's share of a call whose answer costs nothing to make."""
    import mcp_types as types

    from pasture.mcp._tools import TOOLS

    saved = json.loads(Path(answer_path).read_text())
    tool = next(t for t in TOOLS if t.name == "commands")
    answer = types.CallToolResult(
        content=[types.TextContent(type="text", text=saved["text"])],
        structured_content=saved["structured"],
    )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return answer

    serve_one_tool(port, tool, list_tools, call_tool)


def serve_floor(port: int, replies_path: str) -> None:
    """The least a server can do: every request answered with pasture's own reply to it,
    written by the SDK once and kept (`replies_path`: method -> status, headers, body),
    its id put in. What is left of a call is the client's, the transport's and uvicorn's."""
    import uvicorn

    kept: dict[str, tuple[int, list[tuple[bytes, bytes]], bytes, bytes]] = {}
    for method, (status, headers, body) in json.loads(Path(replies_path).read_text()).items():
        head, _, rest = body.partition('"id":')
        tail = rest[rest.index(",") :] if rest else ""
        listed = [(k.encode(), v.encode()) for k, v in headers if k != "content-length"]
        kept[method] = (status, listed, (head + '"id":').encode(), tail.encode())

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body)
        status, headers, head, tail = kept[request["method"]]
        answer = head + json.dumps(request["id"]).encode() + tail if "id" in request else b""
        headers = [*headers, (b"content-length", str(len(answer)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": answer})

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


# -- processes -----------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start(
    args: list[str], env: dict[str, str], port: int, stderr: Any = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    # A server's log (a line a request) is not this run's to print: unless given a file, none.
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{args} did not start") from None
            time.sleep(0.1)


def pasture_home(apps: int, code: bool = False) -> tuple[Path, str]:
    from pasture.platform.service import Service

    home = Path(tempfile.mkdtemp(prefix="pasture-bench-"))
    service = Service(home)
    owner = service.local_owner()
    service.deploy(owner, RUNS, app="runs", title="Run club")
    if code:  # into the owner's own space, which is always trusted to run code
        files = {"vocab.json": (RUNS / "vocab.json").read_bytes(), "worker.py": CODE_WORKER}
        service.deploy(owner, files, app=CODE_APP, title="Run club, as code")
    for n in range(1, apps):
        service.deploy(owner, RUNS, app=f"runs{n}", title=f"Run club {n}")
    token = service.new_token(owner, "bench")
    service.close()
    return home, token


SPACES = 4  # the person's own space and three more they own: `commands` lists all of theirs


def many_apps_home(apps: int) -> tuple[Path, str]:
    """`apps` copies of the run club (three commands each, from its tools.json) spread over
    the owner's spaces, and a token of theirs."""
    from pasture.platform.service import Service

    home = Path(tempfile.mkdtemp(prefix="pasture-bench-"))
    service = Service(home)
    owner = service.local_owner()
    spaces = [str(owner.name)]
    for n in range(1, SPACES):
        service.spaces.new_space(owner, f"club{n}")
        spaces.append(f"club{n}")
    for n in range(apps):
        space = spaces[n % len(spaces)]
        service.deploy(owner, RUNS, space=space, app=f"runs{n}", title=f"Run club {n}")
    token = service.new_token(owner, "bench")
    service.close()
    return home, token


def in_process_commands(home: Path, calls: int, rounds: int) -> float:
    """`Service.list_commands` called directly: what the listing costs before any door."""
    from pasture.platform.service import Service

    service = Service(home)
    owner = service.local_owner()
    service.listing.list_commands(owner)
    rates = []
    for _ in range(rounds):
        began = time.perf_counter()
        for _ in range(calls):
            service.listing.list_commands(owner)
        rates.append(calls / (time.perf_counter() - began))
    service.close()
    return statistics.median(rates)


def token_lookups(rounds: int, lookups: int = 5000) -> None:
    """What finding a token's person costs a request on the event loop, three ways: asked
    of memory at once (`Service.caller_at_once`, what the MCP door does first), looked up
    inline (what it did before, and may not: it can wait on the database), and looked up in
    a thread (what it does when memory cannot tell)."""
    from pasture.platform.service import Service

    home = Path(tempfile.mkdtemp(prefix="pasture-bench-"))
    service = Service(home)
    owner = service.local_owner()
    token = service.new_token(owner, "bench")
    service.caller_for_token(token)
    service.caller_for_token(token)  # again: its first use's note moved the database
    assert service.caller_at_once(token) is not None

    async def timed() -> dict[str, list[float]]:
        ways: dict[str, list[float]] = {"at once": [], "inline": [], "in a thread": []}
        for _ in range(rounds):
            began = time.perf_counter()
            for _ in range(lookups):
                service.caller_at_once(token)
            ways["at once"].append(time.perf_counter() - began)
            began = time.perf_counter()
            for _ in range(lookups):
                service.caller_for_token(token)
            ways["inline"].append(time.perf_counter() - began)
            began = time.perf_counter()
            for _ in range(lookups):
                await anyio.to_thread.run_sync(lambda: service.caller_for_token(token))
            ways["in a thread"].append(time.perf_counter() - began)
        return ways

    try:
        ways = anyio.run(timed)
    finally:
        service.close()
        shutil.rmtree(home, ignore_errors=True)
    print(f"finding a token's person, a request's share (median of {rounds} rounds):")
    us = {way: statistics.median(t) / lookups * 1e6 for way, t in ways.items()}
    for way, took in us.items():
        print(f"  {way:<12} {took:7.1f} µs   ratio {took / us['at once']:.1f}x of at once")


# -- an OAuth access token, got as an agent gets one -------------------------------
class ConsentForm(HTMLParser):
    """The consent page's form (not the header's sign-out): its inputs (name, type, value),
    as a browser reads them."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.inputs: list[tuple[str, str, str]] = []
        self._inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self._inside = "/oauth/consent" in a.get("action", "")
            if self._inside:
                self.action = a.get("action", "")
        elif self._inside and tag in ("input", "button") and a.get("name"):
            kind = a.get("type") or ("submit" if tag == "button" else "text")
            self.inputs.append((a["name"], kind, a.get("value", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._inside = False


def oauth_access_token(base: str, env: dict[str, str]) -> str:
    """Register a client, authorize it with PKCE, sign in and approve the consent page
    (read and write, every space) as a browser would, and exchange the code: the access
    token, from the server at `base` whose PASTURE_HOME `env` names."""
    with httpx.Client(base_url=base, timeout=30) as web:
        answer = web.post(
            "/register",
            json={
                "client_name": "pasture bench",
                "redirect_uris": [CALLBACK],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            },
        )
        assert answer.status_code == 201, answer.text
        registered = answer.json()
        client_id = registered["client_id"]
        verifier = secrets.token_urlsafe(48)
        digest = hashlib.sha256(verifier.encode()).digest()
        challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        state = secrets.token_urlsafe(16)
        answer = web.get(
            "/authorize",
            params={
                "response_type": "code",
                "client_id": client_id,
                "redirect_uri": CALLBACK,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "state": state,
                "scope": "read write",
                "resource": f"{base}/mcp",
            },
        )
        assert answer.status_code == 302, answer.text
        consent = answer.headers["location"]
        assert "/oauth/consent?request=" in consent, consent

        # Signed in as a browser is with the owner's one-time link: it sets the session cookie.
        made = subprocess.run(
            [sys.executable, "-m", "pasture", "signin", "--json", "--public-url", base],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        answer = web.get(json.loads(made.stdout)["link"])
        assert answer.status_code == 303 and web.cookies, answer.text

        answer = web.get(consent)
        assert answer.status_code == 200, answer.text
        form = ConsentForm()
        form.feed(answer.text)
        fields: dict[str, list[str]] = {}
        for name, kind, value in form.inputs:
            if kind == "radio" and value != "write":  # read and write
                continue
            if kind == "submit" and value != "approve":
                continue
            fields.setdefault(name, []).append(value)  # every space's box, the request
        assert fields.get("scope") == ["write"] and fields.get("spaces"), form.inputs
        answer = web.post(form.action or "/oauth/consent", data=fields, headers={"Origin": base})
        assert answer.status_code == 303, answer.text
        back = answer.headers["location"]
        assert back.startswith(CALLBACK), back
        query = parse_qs(urlsplit(back).query)
        assert query.get("state") == [state] and "code" in query, back

        token = {
            "grant_type": "authorization_code",
            "code": query["code"][0],
            "code_verifier": verifier,
            "client_id": client_id,
            "redirect_uri": CALLBACK,
            "resource": f"{base}/mcp",
        }
        if registered.get("client_secret"):
            token["client_secret"] = registered["client_secret"]
        answer = web.post("/token", data=token)
        assert answer.status_code == 200, answer.text
        got = answer.json()
        assert got["token_type"].lower() == "bearer" and "write" in got["scope"].split(), got
        access: str = got["access_token"]
        return access


def audited(home: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """The `command log_run` calls a pasture's audit holds, read with `pasture audit`."""
    shown = subprocess.run(
        [sys.executable, "-m", "pasture", "audit", "runs", "--json", "--limit", "10000"],
        env={**env, "PASTURE_HOME": str(home)},
        capture_output=True,
        text=True,
        check=True,
    )
    records: list[dict[str, Any]] = json.loads(shown.stdout)["records"]
    return [r for r in records if r["action"] == "command" and r["command"] == "log_run"]


# -- measuring -----------------------------------------------------------------
def cpu_seconds(pid: int) -> float:
    """CPU time a process has used (user + system), or -1 where /proc cannot say."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return -1.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def descendants(pid: int) -> list[int]:
    """Every live process under `pid` (a server's worker processes and their sandboxes)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def cpu_of_descendants(pid: int) -> dict[int, float]:
    return {child: cpu_seconds(child) for child in descendants(pid)}


def cpu_used_since(before: dict[int, float], pid: int) -> float:
    """CPU time the processes under `pid` used since `before` (those started since: all of it)."""
    now = cpu_of_descendants(pid)
    return sum(max(0.0, used - before.get(child, 0.0)) for child, used in now.items())


Call = Callable[[Client], Awaitable[Any]]


def client(
    url: str, token: str | None, mode: str, hooks: dict[str, list[Any]] | None = None
) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=60, event_hooks=hooks)
    return Client(streamable_http_client(url, http_client=http), mode=mode)


@dataclass(frozen=True)
class Measured:
    """One run: calls a second, and CPU seconds a call of the server and of what it started."""

    rate: float
    cpu: float  # the server process's (-1 where /proc cannot say)
    cpu_under: float  # its child processes' (a code command's workers and their sandboxes)


async def rate(
    url: str,
    token: str | None,
    mode: str,
    call: Call,
    calls: int,
    clients: int,
    pid: int,
    settle: float = 0.0,
) -> Measured:
    """`calls` in all, shared by `clients` connected clients at once, to the server `pid`.

    Only the calls after the warm-up are timed, and their CPU counted: from `settle`
    seconds after the warm-up to `settle` seconds after the last call (what a server does
    after answering, such as writing the calls' audit records, is counted with them).
    """
    each = calls // clients
    async with AsyncExitStack() as stack:
        connected = [
            await stack.enter_async_context(client(url, token, mode)) for _ in range(clients)
        ]

        async def run(c: Client, times: int) -> None:
            for _ in range(times):
                await call(c)

        async with anyio.create_task_group() as group:  # warm both ends up, all at once
            for c in connected:  # (so a code command's worker processes are started)
                group.start_soon(run, c, 1)

        await anyio.sleep(settle)
        used, under = cpu_seconds(pid), cpu_of_descendants(pid)
        began = time.perf_counter()
        async with anyio.create_task_group() as group:
            for c in connected:
                group.start_soon(run, c, each)
        took = time.perf_counter() - began
        await anyio.sleep(settle)
        done = each * clients
        cpu = (cpu_seconds(pid) - used) / done if used >= 0 else -1.0
        return Measured(done / took, cpu, cpu_used_since(under, pid) / done)


def oauth_against_static(
    options: argparse.Namespace,
    env: dict[str, str],
    homes: list[Path],
    processes: list[subprocess.Popen[bytes]],
) -> None:
    """`command log_run` with an OAuth access token and the audit on, against a static
    token and the audit off: two servers side by side, measured in the same rounds."""
    servers: dict[str, tuple[str, str, int]] = {}  # which -> (url, token, pid)
    server_env: dict[str, dict[str, str]] = {}
    for which in ("static", "oauth"):
        home, token = pasture_home(1)
        homes.append(home)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        their = {k: v for k, v in env.items() if k != "PASTURE_AUDIT"}  # on, as by default
        their["PASTURE_HOME"] = str(home)
        if which == "static":
            their["PASTURE_AUDIT"] = "off"
        serve = [sys.executable, "-m", "pasture", "serve", "--port", str(port)]
        processes.append(start(serve, their, port))
        if which == "oauth":
            token = oauth_access_token(base, their)
        servers[which] = (f"{base}/mcp", token, processes[-1].pid)
        server_env[which] = their

    made = {which: 0 for which in servers}  # calls answered, the warm-ups too

    def log_run_at(which: str) -> Call:
        async def log_run(c: Client) -> Any:
            result = await c.call_tool("command", {"name": "log_run", "args": RUN, "app": "runs"})
            assert not result.is_error, result
            made[which] += 1
            return result

        return log_run

    settle = 0.5  # past the audit writer's linger (0.2 s) and its write
    print()
    print(
        "command log_run with an OAuth access token, the audit on, against a static token, "
        "the audit off"
    )
    names = {"static": "static token, audit off", "oauth": "OAuth token, audit on"}
    side_by_side(options, servers, names, log_run_at, settle, GOAL_OAUTH)

    # Stopped, each server writes what its audit still holds; then it is read back.
    for which in servers:
        process = next(p for p in processes if p.pid == servers[which][2])
        process.terminate()
        process.wait(timeout=20)
        processes.remove(process)
    kept = {which: audited(Path(server_env[which]["PASTURE_HOME"]), env) for which in servers}
    oauth = kept["oauth"]
    ways = sorted({f"door {r['door']}, via {r['via']}" for r in oauth})
    ok = sum(1 for r in oauth if r["outcome"] == "ok")
    shown = " (pasture audit shows 10,000 at most)" if made["oauth"] > 10_000 else ""
    print(
        f"  audit, read back: the audit-on server recorded {len(oauth)} command log_run calls "
        f"of the {made['oauth']} it answered{shown}, {ok} ok ({'; '.join(ways) or 'none'});"
    )
    static = len(kept["static"])
    print(f"  {'':<18}the audit-off server {static} of the {made['static']} it answered")
    assert len(oauth) == min(made["oauth"], 10_000), "the audit missed calls"


def side_by_side(
    options: argparse.Namespace,
    servers: dict[str, tuple[str, str, int]],
    names: dict[str, str],
    call_at: Callable[[str], Call],
    settle: float,
    goal: float,
) -> None:
    """Two servers (`servers`: the baseline first, then the one measured against it, each
    (url, token, pid)) called in the same rounds, sequentially and with 8 clients, the order
    alternating; printed: the medians, their ratio against `goal`, each round's, and each
    server's CPU a call."""
    base, other = list(servers)
    print(
        f"(two pasture servers side by side), {options.calls} calls a run, median of "
        f"{options.rounds} rounds, the order alternating:"
    )
    for clients in (1, CONCURRENT):
        label = "sequential" if clients == 1 else f"{clients} concurrent clients"
        rates: dict[str, list[float]] = {which: [] for which in servers}
        cpus: dict[str, list[float]] = {which: [] for which in servers}
        for n in range(options.rounds):
            order = list(servers) if n % 2 == 0 else list(reversed(servers))
            for which in order:
                url, token, pid = servers[which]
                m = anyio.run(
                    rate,
                    url,
                    token,
                    options.mode,
                    call_at(which),
                    options.calls,
                    clients,
                    pid,
                    settle,
                )
                rates[which].append(m.rate)
                cpus[which].append(m.cpu)
        a = statistics.median(rates[base])
        b = statistics.median(rates[other])
        paired = " ".join(f"{x / y:.2f}" for x, y in zip(rates[other], rates[base], strict=True))
        print(f"  {label:<22} {names[base]:<34} {a:8.1f}/s")
        line = f"  {'':<22} {names[other]:<34} {b:8.1f}/s   ratio {b / a:.2f}x (goal ≥ {goal:.2f}x)"
        print(f"{line}   (each round: {paired})")
        if cpus[base][0] >= 0:
            c = statistics.median(cpus[base]) * 1000
            d = statistics.median(cpus[other]) * 1000
            print(
                f"  {'':<22}   server CPU a call: {names[base]} {c:.2f} ms; "
                f"{names[other]} {d:.2f} ms (ratio {c / d:.2f}x)"
            )


def operator_against_plain(
    options: argparse.Namespace,
    env: dict[str, str],
    homes: list[Path],
    processes: list[subprocess.Popen[bytes]],
) -> None:
    """`command log_run` over HTTP on a server with what an operator turns on — the limits
    counted (shared by every process on the data: `limits.db`), `--metrics` and
    `--log-format json`, its log written to a file — against one with the limits off
    (`PASTURE_RATE=off`, `PASTURE_RATE_ADDRESS=off`), no metrics and the text log, written
    to a file too: two `pasture serve` side by side, measured in the same rounds."""
    servers: dict[str, tuple[str, str, int]] = {}
    logs: dict[str, Path] = {}
    for which in ("plain", "operator"):
        home, token = pasture_home(1)
        homes.append(home)
        port = free_port()
        their = {**env, "PASTURE_HOME": str(home)}
        serve = [sys.executable, "-m", "pasture", "serve", "--port", str(port)]
        if which == "plain":
            their["PASTURE_RATE"] = their["PASTURE_RATE_ADDRESS"] = "off"
        else:
            serve += ["--metrics", "--log-format", "json"]
        logs[which] = home / "server.log"
        with logs[which].open("wb") as written:
            processes.append(start(serve, their, port, stderr=written))
        servers[which] = (f"http://127.0.0.1:{port}/mcp", token, processes[-1].pid)

    def log_run_at(which: str) -> Call:
        async def log_run(c: Client) -> Any:
            result = await c.call_tool("command", {"name": "log_run", "args": RUN, "app": "runs"})
            assert not result.is_error, result
            return result

        return log_run

    print()
    print(
        "command log_run with shared limits, /metrics and JSON logs on, against the limits "
        "off, no metrics and text logs"
    )
    names = {"plain": "limits off, text log", "operator": "shared limits, metrics, JSON log"}
    side_by_side(options, servers, names, log_run_at, 0.2, GOAL_OPERATOR)
    lines = logs["operator"].read_text().splitlines()
    requests = [json.loads(line) for line in lines if '"logger": "pasture.requests"' in line]
    print(
        f"  log, read back: the JSON-log server wrote {len(requests)} request lines "
        f"({logs['operator'].stat().st_size:,} bytes), the text-log server "
        f"{logs['plain'].stat().st_size:,} bytes"
    )
    assert requests and all("request_id" in r for r in requests), "the JSON log has no requests"


def serve_text_alone(port: int) -> None:
    """`pasture serve` on `port` whose MCP answers' text is the sentence alone, as before the
    data was carried in it: the baseline of `text_against_alone`, started by this script."""
    from pasture.cli import main as pasture
    from pasture.mcp import _tool_results

    _tool_results.text_of = lambda result: result.text  # what `success` says as the text
    raise SystemExit(pasture(["serve", "--port", str(port)]))


def runs_home(rows: int) -> tuple[Path, str]:
    """The run club with `rows` runs logged, and a token of its owner."""
    from pasture.platform.service import Service

    home, token = pasture_home(1)
    service = Service(home)
    owner = service.local_owner()
    runs = [
        {
            "entity": {"eid": f"$r{n}"},
            "doc": {"title": f"Run by runner {n % 17}"},
            "jog": {"who": f"runner {n % 17}", "miles": n % 26, "at": "2026-09-01"},
        }
        for n in range(rows)
    ]
    service.apply(owner, "runs", runs)
    service.close()
    return home, token


async def leaderboard(c: Client) -> Any:
    result = await c.call_tool("command", {"name": "leaderboard", "app": "runs"})
    assert not result.is_error, result
    return result


def answer_bytes(url: str, token: str, mode: str) -> tuple[int, int, int]:
    """One `command leaderboard` call: the bytes of its HTTP reply, the characters of its
    text, and the rows its structured content holds."""
    replies: list[bytes] = []

    async def on_response(response: Any) -> None:
        await response.aread()
        if b'"method":"tools/call"' in response.request.content.replace(b" ", b""):
            replies.append(response.content)

    async def once() -> tuple[int, int, int]:
        async with client(url, token, mode, {"response": [on_response]}) as c:
            result = await leaderboard(c)
        (reply,) = replies
        return len(reply), len(result.content[0].text), len(result.structured_content["rows"])

    return anyio.run(once)


def text_against_alone(
    options: argparse.Namespace,
    env: dict[str, str],
    homes: list[Path],
    processes: list[subprocess.Popen[bytes]],
) -> None:
    """`command leaderboard` with the data in the text against the text alone: two servers
    side by side with the same runs, for each of `TEXT_ROWS`."""
    for rows in TEXT_ROWS:
        servers: dict[str, tuple[str, str, int]] = {}
        for which in ("alone", "data"):
            home, token = runs_home(rows)
            homes.append(home)
            port = free_port()
            if which == "alone":
                serve = [sys.executable, __file__, "--text-alone", str(port)]
            else:
                serve = [sys.executable, "-m", "pasture", "serve", "--port", str(port)]
            with (home / "server.log").open("wb") as written:  # its lines, not the figure's
                processes.append(start(serve, {**env, "PASTURE_HOME": str(home)}, port, written))
            servers[which] = (f"http://127.0.0.1:{port}/mcp", token, processes[-1].pid)
        sizes = {
            which: answer_bytes(url, token, options.mode)
            for which, (url, token, _) in servers.items()
        }
        assert sizes["alone"][2] == sizes["data"][2] == rows, sizes
        print()
        print(
            f"command leaderboard, {rows:,} rows, over streamable HTTP ({options.mode}): the data "
            "in the text, against the text alone"
        )
        names = {"alone": "text alone (before)", "data": "the data in the text"}
        calls = options.calls if rows < 100 else max(options.calls // 8, 10)
        side_by_side(
            argparse.Namespace(**{**vars(options), "calls": calls}),
            servers,
            names,
            lambda _which: leaderboard,
            0.0,
            GOAL_TEXT,
        )
        (a, at, _), (b, bt, _) = sizes["alone"], sizes["data"]
        print(
            f"  {'bytes of an answer':<22} text alone {a:,} B (its text {at:,} characters); "
            f"the data in the text {b:,} B (its text {bt:,} characters): {b / a:.2f}x"
        )
        for which in servers:
            process = next(p for p in processes if p.pid == servers[which][2])
            process.terminate()
            process.wait(timeout=20)
            processes.remove(process)


GOAL_COMMANDS_MS = 4.0  # `commands` with 200 apps and 600 commands, a call over HTTP


def raw_rate(url: str, headers: dict[str, str], body: dict[str, Any], calls: int) -> float:
    """Calls a second of one request posted as the SDK's client posts it (its headers, its
    body with a new id each time), each reply read whole but not parsed: how fast the server
    answers, the client's own work left out."""
    with httpx.Client(timeout=60) as web:

        def once(n: int) -> None:
            answer = web.post(url, headers=headers, content=json.dumps({**body, "id": n}))
            assert answer.status_code == 200 and answer.content.startswith(b'{"jsonrpc"'), answer

        once(0)
        began = time.perf_counter()
        for n in range(1, calls + 1):
            once(n)
        return calls / (time.perf_counter() - began)


def commands_against_bare(
    options: argparse.Namespace,
    env: dict[str, str],
    homes: list[Path],
    processes: list[subprocess.Popen[bytes]],
) -> None:
    """`commands` on a pasture with `options.apps` apps (three commands each) against a bare
    SDK server whose `commands` answers the same, precomputed, and a floor server replaying
    pasture's own replies: side by side, sequential calls, the same rounds, the order
    alternating; with the SDK's client, then posted raw (the client's work left out)."""
    home, token = many_apps_home(options.apps)
    homes.append(home)
    port = free_port()
    serve = [sys.executable, "-m", "pasture", "serve", "--port", str(port)]
    processes.append(start(serve, {**env, "PASTURE_HOME": str(home)}, port))
    ours = (f"http://127.0.0.1:{port}/mcp", token, processes[-1].pid)

    async def commands(c: Client) -> Any:
        result = await c.call_tool("commands", {})
        assert not result.is_error, result
        return result

    # One conversation, as the SDK's client has it, kept: its requests and pasture's replies.
    posted: list[tuple[dict[str, str], bytes]] = []
    replied: list[tuple[int, list[tuple[str, str]], bytes]] = []

    async def on_request(request: Any) -> None:
        posted.append((dict(request.headers), request.content))

    async def on_response(response: Any) -> None:
        await response.aread()
        replied.append((response.status_code, list(response.headers.items()), response.content))

    async def answer() -> dict[str, Any]:
        hooks = {"request": [on_request], "response": [on_response]}
        async with client(ours[0], token, options.mode, hooks) as c:
            result = await commands(c)
        text = result.content[0].text
        return {"text": text, "structured": result.structured_content}

    saved = anyio.run(answer)
    listed = len(saved["structured"]["commands"])
    assert listed == 3 * options.apps, f"{listed} commands listed"
    answer_path = home / "answer.json"
    answer_path.write_text(json.dumps(saved))
    replies: dict[str, Any] = {}
    call: tuple[dict[str, str], dict[str, Any]] | None = None
    for (headers, content), (status, their_headers, reply) in zip(posted, replied, strict=True):
        request = json.loads(content)
        replies[request["method"]] = (status, their_headers, reply.decode())
        if request["method"] == "tools/call":
            call = ({k: v for k, v in headers.items() if k != "content-length"}, request)
    assert call is not None
    replies_path = home / "replies.json"
    replies_path.write_text(json.dumps(replies))

    servers = {"pasture": ours}
    for which, flag, path in (
        ("bare", "--bare-answer", answer_path),
        ("floor", "--floor", replies_path),
    ):
        port = free_port()
        processes.append(start([sys.executable, __file__, flag, str(port), str(path)], env, port))
        servers[which] = (f"http://127.0.0.1:{port}/mcp", None, processes[-1].pid)

    calls = max(options.calls // 4, 10)
    times: dict[str, list[float]] = {which: [] for which in servers}
    raw: dict[str, list[float]] = {which: [] for which in servers}
    cpus: dict[str, list[float]] = {which: [] for which in servers}
    headers, body = call
    for n in range(options.rounds):
        order = list(servers) if n % 2 == 0 else list(reversed(servers))
        for which in order:
            url, their_token, pid = servers[which]
            m = anyio.run(rate, url, their_token, options.mode, commands, calls, 1, pid)
            times[which].append(1000 / m.rate)
            cpus[which].append(m.cpu * 1000)
            raw[which].append(1000 / raw_rate(url, headers, body, calls))
    size = len(replies["tools/call"][2])
    print(
        f"commands with {options.apps} apps ({listed} commands; a reply of {size // 1024} KiB) "
        f"over streamable HTTP ({options.mode}), sequential,"
    )
    print(f"{calls} calls a run, median of {options.rounds} rounds, the servers alternating:")
    names = {
        "pasture": "pasture",
        "bare": "bare SDK, the same answer",
        "floor": "floor, pasture's reply kept",
    }
    m = {which: statistics.median(times[which]) for which in servers}
    r = {which: statistics.median(raw[which]) for which in servers}
    c = {which: statistics.median(cpus[which]) for which in servers}
    print(f"  {'':<28} {'SDK client':>12} {'posted raw':>12} {'server CPU':>12}   (ms a call)")
    for which in servers:
        cpu = f"{c[which]:12.2f}" if c[which] >= 0 else f"{'?':>12}"
        print(f"  {names[which]:<28} {m[which]:12.2f} {r[which]:12.2f} {cpu}")
    for which, label in (("bare", "bare SDK's:"), ("floor", "floor's:")):
        paired = " ".join(f"{x / y:.2f}" for x, y in zip(raw["pasture"], raw[which], strict=True))
        print(
            f"  pasture's time against the {label:<11} {r['pasture'] / r[which]:5.2f}x posted raw "
            f"(each round: {paired}), {m['pasture'] / m[which]:.2f}x with the SDK's client"
        )
    met = "met" if r["pasture"] <= GOAL_COMMANDS_MS else "not met"
    print(
        f"  goal, with 200 apps: pasture answers in ≤ {GOAL_COMMANDS_MS:.0f} ms: "
        f"{r['pasture']:.2f} ms posted raw ({met}); the SDK's client alone takes "
        f"{m['floor']:.2f} ms a call of this size (the floor)"
    )
    direct = in_process_commands(home, calls, options.rounds)
    print(f"  the same listing, Service in process: {1000 / direct:.2f} ms a call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, help="calls a run (400; --quick 50)")
    parser.add_argument("--rounds", type=int, help="rounds, each server once a round (3; 1)")
    parser.add_argument("--mode", default="auto", choices=["auto", "legacy"])
    parser.add_argument("--apps", type=int, help="apps deployed for `commands` (200; 50)")
    parser.add_argument("--quick", action="store_true", help="fewer calls, rounds and apps")
    parser.add_argument(
        "--only",
        choices=["oauth", "operator", "commands", "lookup", "text"],
        help="only this figure (oauth: OAuth + audit vs static; commands: `commands` with "
        "--apps apps vs a bare SDK server giving the same answer; operator: shared limits, "
        "metrics and JSON logs vs all off; lookup: finding a token's "
        "person at once, inline and in a thread; text: `command leaderboard` with the data "
        "in the text vs the text alone)",
    )
    parser.add_argument("--bare", nargs=3, metavar=("PORT", "DB", "FORM"), help=argparse.SUPPRESS)
    parser.add_argument("--bare-answer", nargs=2, metavar=("PORT", "FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--floor", nargs=2, metavar=("PORT", "FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--text-alone", type=int, metavar="PORT", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.text_alone:
        serve_text_alone(options.text_alone)
        return
    if options.bare:
        serve_bare(int(options.bare[0]), options.bare[1], options.bare[2] == "indexed")
        return
    if options.bare_answer:
        serve_bare_answer(int(options.bare_answer[0]), options.bare_answer[1])
        return
    if options.floor:
        serve_floor(int(options.floor[0]), options.floor[1])
        return
    for name, usual, quick in (("calls", 400, 50), ("rounds", 3, 1), ("apps", 200, 20)):
        if getattr(options, name) is None:
            setattr(options, name, quick if options.quick else usual)

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.setdefault("PASTURE_RATE", UNREACHED)
    env.setdefault("PASTURE_RATE_ADDRESS", UNREACHED)
    homes: list[Path] = []
    processes: list[subprocess.Popen[bytes]] = []
    try:
        if options.only == "oauth":
            oauth_against_static(options, env, homes, processes)
            return
        if options.only == "operator":
            operator_against_plain(options, env, homes, processes)
            return
        if options.only == "commands":
            commands_against_bare(options, env, homes, processes)
            return
        if options.only == "lookup":
            token_lookups(options.rounds)
            return
        if options.only == "text":
            text_against_alone(options, env, homes, processes)
            return
        home, token = pasture_home(1, code=True)
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

        async def code_run(c: Client) -> Any:
            arguments = {"name": CODE_COMMAND, "args": CODE_RUN, "app": CODE_APP}
            result = await c.call_tool("command", arguments)
            assert not result.is_error, result
            return result

        async def bare_run(c: Client) -> Any:
            result = await c.call_tool("log_run", RUN)
            assert not result.is_error, result
            return result

        print(
            f"command log_run (and the code command {CODE_COMMAND}) over streamable HTTP "
            f"({options.mode}), {options.calls} calls a run,"
        )
        print(f"median of {options.rounds} rounds, the servers alternating:")
        pasture_pid = processes[0].pid
        for clients in (1, CONCURRENT):
            label = "sequential" if clients == 1 else f"{clients} concurrent clients"
            ours: list[float] = []
            cpu_ours: list[float] = []
            code: list[float] = []
            cpu_code: list[float] = []  # the server's
            cpu_workers: list[float] = []  # the code's worker processes' (and sandboxes')
            theirs: dict[str, list[float]] = {form: [] for form in bares}
            cpu_theirs: dict[str, list[float]] = {form: [] for form in bares}
            for _ in range(options.rounds):
                at = (pasture_url, token, options.mode)
                m = anyio.run(rate, *at, log_run, options.calls, clients, pasture_pid)
                ours.append(m.rate)
                cpu_ours.append(m.cpu)
                m = anyio.run(rate, *at, code_run, options.calls, clients, pasture_pid)
                code.append(m.rate)
                cpu_code.append(m.cpu)
                cpu_workers.append(m.cpu_under)
                for form, (url, pid) in bares.items():
                    m = anyio.run(
                        rate, url, None, options.mode, bare_run, options.calls, clients, pid
                    )
                    theirs[form].append(m.rate)
                    cpu_theirs[form].append(m.cpu)
            a = statistics.median(ours)
            print(f"  {label:<22} pasture {a:8.1f}/s")
            k = statistics.median(code)
            paired = " ".join(f"{x / y:.2f}" for x, y in zip(code, ours, strict=True))
            line = f"  {'':<22} code command      {k:8.1f}/s   ratio {k / a:.2f}x of log_run"
            print(f"{line}   (each round: {paired})")
            if cpu_ours[0] >= 0:
                c = statistics.median(cpu_ours) * 1000
                s = statistics.median(cpu_code) * 1000
                w = statistics.median(cpu_workers) * 1000
                print(
                    f"  {'':<22}   CPU a call: log_run {c:.2f} ms; code command {s + w:.2f} ms "
                    f"(server {s:.2f}, worker processes {w:.2f}; ratio {c / (s + w):.2f}x)"
                )
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

        oauth_against_static(options, env, homes, processes)
        operator_against_plain(options, env, homes, processes)
        text_against_alone(options, env, homes, processes)

        print()
        commands_against_bare(options, env, homes, processes)
        print()
        token_lookups(options.rounds)
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=20)
        for home in homes:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
