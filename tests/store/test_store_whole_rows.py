"""Whole rows (a search for words, `id=`, `*`) read every component an entity has, and skip
the tables empty at the moment of the read: a component written into an empty table is in
the next whole row, whoever wrote it and whether the read is in a transaction or not, and
a snapshot reads the tables as empty as they were when it began — on every backend."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import ADA, RUNS, AnyStore

WHOLE = ("hill", "*", "*&.jog!")


def _reads(store: AnyStore, eid: str) -> dict[str, Any]:
    """What each whole-row filter answers for `eid`, the row itself (all alike)."""
    rows = {f: [r for r in store.query(f, ADA) if r["entity"]["eid"] == eid] for f in WHOLE}
    rows["id="] = store.query(f"id={eid}", ADA)
    (first,) = rows["hill"]
    for filter, found in rows.items():
        assert found == [first], filter
    return first


def _run(store: AnyStore) -> str:
    written = store.apply(
        {"entity": {"eid": "$r"}, "jog": {"who": "Ada", "miles": 4}, "doc": {"title": "Hill"}},
        ADA,
    )
    return written.aliases["$r"]


def test_a_component_written_into_an_empty_table_is_in_the_next_whole_row(
    store: AnyStore,
) -> None:
    eid = _run(store)
    before = _reads(store, eid)  # recipe, alias, comment: no rows of them anywhere yet
    assert not {"recipe", "alias", "comment", "starred"} & before.keys()
    store.apply({"entity": {"eid": eid}, "alias": {"name": "hill-loop"}}, ADA)
    assert _reads(store, eid)["alias"] == {"name": "hill-loop"}
    store.apply({"entity": {"eid": eid}, "starred": {}, "recipe": {"serves": 2}}, ADA)
    row = _reads(store, eid)
    assert row["starred"] == {} and row["recipe"]["serves"] == 2 and row["kind"] == "jog"
    store.apply({"entity": {"eid": eid}, "alias": None, "recipe": None}, ADA)  # empty again
    assert not {"alias", "recipe"} & _reads(store, eid).keys()
    assert _reads(store, eid)["starred"] == {}


def test_a_transaction_reads_the_components_it_writes_into_empty_tables(
    store: AnyStore,
) -> None:
    eid = _run(store)
    _reads(store, eid)
    held = store.begin()
    store.apply({"entity": {"eid": eid}, "alias": {"name": "hill-loop"}}, ADA)
    assert _reads(store, eid)["alias"] == {"name": "hill-loop"}
    held.rollback()
    assert "alias" not in _reads(store, eid)


def test_another_writer_fills_an_empty_table_and_a_snapshot_does_not_see_it(
    store: AnyStore, opener: Callable[[], AnyStore]
) -> None:
    eid = _run(store)
    _reads(store, eid)
    other = opener()  # another process's store on the same data
    try:
        other.declare(RUNS)
        snapshot = store.begin(read_only=True)
        assert "alias" not in _reads(store, eid)
        other.apply({"entity": {"eid": eid}, "alias": {"name": "hill-loop"}}, ADA)
        assert "alias" not in _reads(store, eid)  # one moment: the table empty in it
        snapshot.commit()
        assert _reads(store, eid)["alias"] == {"name": "hill-loop"}
    finally:
        other.close()


def test_a_search_lists_the_edges_of_what_it_finds_once_the_app_keeps_any(
    store: AnyStore,
) -> None:
    eid = _run(store)
    assert "edges" not in _reads(store, eid)  # no edge anywhere: none looked for
    club = store.apply({"doc": {"title": "Club"}}, ADA).entities[0]
    store.apply({"entity": {"eid": eid}, "edges": [{"type": "member", "child": club}]}, ADA)
    edges = [{"type": "member", "child": {"eid": club, "name": "Club"}}]
    assert _reads(store, eid)["edges"] == edges
    for _ in range(3):  # searches again and again: each read leaves its connection idle
        assert [r["entity"]["eid"] for r in store.query("club", ADA)] == [club]
    store.apply({"entity": {"eid": eid}, "alias": {"name": "hill-loop"}}, ADA)
    assert _reads(store, eid)["alias"] == {"name": "hill-loop"}


def test_a_read_in_a_transaction_names_what_its_rows_refer_to(store: AnyStore) -> None:
    eid = _run(store)
    outside = _reads(store, eid)
    held = store.begin()
    try:
        inside = _reads(store, eid)
        assert inside["created"]["by"] == {"eid": ADA.eid, "name": "Ada"}
        assert inside == outside
    finally:
        held.rollback()


# what each step writes into the run (or takes away: None), by the component it touches
_WRITES: dict[str, Callable[[str], dict[str, Any]]] = {
    "alias": lambda club: {"alias": {"name": "hill-loop"}},
    "recipe": lambda club: {"recipe": {"serves": 2}},
    "starred": lambda club: {"starred": {}},
    "comment": lambda club: {"comment": {"target": club}},
    "edges": lambda club: {"edges": [{"type": "member", "child": club}]},
}
_UNWRITES: dict[str, Callable[[str], dict[str, Any]]] = {
    "edges": lambda club: {"edges": [{"type": "member", "child": club, "remove": True}]},
}


def _change(name: str, adds: bool, club: str) -> dict[str, Any]:
    """What a bundle holds to give the run `name` (`adds`), or to take it away."""
    if adds:
        return _WRITES[name](club)
    return _UNWRITES[name](club) if name in _UNWRITES else {name: None}


_STEPS = st.lists(
    st.tuples(st.sampled_from(sorted(_WRITES)), st.booleans(), st.booleans()),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=_STEPS)
def test_whole_rows_have_every_component_whoever_fills_or_empties_its_table(
    store: AnyStore, opener: Callable[[], AnyStore], steps: list[tuple[str, bool, bool]]
) -> None:
    """Any order of writes that fill a component's table and empty it again, by this store or
    by another process's, each followed by the whole reads: each read has exactly the
    components the run has then, and its edges (each example ends with every table it
    touched empty again, as the next one begins)."""
    other = opener()
    try:
        other.declare(RUNS)
        eid = _run(store)
        club = store.apply({"jog": {"who": "Club"}}, ADA).entities[0]
        has: set[str] = set()
        for name, adds, by_other in steps:
            writer = other if by_other else store
            writer.apply({"entity": {"eid": eid}, **_change(name, adds, club)}, ADA)
            has = has | {name} if adds else has - {name}
            row = _reads(store, eid)
            assert {"alias", "recipe", "starred", "comment", "edges"} & row.keys() == has
            if "comment" in has:
                assert row["comment"] == {"target": {"eid": club}}
            if "edges" in has:
                assert row["edges"] == [{"type": "member", "child": {"eid": club}}]
        undone: dict[str, Any] = {"entity": {"eid": eid}}
        for n in has:
            undone.update(_change(n, False, club))
        store.apply(undone, ADA)
        assert not {"alias", "recipe", "starred", "comment", "edges"} & _reads(store, eid).keys()
    finally:
        other.close()
