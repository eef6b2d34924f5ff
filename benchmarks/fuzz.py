"""Hostile inputs through every door: how many a second each door answers, and how many 5xx.

One pasture in a temporary folder (SQLite) with examples/runs, examples/cart and
`wild` — an app whose worker.py answers with what is not JSON — deployed in the
owner's own space, trusted to run code. Then, from generators that build
filters, bundles, command calls, page addresses, tool calls, command lines and
whole apps out of the grammar's own pieces salted with what breaks careless
code (whole numbers past 64 bits, 1e999, NaN, lone UTF-16 surrogates raw and
as %ED%A0%80, NUL, very long text, nesting 1,000 deep, reference walks hundreds
of hops long, names that are not names):

- web query    GET  /ada/<app>/api/query?filter=…   (and the filter as written)
- web apply    POST /ada/<app>/api/apply           (JSON, NaN and all, or raw bytes)
- web command  POST /ada/<app>/api/command         (cart and wild run their worker.py)
- web pages    GET  /<space>/<app>/<path>
- mcp          the nine tools, over the SDK's own in-memory client
- cli          `pasture command NAME ARGS…` through the command line's own `main`
               in this process, and a few as processes of their own
- deploy       `Service.deploy` of generated apps (tools.json, tools.yml, vocab.json, paths)

The web door is driven as an ASGI server drives it (the request's bytes as
sent, no client re-encoding them). A 5xx is: a status of 500 or more; an MCP
answer carrying the connector's server-fault sentence, or an exception out of
the client; a command line exiting other than 0, 1 or 2, or saying "something
went wrong", or a traceback; anything but a `Refused` out of `Service.deploy`.
Also counted: ERROR records pasture logged (a door logs a bug's traceback).

    .venv/bin/python benchmarks/fuzz.py [--inputs 100000] [--seed 7]
    .venv/bin/python benchmarks/fuzz.py --quick      # 2,000 inputs: a look

Prints inputs, refusals and inputs a second per door, then the 5xx (must be 0);
exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import logging
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

# Run as a script, this file's folder comes first on sys.path and its name would hide nothing,
# but keep it off as benchmarks/mcp.py does.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402

from mcp import Client  # noqa: E402
from pasture.caller import Caller  # noqa: E402
from pasture.errors import Refused  # noqa: E402
from pasture.mcp import build_server  # noqa: E402
from pasture.platform.access.limits import Rates  # noqa: E402
from pasture.platform.service import Service  # noqa: E402
from pasture.web import create_app  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# the fuzz suite's pieces and its wild app, and the tests' helpers they are made with
sys.path[:0] = [str(ROOT / "tests" / "fuzz"), str(ROOT / "tests")]
from fuzz_pieces import (  # noqa: E402
    ARGUMENTS,
    COLUMNS,
    COMMANDS,
    COMPONENTS,
    FILE_PATHS,
    HOSTILE_NUMBERS,
    HOSTILE_WORDS,
    OPERATORS,
    SEGMENTS,
    WILD_ANSWERS,
    YAML_BOMBS,
)
from fuzz_site import WILD_WORKER  # noqa: E402

BASE = "http://testserver"

# -- what is sent: the grammar's pieces, salted ---------------------------------------------------

# The fuzz suite's own pieces (tests/fuzz/fuzz_pieces.py), and words that are well formed,
# so that some inputs go through.
NUMBERS = HOSTILE_NUMBERS
WORDS = [
    *HOSTILE_WORDS,
    "Ada",
    "run",
    "2026-09-01",
    "https://example.com/x",
    "true",
    "5",
    "V60-02",
]
PATHS = FILE_PATHS
YAML = YAML_BOMBS


class Gen:
    """Random hostile inputs, each built from the grammar's own pieces."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def pick(self, items: list[Any]) -> Any:
        return self.r.choice(items)

    def text(self, *, whole: bool = False) -> str:
        r = self.r
        roll = r.random()
        if roll < 0.5:
            found: str = self.pick(WORDS)
        elif roll < 0.6:
            found = "a" * self.pick([1_001, 5_000, 60_000])
        elif roll < 0.8:
            found = "".join(chr(r.randrange(32, 0x250)) for _ in range(r.randrange(8)))
        else:  # any code point, surrogates included
            found = "".join(chr(r.randrange(0x110000)) for _ in range(r.randrange(6)))
        if whole:  # what the MCP SDK's client can write as an object's key
            found = "".join(ch for ch in found if not 0xD800 <= ord(ch) <= 0xDFFF)
        return found

    def number(self) -> Any:
        return self.pick(NUMBERS) if self.r.random() < 0.7 else self.r.randint(-(2**80), 2**80)

    def value(self, depth: int = 0, *, deep: tuple[int, ...] = (65, 200, 1_000)) -> Any:
        r = self.r
        roll = r.random()
        if roll < 0.03:
            depth = self.pick(list(deep))
            # JSON text for the web (too deep for `json` to write), a value for MCP's client
            return f"\x00DEEP{depth}\x00" if deep[-1] >= 1_000 else nested(depth)
        if depth < 3 and roll < 0.2:
            return [self.value(depth + 1, deep=deep) for _ in range(r.randrange(3))]
        if depth < 3 and roll < 0.35:
            whole = deep[-1] < 1_000
            return {
                self.text(whole=whole): self.value(depth + 1, deep=deep)
                for _ in range(r.randrange(3))
            }
        return self.pick([None, True, False, self.number(), self.text(), self.text()])

    # -- filters
    def path(self) -> str:
        roll = self.r.random()
        if roll < 0.7:
            return f".{self.pick(COMPONENTS)}.{self.pick(COLUMNS)}"
        if roll < 0.9:
            return ".comment.target" * self.r.randint(1, 400) + ".doc.title"
        return self.pick([".Jog", ".9x", ".jog.", "..jog", ".j\x00g", "." + "a" * 41, ".\ud800"])

    def filter_value(self) -> str:
        roll = self.r.random()
        if roll < 0.4:
            return self.text()
        if roll < 0.7:
            n = self.number()
            return "nan" if n != n else str(n)
        if roll < 0.8:
            return ",".join(str(self.number()) for _ in range(self.r.randint(2, 4)))
        if roll < 0.83:
            return ",".join(str(i) for i in range(1_001))
        if roll < 0.9:
            return f"{self.number()}..{self.number()}"
        return '"' + self.text().replace('"', '\\"') + '"'

    def predicate(self) -> str:
        roll = self.r.random()
        if roll < 0.45:
            return f"{self.path()}{self.pick(OPERATORS)}{self.filter_value()}"
        if roll < 0.6:
            return f".{self.pick(COMPONENTS)}{self.pick(['!', '=', '?'])}"
        if roll < 0.7:
            return self.pick(["*", ".count!", ".tally=jog.who", ".comments>=2"])
        if roll < 0.8:
            return self.pick(["limit=", "id=", ".comments>="]) + self.filter_value()
        return self.text()

    def filter(self) -> str:
        if self.r.random() < 0.02:
            return "&".join(f".jog.miles>{i}" for i in range(self.pick([101, 1_000])))
        return "&".join(self.predicate() for _ in range(self.r.randint(1, 5)))

    # -- bundles, commands, tool calls, app files
    def slot(self) -> Any:
        return self.pick(
            [
                "$run",
                "$r1",
                "$",
                "$9",
                "$" + "a" * 200,
                self.text(),
                self.number(),
                {"eid": self.text()},
            ]
        )

    def bundle(self, deep: tuple[int, ...] = (65, 200, 1_000)) -> Any:
        r = self.r
        if r.random() < 0.1:
            return self.value(deep=deep)
        out: dict[str, Any] = {}
        if r.random() < 0.7:
            out["entity"] = {"eid": self.slot()}
        for comp in r.sample(["jog", "doc", "comment", "alias", "line", "nope"], r.randint(0, 2)):
            if r.random() < 0.8:
                columns = {
                    self.pick(COLUMNS): self.value(deep=deep) for _ in range(r.randint(1, 3))
                }
                out[comp] = columns
            else:
                out[comp] = self.value(deep=deep)
        if r.random() < 0.2:
            out["edges"] = [{"type": self.text(), "child": self.slot()}]
        if r.random() < 0.1:
            out["tombstone"] = self.pick([{}, True, self.value(deep=deep)])
        if r.random() < 0.1:
            out["$was"] = {self.pick(COMPONENTS): self.value(deep=deep)}
        return out

    def bundles(self, deep: tuple[int, ...] = (65, 200, 1_000)) -> Any:
        if self.r.random() < 0.3:
            return [self.bundle(deep) for _ in range(self.r.randint(0, 3))]
        return self.bundle(deep)

    def args(self, deep: tuple[int, ...] = (65, 200, 1_000)) -> dict[str, Any]:
        whole = deep[-1] < 1_000
        names = [*ARGUMENTS, self.text(whole=whole)]
        return {self.pick(names): self.value(deep=deep) for _ in range(self.r.randint(0, 4))}

    def command(self) -> tuple[str, str, dict[str, Any]]:
        app = self.pick(["runs", "runs", "runs", "cart", "wild"])
        if app == "wild":
            return app, "answer", {"kind": self.pick(WILD_ANSWERS)}
        name = self.pick(COMMANDS) if self.r.random() < 0.8 else self.text()
        return app, name, self.args()

    def page(self) -> tuple[str, str]:
        space = self.pick(["ada", "ada", "ada", "%ED%A0%80", "a%00", "x" * 300])
        app = self.pick(["runs", "cart", "wild", "nope", "%ED%A0%80", "a%00b"])
        if self.r.random() < 0.2:
            rest = self.pick(["api/me", "api/tools", "api/client.js", "api/webmcp.js", "api/x"])
        elif self.r.random() < 0.02:
            rest = "/".join(["a"] * 1_100)
        else:
            parts = [self.pick(SEGMENTS) for _ in range(self.r.randint(1, 5))]
            if self.r.random() < 0.3:
                parts.append(quote(self.text(), safe="", errors="surrogatepass"))
            rest = "/".join(parts)
        return space, f"/{space}/{app}/{rest}"

    def app_files(self, *, whole: bool = False) -> dict[str, str]:
        r = self.r
        files = {"index.html": "<title>fuzz</title>"}
        roll = r.random()
        if roll < 0.3:
            doc = {self.pick(["log_run", "x", self.text(whole=whole)]): self.tools_entry()}
            files["tools.json"] = json.dumps(doc)
        elif roll < 0.4:
            files["tools.yml"] = self.pick(YAML)
        elif roll < 0.55:
            props = {self.pick(["who", "miles", self.text(whole=whole)]): self.value()}
            files["vocab.json"] = json.dumps({"$defs": {self.pick(["jog", "Bad"]): props}})
        elif roll < 0.65:
            files[self.pick(["tools.json", "vocab.json"])] = "[" * self.pick([65, 1_000, 5_000])
        for _ in range(r.randint(0, 2)):
            path = self.pick(PATHS) if r.random() < 0.7 else self.text()
            if whole:
                path = "".join(ch for ch in path if not 0xD800 <= ord(ch) <= 0xDFFF)
            files[path] = self.text()
        return files

    def tools_entry(self) -> Any:
        if self.r.random() < 0.2:
            return self.value()
        entry: dict[str, Any] = {"description": self.text() or "d"}
        entry["input"] = {
            self.pick(["who", "miles", "at"]): self.pick(
                ["text", "number", "bool", "time", "url", "nope", self.value()]
            )
        }
        if self.r.random() < 0.5:
            entry["apply"] = self.bundle()
        else:
            entry["query"] = self.filter()
        return entry

    def tool_call(self) -> tuple[str, dict[str, Any]]:
        mcp_deep = (65, 150)  # what the SDK's own client can serialize at all
        app = self.pick(["runs", "cart", "wild", "ada/runs", "nope", self.text(whole=True)])
        name = self.pick(
            [
                "commands",
                "command",
                "command",
                "command",
                "status",
                "graph_schema",
                "graph_query",
                "graph_query",
                "graph_apply",
                "graph_apply",
                "app_list",
                "app_files",
                "app_deploy",
                "nope",
            ]
        )
        if name == "command":
            if app == "wild":
                return name, {
                    "name": "answer",
                    "app": "wild",
                    "args": {"kind": self.pick(WILD_ANSWERS)},
                }
            return name, {"name": self.pick(COMMANDS), "args": self.args(mcp_deep)}
        if name == "graph_query":
            return name, {"app": app, "filter": self.filter()}
        if name == "graph_apply":
            return name, {"app": app, "bundles": self.bundles(mcp_deep)}
        if name == "app_files":
            return name, {"app": app, "path": self.pick([*PATHS[:9], self.text()])}
        if name == "app_deploy":
            return name, {"files": self.app_files(whole=True), "app": "fz-mcp"}
        return name, {"app": app}

    def argv(self) -> list[str]:
        name = self.pick(["log_run", "since", "leaderboard", "add_jog", "find_jog"])
        if self.r.random() < 0.2:
            name = self.text()
        words = [self.pick([self.text(), self.filter_value()]) for _ in range(self.r.randint(0, 3))]
        flags = [f"--{self.pick(ARGUMENTS)}={self.text()}" for _ in range(self.r.randint(0, 2))]
        return ["command", "--yes", name, *words, *flags]


