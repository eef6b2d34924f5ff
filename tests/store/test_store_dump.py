"""An app's store as JSON lines and back (`pasture.store.dump`): a generated store dumped and
loaded into an empty one on the other backend equals its source row by row — eids, stamps,
kinds, names, references and edges — and reads back the same; lines that are not a store's
are refused with every problem, nothing written."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import ADA, BOB, RUNS, AnyStore, Clock

from helpers import pg_server
from pasture.caller import Caller
from pasture.store import open_store
from pasture.store.dialect import POSTGRES, SQLITE
from pasture.store.dump import check, check_header, dump, empty, is_empty, load

CY = Caller("c3c3c3c3c3c3c3c3", "Cy")
PAIRS = [("sqlite", "postgres"), ("postgres", "sqlite"), ("sqlite", "sqlite")]
START = datetime(2026, 9, 1, 6, 0, tzinfo=UTC)

words = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=0, max_size=12
)
numbers = st.one_of(
    st.integers(-(10**6), 10**6), st.floats(-1e6, 1e6, allow_nan=False).map(lambda f: round(f, 3))
)


@st.composite
def parts(draw: st.DrawFn) -> dict[str, Any]:
    """Some components of a new or patched entity, as a bundle writes them."""
    out: dict[str, Any] = {}
    if draw(st.booleans()):
        out["jog"] = {
            k: v
            for k, v in {
                "who": draw(st.none() | words),
                "miles": draw(st.none() | numbers),
                "at": draw(st.none() | st.just("2026-09-01T07:00:00Z")),
            }.items()
            if v is not None
        }
    if draw(st.booleans()):
        out["recipe"] = {"serves": draw(st.integers(1, 12)), "vegan": draw(st.booleans())}
        if draw(st.booleans()):
            out["recipe"]["source"] = "https://example.com/" + draw(st.sampled_from("abc"))
    if draw(st.booleans()):
        out["doc"] = {"title": draw(words), "body": draw(words)}
    if draw(st.booleans()):
        out["starred"] = {}
    return out


@st.composite
def histories(draw: st.DrawFn) -> list[tuple[Caller, int, list[dict[str, Any]]]]:
    """Batches of bundles, each by someone at some minute: new entities (some named by an
    alias, some pointing at others), patches, dropped components, edges, tombstones."""
    batches: list[tuple[Caller, int, list[dict[str, Any]]]] = []
    made = 0  # entities made so far
    named: list[str] = []  # the alias names of those made in earlier batches
    for minute in range(draw(st.integers(1, 6))):
        bundles: list[dict[str, Any]] = []
        naming: list[str] = []
        for _ in range(draw(st.integers(1, 4))):
            bundle = draw(parts())
            if draw(st.booleans()):
                bundle["alias"] = {"name": f"thing-{made}"}
                naming.append(f"thing-{made}")
            if named and draw(st.booleans()):
                coach = draw(st.sampled_from(named))
                bundle.setdefault("recipe", {})["coach"] = coach
                kind = draw(st.sampled_from(["likes", "runs with"]))
                bundle["edges"] = [{"type": kind, "child": coach}]
            bundles.append(bundle)
            made += 1
        named.extend(naming)
        batches.append((draw(st.sampled_from([ADA, BOB, CY])), minute, bundles))
    return batches


def written(store: AnyStore, clock: Clock, history: list[Any], later: list[Any]) -> None:
    """The history applied, then patches, drops and tombstones by alias names."""
    for who, minute, bundles in history:
        clock.now = START + timedelta(minutes=minute)
        store.apply(bundles, who)
    for who, minute, kind, name in later:
        clock.now = START + timedelta(hours=1, minutes=minute)
        found = store.query(f".alias.name={json.dumps(name)}", ADA)
        if not found:
            continue
        eid = found[0]["entity"]["eid"]
        bundle: dict[str, Any] = {"entity": {"eid": eid}}
        if kind == "tombstone":
            bundle["tombstone"] = {}
        elif kind == "drop":
            bundle["doc"] = None
        else:
            bundle["jog"] = {"miles": 42}
        store.apply(bundle, who)


laters = st.lists(
    st.tuples(
        st.sampled_from([ADA, BOB]),
        st.integers(0, 50),
        st.sampled_from(["tombstone", "drop", "patch"]),
        st.integers(0, 20).map(lambda n: f"thing-{n}"),
    ),
    max_size=4,
)


def rows_of(store: AnyStore) -> dict[str, list[tuple[Any, ...]]]:
    """Every row the store keeps, in its order, without its own integers: the entities, each
    component table's rows by eid, the edges by parent eid in the order they were added."""
    d = store.dialect
    out: dict[str, list[tuple[Any, ...]]] = {}
    with store._reading() as conn:
        out["entity"] = [
            tuple(r)
            for r in conn.execute(
                "SELECT eid, kind, name, created_at, created_by, updated_at, updated_by "
                "FROM entity ORDER BY _e"
            )
        ]
        for comp, cols in sorted(_physical(store, conn).items()):
            names = "".join(f', t."{c}"' for c in cols)
            found = conn.execute(
                f"SELECT e.eid, t._eid, t._created_at, t._created_by{names} FROM c_{comp} t "
                "JOIN entity e ON e._e = t._e ORDER BY e._e"
            )
            out[comp] = [tuple(_plain(v) for v in r) for r in found]
        out["edge"] = [
            tuple(r)
            for r in conn.execute(
                "SELECT p.eid, g.type, g.child FROM edge g JOIN entity p ON p._e = g.parent "
                f"ORDER BY p._e, g.{d.edge_seq}"
            )
        ]
    return out


