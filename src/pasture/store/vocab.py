"""Components: the kinds of things an app keeps, declared in its vocab.json.

    { "$defs": { "jog": { "properties": {
                   "who":   { "type": "string" },
                   "miles": { "type": "number" },
                   "at":    { "type": "string", "format": "date-time" },
                   "coach": { "type": "string", "format": "reference" } } },
                 "starred": { "kind": false } },
      "tools": true }

A property is `string` (text; `format: date-time` → time, `uri` → url,
`reference` → an eid of another entity), `number`/`integer`, or `boolean`.
A component with no properties is a mark. The platform's own components are
always part of a vocabulary: doc, alias, comment, person, and the stamps
created and updated, which only the store writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pasture.errors import DeployRefused
from pasture.names import WORD
from pasture.values import ValueType, type_of_property

# Words a bundle or a filter already uses for itself; a component of that name
# could never be written or asked for.
RESERVED = frozenset(
    {"entity", "edges", "tombstone", "was", "kind", "count", "tally", "distinct", "limit"}
)


# Each component is a table, and reading an app counts and joins them (a count across
# 500 made SQLite refuse its query): an app keeps at most these.
MAX_COMPONENTS = 200
MAX_COLUMNS = 200


@dataclass(frozen=True)
class Column:
    """A named, typed column of a component; `reference` columns hold an eid."""

    name: str
    type: ValueType
    reference: bool = False

    @property
    def shown(self) -> str:
        """The type as `graph_schema` prints it: one of the five, or `reference`."""
        return "reference" if self.reference else self.type


@dataclass(frozen=True)
class Component:
    """A named set of typed columns.

    `kind` is False for a mark a row carries rather than a thing somebody adds
    (`"kind": false`); `platform` for the platform's own components; `writable`
    is False for the stamps (`created`, `updated`) the store writes itself.
    """

    name: str
    columns: Mapping[str, Column]
    kind: bool = True
    platform: bool = False
    writable: bool = True

    def column_list(self) -> str:
        return ", ".join(self.columns)


def _platform() -> dict[str, Component]:
    def comp(name: str, *cols: Column, writable: bool = True) -> Component:
        return Component(
            name, {c.name: c for c in cols}, kind=False, platform=True, writable=writable
        )

    text: ValueType = "text"
    return {
        "doc": comp("doc", Column("title", text), Column("body", text)),
        "alias": comp("alias", Column("name", text)),
        "comment": comp("comment", Column("target", text, reference=True)),
        "person": comp("person", Column("name", text)),
        "created": comp(
            "created", Column("at", "time"), Column("by", text, reference=True), writable=False
        ),
        "updated": comp(
            "updated", Column("at", "time"), Column("by", text, reference=True), writable=False
        ),
    }


PLATFORM: Mapping[str, Component] = _platform()
# The platform's components a bundle may write, as refusals list them.
PLATFORM_WRITABLE = ", ".join(c.name for c in PLATFORM.values() if c.writable)


def _compatible(old: Column, new: Column) -> bool:
    """Whether stored values of `old` still read as `new` (a string stays a string)."""
    if (old.type, old.reference) == (new.type, new.reference):
        return True
    return new.type == "text" and not new.reference and old.type in ("text", "time", "url")


def _type_name(prop: object) -> str:
    if not isinstance(prop, Mapping):
        return repr(prop)
    kind = prop.get("type")
    fmt = prop.get("format")
    return f"{kind} ({fmt})" if fmt is not None else str(kind)


TYPES_SENTENCE = (
    "a column is string, number, integer or boolean "
    "(a string may have format date-time, uri or reference)"
)


@dataclass(frozen=True)
class Vocabulary:
    """An app's components (its own and the platform's), and whether it wants generated tools."""

    components: Mapping[str, Component] = field(default_factory=lambda: dict(PLATFORM))
    tools: bool = True

    @classmethod
    def from_json(
        cls, doc: Mapping[str, Any] | None, previous: Vocabulary | None = None
    ) -> Vocabulary:
        """Read vocab.json's document; DeployRefused("vocab.json: …") lists every problem.

        `previous` is the vocabulary installed now: a column whose type changes
        incompatibly on redeploy is refused.
        """
        vocabulary, problems = cls.read(doc, previous)
        if problems:
            raise DeployRefused(problems, prefix="vocab.json")
        return vocabulary

    @classmethod
    def read(
        cls, doc: Mapping[str, Any] | None, previous: Vocabulary | None = None
    ) -> tuple[Vocabulary, list[str]]:
        """vocab.json's document as far as it reads, and every problem found in it.

        With problems, the vocabulary is what did read — each component with the
        columns that are right — so a deploy can still check tools.json against it
        and name that file's problems in the same message.
        """
        problems: list[str] = []
        if doc is None:
            doc = {}
        if not isinstance(doc, Mapping):
            problems.append(
                'the file is a JSON object: {"$defs": {"<component>": {"properties": …}}}'
            )
            return cls(), problems
        tools = doc.get("tools", True)
        if not isinstance(tools, bool):
            problems.append('"tools" is true or false')
            tools = True
        defs = doc.get("$defs", {})
        if not isinstance(defs, Mapping):
            problems.append('"$defs" is an object of components, each {"properties": {…}}')
            defs = {}
        if len(defs) > MAX_COMPONENTS:
            problems.append(
                f"a vocabulary declares at most {MAX_COMPONENTS} components, and this one "
                f"{len(defs):,} — keep what the app is about; a kind's details are its columns"
            )
            defs = {}
        declared: dict[str, Component] = {}
        for name, body in defs.items():
            component = _component(str(name), body, problems)
            if component is not None:
                declared[component.name] = component
        if previous is not None:
            for component in declared.values():
                before = previous.components.get(component.name)
                if before is None or before.platform:
                    continue
                for column in component.columns.values():
                    old = before.columns.get(column.name)
                    if old is not None and not _compatible(old, column):
                        problems.append(changed_type(component.name, old, column))
        return cls({**declared, **PLATFORM}, tools=tools), problems

    def declared(self) -> list[Component]:
        """This app's own components, in the order vocab.json lists them."""
        return [c for c in self.components.values() if not c.platform]

    def kinds(self) -> list[Component]:
        """This app's own components that are kinds of thing (they get add_/find_)."""
        return [c for c in self.declared() if c.kind]

    def kind_order(self) -> list[str]:
        """Which component names a row's `kind`, first match wins.

        The app's kinds in vocab order, then the platform's things, then the app's
        marks, then the stamps every entity carries.
        """
        marks = [c.name for c in self.declared() if not c.kind]
        return [
            *(c.name for c in self.kinds()),
            "comment",
            "person",
            "doc",
            "alias",
            *marks,
            "created",
            "updated",
        ]


