"""vocab.json: what a deploy accepts, and every problem it refuses in one message."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from store_fixtures import ADA, RUNS, AnyStore

from pasture.errors import DeployRefused
from pasture.store import Vocabulary, open_store


def refused(doc: Any, previous: Vocabulary | None = None) -> str:
    with pytest.raises(DeployRefused) as e:
        Vocabulary.from_json(doc, previous)
    assert str(e.value).startswith("vocab.json: ")
    return str(e.value)


def test_types_map_onto_the_five_and_references() -> None:
    v = Vocabulary.from_json(RUNS)
    recipe = v.components["recipe"]
    assert {c.name: c.shown for c in recipe.columns.values()} == {
        "serves": "number",
        "cuisine": "text",
        "vegan": "bool",
        "source": "url",
        "coach": "reference",
    }
    assert recipe.columns["coach"].type == "text"
    assert v.components["jog"].columns["at"].type == "time"
    assert [c.name for c in v.declared()] == ["jog", "recipe", "starred"]
    assert [c.name for c in v.kinds()] == ["jog", "recipe"]
    assert v.components["starred"].columns == {}
    assert v.tools


def test_the_platforms_components_are_always_there() -> None:
    v = Vocabulary.from_json(None)
    assert set(v.components) == {"doc", "alias", "comment", "person", "created", "updated"}
    assert all(c.platform and not c.kind for c in v.components.values())
    assert not v.components["created"].writable
    assert not v.components["updated"].writable
    assert v.components["comment"].columns["target"].reference
    assert v.components["created"].columns["by"].reference
    assert v.components["created"].columns["at"].type == "time"


def test_tools_false_is_kept() -> None:
    assert not Vocabulary.from_json({"$defs": {}, "tools": False}).tools


def test_every_problem_comes_back_in_one_message() -> None:
    text = refused(
        {
            "$defs": {
                "Jog": {"properties": {"miles": {"type": "number"}}},
                "doc": {"properties": {"x": {"type": "string"}}},
                "loan": {
                    "properties": {
                        "due": {"type": "decimal"},
                        "Who": {"type": "string"},
                    }
                },
            }
        }
    )
    assert "'Jog' is not a component name" in text
    assert "doc is the platform's own component" in text
    assert "loan.due has type decimal" in text
    assert "string, number, integer or boolean" in text
    assert "'Who' is not a column name" in text
    assert text.count("; ") >= 3


def test_a_column_that_changes_type_is_refused_with_how_to_fix_it() -> None:
    before = Vocabulary.from_json(RUNS)
    after = {"$defs": {"jog": {"properties": {"miles": {"type": "string", "format": "uri"}}}}}
    text = refused(after, before)
    assert "jog.miles was number and is url now" in text
    assert "new name" in text


def test_a_string_may_loosen_to_text() -> None:
    before = Vocabulary.from_json(RUNS)
    after = {"$defs": {"jog": {"properties": {"at": {"type": "string"}}}}}
    assert Vocabulary.from_json(after, before).components["jog"].columns["at"].type == "text"


def test_the_store_refuses_a_type_change_even_after_the_column_left(
    opener: Callable[[], AnyStore],
) -> None:
    with opener() as s:
        s.declare(RUNS)
        s.declare({"$defs": {"jog": {"properties": {"who": {"type": "string"}}}}})
        with pytest.raises(DeployRefused) as e:
            s.declare({"$defs": {"jog": {"properties": {"miles": {"type": "boolean"}}}}})
        assert "jog.miles was number and is bool now" in str(e.value)
        # and nothing changed: the vocabulary in force is the last good one
        assert list(s.vocabulary.components["jog"].columns) == ["who"]


def test_a_refused_declare_keeps_the_old_vocabulary(store: AnyStore) -> None:
    with pytest.raises(DeployRefused):
        store.declare({"$defs": {"bad name": {}}})
    assert "jog" in store.vocabulary.components


def test_a_column_added_on_redeploy_reads_null_on_old_rows(store: AnyStore) -> None:
    store.apply({"jog": {"who": "Ada"}}, ADA)
    doc = {
        "$defs": {
            "jog": {
                "properties": {**RUNS["$defs"]["jog"]["properties"], "pace": {"type": "number"}}
            }
        }
    }
    store.declare(doc)
    (row,) = store.query(".jog!", ADA)
    assert row["jog"]["pace"] is None


def test_schema_lists_every_component_with_its_columns(store: AnyStore) -> None:
    schema = store.schema()
    assert schema["components"]["jog"]["columns"] == {
        "who": "text",
        "miles": "number",
        "at": "time",
    }
    assert schema["components"]["recipe"]["columns"]["coach"] == "reference"
    assert schema["components"]["starred"]["kind"] is False
    assert schema["components"]["created"]["writable"] is False
    assert schema["components"]["doc"]["platform"] is True
    assert schema["tools"] is True


def test_a_vocabulary_keeps_at_most_200_components_of_200_columns() -> None:
    """Each component is a table, and an app's count reads them all at once: 500 made
    SQLite refuse the query, and every member's `status` with it."""
    many = {"$defs": {f"c{n}": {"kind": False} for n in range(201)}}
    _, problems = Vocabulary.read(many)
    assert problems == [
        "a vocabulary declares at most 200 components, and this one 201 — keep what the app "
        "is about; a kind's details are its columns"
    ]
    wide = {"$defs": {"jog": {"properties": {f"c{n}": {"type": "string"} for n in range(201)}}}}
    _, problems = Vocabulary.read(wide)
    assert problems == ["jog: a component has at most 200 columns, not 201"]


def test_an_app_of_200_components_is_counted(tmp_path: Path) -> None:
    store = open_store(tmp_path / "app.db")
    store.declare({"$defs": {f"c{n}": {"kind": False} for n in range(200)}})
    store.apply([{f"c{n}": {}} for n in range(0, 200, 40)], ADA)
    assert store.count() == 5
    store.close()
