"""Declared commands: an app's tools.json entries, checked, and run as templates.

An entry is `description`, `input`, exactly one action (`apply` or `query`)
and an optional `view`. `declared_commands` checks a whole document and reports
every problem at once; `Template` is what a declared (or generated) command
runs: it converts the arguments, fills the template and hands it to the store
as the caller.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Set
from dataclasses import dataclass, field
from typing import Any, Literal

from pasture.commands.model import Command, Context
from pasture.commands.template import (
    BUNDLE_KEYS,
    ApplyPlan,
    QueryPlan,
    fill_query,
    placeholders,
    strings,
    variables,
    whole_variable,
)
from pasture.errors import Refused, UsageError
from pasture.result import Result
from pasture.schema import args_object
from pasture.store.answers import answer_data, answer_text
from pasture.store.base import Applied
from pasture.store.bundles import not_a_component
from pasture.store.vocab import PLATFORM, Column, Component, Vocabulary, check_filter
from pasture.values import TYPES, BadValue, ValueType, convert, is_type, json_schema

NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
ENTRY_KEYS = ("description", "input", "apply", "query", "view")

NAME_RULE = "a-z, 0-9 and _, starting with a letter, at most 40 characters"


def components_of(vocabulary: Vocabulary) -> dict[str, Component]:
    """Every component a template may name: the platform's own and the app's."""
    return {**PLATFORM, **vocabulary.components}


# -- running ------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    """What a declared command runs: arguments converted, the template filled, the store called.

    `types` are the arguments in declared order; `required` those that must
    arrive. For generated commands, `keep_empty` names the component written
    even with no column given, `words` the argument read as full-text words and
    `whole` the numbers that must be whole and 1 or more (`limit`).
    """

    name: str
    action: Literal["apply", "query"]
    template: Any
    types: Mapping[str, ValueType]
    required: Set[str]
    keep_empty: Set[str] = field(default_factory=frozenset)
    words: Set[str] = field(default_factory=frozenset)
    whole: Set[str] = field(default_factory=frozenset)
    # Arguments standing whole where an entity goes (an eid, an edge's child, a
    # reference column): their value names an existing entity, never a new one.
    entities: Set[str] = field(default_factory=frozenset)

    # The template compiled once: what each call fills in (see pasture.commands.template).
    plan: ApplyPlan | QueryPlan = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        optional = frozenset(self.types) - frozenset(self.required)
        plan: ApplyPlan | QueryPlan
        if self.action == "query":
            plan = QueryPlan(self.template, optional, self.words)
        else:
            plan = ApplyPlan(self.template, optional, self.keep_empty)
        object.__setattr__(self, "plan", plan)

    def convert(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments as their declared types; UsageError names every bad one at once."""
        args = args_object(args)
        problems: list[str] = []
        out: dict[str, Any] = {}
        for arg, kind in self.types.items():
            value = args.get(arg)
            if value is None:
                if arg in self.required:
                    problems.append(f"{arg} is required")
                continue
            try:
                converted = convert(arg, kind, value)
            except BadValue as bad:
                problems.append(str(bad))
                continue
            if arg in self.entities and str(converted).lstrip().startswith("$"):
                problems.append(
                    f"{arg} names an entity that is there already: its eid or its alias name,"
                    f" not {str(converted).strip()[:40]}"
                )
                continue
            if arg in self.whole:
                if converted != int(converted) or converted < 1:
                    problems.append(f"{arg} is a whole number, 1 or more")
                    continue
                converted = int(converted)
            out[arg] = converted
        if problems:
            raise UsageError("; ".join(problems))
        return out

    def fill(self, args: Mapping[str, Any]) -> Any:
        """The bundle or filter line these (converted) arguments make."""
        return self.plan.fill(args)

    def __call__(self, args: Mapping[str, Any], ctx: Context) -> Result:
        filled = self.fill(self.convert(args))
        if self.action == "query":
            answer = ctx.store.query(filled)
            said = answer_text(filled, answer, ctx.at)
            return Result(f"{self.name}: {said}", answer_data(answer))
        applied = ctx.store.apply(filled)
        return wrote(self.name, ctx.at, applied)


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


def wrote(name: str, at: str, applied: Applied) -> Result:
    """`log_run: wrote 1 entity in ada/runs: $run=4f3c…`, with `{entities, aliases}`."""
    aliases = {(a if a.startswith("$") else f"${a}"): eid for a, eid in applied.aliases.items()}
    count = len(applied.entities)
    text = f"{name}: wrote {count} {'entity' if count == 1 else 'entities'} in {at}"
    named = [f"{alias}={eid}" for alias, eid in aliases.items()]
    named += [eid for eid in applied.entities if eid not in aliases.values()]
    if named:
        text += ": " + ", ".join(named)
    return Result(text, {"entities": list(applied.entities), "aliases": aliases})


