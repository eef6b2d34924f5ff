"""A throwaway PostgreSQL server for a test session: initdb into a temporary folder,
pg_ctl on a free loopback port (and a unix socket in that folder), stopped after.

PostgreSQL refuses to run as root, so as root its commands run through
`runuser -u postgres --` (or `nobody`, where the package made no `postgres`
account) on a folder handed to that user. Without the server's
programs the tests that need it are skipped, except under CI, where they fail.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers import needs
from helpers.processes import free_port


def binaries() -> Path | None:
    """The newest PostgreSQL server's bin folder on this machine, if there is one."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: (
            int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0
        ),
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@contextmanager
def server() -> Iterator[str]:
    """A fresh server for as long as the block runs; yields its URL."""
    bin_dir = binaries()
    if bin_dir is None:
        needs.missing(
            "PostgreSQL's server programs (initdb, pg_ctl) are not on this machine",
            needs.apt("postgresql"),
        )
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        needs.missing(
            "the PostgreSQL tests need psycopg and its pool", "pip install -e '.[postgres]'"
        )
    root = Path(tempfile.mkdtemp(prefix="pasture-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        account = _account()
        shutil.chown(root, account)
        as_user = ["runuser", "-u", account, "--"]
    data = root / "data"
    port = free_port()

    def run(*args: str) -> None:
        subprocess.run([*as_user, *args], check=True, capture_output=True, cwd=root)

    try:
        run(
            str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"
        )
        run(
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            f"-k {root} -p {port} -c listen_addresses=127.0.0.1 -c fsync=off",
            "-l",
            str(root / "log"),
            "-w",
            "start",
        )
    except subprocess.CalledProcessError as e:
        log = (root / "log").read_text() if (root / "log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"the test PostgreSQL did not start: {e.stderr!r} {log}") from e
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    # immediate: no shutdown checkpoint of a session's hundreds of databases, thrown away next
    stop_it = [*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "stop", "-m", "immediate"]
    _stops[url] = (stop_it, root)
    try:
        yield url
    finally:
        _stops.pop(url, None)
        subprocess.run(stop_it, capture_output=True, cwd=root)
        shutil.rmtree(root, ignore_errors=True)


def _account() -> str:
    """The account a root test run starts PostgreSQL as: Debian's `postgres`, else `nobody`."""
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    raise RuntimeError("neither a postgres nor a nobody account is on this machine (/etc/passwd)")


_stops: dict[str, tuple[list[str], Path]] = {}


def stop(url: str) -> None:
    """Stop a server `server()` started, before its block ends (it has gone away)."""
    command, root = _stops[url]
    subprocess.run(command, capture_output=True, cwd=root, check=True)


def fresh_schema() -> str:
    """A schema name no other test uses."""
    return "t_" + uuid.uuid4().hex[:16]
