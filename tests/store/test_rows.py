"""Reading rows back (pasture.store.rows): references as `{eid, name}`, what a walk brings,
a column nothing wrote as null, and an aggregate's one object — on every backend."""

from typing import Any

import pytest
from club_store import ADA_REF, BOB_REF, agg, q, whos
from club_store import club as club  # the fixture
from store_fixtures import ADA, BOB, AnyStore

from pasture.errors import Refused
from pasture.store.base import Answer
from pasture.store.rows import built, tally_key


def test_id_and_created_by_read_back_a_name(club: AnyStore) -> None:
    first = q(club, ".jog!")[0]["entity"]["eid"]
    (row,) = q(club, f"id={first}&.created!")
    assert row["created"]["by"] == {"eid": ADA.eid, "name": "Ada"}
    assert whos(club, ".jog!&.created.by=Bob") == ["Cy", "ada lovelace"]
    assert whos(club, f".jog!&.created.by={BOB.eid}") == ["Cy", "ada lovelace"]


def test_references_read_back_the_targets_name(club: AnyStore) -> None:
    (row,) = q(club, ".comment!")
    assert row["comment"]["target"]["name"] == "first"  # its alias.name, before its doc.title
    club.apply({"entity": {"eid": row["comment"]["target"]["eid"]}, "alias": None}, ADA)
    (row,) = q(club, ".comment!")
    assert row["comment"]["target"]["name"] == "Morning run"


def test_each_row_reads_back_its_own_references(club: AnyStore) -> None:
    made = club.apply(
        [
            {"entity": {"eid": "$c2"}, "comment": {"target": "$r"}},
            {"entity": {"eid": "$r"}, "doc": {"title": "Hill repeats"}},
            {"comment": {"target": "$gone"}},
            {"entity": {"eid": "$gone"}, "doc": {"title": "Gone soon"}},
            {"comment": {"target": "$bare"}},
            {"entity": {"eid": "$bare"}, "jog": {"miles": 1}},
        ],
        BOB,
    )
    gone = made.aliases["$gone"]
    club.apply({"entity": {"eid": gone}, "tombstone": {}}, BOB)
    rows = q(club, ".comment!&.created!")
    assert [(r["comment"]["target"], r["created"]["by"]) for r in rows] == [
        ({"eid": rows[0]["comment"]["target"]["eid"], "name": "first"}, ADA_REF),
        ({"eid": made.aliases["$r"], "name": "Hill repeats"}, BOB_REF),
        ({"eid": gone}, BOB_REF),  # a reference to a tombstoned entity keeps its eid
        ({"eid": made.aliases["$bare"]}, BOB_REF),
    ]
    assert [r["comment"]["target"]["eid"] for r in q(club, ".comment!&limit=2")] == [
        gone,
        made.aliases["$bare"],
    ]


def test_count_answers_one_number(club: AnyStore) -> None:
    assert agg(club, ".jog!&.count!") == {"count": 4}
    assert agg(club, ".jog.miles>5&.count!") == {"count": 2}
    assert agg(club, ".count!&.jog.who=nobody") == {"count": 0}
    assert agg(club, "river&.count!") == {"count": 2}
    # a window shapes rows: an aggregate counts every match
    assert agg(club, ".jog!&.count!&limit=2") == {"count": 4}
    assert agg(club, ".jog!&.count!&.limit=1") == {"count": 4}


def test_tally_counts_rows_by_each_value_most_first(club: AnyStore) -> None:
    club.apply({"jog": {"who": "Bob", "miles": 5}}, BOB)
    assert agg(club, ".tally=jog.who") == {
        "tally": {"Bob": 2, "Ada": 1, "Cy": 1, "ada lovelace": 1}
    }
    assert list(agg(club, ".tally=jog.who")["tally"]) == ["Bob", "Ada", "Cy", "ada lovelace"]
    assert agg(club, ".jog.miles<=5&.tally=jog.who") == {
        "tally": {"Ada": 1, "Bob": 1, "ada lovelace": 1}
    }
    # numbers and bools are keys as JSON writes them; a row without the value is not counted
    assert agg(club, ".tally=jog.miles") == {"tally": {"5": 2, "3": 1, "12.5": 1, "20": 1}}
    assert agg(club, ".tally=recipe.vegan") == {"tally": {"true": 1}}
    assert agg(club, ".tally=jog.at") == {"tally": {"2026-09-01": 1, "2026-09-03": 1}}
    # a reference is tallied by eid
    assert agg(club, ".jog!&.tally=created.by") == {"tally": {BOB.eid: 3, ADA.eid: 2}}
    assert agg(club, ".tally=comment.target.doc.title") == {"tally": {"Morning run": 1}}
    assert agg(club, ".jog.who=nobody&.tally=jog.who") == {"tally": {}}


