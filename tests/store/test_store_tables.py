"""An app's tables: defaults, required columns, references to a person or to a row of a
table, and declared indexes that are real indexes of the database — on every backend.

The plans are the database's own (`EXPLAIN QUERY PLAN`, `EXPLAIN`): a filter on an
index's columns, ordered by them and then creation, walks the index and sorts nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import ADA, BOB, AnyStore

from pasture.caller import Caller
from pasture.errors import DeployRefused, NotFound, Refused
from pasture.store import Vocabulary
from pasture.store.sqlite import SqliteStore
from pasture.store.tables import declared_index

TODOS: dict[str, Any] = {
    "$defs": {
        "todos": {
            "properties": {
                "text": {"type": "string"},
                "done": {"type": "boolean", "default": False},
                "owner": {"type": "string", "format": "person"},
                "parent": {"type": "string", "format": "reference", "table": "todos"},
                "rank": {"type": "number", "default": 3},
            },
            "required": ["text", "owner"],
            "indexes": {"by_owner": ["owner"], "by_done": ["done", "rank"]},
        }
    }
}


@pytest.fixture
def todos(store: AnyStore) -> AnyStore:
    store.declare(TODOS)
    return store


def _indexes(store: AnyStore) -> set[str]:
    """The names of the declared indexes the database has."""
    with store._reading() as conn:
        if isinstance(store, SqliteStore):
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        else:
            rows = conn.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
            )
        return {r[0] for r in rows.fetchall() if r[0].startswith("ix_")}


def _plan(store: AnyStore, filter: str) -> str:
    """The database's own plan for the SELECT a filter compiles to, as one text."""
    compiled = store._compile(filter)
    with store._reading() as conn:
        if isinstance(store, SqliteStore):
            rows = conn.execute("EXPLAIN QUERY PLAN " + compiled.sql, compiled.params)
            return "\n".join(str(r[-1]) for r in rows.fetchall())
        rows = conn.execute("EXPLAIN " + compiled.sql, compiled.params)
        return "\n".join(str(r[0]) for r in rows.fetchall())


def test_a_new_row_gets_its_defaults(todos: AnyStore) -> None:
    todos.apply({"todos": {"text": "milk", "owner": ADA.eid}}, ADA)
    (row,) = todos.query(".todos!", ADA)
    assert row["todos"]["done"] is False
    assert row["todos"]["rank"] == 3
    assert row["todos"]["owner"] == {"eid": ADA.eid, "name": "Ada"}


def test_a_row_patched_keeps_what_it_has(todos: AnyStore) -> None:
    eid = todos.apply({"todos": {"text": "milk", "owner": ADA.eid, "rank": 9}}, ADA).entities[0]
    todos.apply({"entity": {"eid": eid}, "todos": {"done": True}}, ADA)
    (row,) = todos.query(".todos!", ADA)
    assert (row["todos"]["done"], row["todos"]["rank"], row["todos"]["text"]) == (True, 9, "milk")


def test_a_row_given_to_an_entity_that_had_none_is_a_new_row(todos: AnyStore) -> None:
    eid = todos.apply({"doc": {"title": "later"}}, ADA).entities[0]
    with pytest.raises(Refused) as e:
        todos.apply({"entity": {"eid": eid}, "todos": {"done": True}}, ADA)
    assert e.value.sentence == (
        "todos.text is required — give it a value; todos.owner is required — give it a value"
    )
    todos.apply({"entity": {"eid": eid}, "todos": {"text": "x", "owner": ADA.eid}}, ADA)
    (row,) = todos.query(".todos!", ADA)
    assert row["todos"]["done"] is False


