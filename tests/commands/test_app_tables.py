"""worker.py's `schema`: `table()` and `.index()` turned into vocab.json's declarations, which
read back as the columns they were built from, and what only Python can get wrong in it."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pasture import boolean, id, json_value, number, string, table, user_id
from pasture.commands.app_tables import schema_document
from pasture.commands.handlers import Arg
from pasture.store.vocab import SCHEMA, read_app

_values = {
    "string": st.text(max_size=4).filter(lambda t: "\x00" not in t),
    "number": st.integers(-9, 9),
    "boolean": st.booleans(),
}
_makers = {"string": string, "number": number, "boolean": boolean}


@st.composite
def _columns(draw: st.DrawFn) -> dict[str, tuple[Arg, str, bool, Any]]:
    """Columns built as worker.py builds them: (the builder, its type, optional, default)."""
    out: dict[str, tuple[Arg, str, bool, Any]] = {}
    for name in draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True, min_size=1)):
        kind = draw(st.sampled_from(["string", "number", "boolean", "person", "row"]))
        arg = {"person": user_id(), "row": id("t")}.get(kind) or _makers[kind]()
        optional = draw(st.booleans())
        if optional:
            arg = arg.optional()
        default = None
        if kind in _values and draw(st.booleans()):
            default = draw(_values[kind])
            arg = arg.default(default)
        out[name] = (arg, kind, optional, default)
    return out


@given(columns=_columns(), indexed=st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=2))
def test_a_table_reads_back_as_the_columns_it_was_built_from(
    columns: dict[str, tuple[Arg, str, bool, Any]], indexed: list[str]
) -> None:
    built = table(**{name: arg for name, (arg, *_) in columns.items()})
    if indexed:
        built = built.index("by_x", indexed)
    defs, problems = schema_document({"t": built})
    assert problems == []
    vocabulary, found = read_app(None, defs)
    right = set(indexed) <= set(columns) and len(set(indexed)) == len(indexed)
    assert (found[SCHEMA] == []) == right, found
    if not right:
        return
    component = vocabulary.components["t"]
    assert component.tools is False
    assert dict(component.indexes) == ({"by_x": tuple(indexed)} if indexed else {})
    for name, (_, kind, optional, default) in columns.items():
        column = component.columns[name]
        assert column.required == (not optional and default is None)
        assert column.person == (kind == "person")
        assert column.table == ("t" if kind == "row" else None)
        assert column.has_default == (default is not None)
        if default is not None:
            assert column.default == default


def test_what_only_python_gets_wrong_is_said_and_the_rest_read_on() -> None:
    todos = (
        table(text=string(), junk="no", blob=json_value())  # type: ignore[arg-type]
        .index("by_text", ["text"])
        .index("by_text", ["blob"])
    )
    defs, problems = schema_document({"todos": todos, "other": {"text": string()}, 3: todos})
    assert problems == [
        'todos.junk is not a column — build it with string(), number(), boolean(), id("table"), '
        "user_id() or json_value()",
        "todos: the index by_text is declared twice — give each index its own name",
        "schema['other'] is not a table — write table(column=string(), …)",
        "schema's names are text, and 3 is not",
    ]
    assert defs["todos"]["indexes"] == {"by_text": ["text"]}
    assert defs["todos"]["properties"]["blob"] == {"format": "json"}
    _, found = read_app(None, defs)
    assert found[SCHEMA] == [
        "todos.blob is JSON (json_value()), which no store keeps as a column yet — keep it as "
        "text (string()) and write json.dumps of it"
    ]
    assert schema_document(None) == ({}, [])
    assert schema_document(["todos"])[1][0].startswith("schema maps each table's name")
