"""What the tests share: talking to a connector with the SDK's own client, and reading answers."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx
import mcp_types as types
from mcp.client.session import IncomingMessage

from mcp import Client
from pasture.caller import Caller
from pasture.mcp import build_server
from pasture.platform.service import Service

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "examples" / "runs"
BASE_URL = "http://127.0.0.1:8000"


@dataclass
class Club:
    service: Service
    owner: Caller
    ada: Caller
    bo: Caller
    cy: Caller


def set_up_club(service: Service) -> Club:
    owner = service.local_owner()
    ada = service.new_user(owner, "ada")
    bo = service.new_user(owner, "bo")
    cy = service.new_user(owner, "cy")
    service.deploy(ada, RUNS, space="ada", app="runs", title="Run club")
    service.add_member(ada, "ada", "bo", "viewer")
    service.new_space(owner, "club")
    service.add_member(owner, "club", "ada", "editor")
    service.deploy(owner, RUNS, space="club", app="runs", title="Run club")
    return Club(service, owner, ada, bo, cy)


TOOL_NAMES = [
    "commands",
    "command",
    "status",
    "graph_schema",
    "graph_query",
    "graph_apply",
    "app_list",
    "app_files",
    "app_deploy",
]
MODES = ["legacy", "auto"]


def in_memory(
    service: Service,
    caller: Caller,
    mode: str,
    talk: Callable[[Client], Awaitable[T]],
    *,
    heard: list[IncomingMessage] | None = None,
) -> T:
    """Run `talk` against the connector in this process, over the SDK's in-memory client."""

    async def handler(message: IncomingMessage) -> None:
        if heard is not None:
            heard.append(message)

    async def main() -> T:
        server = build_server(service, lambda: caller)
        async with Client(server, mode=mode, message_handler=handler) as client:
            return await talk(client)

    return anyio.run(main)


def text(result: types.CallToolResult) -> str:
    """The one text block an answer carries."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def ok(result: types.CallToolResult) -> tuple[str, dict[str, Any]]:
    assert not result.is_error, text(result)
    assert isinstance(result.structured_content, dict)
    return text(result), result.structured_content


def refused(result: types.CallToolResult) -> str:
    assert result.is_error
    assert result.structured_content is None
    return text(result)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def serve_env(home: Path, **extra: str) -> dict[str, str]:
    """What a `pasture` process of these tests runs with: the data directory, and this Python."""
    return {
        "PASTURE_HOME": str(home),
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join(sys.path),
        **extra,
    }


@contextmanager
def running_server(home: Path, *options: str) -> Iterator[str]:
    """`pasture serve` on a free loopback port with `options`, until the block ends (it is
    stopped as a signal stops it, so it writes what it keeps); its address."""
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pasture",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            *options,
        ],
        env=serve_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/", timeout=1)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(process.stderr.read() if process.stderr else b"") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)
