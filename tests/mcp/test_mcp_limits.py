"""Limits over MCP, against a real `pasture serve` with a low `--rate`: a tool call past the
limit is an `isError` result with the sentence (the agent reads it, and its session goes
on); any other request past it is a 429 with `Retry-After`; another token goes on."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp_talk import Club, refused

from helpers.mcp_answers import ok
from helpers.processes import running_server, server_env
from mcp import Client

RUN = {"who": "Ada", "miles": 5, "at": "2026-09-01"}
# Five calls an hour: one more every twelve minutes, so none comes back while a test runs,
# however slow the machine (five a minute gave one back every twelve seconds).
LIMIT = 5


@pytest.fixture
def url(club: Club) -> Iterator[str]:
    with running_server(club.service.home, "--rate", f"{LIMIT}/hour") as base:
        yield base


def calls(url: str, token: str, times: int) -> list[Any]:
    async def talk() -> list[Any]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            return [
                await client.call_tool(
                    "command", {"name": "log_run", "args": RUN, "app": "ada/runs"}
                )
                for _ in range(times)
            ]

    return anyio.run(talk)


@pytest.mark.processes
def test_a_token_past_its_limit_is_told_as_a_refused_tool_call(url: str, club: Club) -> None:
    token = club.service.new_token(club.ada, "a loop")
    # The session's first requests (initialize, initialized) count as calls too.
    answers = calls(url, token, LIMIT + 2)
    done = [a for a in answers if not a.is_error]
    assert 1 <= len(done) <= LIMIT
    for answer in done:
        ok(answer)
    sentence = refused(answers[-1])
    assert sentence.startswith(f"too many calls from this token — {LIMIT} an hour at most")
    assert sentence.endswith(" s") and "try again in " in sentence
    rows = club.service.graph.query(club.ada, "ada/runs", ".jog!").data["rows"]
    assert len(rows) == len(done)  # a refused call wrote nothing

    # Any other request past the limit: 429, Retry-After, the sentence as a JSON-RPC error.
    listing = httpx.post(
        f"{url}/mcp",
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
        json={"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
        timeout=60,
    )
    assert listing.status_code == 429
    assert int(listing.headers["Retry-After"]) >= 1
    assert listing.json()["id"] == 7
    assert listing.json()["error"]["message"].startswith("too many calls from this token")

    # Another token of the same person is counted on its own.
    other = club.service.new_token(club.ada, "another agent")
    ok(calls(url, other, 1)[0])


@pytest.mark.processes
def test_the_limit_is_configured_with_a_sentence_for_a_mistake(club: Club, tmp_path: Path) -> None:
    wrong = subprocess.run(
        [sys.executable, "-m", "pasture", "serve", "--port", "1", "--rate", "lots"],
        env=server_env(club.service.home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert wrong.returncode != 0
    assert "--rate is a number of calls and a time, like 600/minute" in wrong.stderr
    assert "Traceback" not in wrong.stderr
