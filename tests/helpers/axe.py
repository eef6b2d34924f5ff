"""axe-core (npm), the accessibility checker, for pages in Chromium.

A test tool, not a dependency of pasture: installed once into the tests' cache with the
machine's npm (as helpers.conformance installs its tools), under a lock; nothing else is
downloaded. `serious(page)` runs it on a page and says each serious or critical
violation, with where it is.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import Any

from helpers.conformance import CACHE, _npm_install

VERSION = "4.14.1"
SERIOUS = """
async () => {
  const found = await axe.run(document, { resultTypes: ["violations"] });
  return found.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ` +
      v.nodes.map((n) => n.target.join(" ")).slice(0, 5).join(", "));
}
"""


def installed() -> Path:
    """`axe.min.js`, installed into the tests' cache the first time."""
    script = CACHE / f"axe-core-{VERSION}" / "node_modules" / "axe-core" / "axe.min.js"
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / ".axe.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not script.exists():
            _npm_install(script.parents[2], f"axe-core@{VERSION}")
    return script


def serious(page: Any) -> list[str]:
    """axe-core's serious and critical violations on `page` (whose context bypasses the
    page's CSP: axe is a script of its own, added to it)."""
    page.add_script_tag(path=str(installed()))
    return list(page.evaluate(SERIOUS))