def test_every_missing_column_is_named_and_nothing_is_written(todos: AnyStore) -> None:
    batch = [
        {"doc": {"title": "fine on its own"}},
        {"todos": {"done": True}},
        {"todos": {"text": "x", "owner": BOB.eid, "done": None}},
    ]
    with pytest.raises(Refused) as e:
        todos.apply(batch, BOB)
    assert e.value.sentence == (
        "todos.text is required — give it a value; todos.owner is required — give it a value; "
        "todos.done always has a value (false unless one is given) — write a value rather "
        "than null"
    )
    assert todos.query("*", ADA) == []
    assert todos.query(".person!", ADA) == []  # not even Bob, who wrote it


def test_a_required_column_cannot_be_emptied(todos: AnyStore) -> None:
    eid = todos.apply({"todos": {"text": "milk", "owner": ADA.eid}}, ADA).entities[0]
    with pytest.raises(
        Refused, match=r"^todos.text is required — give it a value rather than null$"
    ):
        todos.apply({"entity": {"eid": eid}, "todos": {"text": None}}, ADA)


def test_a_person_reference_names_a_person(todos: AnyStore) -> None:
    doc = todos.apply({"doc": {"title": "not a person"}}, ADA).entities[0]
    with pytest.raises(Refused) as e:
        todos.apply({"todos": {"text": "x", "owner": doc}}, ADA)
    assert e.value.sentence.startswith(f"todos.owner names a person, and {doc} is none here")
    with pytest.raises(NotFound):
        todos.apply({"todos": {"text": "x", "owner": "0123456789abcdef"}}, ADA)
    # someone who wrote here is a person of the store
    todos.apply({"doc": {"title": "hello"}}, BOB)
    todos.apply({"todos": {"text": "for Bob", "owner": BOB.eid}}, ADA)
    assert [r["todos"]["owner"]["name"] for r in todos.query(".todos!", ADA)] == ["Bob"]


def test_a_reference_to_a_table_names_a_row_of_it(todos: AnyStore) -> None:
    doc = todos.apply({"doc": {"title": "no todo"}}, ADA).entities[0]
    with pytest.raises(Refused, match=f"todos.parent names a row of todos, and {doc} has no todos"):
        todos.apply({"todos": {"text": "x", "owner": ADA.eid, "parent": doc}}, ADA)
    # a row made in the same write counts
    todos.apply(
        [
            {"entity": {"eid": "$top"}, "todos": {"text": "top", "owner": ADA.eid}},
            {"todos": {"text": "under", "owner": ADA.eid, "parent": "$top"}},
        ],
        ADA,
    )
    rows = todos.query(".todos.parent~=&.todos!", ADA)
    assert [r["todos"]["text"] for r in rows] == ["under"]


def test_schema_says_indexes_defaults_and_what_is_required(todos: AnyStore) -> None:
    described = todos.schema()["components"]["todos"]
    assert described["indexes"] == {"by_owner": ["owner"], "by_done": ["done", "rank"]}
    assert described["columns"]["owner"] == "reference"  # as before
    assert described["details"] == {
        "text": {"type": "text", "required": True},
        "done": {"type": "bool", "required": False, "default": False},
        "owner": {"type": "reference", "required": True, "person": True},
        "parent": {"type": "reference", "required": False, "table": "todos"},
        "rank": {"type": "number", "required": False, "default": 3},
    }
    assert todos.schema()["components"]["doc"]["indexes"] == {}


