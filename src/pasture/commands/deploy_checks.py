"""An app's tools.json checked at deploy: every entry a `Command`, or every problem at once.

An entry is `description`, `input`, exactly one action (`apply` or `query`)
and an optional `view`. `declared_commands` checks a whole document and reports
every problem, in the spec's words; an entry with none becomes a `Command` whose
run is a `Template` (`pasture.commands.declared`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Set
from typing import Any, Literal

from pasture.commands.declared import Template, input_schema
from pasture.commands.model import Command
from pasture.commands.template import (
    BUNDLE_KEYS,
    fill_query,
    strings,
    variables,
    whole_variable,
)
from pasture.errors import Refused
from pasture.names import WORD
from pasture.store.bundles import column_value, not_a_component
from pasture.store.sql import check_filter
from pasture.store.vocab import PLATFORM, Column, Component, Vocabulary
from pasture.values import TYPES, ValueType, is_type

ENTRY_KEYS = ("description", "input", "apply", "query", "view")
# Beyond the document's five: `"consequential": true` on a command hard to undo, which then
# runs only once the person said yes (`pasture.asking`).
MORE_KEYS = ("consequential",)

NAME_RULE = "a-z, 0-9 and _, starting with a letter, at most 40 characters"

# What stands in for an argument when a query template is checked at deploy:
# a value every column of that type accepts (the text one also reads as an eid).
PLACEHOLDERS: dict[ValueType, Any] = {
    "text": "0123456789abcdef",
    "number": 1,
    "bool": True,
    "time": "2026-09-01",
    "url": "https://example.com/page",
}


def placeholders(types: Mapping[str, ValueType]) -> dict[str, Any]:
    """A stand-in value for every argument, to check a query template before it runs."""
    return {name: PLACEHOLDERS[kind] for name, kind in types.items()}


def components_of(vocabulary: Vocabulary) -> dict[str, Component]:
    """Every component a template may name: the platform's own and the app's."""
    return {**PLATFORM, **vocabulary.components}


def entity_arguments(template: Any, vocabulary: Vocabulary) -> frozenset[str]:
    """The variables an apply template puts whole where an entity goes.

    Bound by an argument, such a variable patches or points at the entity the
    argument names; a value like `$x` there would mint a new entity instead, so
    `convert` refuses it.
    """
    found: set[str] = set()
    for bundle in template if isinstance(template, list) else [template]:
        if not isinstance(bundle, Mapping):
            continue
        slots: list[Any] = []
        entity = bundle.get("entity")
        if isinstance(entity, Mapping):
            slots.append(entity.get("eid"))
        edges = bundle.get("edges")
        if isinstance(edges, list):
            slots += [e.get("child") for e in edges if isinstance(e, Mapping)]
        for key, columns in bundle.items():
            component = vocabulary.components.get(key) if isinstance(key, str) else None
            if component is not None and isinstance(columns, Mapping):
                slots += [
                    value
                    for col, value in columns.items()
                    if col in component.columns and component.columns[col].reference
                ]
        found.update(v for v in (whole_variable(s) for s in slots) if v is not None)
    return frozenset(found)


def _shown(key: object) -> str:
    return key if isinstance(key, str) else repr(key)


def declared_commands(
    doc: Mapping[Any, Any], vocabulary: Vocabulary | None, files: Collection[str]
) -> tuple[list[Command], list[str]]:
    """Every entry of a tools document as a Command, and every problem found in it.

    `files` are the app's own paths, which a `view` must name one of. Commands
    come back only for entries with no problem; the caller installs nothing
    unless the problems are none. `vocabulary` None: vocab.json could not be read,
    so what a template says of the app's own components is left for the deploy
    after it is mended, and everything else is checked (no command comes back).
    """
    commands: list[Command] = []
    problems: list[str] = []
    missing_views: list[str] = []
    for key, entry in doc.items():
        found: list[str] = []
        command = _entry(key, entry, vocabulary, files, found, missing_views)
        problems += found
        if command is not None and not found:
            commands.append(command)
    problems += [
        f"{view} — a view names a page in this app's own files; deploy the page beside index.html"
        for view in missing_views
    ]
    return commands, problems


def _entry(
    key: object,
    entry: object,
    vocabulary: Vocabulary | None,
    files: Collection[str],
    problems: list[str],
    missing_views: list[str],
) -> Command | None:
    name = _shown(key)
    if not isinstance(key, str) or not WORD.fullmatch(key):
        problems.append(f"{name} — a command's name is {NAME_RULE}")
    if not isinstance(entry, Mapping):
        problems.append(
            f"{name}: an entry is an object with a description, an input and one action,"
            " apply or query"
        )
        return None

    unknown = [_shown(k) for k in entry if k not in ENTRY_KEYS and k not in MORE_KEYS]
    if unknown:
        problems.append(f"{name}: {', '.join(unknown)} — a tool says {', '.join(ENTRY_KEYS)}")

    description = entry.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append(
            f"{name}: description is the sentence a model chooses the command by — write what"
            ' it does, like "Log a run for the club leaderboard"'
        )
        description = ""

    loose: set[str] = set()  # declared, but with no type of the five
    # Written with nothing after it (YAML's `input:`) is no arguments; left out, a mistake.
    given = entry.get("input", _LEFT_OUT)
    types = _input(name, {} if given is None else given, problems, loose)

    has_apply, has_query = "apply" in entry, "query" in entry
    action: Literal["apply", "query"] | None = None
    if has_apply == has_query:
        problems.append(
            f"{name} does one thing: apply (a bundle to write) or query (a filter line to read)"
        )
    elif has_query:
        action = "query"
        _query(name, entry["query"], types, vocabulary, problems, loose)
    else:
        action = "apply"
        _apply(name, entry["apply"], types, vocabulary, problems, loose)

    view = _view(name, entry.get("view"), files, problems, missing_views)
    consequential = entry.get("consequential", False)
    if not isinstance(consequential, bool):
        problems.append(f"{name}: consequential is true or false")
    elif consequential and action == "query":
        problems.append(f"{name}: a query changes nothing, so it is not consequential")
    if action is None or problems or vocabulary is None:
        return None
    template = entry[action]
    entities = entity_arguments(template, vocabulary) if action == "apply" else frozenset()
    run = Template(name, action, template, types, frozenset(types), entities=entities)
    return Command(
        name=name,
        description=str(description).strip(),
        input=input_schema(types, types),
        read_only=action == "query",
        consequential=consequential is True,
        run=run,
        family="declared",
        view=view,
        positional=tuple(types),
        action={action: template},
    )


_LEFT_OUT = object()


def _input(name: str, given: object, problems: list[str], loose: set[str]) -> dict[str, ValueType]:
    if not isinstance(given, Mapping):
        problems.append(
            f'{name}: input is an object of argument names to types, like {{"who": "text",'
            ' "miles": "number"}, or {} for a command with none'
        )
        return {}
    types: dict[str, ValueType] = {}
    for arg, kind in given.items():
        shown = _shown(arg)
        good_name = isinstance(arg, str) and WORD.fullmatch(arg) is not None
        if not good_name:
            problems.append(f"{name}: {shown} — an argument's name is {NAME_RULE}")
        if not is_type(kind):
            problems.append(
                f"{name}: {shown} is {_quoted(kind)} — an argument's type is one of"
                f" {', '.join(TYPES)}"
            )
            if good_name:
                types[str(arg)] = "text"  # still declared: `$arg` is no typo
                loose.add(str(arg))
        elif good_name:
            types[str(arg)] = kind
    return types


def _quoted(value: object) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if value is None:
        return "empty"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _no_such(name: str, var: str) -> str:
    return f"{name}: ${var} names no input and no entity — declare it in {name}.input"


def _query(
    name: str,
    query: object,
    types: Mapping[str, ValueType],
    vocabulary: Vocabulary | None,
    problems: list[str],
    loose: Set[str] = frozenset(),
) -> None:
    if not isinstance(query, str) or not query.strip():
        problems.append(f'{name}: query is a filter line, a string like ".jog!&.created!"')
        return
    unbound = list(dict.fromkeys(v for v in variables(query) if v not in types))
    problems += [_no_such(name, v) for v in unbound]
    if unbound or loose or vocabulary is None:
        return  # the filter is checked once its arguments (and vocab.json) are right
    try:
        check_filter(fill_query(query, placeholders(types)), vocabulary)
    except Refused as refused:
        problems.append(f"{name}: {refused.sentence}")


# Where a variable stands in a bundle decides what it may be.
Place = Literal["eid", "reference", "value", "spliced", "other"]


def _apply(
    name: str,
    apply: object,
    types: Mapping[str, ValueType],
    vocabulary: Vocabulary | None,
    problems: list[str],
    loose: Set[str] = frozenset(),
) -> None:
    given: list[Any] = apply if isinstance(apply, list) else [apply]
    bundles = [b for b in given if isinstance(b, Mapping)]
    if not bundles or len(bundles) != len(given):
        problems.append(f"{name}: apply is a bundle to write — an object, or a list of them")
        return
    # Unread, the vocabulary still has the platform's own components; the app's are unknown.
    components = components_of(vocabulary) if vocabulary is not None else dict(PLATFORM)
    unknown = vocabulary is None
    uses: list[tuple[str, Place]] = []
    for bundle in bundles:
        fitting = {arg: kind for arg, kind in types.items() if arg not in loose}
        _bundle(name, bundle, fitting, components, uses, problems, unknown=unknown)

    created = {v for v, place in uses if place == "eid" and v not in types}
    unbound = dict.fromkeys(v for v, _ in uses if v not in types and v not in created)
    problems += [_no_such(name, v) for v in unbound]

    spliced = dict.fromkeys(v for v, place in uses if place == "spliced" and v in created)
    problems += [
        f"{name}: ${v} is a new entity, so it stands alone in its string — only an argument"
        " is spliced into a longer one"
        for v in spliced
    ]

    # One namespace: an argument at an eid patches that row, so an argument that
    # also stands where an eid goes must be the eid's text, not a value of its own.
    at_eid = {v for v, place in uses if place == "eid" and v in types}
    clash = dict.fromkeys(
        v for v, place in uses if v in at_eid and (types[v] != "text" or place == "value")
    )
    problems += [
        f"{name}: ${v} is an argument and an entity at once — an alias and an argument"
        f" share one namespace, so give the new entity a name of its own, like ${v}_row"
        for v in clash
    ]


def _bundle(
    name: str,
    bundle: Mapping[Any, Any],
    types: Mapping[str, ValueType],
    components: Mapping[str, Component],
    uses: list[tuple[str, Place]],
    problems: list[str],
    *,
    unknown: bool = False,
) -> None:
    """`unknown`: the app's components are not known (vocab.json could not be read), so a
    key that is none of the platform's is taken as one of them, its columns unchecked."""
    for key, value in bundle.items():
        if key == "entity":
            if not isinstance(value, Mapping):
                problems.append(
                    f'{name}: entity is an object naming the eid, like {{"eid": "$run"}}'
                )
                continue
            for inner_key, inner in value.items():
                _uses(inner, "eid" if inner_key == "eid" else "other", uses)
            continue
        if key in BUNDLE_KEYS:
            _uses(value, "reference" if key == "edges" else "other", uses)
            continue
        component = components.get(key) if isinstance(key, str) else None
        if component is None and unknown:
            _uses(value, "other", uses)  # where it stands in the component is not known
            continue
        if component is None:
            problems.append(f"{name}: {not_a_component(_shown(key))}")
            continue
        if not component.writable:
            problems.append(
                f"{name}: {component.name} is stamped by the store — leave it out of the template"
            )
            continue
        if value is None:
            continue  # a component null drops it from the row
        if not isinstance(value, Mapping):
            problems.append(
                f"{name}: {component.name} is an object of its columns, like"
                f' {{"{next(iter(component.columns), "title")}": "$value"}}'
            )
            continue
        for column_name, item in value.items():
            column = component.columns.get(column_name) if isinstance(column_name, str) else None
            if column is None:
                has = (
                    f"its columns are {', '.join(component.columns)}"
                    if component.columns
                    else "it is a mark with no columns"
                )
                problems.append(
                    f"{name}: {component.name} has no column {_shown(column_name)} — {has}"
                )
                continue
            _uses(item, "reference" if column.reference else "value", uses)
            literal = _literal_problem(component.name, column, item)
            if literal is not None:
                problems.append(f"{name}: {literal}")
            arg = whole_variable(item)
            if arg is not None and arg in types and not _fits(types[arg], column):
                wanted = "text" if column.reference else column.type
                problems.append(
                    f"{name}: {component.name}.{column.name} is {_a_type(column)} and ${arg} is"
                    f" {_a_type_name(types[arg])} — declare {arg} as {wanted} in {name}.input"
                )


