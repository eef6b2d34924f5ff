"""Writes: every rule a bundle follows, and the sentence for each one it breaks."""

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import ADA, BOB, RUNS, AnyStore, refuse_bad_batches

from pasture.caller import NOBODY
from pasture.errors import Conflict, Forbidden, NotFound, Refused
from pasture.store import fingerprint, open_store
from pasture.store.bundles import listed


def one(store: AnyStore, filter: str) -> dict[str, Any]:
    rows = store.query(filter, ADA)
    assert len(rows) == 1, rows
    return rows[0]


def refusal(store: AnyStore, bundles: Any, kind: type[Refused] = Refused) -> str:
    with pytest.raises(kind) as e:
        store.apply(bundles, ADA)
    return str(e.value)


def run(store: AnyStore, **jog: Any) -> str:
    return store.apply({"entity": {"eid": "$r"}, "jog": jog}, ADA).aliases["$r"]


def test_a_patch_changes_only_the_columns_named(store: AnyStore) -> None:
    eid = run(store, who="Ada", miles=5, at="2026-09-01")
    store.apply({"entity": {"eid": eid}, "jog": {"miles": 6}}, ADA)
    assert one(store, ".jog!")["jog"] == {"who": "Ada", "miles": 6, "at": "2026-09-01"}


def test_a_column_null_clears_it_and_a_component_null_drops_it(store: AnyStore) -> None:
    eid = store.apply(
        {"entity": {"eid": "$r"}, "jog": {"who": "Ada", "miles": 5}, "doc": {"title": "x"}}, ADA
    ).aliases["$r"]
    store.apply({"entity": {"eid": eid}, "jog": {"miles": None}, "doc": None}, ADA)
    row = one(store, ".jog!&.doc?")
    assert row["jog"] == {"who": "Ada", "miles": None, "at": None}
    assert row["doc"] is None
    assert store.query(".doc!", ADA) == []


def test_an_alias_is_one_entity_everywhere_in_the_call(store: AnyStore) -> None:
    applied = store.apply(
        [
            {"entity": {"eid": "$run"}, "jog": {"who": "Ada", "miles": 5}},
            {
                "entity": {"eid": "$said"},
                "doc": {"body": "felt good"},
                "comment": {"target": "$run"},
            },
        ],
        ADA,
    )
    assert set(applied.aliases) == {"$run", "$said"}
    assert applied.entities == [applied.aliases["$run"], applied.aliases["$said"]]
    row = one(store, ".comment!")
    assert row["comment"]["target"]["eid"] == applied.aliases["$run"]


def test_no_entity_key_mints_silently(store: AnyStore) -> None:
    applied = store.apply({"jog": {"who": "Ada"}}, ADA)
    assert applied.aliases == {}
    assert one(store, ".jog!")["entity"]["eid"] == applied.entities[0]


def test_the_same_eid_twice_in_one_call_is_refused(store: AnyStore) -> None:
    eid = run(store, who="Ada")
    text = refusal(
        store,
        [
            {"entity": {"eid": eid}, "jog": {"miles": 1}},
            {"entity": {"eid": eid}, "doc": {"title": "x"}},
        ],
    )
    assert "two bundles" in text and "one bundle" in text


def test_an_eid_that_does_not_exist_is_not_found(store: AnyStore) -> None:
    text = refusal(store, {"entity": {"eid": "0000000000000000"}, "jog": {"miles": 1}}, NotFound)
    assert "no entity 0000000000000000" in text


def test_a_tombstone_deletes_and_stands_alone(store: AnyStore) -> None:
    eid = store.apply(
        {"entity": {"eid": "$r"}, "jog": {"who": "Ada"}, "doc": {"title": "gone"}}, ADA
    ).aliases["$r"]
    assert "stands alone" in refusal(
        store, {"entity": {"eid": eid}, "tombstone": {}, "jog": {"miles": 1}}
    )
    assert "existing entity" in refusal(store, {"entity": {"eid": "$new"}, "tombstone": {}})
    store.apply({"entity": {"eid": eid}, "tombstone": {}}, ADA)
    assert store.query(".jog!", ADA) == []
    assert store.query("gone", ADA) == []
    refusal(store, {"entity": {"eid": eid}, "tombstone": {}}, NotFound)


def test_edges_join_existing_or_minted_entities(store: AnyStore) -> None:
    club = run(store, who="club")
    applied = store.apply(
        {
            "entity": {"eid": "$r"},
            "jog": {"who": "Ada"},
            "edges": [{"type": "member", "child": club}],
        },
        ADA,
    )
    row = one(store, f"id={applied.aliases['$r']}&*")
    assert row["edges"] == [{"type": "member", "child": {"eid": club}}]
    assert "an edge's child names an entity" in refusal(
        store, {"jog": {}, "edges": [{"type": "member"}]}
    )
    assert "edges is a list" in refusal(store, {"jog": {}, "edges": {"type": "member"}})
    refusal(store, {"jog": {}, "edges": [{"type": "m", "child": "ffffffffffffffff"}]}, NotFound)


