"""`pasture` in a process of its own, as a person runs it on the machine."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

PASTURE = [sys.executable, "-m", "pasture"]


def pasture_env(home: Path, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment with `home` as the data directory and ada as the machine's
    owner; no token comes from outside, only from `env`, and the database is the test's own
    (tests/conftest.py keeps the machine's `$PASTURE_DATABASE_URL` out)."""
    full = {k: v for k, v in os.environ.items() if k != "PASTURE_TOKEN"}
    full.update(PASTURE_HOME=str(home), PASTURE_USER="ada")
    full.update(env or {})
    return full


def pasture(
    home: Path, *args: str, input: str | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`pasture ARGS…` on `home` (see `pasture_env`), to its end: its exit code and output."""
    return subprocess.run(
        [*PASTURE, *args],
        env=pasture_env(home, env),
        input=input,
        capture_output=True,
        text=True,
        timeout=120,
    )


def server_env(home: Path, **extra: str) -> dict[str, str]:
    """A server's environment: the data directory, the PATH, this Python's imports (this
    checkout's code), the test's database if it set one, and `extra` — nothing else of
    this process's."""
    database = os.environ.get("PASTURE_DATABASE_URL")
    return {
        "PASTURE_HOME": str(home),
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join(sys.path),
        **({"PASTURE_DATABASE_URL": database} if database else {}),
        **extra,
    }


def free_port() -> int:
    """A loopback port nothing listens on (now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_until_up(url: str, process: subprocess.Popen[bytes], why: Callable[[], str]) -> None:
    """Until `url` answers; if the process ends first, or a minute passes, fail with `why()`."""
    deadline = time.monotonic() + 60
    with httpx.Client(timeout=1) as client:  # one for every try: making one costs 20 ms
        while True:
            try:
                client.get(f"{url}/")
                return
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(why()) from None
                time.sleep(0.1)


def _said(process: subprocess.Popen[bytes]) -> str:
    return process.stderr.read().decode(errors="replace") if process.stderr else ""


@contextmanager
def running_server(home: Path, *options: str, **extra: str) -> Iterator[str]:
    """`pasture serve` on a free loopback port with `options`, until the block ends (it is
    stopped as a signal stops it, so it writes what it keeps); its address."""
    port = free_port()
    process = subprocess.Popen(
        [*PASTURE, "serve", "--host", "127.0.0.1", "--port", str(port), *options],
        env=server_env(home, **extra),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process, lambda: _said(process))
        yield url
    finally:
        process.terminate()
        process.wait(timeout=60)


class Pasture:
    """`pasture …` on one data directory, with `env` (and a call's own) on top."""

    def __init__(self, home: Path, **env: str) -> None:
        self.home = home
        self.env = env

    def __call__(
        self, *args: str, input: str | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return pasture(self.home, *args, input=input, env={**self.env, **env})
