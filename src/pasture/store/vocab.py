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

A component may also say what its rows must hold, as a table does:

    "todos": { "properties": {
                 "text":   { "type": "string" },
                 "done":   { "type": "boolean", "default": false },
                 "owner":  { "type": "string", "format": "person" },
                 "parent": { "type": "string", "format": "reference", "table": "todos" } },
               "required": ["text", "owner"],
               "indexes":  { "by_owner": ["owner"] },
               "tools": false }

`default` fills a column a new row is not given, `required` names the columns
a new row must be given, `format: person` is a reference to a person and
`table` a reference to a row of that component; each index is a real index of
the database, over its columns in order and then creation. `"tools": false`
gives the component no `add_`/`find_` commands. A `worker.py`'s `schema` is
the same declarations (`read_app` reads the two together).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from pasture.errors import DeployRefused
from pasture.names import WORD
from pasture.values import BadValue, ValueType, convert, same_type, type_of_property

# Words a bundle or a filter already uses for itself; a component of that name
# could never be written or asked for.
RESERVED = frozenset(
    {"entity", "edges", "tombstone", "was", "kind", "count", "tally", "distinct", "limit"}
)


# Each component is a table, and reading an app counts and joins them (a count across
# 500 made SQLite refuse its query): an app keeps at most these.
MAX_COMPONENTS = 200
MAX_COLUMNS = 200
MAX_INDEXED = 5  # columns of one index
MAX_INDEXES = 16  # indexes of one component: each one slows every write


@dataclass(frozen=True)
class Column:
    """A named, typed column of a component; `reference` columns hold an eid.

    `default` (when `has_default`) fills it in a row made without it, already of its
    type; `required`: a row is not made without it. A reference may name a `person`,
    or a row of the component `table`.
    """

    name: str
    type: ValueType
    reference: bool = False
    default: Any = None
    has_default: bool = False
    required: bool = False
    person: bool = False
    table: str | None = None

    @property
    def shown(self) -> str:
        """The type as `graph_schema` prints it: one of the five, or `reference`."""
        return "reference" if self.reference else self.type

    @property
    def kept(self) -> bool:
        """Whether every row made has a value here: it is required, or has a default."""
        return self.required or self.has_default


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
    # each declared index: its name and its columns, in order (creation comes after them)
    indexes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    tools: bool = True  # False: no add_/find_ of its own

    def column_list(self) -> str:
        return ", ".join(self.columns)

    @cached_property
    def kept(self) -> tuple[Column, ...]:
        """The columns every new row has a value in (see `Column.kept`)."""
        return tuple(c for c in self.columns.values() if c.kept)

    @cached_property
    def pointing(self) -> tuple[Column, ...]:
        """The references that name a person or a row of one component."""
        return tuple(c for c in self.columns.values() if c.person or c.table is not None)


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
    "(a string may have format date-time, uri, reference or person)"
)
# Where each source of components is named in a deploy's message.
VOCAB_FILE = "vocab.json"
SCHEMA = "worker.py's schema"


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
        vocabulary, problems = read_app(doc, None, previous)
        return vocabulary, problems[VOCAB_FILE]

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


def read_app(
    doc: Mapping[str, Any] | None,
    tables: Mapping[str, Any] | None,
    previous: Vocabulary | None = None,
) -> tuple[Vocabulary, dict[str, list[str]]]:
    """An app's vocabulary from vocab.json's document and worker.py's `schema` (its tables,
    each as a vocab.json component); the problems of each, by where they are
    (`VOCAB_FILE`, `SCHEMA`).

    A table of worker.py's schema named like a component of vocab.json is the same
    one when both declare it alike, and refused when they differ.
    """
    problems: dict[str, list[str]] = {VOCAB_FILE: [], SCHEMA: []}
    mine = problems[VOCAB_FILE]
    if doc is None:
        doc = {}
    if not isinstance(doc, Mapping):
        mine.append('the file is a JSON object: {"$defs": {"<component>": {"properties": …}}}')
        return Vocabulary(), problems
    tools = doc.get("tools", True)
    if not isinstance(tools, bool):
        mine.append('"tools" is true or false')
        tools = True
    defs = doc.get("$defs", {})
    if not isinstance(defs, Mapping):
        mine.append('"$defs" is an object of components, each {"properties": {…}}')
        defs = {}
    if tables is not None and not isinstance(tables, Mapping):
        problems[SCHEMA].append("schema maps each table's name to table(…)")
        tables = None
    total = len(defs) + len(tables or {})
    if total > MAX_COMPONENTS:
        mine.append(
            f"a vocabulary declares at most {MAX_COMPONENTS} components, and this one "
            f"{total:,} — keep what the app is about; a kind's details are its columns"
        )
        defs, tables = {}, None
    declared: dict[str, Component] = {}
    source: dict[str, str] = {}  # component -> where it is declared
    for where, bodies in ((VOCAB_FILE, defs), (SCHEMA, tables or {})):
        for name, body in bodies.items():
            component = _component(str(name), body, problems[where])
            if component is None:
                continue
            before = declared.get(component.name)
            if before is not None and before != component:
                problems[where].append(
                    f"{component.name} is a table of worker.py's schema and a component of "
                    "vocab.json, declared differently — declare it in one of them"
                )
                continue
            if before is None:
                declared[component.name] = component
                source[component.name] = where
    for component in declared.values():
        _references(component, declared, problems[source[component.name]])
    if previous is not None:
        for component in declared.values():
            before = previous.components.get(component.name)
            if before is None or before.platform:
                continue
            for column in component.columns.values():
                old = before.columns.get(column.name)
                if old is not None and not _compatible(old, column):
                    problems[source[component.name]].append(
                        changed_type(component.name, old, column)
                    )
    return Vocabulary({**declared, **PLATFORM}, tools=tools), problems


