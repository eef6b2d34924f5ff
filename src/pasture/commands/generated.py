"""The two commands every kind gets for nothing: `add_<kind>` and `find_<kind>`.

Regenerated from the vocabulary on every load, so a column added to a kind is
an argument added to its two commands. Every argument but `add`'s title is
optional, and a column or a clause whose argument was left out is left out.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from pasture.commands.declared import Template, input_schema
from pasture.commands.model import Command
from pasture.store.vocab import Component, Vocabulary
from pasture.values import ValueType

ADD_ARGS = ("title", "body", "alias")
FIND_ARGS = ("words", "limit", "sort", "after")


def generated_commands(
    vocabulary: Vocabulary, at: str, taken: Set[str] = frozenset()
) -> list[Command]:
    """`add_<kind>` and `find_<kind>` for every kind, except names in `taken` (declared whole)
    and kinds that want none (`"tools": false`, as a table of worker.py's schema is)."""
    if not vocabulary.tools:
        return []
    commands: list[Command] = []
    for kind in vocabulary.kinds():
        if not kind.tools:
            continue
        for make in (add_command, find_command):
            command = make(kind, at)
            if command.name not in taken:
                commands.append(command)
    return commands


def _columns(kind: Component, reserved: tuple[str, ...]) -> dict[str, tuple[str, ValueType]]:
    """Each column's argument name (a column named like a fixed argument gets the kind's prefix)."""
    out: dict[str, tuple[str, ValueType]] = {}
    for column in kind.columns.values():
        arg = column.name if column.name not in reserved else f"{kind.name}_{column.name}"
        out[arg] = (column.name, column.type)
    return out


def _entity_variable(kind: Component, args: Set[str]) -> str:
    name = kind.name
    while name in args:
        name += "_row"
    return name


def _words(kind: str) -> str:
    return kind.replace("_", " ")


def _a(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def _plural(word: str) -> str:
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return word[:-1] + "ies"
    return word + "s"


def _listed(names: list[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " or " + names[-1]


def add_command(kind: Component, at: str) -> Command:
    """`add_<kind>(title, body?, alias?, <column>?…)`: a new entity, its doc, alias and kind."""
    columns = _columns(kind, ADD_ARGS)
    types: dict[str, ValueType] = {"title": "text", "body": "text", "alias": "text"}
    types.update({arg: kind_type for arg, (_, kind_type) in columns.items()})
    entity = _entity_variable(kind, set(types))
    word = _words(kind.name)
    template: dict[str, Any] = {
        "entity": {"eid": f"${entity}"},
        "doc": {"title": "$title", "body": "$body"},
        "alias": {"name": "$alias"},
        kind.name: {column: f"${arg}" for arg, (column, _) in columns.items()},
    }
    name = f"add_{kind.name}"
    run = Template(name, "apply", template, types, {"title"}, keep_empty={kind.name})
    described = {
        "title": f"the {word}'s title",
        "body": f"the {word}'s text, as long as it needs to be",
        "alias": f"a name the {word} answers to, so a later call reaches it without its eid",
    }
    return Command(
        name=name,
        description=f"Add {_a(word)} to {at}",
        input=input_schema(types, {"title"}, described),
        read_only=False,
        run=run,
        family="declared",
        positional=tuple(types),
        action={"apply": template},
    )


def find_command(kind: Component, at: str) -> Command:
    """`find_<kind>(words?, <column>?…, limit?)`: no arguments is every row of that kind."""
    columns = _columns(kind, FIND_ARGS)
    types: dict[str, ValueType] = {"words": "text"}
    types.update({arg: kind_type for arg, (_, kind_type) in columns.items()})
    types["limit"] = "number"
    types["sort"] = "text"
    types["after"] = "text"
    clauses = [f".{kind.name}!", ".doc?", ".alias?", "$words"]
    clauses += [f".{kind.name}.{column}=${arg}" for arg, (column, _) in columns.items()]
    clauses += ["limit=$limit", "sort=$sort", "after=$after"]
    template = "&".join(clauses)
    word = _words(kind.name)
    name = f"find_{kind.name}"
    # `miles` is kind.miles, `-miles` the largest first; `newest` and `oldest` are creation
    orders = {"newest": "-created.at", "oldest": "created.at"}
    for column in kind.columns:
        orders[column] = f"{kind.name}.{column}"
        orders[f"-{column}"] = f"-{kind.name}.{column}"
    run = Template(
        name,
        "query",
        template,
        types,
        frozenset(),
        words={"words"},
        whole={"limit"},
        choices={"sort": orders},
    )
    described = {
        "words": "words to look for in the title and body",
        "limit": f"at most this many {_plural(word)}: the newest, or the first in the sort",
        "sort": (
            f"the order: newest, oldest, or a column (like {next(iter(kind.columns), 'title')}),"
            " with - before it for the largest first"
        ),
        "after": ("the cursor an answer cut short gave (its data's cursor), for the rows after it"),
    }
    described.update(
        {
            arg: f"only {_plural(word)} whose {column} is this"
            for arg, (column, _) in columns.items()
        }
    )
    schema = input_schema(types, (), described)
    schema["properties"]["limit"] = {
        "type": "integer",
        "minimum": 1,
        "description": described["limit"],
    }
    schema["properties"]["sort"] = {
        "type": "string",
        "enum": list(orders),
        "description": described["sort"],
    }
    by = ["words in the title or body", *(column for _, (column, _) in columns.items())]
    return Command(
        name=name,
        description=(
            f"Find {_plural(word)} in {at} by {_listed(by)}; with no arguments, every"
            f" {word} there is, a page at a time"
        ),
        input=schema,
        read_only=True,
        run=run,
        family="declared",
        positional=tuple(types),
        action={"query": template},
    )


__all__ = ["add_command", "find_command", "generated_commands"]
