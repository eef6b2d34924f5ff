"""Bundles: what a write to the store looks like, checked before anything is written.

    { "entity": { "eid": "$run" },            an alias mints; an eid patches
      "jog": { "who": "Ada", "miles": 5 },    only the columns named change
      "doc": null,                            a component null drops it
      "edges": [ { "type": "member", "child": "$club" },
                 { "type": "member", "child": "4f3c…", "remove": true } ],
      "$was": { "jog": { "miles": "<sha256 of the value read>" } } }

    { "entity": { "eid": "4f3c…" }, "tombstone": {} }

`check` is pure: it turns what a caller sent into `Checked` bundles, converting
values to their columns' types and refusing every shape it cannot serve.
`resolve` then names every entity with the help of a backend's `Lookup`, so a
PostgreSQL backend shares every rule here.

An edge runs from the bundle's entity to `child`; adding one that is there
changes nothing. `"remove": true` takes the edge of that type to that child
away (if it is not there, nothing changes); one bundle cannot both add and
remove the same edge.

An eid slot (`entity.eid`, a reference column, an edge's `child`) takes an
alias (`$run`), an existing eid, the `{eid, name}` a read returned, or a plain
name that is the `alias.name` of exactly one entity.

A row read back (it carries `kind`) can be handed straight back: `kind` is
dropped, `entity` is the target and the stamps `created`/`updated` are dropped.
Sent on their own, stamps are refused: only the store writes them.

A column's value is converted the way a command's argument is: `"5"` for a
number is 5, `"true"` for a bool is true, a time is normalized to UTC. Each value
is converted once: a declared command converts its arguments itself (its
refusals name them) and sends a `TypedBundle` that says which columns hold them,
and those values are kept as they are where the column has that type.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pasture.errors import Conflict, NotFound, Refused, echo
from pasture.store.base import new_eid
from pasture.store.vocab import PLATFORM_WRITABLE, Column, Vocabulary
from pasture.values import BadValue, ValueType, convert, lone_surrogate, not_characters

ALIAS = re.compile(r"^\$[A-Za-z_][A-Za-z0-9_]*$")
MAX_ALIAS = 100  # characters of an alias, `$` included
BUNDLE_KEYS = "entity, edges, tombstone, $was and components"


class TypedBundle(dict[str, Any]):
    """A bundle whose named columns hold values converted already, to the type beside them.

    A declared command converts its arguments before it fills its template, and
    refuses a bad one by the argument's name; `typed` maps each
    `(component, column)` an argument stands in whole to that argument's type.
    `check` keeps such a value as it is where the column is of that type now, and
    converts it as any other where it is not (the vocabulary changed meanwhile, or
    a number stands in a text column). Only code of this process makes one: a
    bundle that arrives from outside arrives as JSON, a plain object, converted whole.
    """

    def __init__(
        self, columns: Mapping[str, Any], typed: Mapping[tuple[str, str], ValueType]
    ) -> None:
        super().__init__(columns)
        self.typed = typed


@dataclass(frozen=True)
class Slot:
    """Where an eid goes, as written: an alias, or a text that is an eid or an alias name."""

    alias: str | None = None
    text: str | None = None

    @property
    def said(self) -> str:
        return self.alias or self.text or ""


@dataclass
class Checked:
    """One bundle, checked: its target slot (None mints), writes, edges and guards."""

    target: Slot | None
    # component -> {column: value} (a Slot for a reference), or None to drop it
    writes: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    tombstone: bool = False
    edges: list[tuple[str, Slot]] = field(default_factory=list)
    was: dict[str, dict[str, str | None]] = field(default_factory=dict)
    unedges: list[tuple[str, Slot]] = field(default_factory=list)  # edges to take away


def fingerprint(value: Any) -> str:
    """The sha256 (hex) a `$was` guard compares: of the value as a read returns it.

    Text is hashed as its UTF-8, a number or bool as its JSON (`5`, `5.5`,
    `true`), and a reference as its eid (a read's `{eid, name}` hashes the eid).
    """
    if isinstance(value, Mapping) and "eid" in value:
        value = value["eid"]
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float):
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        text = json.dumps(value)
    else:
        text = str(value)
    return hashlib.sha256(text.encode()).hexdigest()


def not_a_component(name: str) -> str:
    return (
        f"{echo(name)} is not a component of this app — declare it in vocab.json or use one of "
        f"the platform's own: {PLATFORM_WRITABLE}"
    )


def no_column(component: str, column: str, vocabulary: Vocabulary) -> str:
    comp = vocabulary.components[component]
    if not comp.columns:
        return f"{component} has no column {echo(column)} — it is a mark with no columns"
    return f"{component} has no column {echo(column)} — its columns are {comp.column_list()}"


def listed(bundles: object) -> list[Any]:
    """What a write sent, as its list of bundles: one bundle is a list of one. This is the
    one place the shape is decided, for every door and for code writing through a command."""
    if isinstance(bundles, Mapping):
        return [bundles]
    if isinstance(bundles, Sequence) and not isinstance(bundles, str | bytes):
        return list(bundles)
    raise Refused(
        'a write is a bundle or a list of bundles: {"entity": {"eid": "$new"}, "<component>": {…}}'
    )


def check(bundles: Mapping[str, Any] | Sequence[Any], vocabulary: Vocabulary) -> list[Checked]:
    """Every bundle checked, in order; Refused at the first that cannot be written."""
    checked = [_bundle(b, vocabulary) for b in listed(bundles)]
    seen: set[str] = set()
    for c in checked:
        if c.target is not None and c.target.alias is not None:
            if c.target.alias in seen:
                raise Refused(
                    f"{c.target.alias} is the entity of two bundles in one call — "
                    "write it in one bundle"
                )
            seen.add(c.target.alias)
    return checked


def slot(value: Any, where: str) -> Slot:
    """An eid slot as written; Refused for anything that cannot name an entity."""
    if isinstance(value, Mapping):
        value = value.get("eid")
    if isinstance(value, str) and value.strip():
        value = value.strip()
        surrogate = lone_surrogate(value)
        if surrogate is not None:
            raise Refused(not_characters(where, surrogate))
        if value.startswith("$"):
            if not ALIAS.match(value):
                raise Refused(
                    f"{where}: {echo(value)} is not an alias — write $ and a name, like $run"
                )
            if len(value) > MAX_ALIAS:
                raise Refused(
                    f"{where}: {echo(value)} is too long for an alias — an alias is at most "
                    f"{MAX_ALIAS} characters, like $run"
                )
            return Slot(alias=value)
        return Slot(text=value)
    raise Refused(
        f"{where} names an entity: an eid, an alias like $run, or the {{eid, name}} a read returned"
    )


def _bundle(raw: Any, vocabulary: Vocabulary) -> Checked:
    if not isinstance(raw, Mapping):
        raise Refused(
            'a bundle is an object: {"entity": {"eid": "$new"}, "<component>": {"column": …}}'
        )
    read_back = "kind" in raw
    typed = raw.typed if isinstance(raw, TypedBundle) else _UNTYPED
    entity = raw.get("entity")
    target: Slot | None = None
    if entity is not None:
        if isinstance(entity, str):
            target = slot(entity, "entity")
        elif isinstance(entity, Mapping):
            if entity.get("eid") is not None:
                target = slot(entity["eid"], "entity.eid")
        else:
            raise Refused('entity is {"eid": "<eid>"} or {"eid": "$alias"}')
    out = Checked(target)
    for key, value in raw.items():
        if key in ("entity", "kind") and (key == "entity" or read_back):
            continue
        if key == "tombstone":
            if value is None or value is False:
                continue
            if value is not True and value != {}:
                raise Refused('tombstone is written {} — {"entity": {…}, "tombstone": {}}')
            out.tombstone = True
        elif key == "edges":
            out.edges, out.unedges = _edges(value)
        elif key in ("$was", "was"):
            out.was = _was(value, vocabulary)
        elif key.startswith("$"):
            raise Refused(f"{echo(key)} is not part of a bundle — a bundle has {BUNDLE_KEYS}")
        else:
            comp = vocabulary.components.get(key)
            if comp is None:
                raise Refused(not_a_component(key))
            if not comp.writable:
                if read_back:
                    continue
                raise Refused(f"{key} is stamped by the store — leave it out")
            out.writes[key] = _columns(key, value, vocabulary, typed)
    if out.tombstone:
        if out.writes or out.edges or out.unedges:
            raise Refused(
                'a tombstone stands alone — write it as its own bundle: {"entity": '
                '{"eid": "<eid>"}, "tombstone": {}}'
            )
        if target is None or target.alias is not None:
            raise Refused(
                'a tombstone names an existing entity: {"entity": {"eid": "<eid>"}, '
                '"tombstone": {}}'
            )
    return out


_UNTYPED: Mapping[tuple[str, str], ValueType] = {}


def _columns(
    component: str,
    value: Any,
    vocabulary: Vocabulary,
    typed: Mapping[tuple[str, str], ValueType] = _UNTYPED,
) -> dict[str, Any] | None:
    if value is None:
        return None
    comp = vocabulary.components[component]
    if value is True and not comp.columns:
        return {}
    if not isinstance(value, Mapping):
        columns = comp.column_list() or "none: it is a mark, written {}"
        raise Refused(f"{component} is an object of its columns — its columns are {columns}")
    out: dict[str, Any] = {}
    for col, given in value.items():
        column = comp.columns.get(col)
        if column is None:
            raise Refused(no_column(component, str(col), vocabulary))
        if typed and not column.reference and typed.get((component, col)) == column.type:
            out[col] = given  # converted already, by the command that sent it
        else:
            out[col] = column_value(component, column, given)
    return out


def column_value(component: str, column: Column, given: Any) -> Any:
    """A value converted to its column's type (a Slot for a reference); None clears it."""
    if given is None:
        return None
    where = f"{component}.{column.name}"
    if column.reference:
        return slot(given, where)
    try:
        return convert(where, column.type, given)
    except BadValue as e:
        raise Refused(str(e)) from None


def _edges(value: Any) -> tuple[list[tuple[str, Slot]], list[tuple[str, Slot]]]:
    """The edges a bundle adds, and those it removes (`"remove": true`)."""
    shape = (
        'edges is a list of {"type": "<name>", "child": "<eid or $alias>"}, with '
        '"remove": true to take one away'
    )
    if not isinstance(value, list):
        raise Refused(shape)
    added: list[tuple[str, Slot]] = []
    removed: list[tuple[str, Slot]] = []
    for edge in value:
        if not isinstance(edge, Mapping) or set(edge) - {"type", "child", "remove"}:
            raise Refused(shape)
        kind = edge.get("type")
        if not isinstance(kind, str) or not kind.strip():
            raise Refused(shape)
        surrogate = lone_surrogate(kind)
        if surrogate is not None:
            raise Refused(not_characters("an edge's type", surrogate))
        remove = edge.get("remove", False)
        if not isinstance(remove, bool):
            raise Refused(f"an edge's remove is true or false — {shape}")
        found = (kind.strip(), slot(edge.get("child"), "an edge's child"))
        (removed if remove else added).append(found)
    return added, removed


def _was(value: Any, vocabulary: Vocabulary) -> dict[str, dict[str, str | None]]:
    shape = '$was is {"<component>": {"<column>": "<sha256 of the value read>" or null}}'
    if not isinstance(value, Mapping):
        raise Refused(shape)
    out: dict[str, dict[str, str | None]] = {}
    for comp_name, cols in value.items():
        comp = vocabulary.components.get(comp_name)
        if comp is None:
            raise Refused(not_a_component(comp_name))
        if not isinstance(cols, Mapping):
            raise Refused(shape)
        guards: dict[str, str | None] = {}
        for col, digest in cols.items():
            if col not in comp.columns:
                raise Refused(no_column(comp_name, str(col), vocabulary))
            if digest is not None and not isinstance(digest, str):
                raise Refused(shape)
            guards[col] = digest.lower() if isinstance(digest, str) else None
        out[comp_name] = guards
    return out


# -- resolving slots to entities ---------------------------------------------------------


class Lookup(Protocol):
    """What resolving needs from a backend, inside the write's transaction."""

    def row_of(self, eid: str) -> int | None:
        """The backend's own id of a live entity, or None."""
        ...

    def named(self, name: str) -> list[str]:
        """The eids of live entities whose alias.name is `name`."""
        ...

    def carries(self, component: str, eid: str) -> bool:
        """Whether the live entity `eid` has a `component` row."""
        ...


@dataclass
class Step:
    """One bundle with every slot named: its entity (`row` None when minted here)."""

    eid: str
    row: int | None
    writes: dict[str, dict[str, Any] | None]
    tombstone: bool = False
    edges: list[tuple[str, str]] = field(default_factory=list)
    was: dict[str, dict[str, str | None]] = field(default_factory=dict)
    unedges: list[tuple[str, str]] = field(default_factory=list)  # edges to take away


@dataclass
class Plan:
    """Every step of a write, and the aliases it minted."""

    steps: list[Step]
    aliases: dict[str, str]
    # minted only by being pointed at: entities with nothing on them but the stamps
    bare: list[str]


class Resolver:
    """Names the entities of one write: aliases minted once, eids and names looked up."""

    def __init__(self, lookup: Lookup, known: Mapping[str, int | None] | None = None) -> None:
        self.lookup = lookup
        self.aliases: dict[str, str] = {}
        self.rows: dict[str, int | None] = dict(known or {})
        self.minted: set[str] = set()

    def eid(self, where: Slot) -> str:
        if where.alias is not None:
            eid = self.aliases.get(where.alias)
            if eid is None:
                eid = self.aliases[where.alias] = new_eid()
                self.minted.add(eid)
            return eid
        text = where.text or ""
        if text in self.rows or text in self.minted:
            return text
        row = self.lookup.row_of(text)
        if row is not None:
            self.rows[text] = row
            return text
        named = self.lookup.named(text)
        if len(named) == 1:
            self.rows[named[0]] = self.lookup.row_of(named[0])
            return named[0]
        if named:
            raise Refused(
                f"{len(named)} entities have the alias {echo(text)} — use the eid of the one "
                "you mean"
            )
        raise NotFound(
            f"no entity {echo(text)} in this app — it is not an eid or an alias here; "
            "query for it and use its eid"
        )


def resolve(
    checked: list[Checked], lookup: Lookup, known: Mapping[str, int | None] | None = None
) -> Plan:
    """Every slot of `checked` named; Refused for an eid twice or one that is not there.

    `known` maps eids that count as existing though the lookup may not find
    them yet (the caller's own person, made in the same transaction).
    """
    r = Resolver(lookup, known)
    steps: list[Step] = []
    targets: set[str] = set()
    for c in checked:
        if c.target is None:
            eid = new_eid()
            r.minted.add(eid)
        else:
            eid = r.eid(c.target)
        if eid in targets:
            raise Refused(
                f"{c.target.said if c.target else eid} is the entity of two bundles in one "
                "call — put both changes in one bundle"
            )
        targets.add(eid)
        writes: dict[str, dict[str, Any] | None] = {}
        for comp, cols in c.writes.items():
            if cols is None:
                writes[comp] = None
                continue
            writes[comp] = {k: (r.eid(v) if isinstance(v, Slot) else v) for k, v in cols.items()}
        edges = [(kind, r.eid(child)) for kind, child in c.edges]
        unedges = [(kind, r.eid(child)) for kind, child in c.unedges]
        both = set(edges) & set(unedges)
        if both:
            kind, child = min(both)
            raise Refused(
                f"the {kind} edge to {child} is both added and removed in one bundle — keep one"
            )
        row = None if eid in r.minted else r.rows.get(eid)
        steps.append(Step(eid, row, writes, c.tombstone, edges, c.was, unedges))
    bare = [e for e in r.aliases.values() if e not in targets]
    return Plan(steps, {a: e for a, e in r.aliases.items()}, bare)


# -- what a table's rows must hold ----------------------------------------------------------


def complete(plan: Plan, vocabulary: Vocabulary, lookup: Lookup) -> None:
    """Give each component row a write makes the defaults of the columns it was not given,
    and refuse the write, every problem in one sentence, where a row would lack a required
    column, a kept column is emptied, or a reference names no person or no row of its table.

    Called inside the write's transaction, before anything of it is written; a row is
    new where its entity is minted here or has no row of that component yet.
    """
    problems: list[str] = []
    steps = {step.eid: step for step in plan.steps}
    for step in plan.steps:
        for name, cols in step.writes.items():
            comp = vocabulary.components[name]
            if cols is None or not (comp.kept or comp.pointing):
                continue
            for column in comp.kept:
                if column.name in cols and cols[column.name] is None:
                    problems.append(_emptied(name, column))
            missing = [c for c in comp.kept if c.name not in cols]
            if missing and (step.row is None or not lookup.carries(name, step.eid)):
                for column in missing:
                    if column.has_default:
                        cols[column.name] = column.default
                    else:
                        problems.append(f"{name}.{column.name} is required — give it a value")
            for column in comp.pointing:
                eid = cols.get(column.name)
                target = "person" if column.person else column.table
                if eid is None or target is None or _carries(steps, lookup, target, eid):
                    continue
                problems.append(_not_a_target(name, column, eid))
    if problems:
        raise Refused("; ".join(problems))


def _carries(steps: Mapping[str, Step], lookup: Lookup, component: str, eid: str) -> bool:
    """Whether `eid` has a `component` row once this write is done."""
    step = steps.get(eid)
    if step is not None and component in step.writes:
        return step.writes[component] is not None
    if step is not None and step.row is None:
        return False  # minted here, without one
    return lookup.carries(component, eid)


def _emptied(component: str, column: Column) -> str:
    where = f"{component}.{column.name}"
    if column.has_default:
        return (
            f"{where} always has a value ({json.dumps(column.default)} unless one is given) — "
            "write a value rather than null"
        )
    return f"{where} is required — give it a value rather than null"


def _not_a_target(component: str, column: Column, eid: str) -> str:
    where = f"{component}.{column.name}"
    if column.person:
        return (
            f"{where} names a person, and {eid} is none here — give the user_id of someone "
            "who has used this app (ctx.auth's is the caller's)"
        )
    return (
        f"{where} names a row of {column.table}, and {eid} has no {column.table} — give the "
        "id of one"
    )


def moved(component: str, column: str) -> Conflict:
    return Conflict(
        f"{component}.{column} changed since you read it — read it again and write your "
        "change on top"
    )


def guard_holds(expected: str | None, current: Any) -> bool:
    """Whether a `$was` digest (None: "still empty") matches the value there now."""
    if expected is None:
        return current is None
    return current is not None and fingerprint(current) == expected


__all__ = [
    "Checked",
    "Lookup",
    "Plan",
    "Slot",
    "Step",
    "TypedBundle",
    "check",
    "column_value",
    "complete",
    "fingerprint",
    "guard_holds",
    "listed",
    "moved",
    "no_column",
    "not_a_component",
    "resolve",
]
