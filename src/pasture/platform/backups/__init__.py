"""Backups of the whole server: one archive of everything, taken while it serves, restored
into an empty data directory or database.

    pasture backup FILE                     the server's owner, at any time
    pasture restore FILE [--key KEY]        into an empty --home (or --database)
    pasture serve --backup-every 1d --backup-keep 7 --backup-dir DIR

    archive.py     the archive: a tar file written under a temporary name, and read back
    tables.py      any table read and written, whatever its columns, on either database
    taking.py      a backup taken: SQLite's online backup API, or one PostgreSQL snapshot
    restoring.py   a backup restored, from either database into either
    scheduled.py   backups on a schedule, one process of those serving taking each

`Backups` is the Service's part: it decides who may (the server's owner alone) and
starts the schedule; `restore` needs no Service, as there is no server yet to ask.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pasture.caller import Caller
from pasture.long_calls import LongCall, progress_of
from pasture.platform.nouns import plural
from pasture.result import Result

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from pasture.platform.auth.people import People
    from pasture.platform.backups.scheduled import Schedule
    from pasture.platform.backups.taking import Told

DOING = "backs up the whole server"


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    size = count / 1024
    for unit in ("KB", "MB"):
        if size < 1024:
            return f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def told_to(long_call: LongCall | None) -> Told | None:
    """A backup's progress told as a call's (`pasture.long_calls`), or nowhere."""
    if long_call is None:
        return None

    def told(done: int, total: int | None, what: str) -> None:
        # in megabytes, as a bar shows them: "databases, MB  12.5 of 31.1"
        mb = round(done / 1e6, 1)
        long_call.report(progress_of(mb, max(round((total or 0) / 1e6, 1), mb, 0.1), f"{what}, MB"))

    return told


class Backups:
    """The whole server's backups, for its owner."""

    def __init__(
        self,
        home: Path,
        database_url: str | None,
        people: People,
        before: Callable[[], None] = lambda: None,
    ) -> None:
        self.home = home
        self.database_url = database_url
        self.people = people
        self.before = before  # what is queued to be written, written first (the audit)
        self.schedule: Schedule | None = None

    def take(self, caller: Caller, file: str | Path, long_call: LongCall | None = None) -> Result:
        """One archive of the whole server at `file`, written whole or not at all."""
        from pasture.platform.backups.taking import KEY_FILE, take

        self.people.require_admin(caller, DOING)
        self.before()
        told = told_to(long_call)
        taken = take(self.home, self.database_url, Path(file), told=told)
        if long_call is not None:
            long_call.flush(last=True)
        return Result(
            f"backed up the server to {taken.path} ({_size(taken.size)}: "
            f"{plural(taken.apps, 'app', 'apps')}, {plural(taken.files, 'file', 'files')}, "
            f"{plural(taken.secrets, 'secret', 'secrets')} sealed) — keep "
            f"{self.home / KEY_FILE} safe apart from it: a restore needs it for the secrets",
            {
                "file": str(taken.path),
                "bytes": taken.size,
                "apps": taken.apps,
                "files": taken.files,
                "secrets": taken.secrets,
                "key": str(self.home / KEY_FILE),
            },
        )

    def start_schedule(
        self, caller: Caller, every: float, keep: int, folder: Path | None
    ) -> Schedule:
        """Backups taken every `every` seconds into `folder`, the newest `keep` kept."""
        from pasture.errors import UsageError
        from pasture.platform.backups.scheduled import Schedule, database_lock, file_lock
        from pasture.platform.backups.taking import take

        self.people.require_admin(caller, DOING)
        if keep < 1:
            raise UsageError(f"--backup-keep is how many backups are kept: at least 1, not {keep}")
        folder = (folder or self.home / "backups").expanduser().absolute()
        url = self.database_url

        def lock() -> AbstractContextManager[bool]:
            return database_lock(url) if url else file_lock(self.home / "backup.lock")

        def taking(path: Path) -> object:
            self.before()
            return take(self.home, url, path, leave_out=folder)

        self.schedule = Schedule(taking, lock, folder, every, keep)
        self.schedule.start()
        return self.schedule

    def close(self) -> None:
        if self.schedule is not None:
            self.schedule.stop()
            self.schedule = None


def restore_backup(
    file: str | Path,
    home: Path,
    database_url: str | None = None,
    *,
    key_file: str | Path | None = None,
    without_secrets: bool = False,
    long_call: LongCall | None = None,
) -> Result:
    """`pasture restore`: the archive at `file` into an empty `home` (and database)."""
    from pasture.platform.backups.restoring import restore

    result = restore(
        Path(file).expanduser().absolute(),
        home,
        database_url,
        key_file=Path(key_file).expanduser() if key_file else None,
        without_secrets=without_secrets,
        told=told_to(long_call),
    )
    if long_call is not None:
        long_call.flush(last=True)
    return result


__all__ = ["Backups", "restore_backup"]
