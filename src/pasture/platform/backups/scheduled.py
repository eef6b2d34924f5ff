"""Backups on a schedule, taken by the serving process: `serve --backup-every 1d
--backup-keep 7 --backup-dir DIR`.

Every process serving the same data runs the schedule, and one of them takes each backup:
the one that holds the lock (a file lock in the data directory; on PostgreSQL an advisory
lock every server shares), which looks again, holding it, at when the newest backup in
DIR was taken. Archives are named by the moment they were taken
(`pasture-20261202T183000Z.tar`), and only the newest `keep` are kept.
"""

from __future__ import annotations

import fcntl
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path

from pasture.errors import PastureError, UsageError

logger = logging.getLogger("pasture.backups")

NAME = re.compile(r"pasture-\d{8}T\d{6}Z\.tar")
_DURATION = re.compile(r"(\d+)\s*(s|m|min|h|d|w)", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_LOOK_EVERY = 60.0  # seconds between two looks at whether a backup is due, at most


def seconds_of(text: str, option: str) -> float:
    """A while, as the audit's `--since` writes one: `90s`, `30m`, `1h`, `1d`, `1w`."""
    found = _DURATION.fullmatch(text.strip())
    if found is None or int(found[1]) <= 0:
        raise UsageError(f"{option} is a while: 90s, 30m, 1h, 1d or 1w (not {text[:40]!r})")
    return float(int(found[1]) * _UNITS[found[2].lower()])


def archives(folder: Path) -> list[Path]:
    """The scheduled backups in `folder`, oldest first."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if NAME.fullmatch(p.name))


def newest_at(folder: Path) -> float | None:
    found = archives(folder)
    return found[-1].stat().st_mtime if found else None


def prune(folder: Path, keep: int) -> list[Path]:
    """All but the newest `keep` scheduled backups taken away; those taken away."""
    found = archives(folder)
    gone = found[: max(len(found) - keep, 0)]
    for path in gone:
        path.unlink(missing_ok=True)
    return gone


def next_name(folder: Path) -> Path:
    return folder / datetime.now(UTC).strftime("pasture-%Y%m%dT%H%M%SZ.tar")


class Schedule:
    """A thread that takes a backup whenever the newest in `folder` is `every` old."""

    def __init__(
        self,
        take: Callable[[Path], object],
        lock: Callable[[], AbstractContextManager[bool]],
        folder: Path,
        every: float,
        keep: int,
    ) -> None:
        self.take = take
        self.lock = lock
        self.folder = folder
        self.every = every
        self.keep = keep
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pasture-backups", daemon=True)
        self.taken: list[Path] = []

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _due_in(self) -> float:
        newest = newest_at(self.folder)
        return 0.0 if newest is None else newest + self.every - time.time()

    def _run(self) -> None:
        while not self._stop.is_set():
            wait = self._due_in()
            if wait > 0:
                self._stop.wait(min(wait, _LOOK_EVERY))
                continue
            try:
                self.once()
            except PastureError as e:
                logger.warning("a scheduled backup was not taken: %s", e.sentence)
                self._stop.wait(_LOOK_EVERY)
            except Exception:
                logger.exception("a scheduled backup was not taken")
                self._stop.wait(_LOOK_EVERY)

    def once(self) -> Path | None:
        """Take a backup if it is due and no other process is taking it; the archive."""
        with self.lock() as held:
            if not held or self._due_in() > 0:
                return None
            self.folder.mkdir(parents=True, exist_ok=True)
            path = next_name(self.folder)
            self.take(path)
            self.taken.append(path)
            prune(self.folder, self.keep)
            logger.info("backed up the server to %s", path)
            return path


@contextmanager
def file_lock(path: Path) -> Iterator[bool]:
    """Whether this process holds the lock file at `path` for the block (never waited for)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as held:
        try:
            fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(held.fileno(), fcntl.LOCK_UN)


@contextmanager
def database_lock(url: str) -> Iterator[bool]:
    """Whether this process holds the backups' advisory lock of the PostgreSQL database."""
    from pasture.store import pool

    conn = pool.connect(url, unreachable=f"cannot reach {pool.where(url)} to back it up")
    try:
        row = conn.execute("SELECT pg_try_advisory_lock(hashtext('pasture:backups'))").fetchone()
        held = bool(row and row[0])
        try:
            yield held
        finally:
            if held:
                conn.execute("SELECT pg_advisory_unlock(hashtext('pasture:backups'))")
    finally:
        conn.close()


__all__ = ["Schedule", "archives", "database_lock", "file_lock", "prune", "seconds_of"]