def merged(doc: Mapping[str, Any] | None, tables: Mapping[str, Any] | None) -> dict[str, Any]:
    """The one document a store declares: vocab.json's, with worker.py's tables after its
    own components (one declared in both is vocab.json's: `read_app` found them alike)."""
    out = dict(doc or {})
    defs = dict(out.get("$defs") or {})
    for name, body in (tables or {}).items():
        defs.setdefault(name, body)
    if defs:
        out["$defs"] = defs
    return out


def changed_type(component: str, old: Column, new: Column) -> str:
    return (
        f"{component}.{new.name} was {old.shown} and is {new.shown} now — a column keeps "
        f"its type; declare a new column with a new name (like {new.name}_{new.shown}) instead"
    )


def _word_problem(what: str, name: str) -> str:
    return (
        f"{name!r} is not {what} — use a-z, 0-9 and _, starting with a letter, up to 40 characters"
    )


def _component(name: str, body: object, problems: list[str]) -> Component | None:
    """The component a vocab.json entry declares, with the columns that are right; None
    when there is none to speak of (a bad name, or not an object). Problems go in `problems`."""
    ok = True
    if not WORD.fullmatch(name):
        problems.append(_word_problem("a component name", name))
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
    tools = body.get("tools", True)
    if not isinstance(tools, bool):
        problems.append(f'{name}: "tools" is true or false')
        tools = True
    props = body.get("properties", {})
    if not isinstance(props, Mapping):
        problems.append(f'{name}: "properties" is an object of columns')
        return None
    if len(props) > MAX_COLUMNS:
        problems.append(
            f"{name}: a component has at most {MAX_COLUMNS} columns, not {len(props):,}"
        )
        return None
    required = _required(name, body.get("required", []), props, problems)
    columns: dict[str, Column] = {}
    for col, prop in props.items():
        col = str(col)
        if not WORD.fullmatch(col):
            problems.append(f"{name}: {_word_problem('a column name', col)}")
            continue
        column = column_of(col, prop)
        if column is None and isinstance(prop, Mapping) and prop.get("format") == "json":
            problems.append(
                f"{name}.{col} is JSON (json_value()), which no store keeps as a column yet — "
                "keep it as text (string()) and write json.dumps of it"
            )
            continue
        if column is None:
            problems.append(f"{name}.{col} has type {_type_name(prop)} — {TYPES_SENTENCE}")
            continue
        column = _with_default(name, column, prop, problems)
        if col in required and not column.has_default:
            column = replace(column, required=True)
        columns[col] = column
    indexes = _indexes(name, body.get("indexes", {}), props, columns, problems)
    if not ok:
        return None
    return Component(name, columns, kind=kind, indexes=indexes, tools=tools)


def _required(
    name: str, given: object, props: Mapping[str, Any], problems: list[str]
) -> frozenset[str]:
    """The columns `"required"` names; each one not a column is a problem."""
    if not isinstance(given, list) or not all(isinstance(c, str) for c in given):
        problems.append(f'{name}: "required" is a list of its columns, like ["{_first(props)}"]')
        return frozenset()
    for col in given:
        if col not in props:
            problems.append(
                f'{name}: "required" names {col!r}, which is not one of its columns — '
                f"{_its_columns(props)}"
            )
    return frozenset(given)


