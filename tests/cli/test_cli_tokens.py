"""Tokens at the command line as the README shows them, and the sentence a read-only
token is refused with: the same through every door, naming a verb that exists."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client

from helpers.club import RUNS
from helpers.command_line import PastureMain
from helpers.processes import running_server, server_env
from mcp import Client, StdioServerParameters
from pasture.platform import READ_ONLY_GRANT


@pytest.fixture
def pasture(tmp_path: Path) -> PastureMain:
    return PastureMain(tmp_path / "home")


def _labels(pasture: PastureMain) -> list[str]:
    listed = pasture("token", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return [t["label"] for t in json.loads(listed.stdout)["tokens"]]


def test_token_new_takes_its_label_as_a_word_or_an_option(pasture: PastureMain) -> None:
    made = pasture("token", "new", "laptop")
    assert made.returncode == 0, made.stderr
    assert "a token for ada that reads and writes" in made.stdout
    assert pasture("token", "new", "--label", "phone", "--read").returncode == 0
    assert pasture("token", "new").returncode == 0
    assert sorted(_labels(pasture)) == ["agent", "laptop", "phone"]


def test_token_new_given_two_different_labels_says_so(pasture: PastureMain) -> None:
    both = pasture("token", "new", "laptop", "--label", "phone")
    assert both.returncode == 2
    assert "two labels given (laptop and --label phone) — give one" in both.stderr
    assert "Traceback" not in both.stderr


def test_the_read_only_sentence_names_a_verb_that_makes_a_writing_token(
    pasture: PastureMain,
) -> None:
    assert "pasture token new" in READ_ONLY_GRANT and "without --read" in READ_ONLY_GRANT
    helped = pasture("token", "new", "--help")
    assert "--read" in helped.stdout and "--write" not in helped.stdout
    # what the sentence says to run makes a token that writes
    made = json.loads(pasture("token", "new", "--json").stdout)
    assert made["scope"].startswith("reads and writes")


@pytest.mark.processes
def test_a_read_only_token_is_refused_with_the_one_sentence_at_every_door(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    pasture = PastureMain(home)
    assert pasture("deploy", str(RUNS)).returncode == 0
    token = json.loads(pasture("token", "new", "reader", "--read", "--json").stdout)["token"]
    run = {"name": "log_run", "args": {"who": "Ada", "miles": "5", "at": "2026-09-01"}}

    # the command line
    cli = pasture("app", "restore", "runs", "--to", "1 hour ago", "--token", token)
    assert cli.returncode != 0
    assert READ_ONLY_GRANT in cli.stderr

    said: list[str] = []

    async def over(client: Client) -> None:
        async with client:
            answer = await client.call_tool("command", run)
            assert answer.is_error
            said.append(" ".join(getattr(c, "text", "") for c in answer.content))

    # MCP over stdio
    stdio = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pasture", "mcp", "--token", token],
        env=server_env(home, PASTURE_USER="ada"),
    )
    anyio.run(over, Client(stdio, mode="legacy"))
    # MCP over HTTP
    with running_server(home, PASTURE_USER="ada") as url:
        headers = {"Authorization": f"Bearer {token}"}
        transport = streamable_http_client(
            f"{url}/mcp", http_client=httpx2.AsyncClient(headers=headers, timeout=30)
        )
        anyio.run(over, Client(transport, mode="legacy"))
        # the web API
        removing = httpx.post(f"{url}/api/trash/remove", json={"app": "ada/runs"}, headers=headers)
    assert removing.status_code == 403, removing.text
    assert removing.json()["error"] == READ_ONLY_GRANT
    assert len(said) == 2 and all(READ_ONLY_GRANT in s for s in said), said
