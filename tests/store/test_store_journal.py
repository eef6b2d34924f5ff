"""The journal: undoing one call puts back exactly what it changed, restoring to a moment puts
back the store as it was then, and an undo that would overwrite a later call is refused.

The property tests run random calls — new entities, columns set, components dropped, edges
added and taken away, tombstones — each under a call of its own, and hold the store's every
table, row by row, to what it was: before the call undone, or at the moment restored to.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import ADA, BOB, AnyStore, Clock

from pasture import calls
from pasture.errors import Conflict, Refused

Table = list[tuple[Any, ...]]


def dump(store: AnyStore) -> dict[str, Table]:
    """Every table an app's data is in, row by row (edges as a set: their order of adding is
    a column of its own on PostgreSQL), the journal and the search's own tables aside."""
    out: dict[str, Table] = {}
    with store._reading() as conn:
        names = sorted(
            t for t in store._tables(conn) if t == "entity" or t.startswith("c_") or t == "edge"
        )
        for name in names:
            cur = conn.execute(f"SELECT * FROM {name}")
            cols = [c[0] for c in cur.description]
            keep = [i for i, c in enumerate(cols) if c not in ("seq", "_fts")]
            out[name] = sorted((tuple(row[i] for i in keep) for row in cur.fetchall()), key=repr)
    return out


def as_call(store: AnyStore, bundles: Any, caller: Any = ADA) -> str:
    """Write `bundles` as one call of its own; its id."""
    call = calls.new_id()
    token = calls.mark(calls.CallMark(call, caller.eid, "cli"))
    try:
        store.apply(bundles, caller)
    finally:
        calls.unmark(token)
    return call


def undo(store: AnyStore, call: str, caller: Any = ADA) -> str:
    undoing = calls.new_id()
    token = calls.mark(calls.CallMark(undoing, caller.eid, "cli"))
    try:
        store.undo(call, caller)
    finally:
        calls.unmark(token)
    return undoing


# -- random calls ---------------------------------------------------------------------------
WHO = st.sampled_from(["Ada", "Bob", "Cy", None])
MILES = st.one_of(st.none(), st.integers(0, 30), st.floats(0, 50, allow_nan=False))
JOG = st.fixed_dictionaries({}, optional={"who": WHO, "miles": MILES})
DOC = st.fixed_dictionaries(
    {}, optional={"title": st.sampled_from(["Long run", "Hill repeats", "easy"]), "body": WHO}
)
OP = st.one_of(
    st.tuples(st.just("new"), JOG, st.one_of(st.none(), DOC)),
    st.tuples(st.just("set"), st.integers(0, 50), JOG),
    st.tuples(st.just("doc"), st.integers(0, 50), st.one_of(st.none(), DOC)),
    st.tuples(st.just("tomb"), st.integers(0, 50)),
    st.tuples(st.just("edge"), st.integers(0, 50), st.integers(0, 50), st.booleans()),
)
CALL = st.lists(OP, min_size=1, max_size=4)


def bundles_of(store: AnyStore, ops: list[Any]) -> list[dict[str, Any]]:
    """The bundles of one call, over the entities there are (a bundle per op, no entity
    named twice, so none is tombstoned and then written)."""
    live = list(
        dict.fromkeys(r["entity"]["eid"] for f in (".jog!", ".doc!") for r in store.query(f, ADA))
    )
    out: list[dict[str, Any]] = []
    named: set[str] = set()

    def pick(i: int) -> str | None:
        if not live:
            return None
        eid = live[i % len(live)]
        return None if eid in named else eid

    for n, op in enumerate(ops):
        if op[0] == "new":
            bundle: dict[str, Any] = {"entity": {"eid": f"$n{n}"}, "jog": op[1]}
            if op[2] is not None:
                bundle["doc"] = op[2]
            out.append(bundle)
            continue
        eid = pick(op[1])
        if eid is None:
            continue
        named.add(eid)
        if op[0] == "set":
            out.append({"entity": {"eid": eid}, "jog": op[2]})
        elif op[0] == "doc":
            out.append({"entity": {"eid": eid}, "doc": op[2]})
        elif op[0] == "tomb":
            out.append({"entity": {"eid": eid}, "tombstone": {}})
        else:
            child = live[op[2] % len(live)]
            out.append(
                {
                    "entity": {"eid": eid},
                    "edges": [{"type": "next", "child": child, "remove": op[3]}],
                }
            )
    return out


HOURS = itertools.count(1)
SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(before=st.lists(CALL, max_size=4), call=CALL)
def test_undo_puts_back_exactly_what_one_call_changed(
    store: AnyStore, before: list[list[Any]], call: list[Any]
) -> None:
    # Ada is a person of the store already (the store keeps its writers as persons, so
    # created.by names them: that is no change of a call's to undo)
    as_call(store, [{"jog": {"who": "seed"}}])
    for ops in before:
        bundles = bundles_of(store, ops)
        if bundles:
            as_call(store, bundles)
    bundles = bundles_of(store, call)
    if not bundles:
        return
    was = dump(store)
    made = as_call(store, bundles)
    after = dump(store)
    undoing = undo(store, made)
    assert dump(store) == was
    # and the undo is a call that can be undone: the call's change is back
    undo(store, undoing)
    assert dump(store) == after