def _physical(store: AnyStore, conn: Any) -> dict[str, list[str]]:
    """Every component table and its columns (a mark's none)."""
    out: dict[str, list[str]] = {t[2:]: [] for t in store._tables(conn) if t.startswith("c_")}
    for comp, col, _ in conn.execute("SELECT component, col, type FROM pasture_columns"):
        out[comp].append(col)
    return {c: sorted(cols) for c, cols in out.items()}


def _plain(value: Any) -> Any:
    """A value as both databases compare: a bool as 0 or 1, a whole number as an int."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


@pytest.fixture
def openers(
    request: pytest.FixtureRequest, tmp_path: Path, clock: Clock
) -> Iterator[Callable[[str], AnyStore]]:
    """A fresh store on a backend each time it is called (all on `clock`), closed at the end."""
    opened: list[AnyStore] = []

    def open_one(backend: str) -> AnyStore:
        if backend == "sqlite":
            store: AnyStore = open_store(tmp_path / f"s{len(opened)}.db", clock=clock)
        else:
            from pasture.store.postgres import open_postgres_store

            url = request.getfixturevalue("pg_url")
            store = open_postgres_store(url, pg_server.fresh_schema(), clock=clock)
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()


def dumped(store: AnyStore) -> tuple[dict[str, Any], list[str]]:
    lines: list[str] = []
    header = dump(store, lines.append)
    return header, lines


def moved(source: AnyStore, target: AnyStore) -> tuple[dict[str, Any], list[str]]:
    header, lines = dumped(source)
    assert check_header(header) == []
    assert check(header, lines, target.dialect) == []
    target.declare(header["vocabulary"])
    assert load(target, header, lines) == len(lines)
    return header, lines


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=["-".join(p) for p in PAIRS])
@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=histories(), later=laters)
def test_a_store_moved_as_lines_equals_its_source_row_by_row(
    openers: Callable[[str], AnyStore],
    clock: Clock,
    source: str,
    target: str,
    history: Any,
    later: Any,
) -> None:
    src = openers(source)
    src.declare(RUNS)
    written(src, clock, history, later)
    dst = openers(target)
    _, lines = moved(src, dst)
    assert rows_of(dst) == rows_of(src)
    for line in ("*", ".recipe.coach.alias.name~=thing", "limit=3", ".jog.miles>=0"):
        assert dst.query(line, ADA) == src.query(line, ADA)
    # and dumped again it says the same, line for line
    assert dumped(dst)[1] == lines


@pytest.mark.parametrize(("source", "target"), PAIRS[:2], ids=["-".join(p) for p in PAIRS[:2]])
def test_a_loaded_store_writes_on_after_its_last_entity(
    openers: Callable[[str], AnyStore], source: str, target: str
) -> None:
    src = openers(source)
    src.declare(RUNS)
    src.apply([{"jog": {"who": "Ada", "miles": 5}}, {"doc": {"title": "hill repeats"}}], ADA)
    dst = openers(target)
    moved(src, dst)
    applied = dst.apply({"jog": {"who": "Bob", "miles": 3}}, BOB)
    rows = dst.query(".jog!&.created!", ADA)
    assert [r["jog"]["who"] for r in rows] == ["Ada", "Bob"]
    assert rows[-1]["entity"]["eid"] == applied.entities[0]
    assert [r["doc"]["title"] for r in dst.query("hill", ADA)] == ["hill repeats"]
    assert rows[0]["created"]["by"] == {"eid": ADA.eid, "name": "Ada"}


@pytest.mark.parametrize(("source", "target"), PAIRS[:2], ids=["-".join(p) for p in PAIRS[:2]])
def test_a_component_a_later_vocabulary_dropped_comes_along(
    openers: Callable[[str], AnyStore], source: str, target: str
) -> None:
    src = openers(source)
    src.declare({"$defs": {"shoe": {"properties": {"brand": {"type": "string"}}}}})
    src.apply({"shoe": {"brand": "Hoka"}}, ADA)
    src.declare(RUNS)  # shoe is no longer declared; its rows stay for a rollback
    dst = openers(target)
    header, _ = moved(src, dst)
    assert header["columns"]["shoe"] == {"brand": "text"}
    assert rows_of(dst)["shoe"] == rows_of(src)["shoe"]
    dst.declare({"$defs": {"shoe": {"properties": {"brand": {"type": "string"}}}}})
    assert [r["shoe"]["brand"] for r in dst.query(".shoe!", ADA)] == ["Hoka"]


def test_lines_that_are_not_a_store_s_say_every_problem(openers: Callable[[str], AnyStore]) -> None:
    src = openers("sqlite")
    src.declare(RUNS)
    src.apply([{"jog": {"who": "Ada", "miles": 5}}, {"jog": {"who": "Bob\x00", "miles": 1}}], ADA)
    header, lines = dumped(src)
    first = json.loads(lines[0])
    bad = [
        "{not json",
        json.dumps({**first, "components": {"shoe": {}}}),
        json.dumps({**first, "eid": "x" * 8, "components": {"jog": {"miles": "far"}}}),
        lines[0],
        lines[-1],
    ]
    said = check(header, bad, POSTGRES)
    assert said == [
        "data line 1 is not JSON",
        "data line 2: shoe is no component of the store",
        "data line 3: jog.miles is not a number",
        f"data line 4: {first['eid']} is on an earlier line too",
        "data line 5: jog.who holds a NUL character, which PostgreSQL cannot keep",
        f"it says its store has {len(lines)} entities, and it has 5",
    ]
    # SQLite keeps a NUL: only the shapes are wrong there
    assert "NUL" not in " ".join(check(header, bad, SQLITE))
    assert check_header({"vocabulary": [], "columns": {"jog": {"miles": "float"}}}) == [
        "its store's vocabulary is not an object",
        "its store's columns are not a component's columns and their types "
        "(text, number, bool, time, url, reference)",
        "its store's count of entities is not a whole number",
    ]
    header["columns"]["jog"]["miles"] = "text"
    assert check_header(header) == [
        "its store's jog.miles holds a text, and its vocabulary declares a number"
    ]
    assert check_header({**header, "vocabulary": {"$defs": {"jog": 5}}})[0].startswith(
        "its store's vocabulary is not one pasture declares (vocab.json: "
    )


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_an_emptied_store_keeps_nothing(openers: Callable[[str], AnyStore], backend: str) -> None:
    store = openers(backend)
    store.declare(RUNS)
    assert is_empty(store)
    store.apply(
        [
            {"entity": {"eid": "$a"}, "jog": {"who": "Ada"}},
            {"jog": {"who": "Cy"}, "edges": [{"type": "x", "child": "$a"}]},
        ],
        ADA,
    )
    assert not is_empty(store)
    empty(store)
    assert is_empty(store)
    assert all(rows == [] for rows in rows_of(store).values())
    store.apply({"jog": {"who": "Bob"}}, BOB)  # and writes on
    assert [r["jog"]["who"] for r in store.query(".jog!", ADA)] == ["Bob"]
