"""A code app's warnings (input keywords its registry does not check) are said once, at
its deploy, beside what was deployed — not again by every later command line or
`pasture mcp` that loads the app."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp.client.stdio import stdio_client

from helpers.code_apps import code_app
from helpers.processes import Pasture, server_env
from mcp import Client, StdioServerParameters

WORKER = """
def pick(args, ctx):
    return {"text": "picked", "data": {"size": args["size"]}}


def setup(app):
    app.register(
        "shop pick",
        description="Pick a size",
        input={"type": "object", "properties": {"size": {"anyOf": [{"type": "string"}]}}},
        annotations={"readOnly": True},
        run=pick,
    )
"""
WARNING = (
    "warning: worker.py: shop pick: input keywords size.anyOf are not checked before run() "
    "— check them in run()"
)


@pytest.mark.processes
def test_a_code_apps_warning_is_said_at_its_deploy_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    pasture = Pasture(home)
    app = code_app(tmp_path, "shop", WORKER, notes=False)
    deployed = pasture("deploy", str(app))
    assert deployed.returncode == 0, deployed.stderr
    assert deployed.stdout.splitlines()[-1] == WARNING
    assert deployed.stdout.count("not checked") == 1 and "not checked" not in deployed.stderr
    as_json = json.loads(pasture("deploy", str(app), "--json").stdout)
    assert as_json["warnings"] == [WARNING.removeprefix("warning: ")]

    for later in (["commands"], ["status"], ["command", "shop_pick", "M"]):
        done = pasture(*later)
        assert done.returncode == 0, done.stderr
        assert "not checked" not in done.stdout + done.stderr, later

    async def listed() -> None:
        stdio = StdioServerParameters(
            command=sys.executable,
            args=["-m", "pasture", "mcp"],
            env=server_env(home, PASTURE_USER="ada"),
        )
        with (tmp_path / "mcp.err").open("w") as errlog:
            # the SDK's stdio transport, given a file for the server's stderr
            async with Client(stdio_client(stdio, errlog=errlog), mode="legacy") as client:
                answer = await client.call_tool("commands", {})
                assert "shop_pick" in str(answer.content)

    anyio.run(listed)
    said = (tmp_path / "mcp.err").read_text()
    assert "not checked" not in said, said
