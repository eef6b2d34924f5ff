"""Deploy mechanics: reading an app's files, the checks no other layer makes, versions on disk.

A version's files are written to a temporary folder and renamed into
`v<N>` in one step; the platform database's switch of the current version is
the commit point, so a deploy that dies anywhere before it leaves the last
good version serving (its orphaned `v<N>` is swept by the next deploy).
"""

from __future__ import annotations

import fcntl
import html
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from pasture.errors import UsageError

# Files that are the app's source, never served as pages.
SOURCE_FILES = frozenset(
    {"tools.json", "tools.yml", "tools.yaml", "vocab.json", "worker.py", "worker.js"}
)
_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules"})
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_VERSION_DIR = re.compile(r"^v(\d+)$")


def clean_path(path: str) -> str | None:
    """A file's path inside an app, or None when it is absolute, climbs out, or is hidden."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if not parts or parts[0] == "/":
        return None
    if any(p in ("..", ".", "") or p.startswith(".") for p in parts):
        return None
    return "/".join(parts)


def read_dir(root: Path) -> dict[str, bytes]:
    """Every file under an app's folder, by its relative path; hidden files are left out."""
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder — deploy the folder that holds index.html")
    files: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and d not in _SKIPPED_DIRS
        )
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            full = Path(dirpath) / name
            files[full.relative_to(root).as_posix()] = full.read_bytes()
    return files


def normalise(files: Mapping[str, bytes | str]) -> tuple[dict[str, bytes], list[str]]:
    """Files as bytes by clean path, and a problem for each path that is not one."""
    out: dict[str, bytes] = {}
    problems: list[str] = []
    for path, body in files.items():
        clean = clean_path(path)
        if clean is None:
            problems.append(f"{path} — a file's path is relative, with no .. and no hidden parts")
            continue
        out[clean] = body.encode() if isinstance(body, str) else bytes(body)
    return out, problems


def title_of(files: Mapping[str, bytes]) -> str | None:
    """The `<title>` of index.html, if it has one."""
    index = files.get("index.html")
    if index is None:
        return None
    found = _TITLE.search(index.decode("utf-8", "replace"))
    if not found:
        return None
    title = " ".join(html.unescape(found.group(1)).split())
    return title or None


def versions_on_disk(app_dir: Path) -> list[int]:
    if not app_dir.is_dir():
        return []
    found = []
    for child in app_dir.iterdir():
        m = _VERSION_DIR.match(child.name)
        if m and child.is_dir():
            found.append(int(m.group(1)))
    return sorted(found)


def sweep(app_dir: Path, recorded: int) -> None:
    """Remove what a deploy that died left behind: temp folders, versions never switched to."""
    if not app_dir.is_dir():
        return
    for child in app_dir.iterdir():
        if child.name.startswith(".tmp-"):
            shutil.rmtree(child, ignore_errors=True)
    for number in versions_on_disk(app_dir):
        if number > recorded:
            shutil.rmtree(app_dir / f"v{number}", ignore_errors=True)


def write_version(app_dir: Path, version: int, files: Mapping[str, bytes]) -> Path:
    """Write every file to a temporary folder, then rename it into `v<N>` in one step."""
    app_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=app_dir))
    for path, body in files.items():
        target = tmp / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as f:
            f.write(body)
            f.flush()
            os.fsync(f.fileno())
    final = app_dir / f"v{version}"
    os.rename(tmp, final)
    return final


def read_version(version_dir: Path) -> dict[str, bytes]:
    return read_dir(version_dir) if version_dir.is_dir() else {}


@contextmanager
def app_lock(app_dir: Path) -> Iterator[None]:
    """One deploy of an app at a time, across processes."""
    app_dir.mkdir(parents=True, exist_ok=True)
    with open(app_dir / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