def test_an_edge_is_removed_with_remove_true(store: AnyStore) -> None:
    club, team = run(store, who="club"), run(store, who="team")
    edges = [{"type": "member", "child": club}, {"type": "member", "child": team}]
    eid = store.apply({"entity": {"eid": "$r"}, "jog": {}, "edges": edges}, ADA).aliases["$r"]
    store.apply(
        {"entity": {"eid": eid}, "edges": [{"type": "member", "child": club, "remove": True}]},
        BOB,
    )
    row = one(store, f"id={eid}&*&.updated!")
    assert row["edges"] == [{"type": "member", "child": {"eid": team}}]
    assert row["updated"]["by"] == {"eid": BOB.eid, "name": "Bob"}
    # removing an edge that is not there changes nothing; a read row's child works too
    gone = {"type": "member", "child": row["edges"][0]["child"], "remove": True}
    store.apply({"entity": {"eid": eid}, "edges": [gone, {**gone, "type": "coach"}]}, ADA)
    assert "edges" not in one(store, f"id={eid}&*")
    both = [{"type": "member", "child": club}, {"type": "member", "child": club, "remove": True}]
    assert "both added and removed in one bundle" in refusal(
        store, {"entity": {"eid": eid}, "edges": both}
    )
    assert "remove is true or false" in refusal(
        store, {"entity": {"eid": eid}, "edges": [{"type": "member", "child": club, "remove": 1}]}
    )
    assert "edges" not in one(store, f"id={eid}&*")


def test_was_refuses_the_whole_batch_naming_the_column_that_moved(store: AnyStore) -> None:
    eid = run(store, who="Ada", miles=5)
    other = run(store, who="Bob", miles=1)
    stale = {
        "entity": {"eid": eid},
        "jog": {"miles": 7},
        "$was": {"jog": {"miles": fingerprint(4)}},
    }
    text = refusal(store, [{"entity": {"eid": other}, "jog": {"miles": 2}}, stale], Conflict)
    assert (
        text == "jog.miles changed since you read it — read it again and write your change on top"
    )
    assert [r["jog"]["miles"] for r in store.query(".jog!", ADA)] == [5, 1]
    read = one(store, f"id={eid}&.jog!")["jog"]["miles"]
    store.apply(
        {
            "entity": {"eid": eid},
            "jog": {"miles": 7},
            "$was": {"jog": {"miles": fingerprint(read)}},
        },
        ADA,
    )
    assert one(store, f"id={eid}&.jog!")["jog"]["miles"] == 7


def test_was_null_guards_still_empty(store: AnyStore) -> None:
    eid = run(store, who="Ada")
    store.apply(
        {"entity": {"eid": eid}, "jog": {"at": "2026-09-01"}, "$was": {"jog": {"at": None}}}, ADA
    )
    text = refusal(
        store,
        {"entity": {"eid": eid}, "jog": {"at": "2026-09-02"}, "$was": {"jog": {"at": None}}},
        Conflict,
    )
    assert "jog.at changed since you read it" in text


def test_a_reference_takes_an_eid_an_alias_a_read_back_pair_or_an_alias_name(
    store: AnyStore,
) -> None:
    coach = store.apply(
        {"entity": {"eid": "$c"}, "alias": {"name": "coach-kim"}, "person": {"name": "Kim"}}, ADA
    ).aliases["$c"]
    for ref in (coach, {"eid": coach, "name": "Kim"}, "coach-kim"):
        store.apply({"recipe": {"coach": ref}}, ADA)
    store.apply(
        [{"entity": {"eid": "$k"}, "person": {"name": "Lee"}}, {"recipe": {"coach": "$k"}}], ADA
    )
    coaches = [r["recipe"]["coach"] for r in store.query(".recipe!", ADA)]
    assert coaches[:3] == [{"eid": coach, "name": "Kim"}] * 3
    assert coaches[3]["name"] == "Lee"
    store.apply({"alias": {"name": "coach-kim"}}, ADA)
    assert "2 entities have the alias coach-kim" in refusal(
        store, {"recipe": {"coach": "coach-kim"}}
    )
    assert "no entity nobody-here" in refusal(store, {"recipe": {"coach": "nobody-here"}}, NotFound)


