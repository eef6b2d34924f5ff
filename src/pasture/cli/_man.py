"""A command as a person reads it: `help NAME`'s table, `man NAME`'s page, `help`'s listing.

Every argument with its type in words (`whole number`, `one of small, large`),
whether it is needed, its limits as a refusal would say them, and an example
line to type. The console's Tab completion names types in the same words.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from datetime import date
from typing import Any

from rich.table import Table

from pasture.platform import CommandInfo, Offered
from pasture.schema import EXAMPLE_OF_FORMAT, requirement
from pasture.values import type_of_property


def quoted(value: str) -> str:
    return shlex.quote(value) if value else "''"


def value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def type_words(schema: dict[str, Any]) -> str:
    """An argument's type as a person reads it: `number`, `time`, `one of a, b`, `list of text`."""
    enum = schema.get("enum")
    if isinstance(enum, list):
        return "one of " + ", ".join(str(v) for v in enum)
    if schema.get("type") == "integer":
        return "whole number"
    kind = type_of_property(schema)
    if kind is not None:
        return kind
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, dict):
        return f"list of {type_words(items)}"
    declared = schema.get("type")
    if isinstance(declared, list):
        return " or ".join(str(t) for t in declared if t != "null") or "any"
    return str(declared or "any")


def arguments_table(command: CommandInfo) -> Table:
    """Each argument: its name, type, whether it is needed (or its default), its description."""
    table = Table(show_edge=False, show_header=True, header_style="bold", box=None)
    for column in ("argument", "type", "", "description"):
        table.add_column(column)
    for arg, schema in command.input.get("properties", {}).items():
        schema = schema if isinstance(schema, dict) else {}
        need = "required" if arg in command.required else "optional"
        if schema.get("default") is not None:
            need = f"default {value_text(schema['default'])}"
        table.add_row(arg, type_words(schema), need, str(schema.get("description") or ""))
    return table


def man_page(command: CommandInfo, at: str, app_title: str) -> list[str]:
    """The lines of `man NAME`: headings in capitals, the rest indented under them."""
    title = f"{command.name} — {command.title}" if command.title else command.name
    provider = (
        f"a {command.handler} in {at}'s worker.py"
        if command.handler
        else command.provider or f"{at}, declared"
    )
    what = (
        "it only reads"
        if command.read_only
        else "it is hard to undo: you are asked before it runs (--yes runs it without asking)"
        if command.consequential
        else "it changes things"
    )
    lines = [title, f"  {command.description}", ""]
    lines += ["ABOUT", f"  provider: {provider}", f"  app: {app_title} ({at})", f"  {what}"]
    lines += ["  agents call it " + command.agent_name, ""]
    props = command.input.get("properties", {})
    lines.append("ARGUMENTS")
    if not props:
        lines.append("  none")
    for arg, schema in props.items():
        schema = schema if isinstance(schema, dict) else {}
        need = "required" if arg in command.required else "optional"
        if schema.get("default") is not None:
            need = f"optional, default {value_text(schema['default'])}"
        lines.append(f"  {arg} — {type_words(schema)}, {need}")
        if schema.get("description"):
            lines.append(f"      {schema['description']}")
        limits = limits_of(schema)
        if limits:
            lines.append(f"      {'; '.join(limits)}")
    order = list(command.positional) or command.arguments
    lines += ["", "USAGE"]
    if props:
        lines.append(f"  {command.name} {' '.join(a.upper() for a in order)}")
        lines.append(f"  {command.name} {' '.join(f'--{a}=…' for a in command.arguments)}")
    else:
        lines.append(f"  {command.name}")
    lines += ["", "EXAMPLES"]
    lines += [f"  {e}" for e in command.examples] or [f"  {example_line(command)}"]
    if command.output is not None:
        out = command.output.get("properties", {})
        lines += ["", "ANSWERS WITH"]
        lines += [f"  {k} — {type_words(v if isinstance(v, dict) else {})}" for k, v in out.items()]
        if not out:
            lines.append(f"  {type_words(command.output)}")
    if command.see_also:
        lines += ["", "SEE ALSO", "  " + ", ".join(command.see_also)]
    return lines


# The keywords `man` words, in the order it says them; a time's format is its type's to say.
_LIMITS = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "uniqueItems",
    "const",
    "format",
)


def limits_of(schema: dict[str, Any]) -> list[str]:
    """What an argument's schema holds a value to, in the words its refusals use, less the
    verb: `at least 1`, `at most 40 characters`, `matches the pattern ^[a-z]+$`."""
    said: list[str] = []
    for key in _LIMITS:
        if key not in schema or (key == "uniqueItems" and schema[key] is not True):
            continue
        if key == "format" and (schema[key] not in EXAMPLE_OF_FORMAT or _is_time(schema)):
            continue
        words = requirement(key, schema[key])
        # `is 5` stays whole: a lone value needs its verb to read as a limit.
        said.append(words if key == "const" else words.removeprefix("is ").removeprefix("has "))
    return said


def _is_time(schema: dict[str, Any]) -> bool:
    return type_of_property(schema) == "time"


_EG = re.compile(r"\be\.g\.,?\s+([^\s,;)]+)")


def example_line(command: CommandInfo) -> str:
    """A line that runs the command, made from its arguments when it gives no example:
    a value each required argument could take, or its name in capitals where no value
    can be made up (an id, a pattern)."""
    props = command.input.get("properties", {})
    order = list(command.positional) or command.arguments
    words = [command.name]
    for arg in order:
        if arg not in command.required:
            continue
        schema = props.get(arg)
        words.append(quoted(_sample(arg, schema if isinstance(schema, dict) else {})))
    return " ".join(words)


def _sample(arg: str, schema: dict[str, Any]) -> str:
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return value_text(enum[0])
    if "default" in schema:
        return value_text(schema["default"])
    kind = type_of_property(schema)
    if schema.get("type") == "boolean":
        return "true"
    if schema.get("type") in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        return value_text(max(int(low) + (1 if "exclusiveMinimum" in schema else 0), 1))
    if kind == "time":
        return date.today().isoformat()
    if kind == "url":
        return "https://example.org/"
    found = _EG.search(str(schema.get("description") or ""))
    if found:
        return found.group(1)
    if kind == "text" and "pattern" not in schema:
        return arg.replace("_", " ")
    return arg.upper()


def by_provider(offered: Sequence[Offered]) -> str:
    """`help`'s listing: `commands`' lines app by app, with an app's code commands under
    their provider (`## ada/cart`, then `cart:` and its commands indented) where its first
    one stands; declared commands and handlers keep their own lines."""
    apps: dict[str, list[list[str]]] = {}
    grouped: dict[tuple[str, str], list[str]] = {}
    for o in offered:
        items = apps.setdefault(o.at, [[f"## {o.at}"]])
        command = o.command
        if command.family != "code" or command.handler is not None:
            items.append([o.line()])
            continue
        provider = command.provider or command.name.split()[0]
        group = grouped.get((o.at, provider))
        if group is None:
            group = grouped[(o.at, provider)] = [f"{provider}:"]
            items.append(group)
        group.append(f"  {o.line()}")
    return "\n\n".join(
        "\n".join(line for item in items for line in item) for items in apps.values()
    )


__all__ = [
    "arguments_table",
    "by_provider",
    "example_line",
    "limits_of",
    "man_page",
    "quoted",
    "type_words",
    "value_text",
]
