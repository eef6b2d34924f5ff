"""Several writers on one SQLite file: each sees what the others committed.

A store remembers a little between its writes (the caller it keeps as a
person, the last entity number); these tests write through two connections to
one file, and from real processes at once, and read back what a person sees.
"""

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from store_fixtures import ADA, BOB, RUNS

from pasture.caller import Caller
from pasture.errors import NotFound
from pasture.store import SqliteStore, open_store


@pytest.fixture
def two(tmp_path: Path) -> Any:
    first = open_store(tmp_path / "app.db")
    first.declare(RUNS)
    second = open_store(tmp_path / "app.db")
    yield first, second
    first.close()
    second.close()


def run(store: SqliteStore, who: str, caller: Caller = ADA) -> str:
    applied = store.apply({"entity": {"eid": "$r"}, "jog": {"who": who}}, caller)
    return applied.aliases["$r"]


def listing(store: SqliteStore) -> list[tuple[str, Any]]:
    return [(r["jog"]["who"], r["created"]["by"]) for r in store.query(".jog!&.created!", ADA)]


def test_two_connections_writing_in_turn_lose_nothing(two: Any) -> None:
    first, second = two
    for i in range(5):
        run(first, f"a{i}")
        run(second, f"b{i}", BOB)
    by_ada = {"eid": ADA.eid, "name": "Ada"}
    by_bob = {"eid": BOB.eid, "name": "Bob"}
    expected = [(w, by) for i in range(5) for w, by in ((f"a{i}", by_ada), (f"b{i}", by_bob))]
    assert listing(first) == expected
    assert listing(second) == expected


def test_a_rename_by_another_writer_is_seen_by_the_next_write(two: Any) -> None:
    first, second = two
    run(first, "x")
    run(second, "y", Caller(ADA.eid, "Ada L."))
    assert {by["name"] for _, by in listing(first)} == {"Ada L."}
    run(first, "z")  # the first writer knows her as Ada: her name is Ada again
    assert {by["name"] for _, by in listing(second)} == {"Ada"}


def test_a_person_taken_away_by_another_writer_is_kept_again(two: Any) -> None:
    first, second = two
    run(first, "x")
    second.apply({"entity": {"eid": ADA.eid}, "tombstone": {}}, BOB)
    assert second.query(".person.name=Ada", ADA) == []
    run(first, "y")
    (ada,) = second.query(".person.name=Ada", ADA)
    assert ada["entity"]["eid"] == ADA.eid
    assert listing(second)[-1] == ("y", {"eid": ADA.eid, "name": "Ada"})


def test_a_person_taken_away_by_the_same_writer_is_kept_again(two: Any) -> None:
    first, _ = two
    run(first, "x")
    first.apply({"entity": {"eid": ADA.eid}, "tombstone": {}}, BOB)
    run(first, "y")
    assert listing(first)[-1] == ("y", {"eid": ADA.eid, "name": "Ada"})
    first.apply({"entity": {"eid": ADA.eid}, "tombstone": {}}, BOB)
    run(first, "z")
    assert listing(first)[-1] == ("z", {"eid": ADA.eid, "name": "Ada"})


def test_a_refused_first_write_leaves_no_person_behind_for_the_next(tmp_path: Path) -> None:
    store = open_store(tmp_path / "app.db")
    store.declare(RUNS)
    with pytest.raises(NotFound):
        store.apply({"entity": {"eid": "0000000000000000"}, "jog": {"who": "x"}}, ADA)
    assert store.query(".person!", ADA) == []
    run(store, "y")
    assert listing(store) == [("y", {"eid": ADA.eid, "name": "Ada"})]
    store.close()


def test_an_entity_written_by_another_writer_takes_no_number_twice(two: Any) -> None:
    first, second = two
    one = run(first, "a")
    second.apply([{"jog": {"who": f"b{i}"}} for i in range(3)], BOB)
    other = run(first, "c")
    second.apply({"entity": {"eid": other}, "tombstone": {}}, BOB)
    last = run(first, "d")
    assert [w for w, _ in listing(second)] == ["a", "b0", "b1", "b2", "d"]
    eids = {r["jog"]["who"]: r["entity"]["eid"] for r in second.query(".jog!", ADA)}
    assert (eids["a"], eids["d"]) == (one, last)


WRITER = """
import sys
from pasture.caller import Caller
from pasture.store import open_store

store = open_store(sys.argv[1])
me = Caller(sys.argv[2], sys.argv[3])
for i in range(int(sys.argv[4])):
    store.apply({"entity": {"eid": "$r"}, "jog": {"who": f"{sys.argv[3]} {i}"},
                 "doc": {"title": f"run {i} of {sys.argv[3]}"}}, me)
store.close()
"""


@pytest.mark.processes
def test_processes_writing_one_file_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    store = open_store(path)
    store.declare(RUNS)
    writers = [("a1a1a1a1a1a1a1a1", "Ada"), ("b2b2b2b2b2b2b2b2", "Bob"), ("c3c3c3c3c3c3c3c3", "Cy")]
    processes = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), eid, name, "40"])
        for eid, name in writers
    ]
    run(store, "here")
    for p in processes:
        assert p.wait(timeout=120) == 0
    run(store, "after")
    rows = store.query(".jog!&.created!", ADA)
    assert len(rows) == 3 * 40 + 2
    for eid, name in writers:
        mine = [r for r in rows if r["created"]["by"]["eid"] == eid]
        assert [r["jog"]["who"] for r in mine if r["jog"]["who"] not in ("here", "after")] == [
            f"{name} {i}" for i in range(40)
        ]
        assert {r["created"]["by"]["name"] for r in mine} == {name}
    assert len(store.query("run", ADA)) == 3 * 40  # every doc is in the full text
    assert {p["person"]["name"] for p in store.query(".person!", ADA)} == {"Ada", "Bob", "Cy"}
    store.close()