def test_distinct_lists_a_columns_values_sorted(club: AnyStore) -> None:
    club.apply({"jog": {"who": "Ada", "miles": 5}}, BOB)
    assert agg(club, ".distinct=jog.who") == {"distinct": ["Ada", "Bob", "Cy", "ada lovelace"]}
    assert agg(club, ".distinct=jog.miles") == {"distinct": [3, 5, 12.5, 20]}
    assert agg(club, ".jog.miles>=5&.distinct=jog.who") == {"distinct": ["Ada", "Bob", "Cy"]}
    assert agg(club, ".distinct=recipe.vegan") == {"distinct": [True]}
    assert agg(club, ".distinct=created.by") == {"distinct": sorted([ADA.eid, BOB.eid])}
    assert agg(club, ".distinct=jog.at&limit=1") == {"distinct": ["2026-09-01", "2026-09-03"]}
    assert agg(club, ".jog.who=nobody&.distinct=jog.who") == {"distinct": []}


def test_a_walked_reference_brings_what_the_filter_names_there(club: AnyStore) -> None:
    morning = {"title": "Morning run", "body": "foggy by the river"}
    (row,) = q(club, ".comment!&.comment.target.doc?")
    first = row["comment"]["target"]["eid"]
    assert row == {
        "kind": "comment",
        "entity": row["entity"],
        "comment": {"target": {"eid": first, "name": "first", "doc": morning}},
    }
    # a predicate through a reference names what it reaches, too
    (row,) = q(club, ".comment.target.doc.title~=morning")
    assert row["comment"]["target"]["doc"] == morning
    (row,) = q(club, ".comment.target.jog.miles>=5&.comment.target.doc?")
    assert row["comment"]["target"]["jog"] == {"who": "Ada", "miles": 5, "at": "2026-09-01"}
    assert row["comment"]["target"]["doc"] == morning
    # the platform's stamps, and a reference on the far side walked again
    (row,) = q(club, ".comment!&.comment.target.created.by.person?")
    target = row["comment"]["target"]
    assert target["created"]["by"] == {**ADA_REF, "person": {"name": "Ada"}}
    assert target["created"]["at"].startswith("20")
    assert set(target) == {"eid", "name", "created"}


def test_what_a_reference_points_at_may_lack_what_is_asked(club: AnyStore) -> None:
    made = club.apply(
        [
            {"comment": {"target": "$bare"}},
            {"entity": {"eid": "$bare"}, "jog": {"miles": 1}},
            {"comment": {"target": "$gone"}},
            {"entity": {"eid": "$gone"}, "doc": {"title": "Gone soon"}},
        ],
        BOB,
    )
    gone = made.aliases["$gone"]
    club.apply({"entity": {"eid": gone}, "tombstone": {}}, BOB)  # nothing there now
    rows = q(club, ".comment!&.comment.target.doc?")
    assert [r["comment"]["target"].get("doc") for r in rows] == [
        {"title": "Morning run", "body": "foggy by the river"},
        None,
        None,
    ]
    assert rows[2]["comment"]["target"] == {"eid": gone, "doc": None}
    # `!` asks for it there
    (only,) = q(club, ".comment.target.doc!")
    assert only["comment"]["target"]["name"] == "first"
    assert len(q(club, ".comment.target.jog!")) == 2


def test_declared_columns_nothing_wrote_are_null(club: AnyStore) -> None:
    assert q(club, ".jog.who=Cy")[0]["jog"]["at"] is None


def test_a_tally_key_is_text_as_json_writes_it() -> None:
    assert [tally_key(v) for v in ("Ada", 5, 12.5, True, False)] == [
        "Ada",
        "5",
        "12.5",
        "true",
        "false",
    ]
    assert tally_key(1, as_bool=True) == "true"


def test_many_rows_are_built_with_the_collector_paused_and_it_runs_again_after(
    club: AnyStore,
) -> None:
    """A page of many rows is built with the cyclic collector paused (its rows are in no
    cycle), and the collector runs again once it is built, or refused; a collector paused
    by something else stays paused."""
    import gc

    club.apply([{"jog": {"who": f"r{i}", "miles": i}} for i in range(150)], ADA)
    seen: list[bool] = []

    def build(rows: list[tuple[Any, ...]], names: dict[str, Any]) -> Answer:
        seen.append(gc.isenabled())
        if not rows:
            raise Refused("nothing")
        return [{"n": len(rows)}]

    many, few = [(i,) for i in range(100)], [(1,)]
    assert built(build, many, {}) == [{"n": 100}] and gc.isenabled()
    assert built(build, few, {}) == [{"n": 1}] and gc.isenabled()
    with pytest.raises(Refused):
        built(build, [], {})
    assert gc.isenabled() and seen == [False, True, True]
    gc.disable()
    try:
        built(build, many, {})
        assert not gc.isenabled() and seen[-1] is False
    finally:
        gc.enable()
    assert len(club.query(".jog.miles>=0", ADA)) >= 150 and gc.isenabled()
