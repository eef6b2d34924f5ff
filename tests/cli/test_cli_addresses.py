"""Every address the command line prints is the server's own: once `pasture serve` has
served a data directory at its public URL and apps domain, `deploy`, `commands`,
`signin`, `password` and `pasture mcp`'s answers name those, not 127.0.0.1:8000 — and
an MCP client's stdio configuration can say them itself, as the README's does."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from helpers.club import RUNS
from helpers.processes import Pasture, running_server, server_env
from mcp import Client, StdioServerParameters

PUBLIC = "https://pasture.example.org"
APP = "https://runs--ada.apps.example.org/"


def _app_list(home: Path, **env: str) -> str:
    said: list[str] = []

    async def main() -> None:
        stdio = StdioServerParameters(
            command=sys.executable,
            args=["-m", "pasture", "mcp"],
            env=server_env(home, PASTURE_USER="ada", **env),
        )
        async with Client(stdio, mode="legacy") as client:
            answer = await client.call_tool("app_list", {})
            said.append(" ".join(getattr(c, "text", "") for c in answer.content))

    anyio.run(main)
    return said[0]


@pytest.mark.processes
def test_the_verbs_name_the_address_the_server_serves_at(tmp_path: Path) -> None:
    home = tmp_path / "home"
    pasture = Pasture(home)
    options = ("--public-url", PUBLIC, "--apps-domain", "apps.example.org")
    with running_server(home, *options, PASTURE_USER="ada"):
        pass  # served once: the data directory keeps where

    deployed = pasture("deploy", str(RUNS))
    assert deployed.returncode == 0, deployed.stderr
    assert deployed.stdout.splitlines()[0] == f"deployed ada/runs v1: {APP}"
    listed = pasture("commands")
    assert "Run club, an app at runs--ada.apps.example.org/" in listed.stdout
    signin = pasture("signin")
    assert signin.stdout.startswith(f"{PUBLIC}/signin?link="), signin.stdout
    password = pasture("password", "--password", "correct horse")
    assert password.stdout.strip() == f"password set for ada: sign in at {PUBLIC}/signin"
    assert APP in _app_list(home)
    for said in (deployed, listed, signin, password):
        assert "127.0.0.1:8000" not in said.stdout

    # said for one verb, an address is that one's
    other = pasture("signin", "--public-url", "https://other.example.org")
    assert other.stdout.startswith("https://other.example.org/signin?link=")
    by_env = pasture("deploy", str(RUNS), PASTURE_PUBLIC_URL="https://env.example.org")
    assert (
        by_env.stdout.splitlines()[0] == "deployed ada/runs v2: https://env.example.org/ada/runs/"
    )


@pytest.mark.processes
def test_served_on_loopback_apps_are_named_by_their_localhost_origins(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with running_server(home, PASTURE_USER="ada") as url:
        port = url.rsplit(":", 1)[1]
        deployed = Pasture(home)("deploy", str(RUNS))
    assert deployed.stdout.splitlines()[0] == (
        f"deployed ada/runs v1: http://runs--ada.localhost:{port}/"
    )


@pytest.mark.processes
def test_the_stdio_configuration_names_the_address_itself(tmp_path: Path) -> None:
    """Never served, a data directory's stdio connection names what its env says, as the
    README's configuration gives it."""
    home = tmp_path / "home"
    assert Pasture(home)("deploy", str(RUNS)).returncode == 0
    assert "http://127.0.0.1:8000/ada/runs/" in _app_list(home)
    named = _app_list(
        home, PASTURE_PUBLIC_URL="http://127.0.0.1:8000", PASTURE_APPS_DOMAIN="localhost"
    )
    assert "http://runs--ada.localhost:8000/" in named
