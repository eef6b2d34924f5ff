"""Writing a run and reading it back, the way the run club's commands do."""

import sqlite3
from collections.abc import Callable
from pathlib import Path

from store_fixtures import ADA, BOB, RUNS, AnyStore

from pasture.caller import NOBODY
from pasture.store import open_store


def test_a_run_written_reads_back_with_who_logged_it(store: AnyStore) -> None:
    applied = store.apply(
        {
            "entity": {"eid": "$run"},
            "doc": {"title": "Run by Ada"},
            "jog": {"who": "Ada", "miles": 5},
        },
        ADA,
    )
    eid = applied.aliases["$run"]
    assert applied.entities == [eid]
    rows = store.query(".jog!&.created!", ADA)
    assert len(rows) == 1
    row = rows[0]
    assert row["kind"] == "jog"
    assert row["entity"] == {"eid": eid}
    assert row["jog"] == {"who": "Ada", "miles": 5, "at": None}
    assert row["created"]["by"] == {"eid": ADA.eid, "name": "Ada"}
    assert set(row) == {"kind", "entity", "jog", "created"}


def test_created_reads_back_who_made_the_entity_not_who_added_a_component(
    store: AnyStore,
) -> None:
    eid = store.apply({"entity": {"eid": "$n"}, "doc": {"title": "Notes"}}, ADA).aliases["$n"]
    (made,) = store.query(".doc!&.created!", ADA)
    store.apply({"entity": {"eid": eid}, "jog": {"who": "Bob", "miles": 2}}, BOB)
    store.apply({"entity": {"eid": eid}, "starred": {}}, BOB)
    (row,) = store.query(".jog!&.created!&.updated!&.starred?", ADA)
    assert (
        row["created"] == made["created"] == store.query(f"id={eid}&.created!", ADA)[0]["created"]
    )
    assert row["created"]["by"] == {"eid": ADA.eid, "name": "Ada"}
    assert row["updated"]["by"] == {"eid": BOB.eid, "name": "Bob"}
    assert row["starred"] == {}
    (person,) = store.query(".person!&.created!&.person.name=Bob", ADA)
    assert person["created"]["by"] == {"eid": BOB.eid, "name": "Bob"}


def test_nobody_stamps_by_null(store: AnyStore) -> None:
    store.apply({"jog": {"who": "Ann", "miles": 1}}, NOBODY)
    (row,) = store.query(".jog!&.created!", NOBODY)
    assert row["created"]["by"] is None


def test_the_vocabulary_survives_reopening_the_store(opener: Callable[[], AnyStore]) -> None:
    with opener() as s:
        s.declare(RUNS)
        s.apply({"jog": {"who": "Ada", "miles": 3}}, ADA)
    with opener() as s:
        assert [c.name for c in s.vocabulary.declared()] == ["jog", "recipe", "starred"]
        assert s.query(".jog.miles>=3", ADA)[0]["jog"]["miles"] == 3


def test_a_file_made_before_component_rows_carried_eids_reads_the_same(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with open_store(path) as s:
        s.declare(RUNS)
        s.apply([{"jog": {"who": "Ada", "miles": 3}, "doc": {"title": "Hills"}}], ADA)
        before = s.query(".jog!&.doc?&.created!", ADA)
    old = sqlite3.connect(path)  # the layout as it was: nothing of entity on a component row
    for name in ("c_jog", "c_doc", "c_person"):
        for column in ("_eid", "_created_at", "_created_by"):
            old.execute(f"ALTER TABLE {name} DROP COLUMN {column}")
    old.execute("DELETE FROM pasture_meta WHERE key = 'layout'")
    old.commit()
    old.close()
    with open_store(path) as s:
        assert s.query(".jog!&.doc?&.created!", ADA) == before
        assert s.query(".jog.who=Ada", ADA)[0]["entity"] == before[0]["entity"]
        assert s.query("hills", ADA)[0]["entity"] == before[0]["entity"]


def test_count_is_the_things_the_app_keeps_counted_by_the_database(store: AnyStore) -> None:
    assert store.count() == 0
    made = store.apply(
        [
            {"jog": {"who": "Ada"}, "doc": {"title": "Run"}},  # two components: once
            {"recipe": {"serves": 2}},
            {"starred": {}},  # a mark of the app's own
            {"doc": {"title": "A note"}},
            {"alias": {"name": "only an alias"}},  # the platform's, and no doc: not a thing
            {"comment": {"target": "$x"}},
            {"entity": {"eid": "$x"}, "doc": {"title": "x"}},
        ],
        ADA,
    )
    # Ada is kept as a person for bylines, and is no thing of the app
    assert store.count() == 5
    store.apply({"entity": {"eid": made.entities[1]}, "tombstone": {}}, ADA)
    assert store.count() == 4
    assert store.count() == len({r["entity"]["eid"] for r in _things(store)})


def _things(store: AnyStore) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for line in (".jog!", ".recipe!", ".starred!", ".doc!"):
        found = store.query(line, ADA)
        assert isinstance(found, list)
        rows.extend(found)
    return rows


def test_count_asks_one_question_of_sqlite(tmp_path: Path) -> None:
    with open_store(tmp_path / "app.db") as store:
        store.declare(RUNS)
        store.apply([{"jog": {"who": "Ada"}} for _ in range(50)], ADA)
        asked: list[str] = []
        store._db.set_trace_callback(asked.append)
        assert store.count() == 50
        store._db.set_trace_callback(None)
    assert len(asked) == 1 and asked[0].startswith("SELECT count(*) FROM (SELECT _e FROM c_jog")
