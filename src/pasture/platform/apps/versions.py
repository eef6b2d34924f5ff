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
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from pasture import faults
from pasture.errors import DeployRefused, UsageError
from pasture.names import MAX_TITLE
from pasture.platform.apps import paths

# Files that are the app's source, never served as pages.
SOURCE_FILES = frozenset(
    {"tools.json", "tools.yml", "tools.yaml", "vocab.json", "worker.py", "worker.js"}
)
# ...and every module worker.py may import, wherever it is: code holds what pages must not
# (a key written into a helper module).
_SOURCE_ENDINGS = (".py", ".pyc", ".pyi")


def is_source(path: str) -> bool:
    """Whether an app's file is its source rather than a page (in any letter case, as a
    filesystem that ignores case would find it)."""
    folded = path.lower()
    return folded in SOURCE_FILES or folded.endswith(_SOURCE_ENDINGS)


# An app's code written for another platform, beside index.html: pasture runs an app's code
# from worker.py alone, so an app carrying one of these would deploy with it never run.
FOREIGN_WORKERS = ("worker.js", "worker.mjs", "worker.ts")


def foreign_workers(files: Mapping[str, object]) -> list[str]:
    """A sentence for each worker file of another platform at the app's root (in any letter
    case), which pasture would never run."""
    return [
        f"{path}: pasture runs an app's code from worker.py, in Python, and never runs {path} "
        '— write its commands in worker.py (the guide\'s "Commands written as code", '
        "/docs.md), or give a script of the app's pages another name"
        for path in sorted(files)
        if path.lower() in FOREIGN_WORKERS
    ]


_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules"})
# An app's bounds, a version's: every file is written (and synced) on each deploy, and kept.
MAX_FILES = 1_000
MAX_BYTES = 64 * 1024 * 1024
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_VERSION_DIR = re.compile(r"^v(\d+)$")


def read_dir(root: Path) -> dict[str, bytes]:
    """Every file under an app's folder, by its relative path; hidden files are left out.

    Nothing outside the folder is read: a link that leads out of it, or to
    nothing, or to a folder, is refused (DeployRefused, every one named), as
    is a name no app's path may have.
    """
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder — deploy the folder that holds index.html")
    real_root = os.path.realpath(root)
    files: dict[str, bytes] = {}
    problems: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):  # links to folders are not walked
        kept = []
        for name in sorted(dirnames):
            if name.startswith(".") or name in _SKIPPED_DIRS:
                continue
            if os.path.islink(os.path.join(dirpath, name)):
                rel = (Path(dirpath) / name).relative_to(root).as_posix()
                problems.append(
                    f"{paths.shown(rel)} is a link to a folder — deploy copies files, not "
                    "links; copy the folder in instead"
                )
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            wrong = _unreadable(full, rel, real_root)
            if wrong is not None:
                problems.append(wrong)
                continue
            files[rel] = Path(os.path.realpath(full)).read_bytes()
    if problems:
        raise DeployRefused(problems)
    return files


def _unreadable(full: Path, rel: str, real_root: str) -> str | None:
    """Why a file found in a folder being deployed cannot be one of the app's, or None."""
    wrong = paths.problem(rel)
    if wrong is not None:
        return f"{paths.shown(rel)} is not a file of the app — {wrong}"
    if full.is_symlink():
        link = os.readlink(full)
        target = os.path.realpath(full)
        if not os.path.exists(target):
            return f"{paths.shown(rel)} is a link to nothing ({paths.shown(link)}) — remove it"
        if os.path.commonpath([real_root, target]) != real_root:
            return (
                f"{paths.shown(rel)} is a link to {paths.shown(link)}, outside the folder — "
                "copy the file in instead"
            )
    if not os.path.isfile(full):
        return f"{paths.shown(rel)} is not a plain file — an app is made of files"
    return None


