"""`pasture …` run in this process: `pasture.cli.main(argv)` with its own environment,
standard input and captured output — what a process of its own would print and exit
with, without starting Python again for each call.

`PastureMain(home)` is called as `helpers.processes.Pasture(home)` is, and answers the
same `CompletedProcess`; a test that is about the process itself (its start-up, its
signals, a real terminal, a pipe's other end) keeps the real one.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from helpers.processes import pasture_env
from pasture.cli import main


class _Stdin(io.StringIO):
    """Standard input as a pipe gives it: read to its end, never a terminal."""

    def isatty(self) -> bool:
        return False


@contextlib.contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    """`os.environ` as `env` while the block runs, as a child process would have it."""
    before = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


def pasture_main(
    home: Path, *args: str, input: str | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`pasture ARGS…` on `home` (see `helpers.processes.pasture_env`), run here: its exit
    code and what it printed on each stream."""
    out, err = io.StringIO(), io.StringIO()
    stdin = sys.stdin
    sys.stdin = _Stdin(input or "")
    try:
        with (
            _environment(pasture_env(home, env)),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            try:
                code = main(list(args))
            except SystemExit as ended:  # argparse's usage errors, and --help
                code = ended.code if isinstance(ended.code, int) else 1
    finally:
        sys.stdin = stdin
    return subprocess.CompletedProcess(["pasture", *args], code, out.getvalue(), err.getvalue())


class PastureMain:
    """`pasture …` on one data directory, with `env` (and a call's own) on top, run here."""

    def __init__(self, home: Path, **env: str) -> None:
        self.home = home
        self.env = env

    def __call__(
        self, *args: str, input: str | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return pasture_main(self.home, *args, input=input, env={**self.env, **env})