_DEEP = re.compile(r'"\\u0000DEEP(\d+)\\u0000"')


def body_of(value: Any) -> bytes:
    """`value` as JSON text (NaN and all), each deep marker written out as nested lists."""
    text = json.dumps(value)
    return _DEEP.sub(lambda m: "[" * int(m[1]) + "1" + "]" * int(m[1]), text).encode()


def nested(depth: int) -> Any:
    value: Any = 1
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


# -- the doors ----------------------------------------------------------------------------------


@dataclass
class Door:
    name: str
    inputs: int = 0
    refused: int = 0
    faults: int = 0
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)

    def fault(self, what: str) -> None:
        self.faults += 1
        if len(self.examples) < 5:
            self.examples.append(what[:300])


class Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def asgi(
    app: Any, method: str, raw_path: bytes, query: bytes = b"", body: bytes = b""
) -> tuple[int, bytes]:
    """One request into the ASGI app, the path decoded as uvicorn decodes it."""
    headers = [(b"host", b"testserver"), (b"authorization", AUTH[0].encode())]
    if method == "POST":
        headers += [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": unquote(raw_path.decode("latin-1")),
        "raw_path": raw_path,
        "root_path": "",
        "query_string": query,
        "headers": headers,
        "client": ("127.0.0.1", 1),
        "server": ("testserver", 80),
    }
    status, chunks, sent = 0, [], False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    try:
        await app(scope, receive, send)
    except Exception as e:  # out of the door: as a server would, a 500
        return 599, repr(e).encode()
    return status, b"".join(chunks)


