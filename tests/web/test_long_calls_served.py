"""Long calls through a real `pasture serve` and a real worker process: progress and stopping.

The app `ada/long` has a mutation that writes a note, then reports progress until it is
asked to stop. The server runs one process per app (`--worker-processes 1`), so a call
that comes after waits until the one before has ended, and a grace of ten minutes, so a
call ends within a test only because its code saw `ctx.cancelled`:

- over `/mcp` (the SDK's own client, both protocol generations), each report reaches the
  client's progress callback as `notifications/progress`; the client cancelling the call
  (`notifications/cancelled`, or closing its stream on the newest revision) stops it;
- `./api/command` is stopped by its client going away;
- `pasture mcp` over stdio is stopped by `notifications/cancelled`;

and each time the note the mutation wrote is not kept.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client

from helpers.club import as_user
from helpers.mcp_answers import ok
from helpers.processes import PASTURE, free_port, server_env, wait_until_up
from mcp import Client, StdioServerParameters
from pasture.platform.service import Service

pytestmark = pytest.mark.processes

MODES = ["legacy", "auto"]

WORKER = textwrap.dedent(
    """
    import time

    from pasture import mutation, query, string, table

    schema = {"notes": table(text=string())}


    @mutation(tool={"description": "Write a note, then report progress until stopped"})
    def write_then_wait(ctx):
        ctx.db.notes.insert({"text": "written before the stop"})
        print("write_then_wait has written", flush=True)
        n = 0
        while not ctx.cancelled:
            n += 1
            ctx.progress(n, message=f"step {n}")
            time.sleep(0.05)
        ctx.db.notes.insert({"text": "written after the stop"})
        return {"steps": n}


    @query(tool={"description": "The notes kept"})
    def notes(ctx):
        return [row["text"] for row in ctx.db.notes.query().collect()]
    """
)


@dataclass
class Served:
    url: str
    home: Path
    log: Path
    token: str

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def mcp(self, mode: str) -> Client:
        transport = streamable_http_client(
            f"{self.url}/mcp",
            http_client=httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {self.token}"}, timeout=120
            ),
        )
        return Client(transport, mode=mode)

    def notes(self) -> Any:
        """The notes kept: asked once the call before has ended (one process serves them)."""
        answer = httpx.post(
            f"{self.url}/ada/long/api/command",
            json={"name": "notes", "args": {}},
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=120,
        )
        assert answer.status_code == 200, answer.text
        return answer.json()["data"]["result"]

    def wait_for_log(self, line: str, times: int) -> None:
        deadline = time.monotonic() + 120
        while self.log_text().count(line) < times:
            assert time.monotonic() < deadline, self.log_text()[-3000:]
            time.sleep(0.05)


def _set_up(home: Path, app: Path) -> str:
    with as_user("ada"):
        service = Service(home)
        try:
            ada = service.local_owner()
            service.trust_space(ada, "ada")
            service.deploy(ada, app, space="ada", app="long")
            return service.new_token(ada)
        finally:
            service.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, module_database: str) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("long")
    app = root / "long"
    app.mkdir()
    (app / "worker.py").write_text(WORKER)
    home = root / "home"
    token = _set_up(home, app)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = root / "serve.log"
    limits = ["--worker-processes", "1", "--worker-grace", "600", "--worker-time", "600"]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*PASTURE, "serve", "--host", "127.0.0.1", "--port", str(port), *limits],
            env=server_env(home, PASTURE_USER="ada"),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    served = Served(url, home, log, token)
    try:
        wait_until_up(url, process, served.log_text)
        yield served
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


async def _cancelled_after_progress(client: Client) -> list[tuple[float, Any, Any]]:
    """Call write_then_wait with a progress callback, and cancel the call once told twice."""
    told: list[tuple[float, Any, Any]] = []
    twice = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        told.append((progress, total, message))
        if len(told) >= 2:
            twice.set()

    async with anyio.create_task_group() as group:

        async def call() -> None:
            await client.call_tool(
                "command", {"name": "write_then_wait"}, progress_callback=on_progress
            )
            raise AssertionError("the call answered: it was never stopped")

        group.start_soon(call)
        with anyio.fail_after(120):
            await twice.wait()
        group.cancel_scope.cancel()
    return told


def _told_in_steps(told: list[tuple[float, Any, Any]]) -> None:
    """The first report, then some of those after (a few a second are told), in order."""
    assert told[0] == (1.0, None, "step 1")
    assert told == sorted(set(told))
    assert all(message == f"step {done:g}" and total is None for done, total, message in told)


@pytest.mark.parametrize("mode", MODES)
def test_mcp_over_http_tells_progress_and_a_cancel_stops_the_call(
    served: Served, mode: str
) -> None:
    async def main() -> tuple[list[tuple[float, Any, Any]], Any]:
        async with served.mcp(mode) as client:
            told = await _cancelled_after_progress(client)
            # One process serves the app: this answers once the stopped call has ended.
            kept = await client.call_tool("command", {"name": "notes"})
        return told, kept

    told, kept = anyio.run(main)
    _told_in_steps(told)
    assert ok(kept)[1] == {"result": []}
    assert "written after the stop" not in served.log_text()


def test_api_command_is_stopped_when_its_client_goes_away(served: Served) -> None:
    before = served.log_text().count("write_then_wait has written")
    body = b'{"name": "write_then_wait", "args": {}}'
    host = served.url.removeprefix("http://")
    with socket.create_connection(("127.0.0.1", int(host.split(":")[1])), timeout=120) as s:
        s.sendall(
            b"POST /ada/long/api/command HTTP/1.1\r\n"
            + f"Host: {host}\r\n".encode()
            + f"Authorization: Bearer {served.token}\r\n".encode()
            + b"Content-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        served.wait_for_log("write_then_wait has written", before + 1)  # it runs now
    # The connection is closed: the call is stopped, and nothing it wrote is kept.
    assert served.notes() == []


def test_pasture_mcp_over_stdio_is_stopped_by_notifications_cancelled(served: Served) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pasture", "mcp"],
        env=server_env(
            served.home,
            PASTURE_USER="ada",
            PASTURE_WORKER_PROCESSES="1",
            PASTURE_WORKER_GRACE="600",
            PASTURE_WORKER_TIME="600",
        ),
    )

    async def main() -> tuple[list[tuple[float, Any, Any]], Any]:
        async with Client(params, mode="legacy") as client:
            told = await _cancelled_after_progress(client)
            kept = await client.call_tool("command", {"name": "notes"})
        return told, kept

    told, kept = anyio.run(main)
    _told_in_steps(told)
    assert ok(kept)[1] == {"result": []}
