"""A backup archive: one uncompressed tar file, written under a temporary name.

    manifest.json                      what the archive holds (written last, read first)
    sqlite/<path>.db                   a SQLite file of the data directory, as the online
                                       backup API copied it (platform.db, each app's store.db)
    copy/<schema>/<table>.copy         a PostgreSQL table, as COPY … TO STDOUT wrote it
    home/<path>                        every other file of the data directory that is kept:
                                       apps' version folders (`apps/<space>/<app>/v<N>/…`)

A table's rows are kept in the form its own database writes fastest (a SQLite page
copy, PostgreSQL's COPY text), and the manifest names each table's columns with a
neutral kind (`int`, `real`, `numeric`, `bool`, `text`, `bytes`), so a restore reads
either form into either database (`pasture.platform.backups.tables`).

The archive is written to `.<name>.<pid>.partial` beside its final name and renamed
onto it only once it is whole and synced: a backup that dies anywhere leaves the last
good archive where it was, and its leftovers are swept by the next backup.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from pasture.errors import UsageError

FORMAT = "pasture-backup"
VERSION = 1
MANIFEST = "manifest.json"
_BLOCK = 512
_PARTIAL = ".partial"


def partial_name(final: Path, pid: int | None = None) -> Path:
    return final.with_name(f".{final.name}.{os.getpid() if pid is None else pid}{_PARTIAL}")


def sweep_leftovers(folder: Path, name: str) -> None:
    """Take away what a backup to `name` that died left behind (its process is gone)."""
    prefix = f".{name}."
    for path in folder.glob(f".{name}.*"):
        rest = path.name[len(prefix) :]
        pid_text = rest.split(".", 1)[0]
        if not pid_text.isdigit() or _alive(int(pid_text)):
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Writer:
    """An archive being written: members added one by one, then `finish` renames it."""

    def __init__(self, final: Path) -> None:
        self.final = final
        self.temp = partial_name(final)
        # scratch beside it, on the same disk: each SQLite copy is made there, then added
        self.scratch = self.temp.with_name(self.temp.name + ".d")
        self.scratch.mkdir(parents=True, exist_ok=True)
        # unbuffered: members are copied into it by file descriptor
        self._out: IO[bytes] = open(self.temp, "wb", buffering=0)  # noqa: SIM115
        self.written = 0  # bytes of members so far

    def add_file(self, name: str, source: Path) -> int:
        """`source`'s bytes as the member `name`; its size."""
        size = source.stat().st_size
        self._header(name, size)
        with open(source, "rb") as src:
            _copy(src.fileno(), self._out.fileno(), size)
        self._pad(size)
        return size

    def add_bytes(self, name: str, data: bytes) -> None:
        self._header(name, len(data))
        self._out.write(data)
        self._pad(len(data))

    @contextmanager
    def streamed(self, name: str) -> Iterator[IO[bytes]]:
        """A member written as it comes, its size put in its header once it is known: the
        header is GNU's, whose length a size does not change (a large one is base-256)."""
        start = self._out.tell()
        head = self._gnu_header(name, 0)
        self._out.write(head)
        out = io.BufferedWriter(self._out, 1 << 20)  # type: ignore[arg-type]
        try:
            yield out
            out.flush()
        finally:
            out.detach()  # the archive's own file stays open
        size = self._out.tell() - start - len(head)
        final = self._gnu_header(name, size)
        if len(final) != len(head):  # cannot be: said rather than an archive misread
            raise OSError(f"the header of {name} would move the archive's members")
        os.pwrite(self._out.fileno(), final, start)
        self._pad(size)

    @staticmethod
    def _gnu_header(name: str, size: int) -> bytes:
        info = tarfile.TarInfo(name)
        info.size = size
        info.mtime = int(time.time())
        info.mode = 0o600
        return info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape")

    def _header(self, name: str, size: int) -> None:
        info = tarfile.TarInfo(name)
        info.size = size
        info.mtime = int(time.time())
        info.mode = 0o600
        self._out.write(info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape"))

    def _pad(self, size: int) -> None:
        self.written += size
        rest = size % _BLOCK
        if rest:
            self._out.write(b"\0" * (_BLOCK - rest))

    def finish(self, manifest: dict[str, Any]) -> None:
        """The manifest last, the tar's end, synced, and renamed onto the final name."""
        self.add_bytes(MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode())
        self._out.write(b"\0" * (_BLOCK * 2))
        os.fsync(self._out.fileno())
        self._out.close()
        os.replace(self.temp, self.final)
        _sync_folder(self.final.parent)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def abandon(self) -> None:
        self._out.close()
        self.temp.unlink(missing_ok=True)
        shutil.rmtree(self.scratch, ignore_errors=True)


def _copy(src: int, dst: int, size: int) -> None:
    """`size` bytes from one file to the other inside the kernel where it can."""
    left = size
    try:
        while left > 0:
            moved = os.copy_file_range(src, dst, left)
            if moved == 0:
                break
            left -= moved
    except OSError:
        pass
    if left > 0:  # a filesystem that does not do it: read and write
        os.lseek(src, size - left, os.SEEK_SET)
        while left > 0:
            chunk = os.read(src, min(left, 1 << 20))
            if not chunk:
                raise OSError("the file being archived was cut short")
            os.write(dst, chunk)
            left -= len(chunk)


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Archive:
    """An archive read back: its manifest, and its members by name."""

    def __init__(self, path: Path) -> None:
        self.path = path
        not_one = f"{path} is not a pasture backup — give a file pasture backup made"
        if not path.is_file():
            raise UsageError(f"there is no file {path} — give the archive pasture backup made")
        try:
            self._tar = tarfile.open(path, "r:")  # noqa: SIM115 (closed by close)
            member = self._tar.getmember(MANIFEST)
            found = self._tar.extractfile(member)
            manifest = json.loads(found.read()) if found is not None else None
        except (tarfile.TarError, KeyError, ValueError, OSError):
            raise UsageError(not_one) from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise UsageError(not_one)
        if manifest.get("version") != VERSION:
            raise UsageError(
                f"{path} is a pasture backup of format {manifest.get('version')}, which this "
                f"pasture does not read (it reads {VERSION}) — restore it with the pasture "
                "that made it"
            )
        self.manifest: dict[str, Any] = manifest

    def names(self) -> list[str]:
        return self._tar.getnames()

    def open(self, name: str) -> IO[bytes]:
        found = self._tar.extractfile(name)
        if found is None:
            raise UsageError(f"{self.path} is cut short ({name} is missing) — use another backup")
        return found

    def extract(self, name: str, to: Path) -> None:
        """A member written out to `to` (made afresh, with its folder)."""
        to.parent.mkdir(parents=True, exist_ok=True)
        with self.open(name) as src, open(to, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)

    def size(self, name: str) -> int:
        return int(self._tar.getmember(name).size)

    def close(self) -> None:
        self._tar.close()


__all__ = ["FORMAT", "MANIFEST", "VERSION", "Archive", "Writer", "partial_name", "sweep_leftovers"]