def _indexes(
    name: str,
    given: object,
    props: Mapping[str, Any],
    columns: Mapping[str, Column],
    problems: list[str],
) -> dict[str, tuple[str, ...]]:
    """The indexes `"indexes"` declares, each a word naming one to five of its columns."""
    shape = f'{name}: "indexes" is an object of index names, each a list of its columns, like '
    shape += f'{{"by_{_first(props)}": ["{_first(props)}"]}}'
    if not isinstance(given, Mapping):
        problems.append(shape)
        return {}
    out: dict[str, tuple[str, ...]] = {}
    for index, cols in given.items():
        index = str(index)
        wrong = not WORD.fullmatch(index)
        if wrong:  # and its columns are looked at all the same
            problems.append(f"{name}: {_word_problem('an index name', index)}")
        if not isinstance(cols, list) or not cols or not all(isinstance(c, str) for c in cols):
            problems.append(shape)
            continue
        for col in cols:
            if col not in props:
                problems.append(
                    f"{name}: the index {index} names {col!r}, which is not one of its "
                    f"columns — {_its_columns(props)}"
                )
                wrong = True
        if len(set(cols)) != len(cols):
            problems.append(f"{name}: the index {index} names a column twice — name each once")
            wrong = True
        if len(cols) > MAX_INDEXED:
            problems.append(
                f"{name}: the index {index} has {len(cols)} columns, and an index has at most "
                f"{MAX_INDEXED}"
            )
            wrong = True
        if not wrong and all(c in columns for c in cols):
            out[index] = tuple(cols)
    if len(out) > MAX_INDEXES:
        problems.append(
            f"{name}: a component has at most {MAX_INDEXES} indexes, not {len(out)} — each "
            "one slows every write"
        )
        return {}
    return out


def _with_default(name: str, column: Column, prop: object, problems: list[str]) -> Column:
    """`column` with the default its property gives, checked against its type."""
    if not isinstance(prop, Mapping) or "default" not in prop:
        return column
    given = prop["default"]
    where = f"{name}.{column.name}"
    if column.reference:
        problems.append(
            f"{where} is a reference, and a reference has no default — leave out its default "
            "and give the eid in each write"
        )
        return column
    if given is None:
        problems.append(f"{where} has a default of null — leave out default for none")
        return column
    try:
        if not same_type(column.type, given):
            raise BadValue(_what_it_is(where, column.type))
        value = convert(where, column.type, given)
    except BadValue as e:
        problems.append(
            f"{where} has a default of {_shown(given)}, and {e} — give a default of its type"
        )
        return column
    if isinstance(value, str) and "\x00" in value:  # PostgreSQL keeps no NUL in text
        problems.append(f"{where} has a default holding a NUL character — give one without")
        return column
    return replace(column, default=value, has_default=True)


def _what_it_is(where: str, kind: ValueType) -> str:
    """What a value of `kind` is, as a refusal says it (`jog.miles is a number`)."""
    try:
        convert(where, kind, object())
    except BadValue as e:
        return str(e)
    return where  # pragma: no cover - nothing converts an object()


def _shown(value: object) -> str:
    try:
        return json.dumps(value)[:60]
    except (TypeError, ValueError):
        return repr(value)[:60]


def _references(
    component: Component, declared: Mapping[str, Component], problems: list[str]
) -> None:
    """Each reference to a row of a named component names one there is."""
    for column in component.columns.values():
        if column.table is not None and column.table not in declared:
            known = ", ".join(declared) or "none yet"
            problems.append(
                f"{component.name}.{column.name} is a reference to a row of {column.table}, "
                f"and there is no table {column.table} — declare it, or name one of the app's "
                f"own: {known}"
            )


def _first(props: Mapping[str, Any]) -> str:
    return str(next(iter(props), "text"))


def _its_columns(props: Mapping[str, Any]) -> str:
    return f"its columns are {', '.join(map(str, props))}" if props else "it has no columns"


# vocab.json's spelling of a reference: to any entity, a person, or a row of one table
REFERENCE_FORMATS = ("reference", "person")


def column_of(name: str, prop: object) -> Column | None:
    """The column a vocab.json property declares (its default aside), or None for a type
    pasture does not have."""
    if isinstance(prop, Mapping) and prop.get("type") == "string":
        fmt = prop.get("format")
        target = prop.get("table")
        if fmt in REFERENCE_FORMATS:
            if target is not None and (fmt != "reference" or not isinstance(target, str)):
                return None
            return Column(name, "text", reference=True, person=fmt == "person", table=target)
    if isinstance(prop, Mapping) and "table" in prop:
        return None
    kind = type_of_property(prop)
    return None if kind is None else Column(name, kind)


__all__ = [
    "PLATFORM",
    "SCHEMA",
    "VOCAB_FILE",
    "Column",
    "Component",
    "Vocabulary",
    "column_of",
    "merged",
    "read_app",
]
