"""A declared command at run time: its arguments converted, its template filled, the store
called as the caller.

The arguments are converted here, once, so a refusal names the argument
(`miles is a number`); the store keeps the values as they are (see
`pasture.store.bundles.TypedBundle`).

`Template` is what every declared (or generated) command of an app's tools.json
runs; the deploy that made it checked the entry first (`pasture.commands.deploy_checks`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Set
from dataclasses import dataclass, field
from typing import Any, Literal

from pasture.commands.model import Context
from pasture.commands.template import ApplyPlan, QueryPlan
from pasture.errors import UsageError
from pasture.result import Result
from pasture.schema import args_object
from pasture.store.answers import answer_data, answer_text
from pasture.store.base import Applied
from pasture.values import BadValue, ValueType, convert, json_schema

# `after=$name` standing whole between a query template's `&`s
_AFTER_ARGUMENT = re.compile(r"(?:^|&)\s*after\s*=\s*\$([A-Za-z_][A-Za-z0-9_]*)\s*(?=&|$)")


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
    # Arguments that are one of a few words, each filled in as what it stands for
    # (`find_<kind>`'s `sort`: `-miles` is `-jog.miles`).
    choices: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    # The template compiled once: what each call fills in (see pasture.commands.template).
    plan: ApplyPlan | QueryPlan = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        optional = frozenset(self.types) - frozenset(self.required)
        plan: ApplyPlan | QueryPlan
        if self.action == "query":
            plan = QueryPlan(self.template, optional, self.words)
        else:
            plan = ApplyPlan(self.template, optional, self.keep_empty, self.types)
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
            if arg in self.choices:
                among = self.choices[arg]
                if converted not in among:
                    shown = ", ".join(among)
                    problems.append(f"{arg} is one of {shown} — not {str(converted)[:40]}")
                    continue
                converted = among[converted]
            out[arg] = converted
        if problems:
            raise UsageError("; ".join(problems))
        return out

    @property
    def cursor_argument(self) -> str | None:
        """The argument a query's template fills `after=` with (`find_<kind>`'s `after`):
        how a caller of this command reads the next page."""
        if self.action != "query" or not isinstance(self.template, str):
            return None
        found = _AFTER_ARGUMENT.search(self.template)
        return found.group(1) if found is not None and found.group(1) in self.types else None

    def fill(self, args: Mapping[str, Any]) -> Any:
        """The bundle or filter line these (converted) arguments make."""
        return self.plan.fill(args)

    def __call__(self, args: Mapping[str, Any], ctx: Context) -> Result:
        filled = self.fill(self.convert(args))
        if self.action == "query":
            answer = ctx.store.query(filled)
            said = answer_text(filled, answer, ctx.at, after=self.cursor_argument)
            return Result(f"{self.name}: {said}", answer_data(answer))
        applied = ctx.store.apply(filled)
        return wrote(self.name, ctx.at, applied)


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


__all__ = ["Template", "input_schema", "wrote"]
