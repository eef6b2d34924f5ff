"""The connector as the MCP Inspector's command line sees it: a client nobody here wrote.

The Inspector (npm `@modelcontextprotocol/inspector`) is a test tool, installed
once into a cache folder with npm; it is not a dependency of pasture. Its
`--strict` tool listing reports tool-schema portability problems.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_talk import TOOL_NAMES

from helpers import needs
from helpers.club import ROOT
from helpers.mcp_answers import said_with
from pasture.platform.service import Service

# The Inspector comes from npm, and runs `pasture mcp` as its child.
pytestmark = [pytest.mark.npm, pytest.mark.processes]

VERSION = "2.12"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pasture-tests"


@pytest.fixture(scope="module")
def inspector() -> Path:
    binary = CACHE / f"inspector-{VERSION}" / "node_modules" / ".bin" / "mcp-inspector"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        needs.missing("the MCP Inspector tests need npm", needs.apt("nodejs npm"))
    folder = binary.parents[2]
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            npm,
            "install",
            "--silent",
            "--no-audit",
            "--no-fund",
            "--prefix",
            str(folder),
            f"@modelcontextprotocol/inspector@{VERSION}",
        ],
        check=True,
        timeout=600,
    )
    return binary


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> Path:
    monkeypatch.setenv("PASTURE_USER", "ada")
    path = tmp_path / "home"
    service = Service(path)
    service.deploy(service.local_owner(), ROOT / "examples" / "runs")
    service.close()
    return path


def database_env() -> list[str]:
    """The test's database, for `pasture mcp` under the Inspector, if it is not SQLite."""
    url = os.environ.get("PASTURE_DATABASE_URL")
    return ["-e", f"PASTURE_DATABASE_URL={url}"] if url else []


def inspect(inspector: Path, home: Path, *args: str) -> tuple[int, Any]:
    """Run `mcp-inspector --cli` against `pasture mcp` over stdio; its exit code and JSON."""
    done = subprocess.run(
        [
            str(inspector),
            "--cli",
            "-e",
            f"PASTURE_HOME={home}",
            "-e",
            "PASTURE_USER=ada",
            "-e",
            f"PYTHONPATH={os.pathsep.join(sys.path)}",
            *database_env(),
            sys.executable,
            "-m",
            "pasture",
            "mcp",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, json.loads(done.stdout)


def test_the_tool_list_is_portable_and_fixed(inspector: Path, home: Path) -> None:
    code, listed = inspect(inspector, home, "--method", "tools/list", "--strict")
    assert code == 0, listed
    assert [t["name"] for t in listed["tools"]] == TOOL_NAMES


def test_a_command_runs_with_string_arguments_and_refuses_in_plain_words(
    inspector: Path, home: Path
) -> None:
    call = ["--method", "tools/call", "--tool-name", "command", "--tool-arg", "name=log_run"]
    code, wrote = inspect(
        inspector, home, *call, 'args={"who": "Ada", "miles": "5", "at": "2026-09-01"}'
    )
    assert code == 0 and wrote["isError"] is False
    eid = wrote["structuredContent"]["aliases"]["$run"]
    assert wrote["content"][0]["text"] == said_with(
        f"log_run: wrote 1 entity in ada/runs: $run={eid}", wrote["structuredContent"]
    )

    code, refused = inspect(
        inspector, home, *call, 'args={"who": "Ada", "miles": "many", "at": "2026-09-01"}'
    )
    assert refused["isError"] is True
    assert refused["content"] == [{"type": "text", "text": "miles is a number"}]


def test_a_view_reads_as_an_mcp_app_page(inspector: Path, home: Path) -> None:
    code, read = inspect(
        inspector, home, "--method", "resources/read", "--uri", "ui://ada/runs/leaderboard.html"
    )
    assert code == 0
    [page] = read["contents"]
    assert page["mimeType"] == "text/html;profile=mcp-app"
    assert '<base href="http://127.0.0.1:8000/ada/runs/"' in page["text"]
