"""What a failure of the machine's storage means to a caller: one sentence that names the cause.

A full disk, a read-only data directory, data another process holds for too
long, a database server gone: each is `Unavailable` (HTTP 503) with a sentence
saying which, and where, and that nothing was written — the layer that writes
(the SQLite files, the version folders) undoes what it began before it says so.

    the data directory's disk is full (/srv/pasture/apps/ada/runs) — nothing was
    written; free some space and try again

`pasture serve` asks `check_writable` before it serves, so a data directory it
cannot write is said at start-up rather than on the first write.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from pasture.errors import Unavailable

_FULL = {errno.ENOSPC, errno.EDQUOT}
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}
ROOM = 1024 * 1024  # free bytes below which a data directory counts as full at start-up


def busy_seconds() -> float:
    """How long a write waits for data another process holds: `$PASTURE_BUSY_TIMEOUT` or 10 s."""
    try:
        value = float(os.environ.get("PASTURE_BUSY_TIMEOUT", "10"))
    except ValueError:
        return 10.0
    return value if value > 0 else 10.0


def full(where: str | Path) -> Unavailable:
    return Unavailable(
        f"the data directory's disk is full ({where}) — nothing was written; free some "
        "space and try again"
    )


def read_only(where: str | Path) -> Unavailable:
    return Unavailable(
        f"the data directory is read-only ({where}) — nothing was written; pasture writes "
        "there: make it writable, or serve another with --home"
    )


def busy(where: str | Path) -> Unavailable:
    return Unavailable(
        f"the data is held by another process for longer than {busy_seconds():g} s ({where}) "
        "— nothing was written; try again, and look for a pasture process that is stuck"
    )


def fault(e: BaseException, where: str | Path) -> Unavailable | None:
    """The sentence for a storage failure, or None when `e` is not one (a bug: let it be)."""
    if isinstance(e, OSError) and e.errno is not None:
        if e.errno in _FULL:
            return full(where)
        if e.errno in _READ_ONLY:
            return read_only(where)
        return None
    if isinstance(e, sqlite3.OperationalError | sqlite3.DatabaseError):
        text = str(e).lower()
        if "full" in text:
            return full(where)
        if "readonly" in text or "read-only" in text or "unable to open" in text:
            return read_only(where)
        if "locked" in text or "busy" in text:
            return busy(where)
        if "disk i/o error" in text:
            return Unavailable(
                f"the data directory could not be written ({where}: a disk I/O error) — "
                "nothing was written; check the disk, then try again"
            )
    return None


def check_writable(folder: Path) -> None:
    """Unavailable, naming the cause, when pasture could not write its data in `folder`."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".pasture-can-write"
        with open(probe, "wb") as f:
            f.write(b"\0" * 4096)
            f.flush()
            os.fsync(f.fileno())
        probe.unlink()
        free = os.statvfs(folder)
    except OSError as e:
        raise fault(e, folder) or read_only(folder) from None
    if free.f_bavail * free.f_frsize < ROOM:
        raise full(folder)