def input_schema(
    types: Mapping[str, ValueType],
    required: Collection[str],
    described: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The JSON Schema `commands` lists a command's arguments with.

    Undeclared arguments are dropped rather than refused, so the schema does
    not forbid them.
    """
    properties: dict[str, Any] = {}
    for arg, kind in types.items():
        schema = json_schema(kind)
        if described and arg in described:
            schema = {**schema, "description": described[arg]}
        properties[arg] = schema
    out: dict[str, Any] = {"type": "object", "properties": properties}
    wanted = [a for a in types if a in required]
    if wanted:
        out["required"] = wanted
    return out


# -- checking -----------------------------------------------------------------


def _shown(key: object) -> str:
    return key if isinstance(key, str) else repr(key)


def declared_commands(
    doc: Mapping[Any, Any], vocabulary: Vocabulary, files: Collection[str]
) -> tuple[list[Command], list[str]]:
    """Every entry of a tools document as a Command, and every problem found in it.

    `files` are the app's own paths, which a `view` must name one of. Commands
    come back only for entries with no problem; the caller installs nothing
    unless the problems are none.
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
    vocabulary: Vocabulary,
    files: Collection[str],
    problems: list[str],
    missing_views: list[str],
) -> Command | None:
    name = _shown(key)
    if not isinstance(key, str) or not NAME.fullmatch(key):
        problems.append(f"{name} — a command's name is {NAME_RULE}")
    if not isinstance(entry, Mapping):
        problems.append(
            f"{name}: an entry is an object with a description, an input and one action,"
            " apply or query"
        )
        return None

    unknown = [_shown(k) for k in entry if k not in ENTRY_KEYS]
    if unknown:
        problems.append(f"{name}: {', '.join(unknown)} — a tool says {', '.join(ENTRY_KEYS)}")

    description = entry.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append(
            f"{name}: description is the sentence a model chooses the command by — write what"
            ' it does, like "Log a run for the club leaderboard"'
        )
        description = ""

    given = entry.get("input")
    loose: set[str] = set()  # declared, but with no type of the five
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
    if action is None or problems:
        return None
    template = entry[action]
    entities = entity_arguments(template, vocabulary) if action == "apply" else frozenset()
    run = Template(name, action, template, types, frozenset(types), entities=entities)
    return Command(
        name=name,
        description=str(description).strip(),
        input=input_schema(types, types),
        read_only=action == "query",
        run=run,
        family="declared",
        view=view,
        positional=tuple(types),
        action={action: template},
    )


def _input(name: str, given: object, problems: list[str], loose: set[str]) -> dict[str, ValueType]:
    if not isinstance(given, Mapping):
        problems.append(
            f'{name}: input is an object of argument names to types, like {{"who": "text",'
            ' "miles": "number"}'
        )
        return {}
    types: dict[str, ValueType] = {}
    for arg, kind in given.items():
        shown = _shown(arg)
        good_name = isinstance(arg, str) and NAME.fullmatch(arg) is not None
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
    vocabulary: Vocabulary,
    problems: list[str],
    loose: Set[str] = frozenset(),
) -> None:
    if not isinstance(query, str) or not query.strip():
        problems.append(f'{name}: query is a filter line, a string like ".jog!&.created!"')
        return
    unbound = list(dict.fromkeys(v for v in variables(query) if v not in types))
    problems += [_no_such(name, v) for v in unbound]
    if unbound or loose:
        return  # the filter is checked once its arguments are right
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
    vocabulary: Vocabulary,
    problems: list[str],
    loose: Set[str] = frozenset(),
) -> None:
    given: list[Any] = apply if isinstance(apply, list) else [apply]
    bundles = [b for b in given if isinstance(b, Mapping)]
    if not bundles or len(bundles) != len(given):
        problems.append(f"{name}: apply is a bundle to write — an object, or a list of them")
        return
    components = components_of(vocabulary)
    uses: list[tuple[str, Place]] = []
    for bundle in bundles:
        fitting = {arg: kind for arg, kind in types.items() if arg not in loose}
        _bundle(name, bundle, fitting, components, uses, problems)

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
) -> None:
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
            arg = whole_variable(item)
            if arg is not None and arg in types and not _fits(types[arg], column):
                wanted = "text" if column.reference else column.type
                problems.append(
                    f"{name}: {component.name}.{column.name} is {_a_type(column)} and ${arg} is"
                    f" {_a_type_name(types[arg])} — declare {arg} as {wanted} in {name}.input"
                )


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


__all__ = [
    "ENTRY_KEYS",
    "NAME",
    "Template",
    "components_of",
    "declared_commands",
    "input_schema",
    "wrote",
]
