"""`pasture --help` imports nothing heavy: no server, no SDK, no store, no renderer.

Run as a person runs it, `python -m pasture --help`, in a fresh interpreter that
then names every module it imported. How fast that is, is `benchmarks/startup.py`'s
to say; this says what it must not load (each of these would cost it dearly).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HEAVY = (
    "anyio",
    "httpx",
    "httpx2",
    "jsonschema",
    "mcp",
    "mcp_types",
    "prometheus_client",
    "prompt_toolkit",
    "psycopg",
    "pydantic",
    "rich",
    "sqlite3",
    "starlette",
    "uvicorn",
    "yaml",
    # pasture's own, each bringing some of the above
    "pasture.commands",
    "pasture.mcp",
    "pasture.platform",
    "pasture.store",
    "pasture.web",
)

RUN_AND_NAME_MODULES = """
import runpy, sys
sys.argv = ["pasture", *sys.argv[1:]]
try:
    runpy.run_module("pasture", run_name="__main__", alter_sys=True)
except SystemExit as e:
    assert e.code in (0, None), e.code
print("\\n".join(sorted(sys.modules)), file=sys.stderr)
"""


def _imported(*args: str) -> tuple[str, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_NAME_MODULES, *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    return done.stdout, set(done.stderr.split())


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.processes
def test_help_imports_nothing_heavy() -> None:
    printed, modules = _imported("--help")
    assert printed.startswith("usage: pasture")
    for verb in ("serve", "deploy", "command", "token", "audit"):
        assert f"    {verb}" in printed  # every verb listed, though none was made
    assert "pasture.cli" in modules
    assert _heavy(modules) == []


@pytest.mark.processes
def test_a_verbs_help_makes_its_parser_and_still_imports_nothing_heavy() -> None:
    printed, modules = _imported("token", "new", "--help")
    assert printed.startswith("usage: pasture token new")
    assert "--read" in printed
    assert _heavy(modules) == []