def _literal_problem(component: str, column: Column, item: object) -> str | None:
    """Why a value written literally in a template cannot stand in its column, or None.

    Checked once here, where the template and the vocabulary meet, rather than
    refused at every call; a value with a variable in it is the call's to convert."""
    if column.reference or item is None or (isinstance(item, str) and "$" in item):
        return None
    try:
        column_value(component, column, item)
    except Refused as refused:
        return f"{refused}, and the template writes {_quoted(item)} there"
    return None


def _fits(kind: ValueType, column: Column) -> bool:
    """Whether an argument of this type can stand whole in the column."""
    if column.reference:
        return kind == "text"
    return column.type == "text" or kind == column.type


def _a_type_name(kind: ValueType) -> str:
    return {"text": "text", "number": "a number", "bool": "true or false", "time": "a time"}.get(
        kind, "a web address"
    )


def _a_type(column: Column) -> str:
    return "an eid" if column.reference else _a_type_name(column.type)


def _uses(value: object, place: Place, uses: list[tuple[str, Place]]) -> None:
    for text in strings(value):
        whole = whole_variable(text)
        if whole is not None:
            uses.append((whole, place))
        else:
            uses += [(v, "spliced") for v in variables(text)]


def _view(
    name: str,
    view: object,
    files: Collection[str],
    problems: list[str],
    missing: list[str],
) -> str | None:
    if view is None:
        return None
    if (
        not isinstance(view, str)
        or not view.endswith(".html")
        or view.startswith("/")
        or "\\" in view
        or ":" in view
        or ".." in view.split("/")
    ):
        problems.append(
            f"{name}: view is a page of this app — a relative path ending in .html, with no"
            ' "..", like "leaderboard.html"'
        )
        return None
    path = view.removeprefix("./")
    if path not in files:
        if view not in missing:
            missing.append(view)
        return None
    return path


__all__ = ["ENTRY_KEYS", "components_of", "declared_commands", "entity_arguments"]