def test_a_row_read_back_can_be_handed_straight_back(store: AnyStore) -> None:
    coach = store.apply({"entity": {"eid": "$c"}, "person": {"name": "Kim"}}, ADA).aliases["$c"]
    store.apply({"recipe": {"serves": 2, "coach": coach}, "doc": {"title": "Soup"}}, ADA)
    row = one(store, ".recipe!&.doc!&.created!&.updated!")
    row["recipe"]["serves"] = 4
    store.apply(row, BOB)
    again = one(store, ".recipe!&.doc!&.updated!")
    assert again["recipe"]["serves"] == 4
    assert again["recipe"]["coach"] == {"eid": coach, "name": "Kim"}
    assert again["updated"]["by"] == {"eid": BOB.eid, "name": "Bob"}


def test_writing_an_undeclared_component_says_how_to_fix_it(store: AnyStore) -> None:
    assert refusal(store, {"loan": {"due": "x"}}) == (
        "loan is not a component of this app — declare it in vocab.json or use one of the "
        "platform's own: doc, alias, comment, person"
    )


def test_stamps_are_the_stores(store: AnyStore) -> None:
    assert (
        refusal(store, {"created": {"at": "2026-01-01"}})
        == "created is stamped by the store — leave it out"
    )
    assert refusal(store, {"updated": {}}) == "updated is stamped by the store — leave it out"


def test_an_unknown_column_lists_the_columns(store: AnyStore) -> None:
    assert (
        refusal(store, {"jog": {"pace": 3}})
        == "jog has no column pace — its columns are who, miles, at"
    )


def test_a_value_of_the_wrong_type_is_refused_and_text_converts(store: AnyStore) -> None:
    assert refusal(store, {"jog": {"miles": "many"}}) == "jog.miles is a number"
    assert refusal(store, {"recipe": {"vegan": "maybe"}}) == "recipe.vegan is true or false"
    assert "recipe.source is a web address" in refusal(store, {"recipe": {"source": "nope"}})
    assert "jog.at is a time" in refusal(store, {"jog": {"at": "tuesday"}})
    assert refusal(store, {"jog": {"who": {"a": 1}}}) == "jog.who is text"
    store.apply(
        {"jog": {"miles": "5.5", "at": "2026-09-01T12:00:00+02:00"}, "recipe": {"vegan": "true"}},
        ADA,
    )
    row = one(store, ".jog!&.recipe!")
    assert row["jog"]["miles"] == 5.5
    assert row["jog"]["at"] == "2026-09-01T10:00:00Z"
    assert row["recipe"]["vegan"] is True


def test_a_mark_is_written_empty(store: AnyStore) -> None:
    eid = run(store, who="Ada")
    store.apply({"entity": {"eid": eid}, "starred": {}}, ADA)
    assert one(store, ".starred!")["starred"] == {}


def test_the_caller_is_kept_as_a_person_and_renamed(store: AnyStore) -> None:
    run(store, who="x")
    store.apply({"jog": {"who": "y"}}, type(ADA)(ADA.eid, "Ada L."))
    bys = [r["created"]["by"] for r in store.query(".jog!&.created!", ADA)]
    assert bys == [{"eid": ADA.eid, "name": "Ada L."}] * 2
    assert one(store, ".person!")["person"] == {"name": "Ada L."}
    store.apply({"entity": {"eid": ADA.eid}, "tombstone": {}}, BOB)
    assert store.query(".person.name=Ada L.", ADA) == []
    run(store, who="z")  # Ada writes again: she is a person again, made when she was first
    (ada,) = store.query(".person.name=Ada&.created!", ADA)
    assert ada["entity"]["eid"] == ADA.eid
    assert ada["created"]["by"] == {"eid": ADA.eid, "name": "Ada"}


@pytest.mark.parametrize("who", ["herself", "another writer"])
@pytest.mark.parametrize(
    "write",
    [
        {"person": {"name": "Bob"}},
        {"person": None},
        {"alias": {"name": "Bob"}},
        {"doc": {"title": "Bob"}},
        {"person": None, "alias": {"name": "Bob"}},
    ],
)
def test_no_bundle_renames_a_person_the_store_keeps(
    store: AnyStore, who: str, write: dict[str, Any]
) -> None:
    """created.by names who wrote what: were a bundle to rename the person the store keeps
    for a caller, their rows (or the writer's own) would name someone else."""
    run(store, who="x")
    writer = ADA if who == "herself" else BOB
    before = store.query(".jog!&.created!", ADA)
    with pytest.raises(Forbidden) as refused:
        # in one bundle with a row of the writer's own, as a forger would send it
        store.apply([{"entity": {"eid": ADA.eid}, **write}, {"jog": {"who": "y"}}], writer)
    named = " or ".join(sorted(c for c in write if c in ("person", "alias", "doc")))
    assert refused.value.sentence == (
        f"{ADA.eid} is a person pasture keeps so that created.by names who wrote what — their "
        f"name comes from their sign-in, and no bundle writes its {named}; give an entity of "
        "your own a person instead"
    )
    assert store.query(".jog!&.created!", ADA) == before  # nothing written
    assert before[0]["created"]["by"] == {"eid": ADA.eid, "name": "Ada"}