@SETTINGS
@given(first=st.lists(CALL, min_size=1, max_size=3), later=st.lists(CALL, min_size=1, max_size=4))
def test_restore_puts_the_store_back_as_it_was_at_a_moment(
    store: AnyStore, clock: Clock, first: list[list[Any]], later: list[list[Any]]
) -> None:
    # each example's moment an hour after the last one's writes (the store is the same)
    moment = datetime.now(UTC) + timedelta(hours=next(HOURS))
    clock.now = moment
    as_call(store, [{"jog": {"who": "seed"}}])  # Ada is a person of the store by then
    for ops in first:
        bundles = bundles_of(store, ops)
        if bundles:
            as_call(store, bundles)
    then = dump(store)
    stamp = (moment + timedelta(seconds=1)).isoformat().replace("+00:00", "Z")
    for n, ops in enumerate(later):
        clock.now = moment + timedelta(seconds=2 + n)
        bundles = bundles_of(store, ops)
        if bundles:
            as_call(store, bundles)
    now = dump(store)
    clock.now = moment + timedelta(minutes=1)
    restoring = calls.new_id()
    token = calls.mark(calls.CallMark(restoring, ADA.eid, "cli"))
    try:
        restored = store.restore(stamp, ADA)
    finally:
        calls.unmark(token)
    assert dump(store) == then
    if restored.entities:  # (where the later calls changed something)
        undo(store, restoring)  # a restore can be undone too
    assert dump(store) == now
    clock.now = None


def test_an_undo_that_would_overwrite_a_later_call_is_refused_and_writes_nothing(
    store: AnyStore,
) -> None:
    made = as_call(store, [{"entity": {"eid": "$r"}, "jog": {"who": "Ada", "miles": 5}}])
    eid = store.query(".jog!", ADA)[0]["entity"]["eid"]
    as_call(store, [{"entity": {"eid": eid}, "doc": {"title": "Run by Ada"}}], BOB)
    later = as_call(store, [{"entity": {"eid": eid}, "jog": {"miles": 6}}], BOB)
    was = dump(store)
    with pytest.raises(Conflict) as refused:
        undo(store, made)
    sentence = str(refused.value)
    assert f"call {made} cannot be undone" in sentence
    assert "Run by Ada changed since" in sentence  # the row, by the name it reads as
    assert f"pasture undo {later}" in sentence  # and how to get past it
    assert dump(store) == was
    # undone newest first, each goes through, and the first call's row is gone
    undo(store, later)
    with pytest.raises(Conflict):
        undo(store, made)  # the doc's call is still in the way


@pytest.mark.parametrize("by", ["edge", "reference"])
def test_undoing_a_creation_a_later_call_points_at_is_refused_and_writes_nothing(
    store: AnyStore, by: str
) -> None:
    made = as_call(store, [{"entity": {"eid": "$c"}, "jog": {"who": "Coach Cy"}}])
    coach = store.query(".jog.who=Coach Cy", ADA)[0]["entity"]["eid"]
    pointing: dict[str, Any] = {"entity": {"eid": "$r"}, "doc": {"title": "Hill repeats"}}
    if by == "edge":
        pointing["edges"] = [{"type": "coached", "child": coach}]
    else:
        pointing["recipe"] = {"coach": coach}
    later = as_call(store, [pointing], BOB)
    was = dump(store)
    with pytest.raises(Conflict) as refused:
        undo(store, made)
    sentence = str(refused.value)
    assert f"call {made} cannot be undone" in sentence
    assert "Hill repeats changed since" in sentence  # the row that points at it, by name
    assert f"pasture undo {later}" in sentence
    assert dump(store) == was  # the later call's edge or reference is where it was
    undo(store, later)  # newest first, both go through, and nothing is left pointing
    undo(store, made)
    assert store.query(".jog!", ADA) == []
    assert store.query(".doc!", ADA) == []


def test_undo_of_a_tombstone_brings_back_the_edges_that_pointed_at_it(store: AnyStore) -> None:
    as_call(store, [{"entity": {"eid": "$a"}, "jog": {"who": "a"}}])
    a = store.query(".jog.who=a", ADA)[0]["entity"]["eid"]
    as_call(
        store,
        [{"entity": {"eid": "$b"}, "doc": {"title": "b"}, "edges": [{"type": "m", "child": a}]}],
    )
    was = dump(store)
    gone = as_call(store, [{"entity": {"eid": a}, "tombstone": {}}])
    assert not any(row for row in dump(store)["edge"])
    undo(store, gone)
    assert dump(store) == was
    found = store.query("b", ADA)  # the search finds what came back, too
    assert [r["doc"]["title"] for r in found] == ["b"]


def test_a_call_that_changed_nothing_has_nothing_to_undo(store: AnyStore) -> None:
    with pytest.raises(Refused) as refused:
        undo(store, calls.new_id())
    assert "changed nothing in this app's data" in str(refused.value)


def test_a_moment_older_than_the_journal_keeps_is_refused(store: AnyStore) -> None:
    with pytest.raises(Refused) as refused:
        store.restore("2000-01-01T00:00:00Z", ADA)
    assert "the journal keeps what changed for 30 days" in str(refused.value)


def test_old_lines_are_swept(store: AnyStore, clock: Clock) -> None:
    clock.now = datetime.now(UTC) - timedelta(days=40)
    old = as_call(store, [{"jog": {"who": "old"}}])
    clock.now = None
    store._swept = -1e9  # an hour has passed since the last sweep
    as_call(store, [{"jog": {"who": "new"}}])
    with pytest.raises(Refused):
        undo(store, old)  # its lines are gone with the days