def test_indexes_are_made_and_dropped_at_deploy(todos: AnyStore, opener: Any) -> None:
    made = {declared_index(todos.dialect, "todos", i) for i in ("by_owner", "by_done")}
    assert _indexes(todos) == made
    fewer = {"$defs": {"todos": {**TODOS["$defs"]["todos"], "indexes": {"by_owner": ["owner"]}}}}
    todos.declare(fewer)
    assert _indexes(todos) == {declared_index(todos.dialect, "todos", "by_owner")}
    changed = {"$defs": {"todos": {**TODOS["$defs"]["todos"], "indexes": {"by_owner": ["text"]}}}}
    todos.declare(changed)
    with todos._reading() as conn:
        if isinstance(todos, SqliteStore):
            (ddl,) = conn.execute(
                "SELECT sql FROM sqlite_master WHERE name = ?",
                (declared_index(todos.dialect, "todos", "by_owner"),),
            ).fetchone()
        else:
            (ddl,) = conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = %s "
                "AND schemaname = current_schema()",
                (declared_index(todos.dialect, "todos", "by_owner"),),
            ).fetchone()
    columns = ddl.replace('"', "").split("(", 1)[1]
    assert columns.startswith("text") and "owner" not in columns
    todos.declare({"$defs": {"todos": {"properties": TODOS["$defs"]["todos"]["properties"]}}})
    assert _indexes(todos) == set()
    todos.close()
    again = opener()  # opened afresh, nothing comes back
    try:
        assert _indexes(again) == set()
    finally:
        again.close()


def _many(store: AnyStore) -> list[Caller]:
    """3,000 todos of 30 people, and the database's statistics of them."""
    people = [Caller(f"{n:016x}", f"p{n}") for n in range(1, 31)]
    for who in people:
        store.apply(
            [
                {"todos": {"text": f"t{i}", "owner": who.eid, "rank": i, "done": i % 2 == 0}}
                for i in range(100)
            ],
            who,
        )
    with store._reading() as conn:
        conn.execute("ANALYZE")
        if not isinstance(store, SqliteStore):
            conn.commit()  # type: ignore[union-attr]
    return people


@pytest.mark.parametrize(
    "order", ["sort=-todos.owner", "sort=-todos.owner,-created.at", "sort=todos.owner"]
)
def test_a_filter_on_an_index_walks_it_in_order(todos: AnyStore, order: str) -> None:
    people = _many(todos)
    who = people[7].eid
    todos.max_rows = 20  # a page of 100 rows: no database sorts its way there
    plan = _plan(todos, f".todos.owner={who}&{order}")
    name = declared_index(todos.dialect, "todos", "by_owner")
    assert name in plan
    assert "TEMP B-TREE" not in plan and "Sort" not in plan, plan
    rows = todos.query(f".todos.owner={who}&{order}", ADA)
    texts = [r["todos"]["text"] for r in rows]
    expected = [f"t{i}" for i in range(100)]
    assert texts == (expected if order == "sort=todos.owner" else expected[::-1])[:20]


def test_a_page_after_a_cursor_walks_the_index_too(todos: AnyStore) -> None:
    people = _many(todos)
    who = people[-1].eid
    todos.max_rows = 20
    first = todos.query(f".todos.owner={who}&sort=-todos.owner", ADA)
    cursor = first.cursor  # type: ignore[union-attr]
    assert cursor is not None
    plan = _plan(todos, f".todos.owner={who}&sort=-todos.owner&after={cursor}")
    assert declared_index(todos.dialect, "todos", "by_done") not in plan
    assert declared_index(todos.dialect, "todos", "by_owner") in plan
    assert "TEMP B-TREE" not in plan and "Sort" not in plan, plan
    second = todos.query(f".todos.owner={who}&sort=-todos.owner&after={cursor}", ADA)
    assert [r["todos"]["text"] for r in second] == [f"t{i}" for i in range(79, 59, -1)]


def test_a_filter_on_two_columns_of_an_index_walks_it(todos: AnyStore) -> None:
    _many(todos)
    todos.max_rows = 20
    filt = ".todos.done=true&sort=todos.done,todos.rank"
    plan = _plan(todos, filt)
    assert declared_index(todos.dialect, "todos", "by_done") in plan
    assert "TEMP B-TREE" not in plan and "Sort" not in plan, plan
    rows = todos.query(filt, ADA)
    assert [(r["todos"]["done"], r["todos"]["rank"]) for r in rows] == [(True, 0)] * 20


# -- declarations, valid or not ---------------------------------------------------------------