AUTH = [""]


async def fuzz(options: argparse.Namespace) -> int:
    gen = Gen(options.seed)
    total = options.inputs
    shares = {
        "web query": 0.30,
        "web apply": 0.22,
        "web command": 0.14,
        "web pages": 0.15,
        "mcp": 0.14,
        "cli": 0.04,
        "deploy": 0.01,
    }
    planned = {name: max(1, int(total * share)) for name, share in shares.items()}
    planned["web query"] += total - sum(planned.values())
    processes = 3 if options.quick else 20

    home = Path(tempfile.mkdtemp(prefix="pasture-fuzz-"))
    os.environ["PASTURE_HOME"] = str(home)
    os.environ["PASTURE_USER"] = "ada"
    # 100,000 inputs from one token in minutes: the rate limits are not what is fuzzed.
    service = Service(home, base_url=BASE, rates=Rates(caller=None, address=None))
    ada: Caller = service.local_owner()
    service.trust_space(ada, "ada")
    for app in ("runs", "cart"):
        service.deploy(ada, ROOT / "examples" / app, space="ada", app=app, access="public")
    wild = {"index.html": "<title>Wild</title>", "worker.py": WILD_WORKER}
    service.deploy(ada, wild, space="ada", app="wild", access="public")
    AUTH[0] = f"Bearer {service.new_token(ada)}"
    web = create_app(service)
    errors = Errors()
    logging.getLogger("pasture").addHandler(errors)
    doors = {name: Door(name) for name in planned}
    print(
        f"fuzz: {total:,} hostile inputs through every door, seed {options.seed}, data in {home}",
        flush=True,
    )

    async def run(door: Door, count: int, one: Callable[[], Awaitable[None]]) -> None:
        start = time.perf_counter()
        for _ in range(count):
            door.inputs += 1
            await one()
        door.seconds += time.perf_counter() - start

    def web_answer(door: Door, status: int, body: bytes, sent: str) -> None:
        if status >= 500 or b"Traceback" in body:
            door.fault(f"{status} for {sent}: {body[:200]!r}")
        elif status >= 400:
            door.refused += 1

    async def query() -> None:
        text, app = gen.filter(), gen.pick(["runs", "runs", "cart", "wild", "nope"])
        if gen.r.random() < 0.5:
            raw = b"filter=" + quote(text, safe="", errors="surrogatepass").encode()
        else:
            raw = quote(text, safe="&=.!*,~<>?$-_:", errors="surrogatepass").encode()
        status, body = await asgi(web, "GET", f"/ada/{app}/api/query".encode(), raw[:60_000])
        web_answer(doors["web query"], status, body, f"?{raw[:200]!r}")

    async def apply() -> None:
        app = gen.pick(["runs", "runs", "cart", "nope"])
        if gen.r.random() < 0.05:
            body = gen.r.randbytes(gen.r.randrange(40))
        else:
            body = body_of(gen.bundles())
        status, answer = await asgi(web, "POST", f"/ada/{app}/api/apply".encode(), body=body)
        web_answer(doors["web apply"], status, answer, f"apply {body[:200]!r}")

    async def command() -> None:
        app, name, args = gen.command()
        body = body_of({"name": name, "args": args})
        status, answer = await asgi(web, "POST", f"/ada/{app}/api/command".encode(), body=body)
        web_answer(doors["web command"], status, answer, f"command {body[:200]!r}")

    async def page() -> None:
        _, path = gen.page()
        raw = path.encode("utf-8", "surrogatepass")
        status, answer = await asgi(web, "GET", raw)
        web_answer(doors["web pages"], status, answer, f"GET {raw[:200]!r}")

    async with Client(build_server(service, lambda: ada), mode="legacy") as client:

        async def tool() -> None:
            name, arguments = gen.tool_call()
            door = doors["mcp"]
            try:
                result = await client.call_tool(name, arguments)
            except Exception as e:
                door.fault(f"{name} {arguments!r:.200}: {type(e).__name__}: {e}")
                return
            text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
            if result.is_error and ("failed on the server" in text or not text.strip()):
                door.fault(f"{name} {arguments!r:.200}: {text}")
            elif result.is_error:
                door.refused += 1

        async def cli() -> None:
            argv, door = gen.argv(), doors["cli"]
            words = [w.replace("\x00", "") for w in argv]
            if door.inputs <= processes:  # a few as processes of their own
                done = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "pasture",
                        *(w.encode("utf-8", "surrogatepass") for w in words),
                    ],
                    capture_output=True,
                    timeout=120,
                    stdin=subprocess.DEVNULL,
                )
                code, err = done.returncode, done.stderr.decode("utf-8", "replace")
            else:
                code, err = command_line(words)
            if code not in (0, 1, 2) or "something went wrong" in err or "Traceback" in err:
                door.fault(f"{words!r:.200}: exit {code}: {err[:200]}")
            elif code:
                door.refused += 1

        async def deploy() -> None:
            files, door = gen.app_files(), doors["deploy"]
            try:
                service.deploy(ada, files, space="ada", app="fz")
            except Refused:
                door.refused += 1
            except Exception as e:
                door.fault(f"{list(files)!r:.200}: {type(e).__name__}: {e}")

        work: dict[str, Callable[[], Awaitable[None]]] = {
            "web query": query,
            "web apply": apply,
            "web command": command,
            "web pages": page,
            "mcp": tool,
            "cli": cli,
            "deploy": deploy,
        }
        # the doors in turn, a slice at a time, so a slow moment of the machine is shared
        slices = 10
        for i in range(slices):
            for name, count in planned.items():
                share = count // slices + (1 if i < count % slices else 0)
                await run(doors[name], share, work[name])
            done = sum(d.inputs for d in doors.values())
            print(f"  {done:,} inputs …", flush=True)

    logging.getLogger("pasture").removeHandler(errors)
    service.close()
    failed = report(doors, errors)
    if failed:
        print(f"the data is kept in {home}")
    else:
        shutil.rmtree(home, ignore_errors=True)
    return failed


