"""A real `pasture serve` with an app that runs code, for tests/web/test_worker_doors.py.

The home is set up with a `Service` before the server starts:

- ada owns the server (her own space `ada` holds the run club, examples/runs,
  with one run logged);
- she made the space `shop` and trusted it to run code; bo is a viewer of it;
- `shop/till` (public) and `shop/stall` (open) carry `WORKER`, the worker.py
  below: a write, a read-only command that writes anyway, one that sends its
  answer twice, and commands that crash or run past a limit in every way the
  tests try.

The server runs in a subprocess on a free loopback port with its log in a file,
and is stopped (or killed) after.
"""

from __future__ import annotations

import os
import signal
import subprocess
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp_types as types
from mcp.client.streamable_http import streamable_http_client

from helpers.club import RUNS, as_user
from helpers.mcp_answers import text
from helpers.processes import PASTURE, free_port, server_env, wait_until_up
from mcp import Client
from pasture.platform.service import Service

WORKER = textwrap.dedent(
    '''
    """Commands that behave, and commands that do not."""

    import json
    import os
    import sys
    import time

    from pasture import Result, mutation, string

    TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


    @mutation(tool={"description": "Write a note, then end as told: ok, raise, exit or unjson",
                    "args": {"text": string(), "end": string()}})
    def note_then(ctx, args):
        # A mutation: what it wrote is kept only if it answers with JSON.
        ctx.store.apply({"entity": {"eid": "$n"}, "note": {"text": args["text"]}})
        ctx.store.apply({"entity": {"eid": "$m"}, "note": {"text": args["text"] + " again"}})
        if args["end"] == "raise":
            raise ValueError("after writing")
        if args["end"] == "exit":
            os._exit(3)
        if args["end"] == "unjson":
            return {1, 2}
        return f"noted {args['text']} twice"


    def note_add(args, ctx):
        applied = ctx.store.apply({"entity": {"eid": "$n"}, "note": {"text": args["text"]}})
        return Result(f"noted {args['text']}", {"entities": applied.entities})


    def note_peek(args, ctx):
        # Marked readOnly, but writes all the same.
        ctx.store.apply({"entity": {"eid": "$n"}, "note": {"text": args["text"]}})
        return Result("peeked", {})


    def note_whoami(args, ctx):
        return Result(f"for {ctx.caller.name}", {"for": ctx.caller.name})


    def note_twice(args, ctx):
        # Its answer, and the same again straight onto its socket, before it.
        answer = {"text": f"for {ctx.caller.name}", "data": {"for": ctx.caller.name}}
        body = json.dumps({"result": answer, "call": ctx.store.call}).encode()
        os.write(int(sys.argv[1]), len(body).to_bytes(4, "big") + body)
        return answer


    def crash_fill(args, ctx):
        with open(os.path.join(os.environ["TMPDIR"], "big"), "wb") as f:
            while True:
                f.write(b"x" * 1024 * 1024)


    def crash_files(args, ctx):
        for n in range(12_000):
            open(os.path.join(os.environ["TMPDIR"], f"empty-{n}"), "w").close()
        return Result("made them", {})


    def crash_exit(args, ctx):
        raise SystemExit(3)


    def crash_interrupt(args, ctx):
        raise KeyboardInterrupt


    def crash_base(args, ctx):
        raise BaseException("the very bottom")


    def crash_spin(args, ctx):
        while True:
            pass


    def crash_hog(args, ctx):
        kept = []
        while True:
            kept.append(bytearray(16 * 1024 * 1024))


    def crash_chatty(args, ctx):
        for n in range(50_000):
            print(f"line {n} of a worker that talks a lot " + "." * 60)
        return {"text": "talked", "data": {"lines": 50_000}}


    def crash_set(args, ctx):
        return {"text": "a set", "data": {"values": {1, 2, 3}}}


    def crash_int(args, ctx):
        return 3


    def crash_die(args, ctx):
        os._exit(3)


    def crash_sleep(args, ctx):
        time.sleep(3600)  # longer than any test waits: it is stopped, or its server is
        return {"text": "woke up", "data": {}}


    def setup(app):
        app.register("note add", description="Write a note", input=TEXT, annotations={},
                     run=note_add)
        app.register("note peek", description="Says it only reads, but writes", input=TEXT,
                     annotations={"readOnly": True}, run=note_peek)
        app.register("note whoami", description="Says who called", annotations={"readOnly": True},
                     run=note_whoami)
        app.register("note twice", description="Answers twice", annotations={"readOnly": True},
                     run=note_twice)
        for name, run in [
            ("crash exit", crash_exit),
            ("crash interrupt", crash_interrupt),
            ("crash base", crash_base),
            ("crash spin", crash_spin),
            ("crash hog", crash_hog),
            ("crash chatty", crash_chatty),
            ("crash set", crash_set),
            ("crash int", crash_int),
            ("crash die", crash_die),
            ("crash sleep", crash_sleep),
            ("crash fill", crash_fill),
            ("crash files", crash_files),
        ]:
            app.register(name, description=f"{name}, on purpose", annotations={}, run=run)
    '''
)

