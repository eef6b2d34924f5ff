"""What a test needs of the machine beyond Python: one rule for every such part.

A part that is missing skips the test, with the sentence that names how to install it;
under CI (`CI` set in the environment, as .ci/run and CI services set it) the same
sentence fails the test instead, so a machine that lacks a part cannot pass for green.
`make system-deps` (scripts/system-deps.sh) installs the Debian packages.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, NoReturn

import pytest

CHROMIUM = Path("/usr/bin/chromium")


def missing(what: str, install: str) -> NoReturn:
    """`what` is not on this machine: fail under CI, skip elsewhere; either way say `install`."""
    sentence = f"{what} — install with: {install}"
    if os.environ.get("CI"):
        pytest.fail(f"{sentence} (CI needs it)")
    pytest.skip(sentence)


def apt(package: str) -> str:
    """The command that installs a Debian package."""
    return f"sudo apt-get install -y {package} (or, as root: make system-deps)"


def chromium() -> Path:
    """Debian's Chromium."""
    if not CHROMIUM.exists():
        missing(f"the browser tests need Debian's Chromium at {CHROMIUM}", apt("chromium"))
    return CHROMIUM


def playwright() -> Any:
    """Playwright's synchronous API, driving Chromium (which it needs, too). Its `expect`
    waits up to a minute, not Playwright's five seconds: a busy machine draws a page
    slowly, and a page that never shows what it should still fails."""
    chromium()
    try:
        import playwright.sync_api as sync_api
    except ImportError:
        missing("the browser tests need Playwright", "pip install -e '.[dev]'")
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    sync_api.expect.set_options(timeout=60_000)
    return sync_api


def program(name: str, package: str, why: str) -> str:
    """The path of a program on the PATH, from the Debian package `package`."""
    found = shutil.which(name)
    if found is None:
        missing(f"{why} need {name}", apt(package))
    return found