def command_line(argv: list[str]) -> tuple[int, str]:
    """`pasture ARGV…` through the command line's own entry point, in this process."""
    from pasture.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:  # argparse's own refusal: usage and a sentence, exit 2
            code = e.code if isinstance(e.code, int) else 1
    return code, err.getvalue()


def report(doors: dict[str, Door], errors: Errors) -> int:
    print(f"{'door':<12} {'inputs':>9} {'refused':>9} {'inputs/s':>10} {'5xx':>5}")
    for door in doors.values():
        rate = door.inputs / door.seconds if door.seconds else 0.0
        print(
            f"{door.name:<12} {door.inputs:>9,} {door.refused:>9,} {rate:>10,.0f} {door.faults:>5}"
        )
    inputs = sum(d.inputs for d in doors.values())
    seconds = sum(d.seconds for d in doors.values())
    faults = sum(d.faults for d in doors.values())
    print(
        f"{'all':<12} {inputs:>9,} {sum(d.refused for d in doors.values()):>9,} "
        f"{inputs / seconds:>10,.0f} {faults:>5}"
    )
    for door in doors.values():
        for example in door.examples:
            print(f"  5xx at {door.name}: {example}")
    for record in errors.records[:5]:
        print(f"  logged at ERROR: {record.name}: {record.getMessage()[:200]}")
    print(f"5xx: {faults} (must be 0) · ERROR records logged: {len(errors.records)} (must be 0)")
    return 1 if faults or errors.records else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inputs", type=int, help="hostile inputs in all (100,000; --quick 2,000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="2,000 inputs: a look")
    options = parser.parse_args()
    if options.inputs is None:
        options.inputs = 2_000 if options.quick else 100_000
    return anyio.run(fuzz, options)


if __name__ == "__main__":
    sys.exit(main())