VOCAB = '{"$defs": {"note": {"properties": {"text": {"type": "string"}}}}}'
INDEX = (
    "<!doctype html>\n<html><head><meta charset='utf-8'><title>Till</title></head>\n"
    "<body><h1>Till</h1></body></html>\n"
)
# Each app on an origin of its own (`*.localhost` reaches loopback in Chromium): the only
# way a page's tools are an agent's to call.
SERVE = [
    *PASTURE, "serve", "--host", "127.0.0.1", "--apps-domain", "localhost"
]  # fmt: skip
CODE_APP = {"index.html": INDEX, "vocab.json": VOCAB, "worker.py": WORKER}


@dataclass
class Served:
    """A running `pasture serve`: its address, its log, and the people's tokens."""

    url: str
    home: Path
    log: Path
    process: subprocess.Popen[bytes]
    tokens: dict[str, str] = field(default_factory=dict)
    # One client for the server's life, as a program keeps one: making one costs more than
    # most requests do (its TLS context), and a test makes hundreds.
    http: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=120))

    def headers(self, who: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"} if who else {}

    def command(
        self, at: str, name: str, args: dict[str, Any], who: str | None = "ada"
    ) -> httpx.Response:
        """POST ./api/command of an app, as a person (a token) or nobody (None)."""
        return self.http.post(
            f"{self.url}/{at}/api/command",
            json={"name": name, "args": args},
            headers=self.headers(who),
        )

    def query(self, at: str, filter: str, who: str | None = "ada") -> httpx.Response:
        """GET ./api/query?<filter> of an app."""
        return self.http.get(f"{self.url}/{at}/api/query?{filter}", headers=self.headers(who))

    def notes(self, at: str) -> list[str]:
        """The text of every note in an app, as its owner reads them."""
        answer = self.query(at, ".note!")
        assert answer.status_code == 200, answer.text
        return [row["note"]["text"] for row in answer.json()["data"]["rows"]]

    def mcp(self, who: str | None, mode: str) -> Client:
        """The SDK's own client on /mcp, with a person's bearer token or none."""
        transport = streamable_http_client(
            f"{self.url}/mcp",
            http_client=httpx2.AsyncClient(headers=self.headers(who), timeout=120),
        )
        return Client(transport, mode=mode)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def set_up(home: Path) -> dict[str, str]:
    """People, spaces and apps, made with a Service on the home; the tokens by name."""
    with as_user("ada"):
        service = Service(home)
        try:
            ada = service.local_owner()
            bo = service.people.new_user(ada, "bo")
            service.deploy(ada, RUNS, space="ada", app="runs", title="Run club")
            service.run_command(
                ada, "log_run", {"who": "Ada", "miles": "5", "at": "2026-09-01"}, app="ada/runs"
            )
            service.spaces.new_space(ada, "shop")
            service.trust_space(ada, "shop")
            service.add_member(ada, "shop", "bo", "viewer")
            service.deploy(ada, CODE_APP, space="shop", app="till", access="public")
            service.deploy(ada, CODE_APP, space="shop", app="stall", access="open")
            return {"ada": service.new_token(ada), "bo": service.new_token(bo)}
        finally:
            service.close()


@contextmanager
def serve(home: Path, *limits: str) -> Iterator[Served]:
    """`pasture serve` on a free loopback port with these worker limits, until the block ends."""
    tokens = set_up(home)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = home.parent / f"{home.name}-serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*SERVE, "--port", str(port), *limits],
            env=server_env(home, PASTURE_USER="ada"),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    served = Served(url, home, log, process, tokens)
    try:
        wait_until_up(url, process, served.log_text)
        yield served
    finally:
        served.http.close()
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=20)


def processes_of(home: Path) -> list[int]:
    """The running processes of this home's apps' code: bubblewrap's, whose command line
    names the app's folder, or (unconfined) a worker working in that folder."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            line = (entry / "cmdline").read_bytes()
            cwd = os.readlink(entry / "cwd") if b"worker_main" in line else ""
        except OSError:
            continue
        if str(home).encode() in line or cwd.startswith(str(home)):
            found.append(int(entry.name))
    return found


def refused(result: types.CallToolResult) -> str:
    assert result.is_error, text(result)
    return text(result)
