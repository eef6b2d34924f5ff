"""Loading an app's commands at deploy and at start-up.

`load_commands` reads `tools.json` (or `tools.yml`) from the app's files,
checks every entry, adds the generated `add_<kind>` / `find_<kind>` commands,
and either returns every command or raises one `DeployRefused` naming every
problem. It installs nothing, so a deploy can check an app before it is put
into service.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import Any

import yaml

from pasture.commands.declared import declared_commands
from pasture.commands.generated import generated_commands
from pasture.commands.model import Command
from pasture.errors import DeployRefused
from pasture.store.vocab import Vocabulary

TOOL_FILES = ("tools.json", "tools.yml")


def tools_file(files: Mapping[str, bytes]) -> str | None:
    """Which file declares the app's commands (None for neither); both at once is refused."""
    present = [name for name in TOOL_FILES if name in files]
    if len(present) > 1:
        raise DeployRefused(
            ["tools.json is here too — an app declares its commands in one file; delete one"],
            prefix="tools.yml",
        )
    return present[0] if present else None


def read_tools(files: Mapping[str, bytes]) -> tuple[str, Mapping[Any, Any]] | None:
    """The tools document and the file it came from, or None when the app declares none.

    A file that is not JSON (or YAML) is refused with the line it breaks on.
    """
    name = tools_file(files)
    if name is None:
        return None
    raw = files[name]
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
    except UnicodeDecodeError:
        raise DeployRefused(["the file is not UTF-8 text — save it as UTF-8"], name) from None
    doc = _parse_json(text) if name == "tools.json" else _parse_yaml(text)
    if not isinstance(doc, Mapping):
        raise DeployRefused(
            ['the file is an object of commands keyed by name, like {"log_run": {…}}'], name
        )
    return name, doc


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_no_twice)
    except json.JSONDecodeError as bad:
        message = bad.msg[:1].lower() + bad.msg[1:]
        raise DeployRefused(
            [f"line {bad.lineno}, column {bad.colno} is not JSON: {message}"], "tools.json"
        ) from None
    except _Twice as twice:
        raise DeployRefused([str(twice)], "tools.json") from None


class _Twice(ValueError):
    pass


def _no_twice(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # A key written twice would quietly keep only the second.
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Twice(f"{key} is written twice in one object — keep one of them")
        out[key] = value
    return out


def _parse_yaml(text: str) -> Any:
    try:
        doc = yaml.safe_load(text)
    except yaml.MarkedYAMLError as bad:
        mark = bad.problem_mark or bad.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "the file"
        problem = bad.problem or bad.context or "it cannot be read"
        raise DeployRefused([f"{where} is not YAML: {problem}"], "tools.yml") from None
    except yaml.YAMLError as bad:
        raise DeployRefused([f"the file is not YAML: {bad}"], "tools.yml") from None
    return {} if doc is None else _plain(doc)


def _plain(value: Any) -> Any:
    """YAML reads 2026-09-01 as a date; a template holds the text that was written."""
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def load_commands(files: Mapping[str, bytes], vocabulary: Vocabulary, at: str) -> list[Command]:
    """Every command an app offers: its tools.json (or tools.yml) entries, then the generated ones.

    `files` maps every path of the app to its bytes, `vocabulary` is the one this
    release installs, `at` is the app as `space/slug`. Raises one DeployRefused
    (prefix `tools.json` or `tools.yml`) listing every problem; nothing is kept
    then, so the commands the app already had keep working.
    """
    declared: list[Command] = []
    found = read_tools(files)
    if found is not None:
        name, doc = found
        declared, problems = declared_commands(doc, vocabulary, set(files))
        if problems:
            raise DeployRefused(problems, prefix=name)
    taken = {command.name for command in declared}
    return declared + generated_commands(vocabulary, at, taken)


__all__ = ["TOOL_FILES", "load_commands", "read_tools", "tools_file"]
