"""A request waiting on the database holds up no other: none waits on the event loop.

Finding a token's person may wait — here on platform.db held by another
connection, as another process's long write holds it — while the same server
goes on answering whatever needs no database: its dashboard, a request with no
token. Through the whole web door in process (Starlette's TestClient runs it on an
event loop of its own); the waiting request is a call to /mcp or to an app's API.
With an apps domain, a request to an app's own origin, which asks the database
where it is, waits its turn in a thread too.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from pasture.platform.service import Service
from pasture.web import create_app

BASE = "http://127.0.0.1:8000"
RUNS = Path(__file__).resolve().parents[2] / "examples" / "runs"
DEADLINE = 60.0  # seconds: generous; nothing here is timed, only waited for
APPS_DOMAIN = "apps.test"


class Request(threading.Thread):
    """One request, on a thread of the test's own, so the test can wait for it or not."""

    def __init__(self, send: Callable[[], httpx.Response]) -> None:
        super().__init__(daemon=True)
        self.send = send
        self.answer: httpx.Response | None = None

    def run(self) -> None:
        self.answer = self.send()

    def answered(self) -> httpx.Response:
        self.join(DEADLINE)
        assert self.answer is not None, "no answer while the database was held"
        return self.answer


@pytest.fixture(params=["", APPS_DOMAIN], ids=["paths", "apps domain"])
def service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[Service]:
    monkeypatch.setenv("PASTURE_BUSY_TIMEOUT", str(DEADLINE * 4))  # waits until let go
    # platform.db held by another connection, as SQLite holds a file: SQLite's alone
    monkeypatch.delenv("PASTURE_DATABASE_URL", raising=False)
    service = Service(tmp_path / "home", base_url=BASE, apps_domain=request.param or None)
    service.deploy(service.local_owner(), RUNS, app="runs", title="Run club", access="public")
    yield service
    service.close()


def _mcp_call(token: str) -> dict[str, Any]:
    return {
        "url": "/mcp",
        "json": {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "commands", "arguments": {}},
        },
        "headers": {
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
            "MCP-Protocol-Version": "2025-11-25",
        },
    }


def _api_call(token: str, space: str) -> dict[str, Any]:
    return {
        "url": f"/{space}/runs/api/query?.jog!",
        "headers": {"Authorization": f"Bearer {token}"},
    }


def _held(service: Service) -> bool:
    """Wait until a thread holds the server's connection to platform.db: the note of a
    token's use, waiting for the write another connection holds."""
    deadline = time.monotonic() + DEADLINE
    while service.db.stamp_at_once() is not None:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _waited(request: Request) -> Request:
    request.start()
    return request


@pytest.mark.parametrize("door", ["mcp", "web api"])
def test_a_token_waiting_on_the_database_holds_up_no_other_request(
    service: Service, door: str
) -> None:
    owner = service.local_owner()
    token = service.new_token(owner, "agent")  # never used: its first use writes a note of it
    held = sqlite3.connect(service.home / "platform.db", isolation_level=None)
    try:
        with TestClient(create_app(service), base_url=BASE) as client:
            held.execute("BEGIN IMMEDIATE")  # another connection's write, not let go yet
            asked = _mcp_call(token) if door == "mcp" else _api_call(token, str(owner.name))
            method = client.post if door == "mcp" else client.get
            waiting = _waited(Request(lambda: method(**asked)))
            assert _held(service), "the token's note of use never began"
            behind = []  # what needs the database too waits its turn, in a thread of its own
            if service.origins.apps_domain:
                own = {"Host": f"runs--{owner.name}.{APPS_DOMAIN}:8000"}
                behind.append(_waited(Request(lambda: client.get("/", headers=own))))

            dashboard = _waited(Request(lambda: client.get("/")))
            assert dashboard.answered().status_code == 200
            nobody = _waited(Request(lambda: client.post("/mcp", json={})))
            assert nobody.answered().status_code == 401
            for request in (waiting, *behind):
                assert request.is_alive() and request.answer is None

            held.execute("ROLLBACK")
            assert waiting.answered().status_code == 200
            for request in behind:
                assert request.answered().status_code == 200
    finally:
        held.close()
