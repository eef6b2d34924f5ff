"""The official MCP conformance suite against a registry served on its own over HTTP.

`tests/conformance_app/fixtures.py` is the suite's own fixtures (its tools, resources
and prompts) as a program using pasture as a library, served by
`pasture.mcp.serve_registry_http` in a process of its own: every scenario each revision
scores passes — the scenarios of tools, resources and prompts, progress, logging, and
asking the client (elicitation, sampling, roots; the newest revision's input_required,
its state sealed across rounds) alike.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers.conformance import REVISIONS, run_suite
from helpers.processes import free_port, server_env, wait_until_up

# The suite comes from npm; the registry runs in a process of its own.
pytestmark = [pytest.mark.npm, pytest.mark.processes]

FIXTURES = Path(__file__).resolve().parents[1] / "conformance_app" / "fixtures.py"


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_scored_scenario_passes(tmp_path: Path, revision: str) -> None:
    port = free_port()
    said = tmp_path / "stderr"  # a file, not a pipe: nobody reads it while the suite runs
    with said.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(FIXTURES), str(port)],
            env=server_env(tmp_path),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process, lambda: said.read_text(errors="replace"))
        run = run_suite(f"{url}/mcp", revision, tmp_path / "out")
    finally:
        process.terminate()
        process.wait(timeout=60)

    assert len(run.scored) >= 30, run.printed
    failed = {s: run.failed(s) for s in run.scored if run.failed(s)}
    assert failed == {}, run.printed