def test_nobody_leaves_no_person(store: AnyStore) -> None:
    store.apply({"jog": {"who": "x"}}, NOBODY)
    assert store.query(".person!", NOBODY) == []


def test_the_kind_is_the_first_declared_kind_the_entity_carries(store: AnyStore) -> None:
    store.apply({"doc": {"title": "note"}}, ADA)
    store.apply({"starred": {}, "doc": {"title": "both"}, "recipe": {}, "jog": {}}, ADA)
    kinds = [r["kind"] for r in store.query(".doc!", ADA)]
    assert kinds == ["doc", "jog"]
    eid = store.query(".doc!", ADA)[1]["entity"]["eid"]
    store.apply({"entity": {"eid": eid}, "jog": None}, ADA)
    assert one(store, f"id={eid}")["kind"] == "recipe"


def test_one_bundle_is_a_list_of_one_and_nothing_else_is_a_write() -> None:
    bundle = {"doc": {"title": "note"}}
    assert listed(bundle) == [bundle] and listed((bundle, bundle)) == [bundle, bundle]
    for nothing in ("jog", b"jog", 5, None):
        with pytest.raises(Refused, match=r"^a write is a bundle or a list of bundles"):
            listed(nothing)


def test_a_bundle_that_is_not_an_object_is_refused(store: AnyStore) -> None:
    assert "a bundle is an object" in refusal(store, ["jog"])
    assert "a write is a bundle" in refusal(store, "jog")
    assert "$what is not part of a bundle" in refusal(store, {"$what": 1})


# -- all or nothing ----------------------------------------------------------------------


def dump(path: Path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return list(db.iterdump())
    finally:
        db.close()


def test_a_refused_batch_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with open_store(path) as s:
        s.declare(RUNS)
        eid = s.apply({"entity": {"eid": "$r"}, "jog": {"who": "Ada", "miles": 5}}, ADA).aliases[
            "$r"
        ]
    before = dump(path)
    raw_before = path.read_bytes()
    with open_store(path) as s:
        refuse_bad_batches(s, eid)
    assert dump(path) == before
    assert path.read_bytes() == raw_before


# -- random bundles round-trip ------------------------------------------------------------

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
jogs = st.fixed_dictionaries(
    {},
    optional={
        "who": texts | st.none(),
        "miles": st.integers(-(10**12), 10**12) | st.floats(-1e9, 1e9, allow_nan=False) | st.none(),
        "at": st.dates().map(lambda d: d.isoformat()) | st.none(),
    },
)
recipes = st.fixed_dictionaries(
    {},
    optional={
        "serves": st.integers(0, 1000),
        "cuisine": texts,
        "vegan": st.booleans(),
        "source": st.sampled_from(["https://example.com/a", "http://x.org/b?c=d"]),
    },
)
bundles = st.fixed_dictionaries(
    {},
    optional={
        "jog": jogs,
        "recipe": recipes,
        "doc": st.fixed_dictionaries({}, optional={"title": texts, "body": texts}),
        "alias": st.fixed_dictionaries({"name": texts}),
        "starred": st.just({}),
    },
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=st.lists(bundles, min_size=1, max_size=5))
def test_random_bundles_round_trip(
    store: AnyStore, backend: str, batch: list[dict[str, Any]]
) -> None:
    if backend == "postgres" and "\\u0000" in json.dumps(batch):
        # PostgreSQL keeps no NUL in text: the batch is refused whole, with the column named
        before = store.query("*", ADA)
        assert "holds a NUL character" in refusal(store, batch)
        assert store.query("*", ADA) == before
        return
    applied = store.apply(batch, ADA)
    for eid, written in zip(applied.entities, batch, strict=True):
        row = one(store, f"id={eid}&*")
        for comp, cols in written.items():
            declared = store.vocabulary.components[comp].columns
            expected = {c: cols.get(c) for c in declared}
            assert row[comp] == expected
        assert "created" in row


def test_a_tombstone_leaves_nothing_behind_for_the_next_entity(store: AnyStore) -> None:
    eid = store.apply({"entity": {"eid": "$r"}, "starred": {}, "jog": {"who": "x"}}, ADA).aliases[
        "$r"
    ]
    store.declare({"$defs": {"jog": {"properties": {"who": {"type": "string"}}}}})
    store.apply({"entity": {"eid": eid}, "tombstone": {}}, ADA)
    store.declare({"$defs": {"jog": {"properties": {"who": {"type": "string"}}}, "starred": {}}})
    store.apply({"jog": {"who": "y"}}, ADA)
    assert store.query(".starred!", ADA) == []
    assert [r["jog"]["who"] for r in store.query(".jog!", ADA)] == ["y"]
