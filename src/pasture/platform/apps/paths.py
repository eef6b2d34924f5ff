"""The one function that decides a path from outside: a file of an app, or a refusal.

Every path a caller names — a deployed file's (`app_deploy`, `pasture deploy`),
`app_files`, a page's address, a view — is read by `app_path` before anything
is opened or written, and joined to a folder only by `inside`, which also
makes sure what it names really is in that folder once links are followed.

A path is relative, `/` between its names, each name at most `MAX_NAME`
bytes and the whole at most `MAX_PATH` (in UTF-8, as a filesystem counts them);
refused, with a sentence naming it: absolute paths in every spelling (`/x`,
`//x`, `\\x`, `C:x`), `..` or `.` anywhere, empty names (`a//b`, a `/` at the
end), backslashes, NUL and other control characters, hidden names (`.env`),
names starting with `~` (a page's pass: `pasture.platform.apps.origins`), and
anything too long.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from pasture.errors import UsageError

MAX_NAME = 255
MAX_PATH = 1024
_DRIVE = re.compile(r"^[A-Za-z]:")
SHAPE = "a path is relative to the app's folder, like style.css or img/logo.png"


class BadPath(UsageError):
    """A path from outside that names no file of an app."""


def shown(path: str) -> str:
    """The path as a sentence can carry it: control characters escaped, long ones cut."""
    text = path.encode("unicode_escape", "backslashreplace").decode("ascii")
    if any(unicodedata.category(ch) == "Cc" for ch in path) or not path.isprintable():
        path = text
    return path if len(path) <= 80 else path[:77] + "…"


def problem(path: object) -> str | None:
    """What is wrong with a path from outside, or None when it is a file of an app's folder."""
    if not isinstance(path, str):
        return "a path is text"
    if not path:
        return "a path names a file — it is empty"
    if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH:  # as the filesystem counts
        return f"a path is at most {MAX_PATH} bytes (as UTF-8: é is two)"
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in path):
        return "a path has no control characters"
    if path.startswith(("/", "\\")) or _DRIVE.match(path):
        return f"it is absolute — {SHAPE}"
    if "\\" in path:
        return "a path has / between its folders, never \\"
    names = path.split("/")
    if "" in names:
        return "a path has no empty names (no // and no / at its end)"
    for name in names:
        if name in (".", ".."):
            return f"a path never names . or .. — {SHAPE}"
        if name.startswith("."):
            return f"{name} is hidden (it starts with .), never deployed or served"
        if name.startswith("~"):
            return f"{name} starts with ~, which pasture keeps for a page's pass"
        if len(name.encode("utf-8")) > MAX_NAME:
            return f"a name in a path is at most {MAX_NAME} bytes (as UTF-8: é is two)"
    return None


def app_path(path: object) -> str:
    """The path itself when it is a file of an app's folder; BadPath saying what is wrong."""
    wrong = problem(path)
    if wrong is not None:
        named = shown(path) if isinstance(path, str) else repr(type(path).__name__)
        raise BadPath(f"{named or '(empty)'} is not a file of the app — {wrong}")
    assert isinstance(path, str)
    return path


def inside(folder: Path, path: object) -> Path:
    """`folder / path`, once `path` is an app's path and it resolves inside `folder`."""
    clean = app_path(path)
    target = folder / clean
    root = os.path.realpath(folder)
    real = os.path.realpath(target)
    if os.path.commonpath([root, real]) != root:
        raise BadPath(f"{shown(clean)} is not a file of the app — it leads out of its folder")
    return target