def changed_type(component: str, old: Column, new: Column) -> str:
    return (
        f"{component}.{new.name} was {old.shown} and is {new.shown} now — a column keeps "
        f"its type; declare a new column with a new name (like {new.name}_{new.shown}) instead"
    )


def _component(name: str, body: object, problems: list[str]) -> Component | None:
    """The component a vocab.json entry declares, with the columns that are right; None
    when there is none to speak of (a bad name, or not an object). Problems go in `problems`."""
    ok = True
    if not WORD.fullmatch(name):
        problems.append(
            f"{name!r} is not a component name — use a-z, 0-9 and _, starting with a letter, "
            "up to 40 characters"
        )
        ok = False
    elif name in PLATFORM:
        problems.append(
            f"{name} is the platform's own component — use it as it is, or name yours differently"
        )
        ok = False
    elif name in RESERVED:
        problems.append(f"{name} is a word bundles and filters use — name the component otherwise")
        ok = False
    if body is True:
        body = {}
    if not isinstance(body, Mapping):
        problems.append(f'{name} is an object: {{"properties": {{…}}}}')
        return None
    kind = body.get("kind", True)
    if not isinstance(kind, bool):
        problems.append(f'{name}: "kind" is true or false')
        kind = True
    props = body.get("properties", {})
    if not isinstance(props, Mapping):
        problems.append(f'{name}: "properties" is an object of columns')
        return None
    if len(props) > MAX_COLUMNS:
        problems.append(
            f"{name}: a component has at most {MAX_COLUMNS} columns, not {len(props):,}"
        )
        return None
    columns: dict[str, Column] = {}
    for col, prop in props.items():
        col = str(col)
        if not WORD.fullmatch(col):
            problems.append(
                f"{name}: {col!r} is not a column name — use a-z, 0-9 and _, starting with "
                "a letter, up to 40 characters"
            )
            continue
        column = column_of(col, prop)
        if column is None:
            problems.append(f"{name}.{col} has type {_type_name(prop)} — {TYPES_SENTENCE}")
            continue
        columns[col] = column
    return Component(name, columns, kind=kind) if ok else None


def column_of(name: str, prop: object) -> Column | None:
    """The column a vocab.json property declares, or None for a type pasture does not have."""
    if isinstance(prop, Mapping) and (prop.get("type"), prop.get("format")) == (
        "string",
        "reference",
    ):
        return Column(name, "text", reference=True)
    kind = type_of_property(prop)
    return None if kind is None else Column(name, kind)


__all__ = [
    "PLATFORM",
    "Column",
    "Component",
    "Vocabulary",
    "column_of",
]
