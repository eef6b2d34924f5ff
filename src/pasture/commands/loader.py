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

from pasture import jsontext
from pasture.commands.deploy_checks import declared_commands
from pasture.commands.generated import generated_commands
from pasture.commands.model import Command
from pasture.errors import DeployRefused, Refused
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
        doc = json.loads(text, object_pairs_hook=_no_twice)
    except json.JSONDecodeError as bad:
        message = bad.msg[:1].lower() + bad.msg[1:]
        raise DeployRefused(
            [f"line {bad.lineno}, column {bad.colno} is not JSON: {message}"], "tools.json"
        ) from None
    except _Twice as twice:
        raise DeployRefused([str(twice)], "tools.json") from None
    except RecursionError:
        raise DeployRefused([jsontext.too_deep("the file")], "tools.json") from None
    except ValueError:  # a number of more digits than Python reads
        raise DeployRefused(["the file holds a number too long to read"], "tools.json") from None
    try:
        jsontext.check(doc, "the file")
    except Refused as e:
        raise DeployRefused([e.sentence], "tools.json") from None
    return doc


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
    except RecursionError:
        raise DeployRefused([jsontext.too_deep("the file")], "tools.yml") from None
    except ValueError:  # a number of more digits than Python reads
        raise DeployRefused(["the file holds a number too long to read"], "tools.yml") from None
    if doc is None:
        return {}
    try:
        plain = _plain(doc, [0], 0)
        jsontext.check(plain, "the file")
    except Refused as e:
        raise DeployRefused([e.sentence], "tools.yml") from None
    return plain


MAX_NODES = 100_000  # values in a tools.yml with its anchors (*a) written out


def _plain(value: Any, nodes: list[int], depth: int) -> Any:
    """YAML reads 2026-09-01 as a date; a template holds the text that was written.

    Anchors (`&a` … `*a`) are written out, up to `MAX_NODES` values in all and
    `jsontext.MAX_DEPTH` deep: one that refers to itself, or that grows past
    either, is refused rather than followed for ever.
    """
    nodes[0] += 1
    if nodes[0] > MAX_NODES:
        raise Refused(
            f"the file holds more than {MAX_NODES} values once its anchors (*name) are written "
            "out — write the commands without repeating so much"
        )
    if depth > jsontext.MAX_DEPTH:
        raise Refused(jsontext.too_deep("the file") + ", and an anchor (*name) may not hold itself")
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {_plain(k, nodes, depth + 1): _plain(v, nodes, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, nodes, depth + 1) for v in value]
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