COLUMN_TYPES = {
    "string": ({"type": "string"}, st.text(max_size=5)),
    "number": ({"type": "number"}, st.integers(-5, 5)),
    "boolean": ({"type": "boolean"}, st.booleans()),
}
_names = st.sampled_from(["a", "b", "c", "d"])
_any_value = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3)


@st.composite
def declarations(draw: st.DrawFn) -> tuple[dict[str, Any], bool]:
    """A component of random columns, defaults and indexes, and whether it is right."""
    right = True
    props: dict[str, Any] = {}
    for name in draw(st.lists(_names, min_size=1, max_size=4, unique=True)):
        kind = draw(st.sampled_from(sorted(COLUMN_TYPES)))
        prop, values = COLUMN_TYPES[kind]
        prop = dict(prop)
        if draw(st.booleans()):
            if draw(st.booleans()):
                prop["default"] = draw(values)
            else:
                value = draw(_any_value)
                prop["default"] = value
                fits = value is not None and (
                    (kind == "string" and isinstance(value, str))
                    or (kind == "boolean" and isinstance(value, bool))
                    or (kind == "number" and isinstance(value, int) and not isinstance(value, bool))
                )
                right = right and fits
        props[name] = prop
    indexes: dict[str, list[str]] = {}
    for index in draw(st.lists(st.sampled_from(["by_x", "by_y", "Bad", "1x"]), unique=True)):
        cols = draw(st.lists(_names, min_size=1, max_size=3))
        indexes[index] = cols
        right = right and index in ("by_x", "by_y") and set(cols) <= set(props)
        right = right and len(set(cols)) == len(cols)
    required = draw(st.lists(_names, unique=True, max_size=2))
    right = right and set(required) <= set(props)
    body = {"properties": props, "indexes": indexes, "required": required}
    return {"$defs": {"thing": body}}, right


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(declared=declarations())
def test_a_declaration_deploys_and_reads_back_or_is_refused_whole(
    store: AnyStore, declared: tuple[dict[str, Any], bool]
) -> None:
    doc, right = declared
    before = store.schema()
    fresh = {"$defs": {**doc["$defs"], "thing": doc["$defs"]["thing"]}}
    if not right:
        with pytest.raises(DeployRefused):
            store.declare(fresh)
        assert store.schema() == before
        return
    try:
        store.declare(fresh)
    except DeployRefused as e:
        # the one thing a right declaration may meet: a column of another type before
        assert "a column keeps its type" in str(e)
        return
    body = doc["$defs"]["thing"]
    described = store.schema()["components"]["thing"]
    assert described["indexes"] == body["indexes"]
    for name, prop in body["properties"].items():
        details = described["details"][name]
        assert details.get("default") == prop.get("default")
        assert details["required"] == (name in body["required"] and "default" not in prop)
    assert Vocabulary.from_json(fresh).components["thing"].indexes == {
        k: tuple(v) for k, v in body["indexes"].items()
    }
    assert _indexes(store) == {declared_index(store.dialect, "thing", i) for i in body["indexes"]}


def test_a_cursor_of_another_value_reads_on_in_the_whole_order(todos: AnyStore) -> None:
    """The `=` leaves the column out of the cursor's condition only where the cursor holds
    that same value: another's cursor reads on from its own place in the order."""
    people = _many(todos)
    low, high = people[2].eid, people[9].eid
    todos.max_rows = 20
    cursor = todos.query(f".todos.owner={high}&sort=-todos.owner", ADA).cursor  # type: ignore[union-attr]
    after = todos.query(f".todos.owner={low}&sort=-todos.owner&after={cursor}", ADA)
    assert len(after) == 20  # every row of the lower owner comes after the higher's
    cursor = todos.query(f".todos.owner={low}&sort=-todos.owner", ADA).cursor  # type: ignore[union-attr]
    assert todos.query(f".todos.owner={high}&sort=-todos.owner&after={cursor}", ADA) == []