def too_big(files: Mapping[str, bytes | str]) -> list[str]:
    """What is over an app's bounds (`MAX_FILES`, `MAX_BYTES`), in words; looked at before
    anything else of a deploy, as each file costs a write and a place on the disk."""
    if len(files) > MAX_FILES:
        return [
            f"an app is at most {MAX_FILES:,} files, and this one is {len(files):,} — leave "
            "out what its pages do not use"
        ]
    size = sum(len(body) for body in files.values())
    if size > MAX_BYTES:
        return [
            f"an app is at most {MAX_BYTES // (1024 * 1024)} MB, and this one is {size:,} "
            "bytes — keep large media elsewhere and link to it"
        ]
    return []


def normalise(files: Mapping[str, bytes | str]) -> tuple[dict[str, bytes], list[str]]:
    """Files as bytes by path, and a problem for each path that is not an app's."""
    out: dict[str, bytes] = {}
    problems: list[str] = too_big(files)
    if problems:
        return out, problems
    for path, body in files.items():
        wrong = paths.problem(path)
        if wrong is not None:
            named = paths.shown(path) if isinstance(path, str) else "a file"
            problems.append(f"{named} is not a file of the app — {wrong}")
            continue
        if isinstance(body, str):
            try:
                out[path] = body.encode()
            except UnicodeEncodeError:
                problems.append(
                    f"{paths.shown(path)} is not text that UTF-8 can carry (it has a lone "
                    "surrogate) — send the file's text as it is"
                )
        else:
            out[path] = bytes(body)
    for path in out:  # a name is a file or a folder, not both
        parts = path.split("/")
        for i in range(1, len(parts)):
            folder = "/".join(parts[:i])
            if folder in out:
                problems.append(
                    f"{paths.shown(folder)} is a file, so {paths.shown(path)} cannot be a file "
                    f"inside it — rename one of them"
                )
                break
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
    # a title is a line of text to show: no control characters (no database keeps a NUL)
    title = "".join(ch for ch in title if ch.isprintable())[:MAX_TITLE].strip()
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


def forget_older(app_dir: Path, oldest_kept: int) -> None:
    """Remove the folders of versions older than the oldest the database keeps: let go by
    a deploy (here, or on another server sharing the database). A newer folder is never
    touched here: it may be a deploy's under way."""
    for number in versions_on_disk(app_dir):
        if number < oldest_kept:
            shutil.rmtree(app_dir / f"v{number}", ignore_errors=True)


def write_version(
    app_dir: Path,
    version: int,
    files: Mapping[str, bytes],
    wrote: Callable[[int], None] | None = None,
) -> Path:
    """Write every file to a temporary folder, then rename it into `v<N>` in one step;
    `wrote` is told the bytes written so far after each file (a deploy's progress).

    A write that fails (a full disk, a read-only folder) leaves nothing behind and
    says why (`pasture.faults`).
    """
    tmp: Path | None = None
    try:
        app_dir.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=app_dir))
        done = 0
        for path, body in files.items():
            target = paths.inside(tmp, path)
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as f:
                f.write(body)
                f.flush()
                os.fsync(f.fileno())  # what makes a big deploy take seconds
            done += len(body)
            if wrote is not None:
                wrote(done)
        final = app_dir / f"v{version}"
        os.rename(tmp, final)
    except OSError as e:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        raise faults.fault(e, app_dir) or e from None
    except BaseException:  # stopped (`wrote` raised, Ctrl-C): nothing left behind either
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def read_version(version_dir: Path) -> dict[str, bytes]:
    return read_dir(version_dir) if version_dir.is_dir() else {}


@contextmanager
def app_lock(app_dir: Path) -> Iterator[None]:
    """One deploy of an app at a time, across processes."""
    try:
        app_dir.mkdir(parents=True, exist_ok=True)
        lock = open(app_dir / ".lock", "w")  # noqa: SIM115 (closed below, after the block)
    except OSError as e:
        raise faults.fault(e, app_dir) or e from None
    with lock as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
