"""A transaction held open across writes and reads: all of it kept, or none; a snapshot
reads one moment and writes nothing — on every backend.

What a user sees: a mutation that writes twice and then fails leaves neither write; one
that writes and reads sees its own write before it is committed, while anyone else sees
nothing until it is; a query's reads agree with each other though someone writes between
them.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import ADA, BOB, AnyStore

from pasture.errors import Refused


def _jog(who: str, miles: int) -> dict[str, Any]:
    return {"entity": {"eid": "$new"}, "jog": {"who": who, "miles": miles}}


def _whos(store: AnyStore) -> list[str]:
    return sorted(r["jog"]["who"] for r in store.query(".jog!", ADA))


def _elsewhere(store: AnyStore) -> list[str]:
    """What another thread reads now."""
    seen: list[list[str]] = []
    reader = threading.Thread(target=lambda: seen.append(_whos(store)))
    reader.start()
    reader.join(30)
    assert seen, "a read from another thread did not come back"
    return seen[0]


@pytest.fixture
def runs(store: AnyStore) -> AnyStore:
    store.declare(
        {"$defs": {"jog": {"properties": {"who": {"type": "string"}, "miles": {"type": "number"}}}}}
    )
    store.apply(_jog("Ada", 3), ADA)
    return store


def test_what_a_transaction_writes_is_kept_when_it_commits(runs: AnyStore) -> None:
    held = runs.begin()
    runs.apply(_jog("Bo", 5), BOB)
    runs.apply(_jog("Cy", 1), BOB)
    assert _whos(runs) == ["Ada", "Bo", "Cy"]  # its own reads see its writes
    held.commit()
    assert _whos(runs) == ["Ada", "Bo", "Cy"]
    assert _elsewhere(runs) == ["Ada", "Bo", "Cy"]


def test_what_a_transaction_writes_is_gone_when_it_rolls_back(runs: AnyStore) -> None:
    held = runs.begin()
    runs.apply(_jog("Bo", 5), BOB)
    assert held.wrote
    held.rollback()
    assert _whos(runs) == ["Ada"]
    runs.apply(_jog("Di", 2), ADA)  # the store writes on as before afterwards
    assert _whos(runs) == ["Ada", "Di"]


def test_a_refused_write_inside_leaves_the_rest_to_the_transaction(runs: AnyStore) -> None:
    held = runs.begin()
    runs.apply(_jog("Bo", 5), BOB)
    with pytest.raises(Refused):
        runs.apply({"entity": {"eid": "$x"}, "jog": {"miles": "many"}}, BOB)
    held.rollback()
    assert _whos(runs) == ["Ada"]


def test_a_snapshot_reads_one_moment_and_cannot_write(runs: AnyStore) -> None:
    held = runs.begin(read_only=True)
    assert _whos(runs) == ["Ada"]
    writer = threading.Thread(target=lambda: runs.apply(_jog("Bo", 5), BOB))
    writer.start()
    writer.join(30)
    assert _whos(runs) == ["Ada"]  # the other's write came after its moment
    with pytest.raises(Refused, match="a query reads and cannot write"):
        runs.apply(_jog("Cy", 1), ADA)
    held.commit()
    assert _whos(runs) == ["Ada", "Bo"]


def test_a_thread_holds_one_transaction_at_a_time(runs: AnyStore) -> None:
    held = runs.begin()
    with pytest.raises(Refused, match="a transaction is open already"):
        runs.begin()
    held.commit()
    held.commit()  # ending it again does nothing
    held.rollback()
    runs.begin().rollback()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(st.tuples(st.sampled_from(["Bo", "Cy", "Di"]), st.booleans()), max_size=6),
    keep=st.booleans(),
)
def test_all_of_it_or_none(runs: AnyStore, steps: list[tuple[str, bool]], keep: bool) -> None:
    """Whatever a transaction writes (some of it refused), it is kept whole or not at all."""
    before = _whos(runs)
    held = runs.begin()
    written: list[str] = []
    try:
        for who, bad in steps:
            try:
                runs.apply(_jog(who, "x" if bad else 1), BOB)  # type: ignore[arg-type]
                written.append(who)
            except Refused:
                pass
        assert _elsewhere(runs) == before  # nobody else sees any of it yet
    finally:
        (held.commit if keep else held.rollback)()
    assert _whos(runs) == sorted(before + written if keep else before)
