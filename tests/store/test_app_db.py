"""`ctx.db`: a table's rows read and written as a handler does, on every backend.

The property: whatever rows there are, a read by the index with `eq` on its column, in
either order, answers exactly the rows a plain Python filter and sort of them would — and
so does walking it page by page with `paginate`, every row once; `take(n)` is its first n.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import ADA, BOB, AnyStore

from pasture import boolean, number, string, table, user_id
from pasture.commands.app_db import Database
from pasture.commands.app_tables import schema_document
from pasture.commands.appstore import StoreAsCaller
from pasture.errors import Refused

SCHEMA = {
    "todos": table(
        text=string(), done=boolean().default(False), owner=user_id(), rank=number().optional()
    )
    .index("by_owner", ["owner"])
    .index("by_owner_rank", ["owner", "rank"]),
}


@pytest.fixture
def db(store: AnyStore) -> Database:
    tables, problems = schema_document(SCHEMA)
    assert problems == []
    store.declare({"$defs": tables})
    StoreAsCaller(store, BOB).apply({"entity": {"eid": "$b"}, "doc": {"title": "Bob was here"}})
    return Database(StoreAsCaller(store, ADA))


def test_a_row_is_plain_json(db: Database) -> None:
    todo_id = db.todos.insert({"text": "milk", "owner": ADA.eid})
    row = db.todos.get(todo_id)
    assert row == {
        "id": todo_id,
        "created_at": row["created_at"] if row else None,
        "text": "milk",
        "done": False,
        "owner": ADA.eid,
        "rank": None,
    }
    db.todos.update(todo_id, {"done": True})
    assert db.todos.get(todo_id)["done"] is True  # type: ignore[index]
    db.todos.replace(todo_id, {"text": "oat milk", "owner": ADA.eid})
    assert db.todos.get(todo_id)["done"] is False  # type: ignore[index]  # its default again
    db.todos.delete(todo_id)
    assert db.todos.get(todo_id) is None
    assert db.todos.get("not an id") is None


def test_what_a_table_refuses(db: Database) -> None:
    with pytest.raises(Refused, match=r"ctx\.db has no table notes — this app's tables are todos"):
        db.notes.get("0" * 16)
    with pytest.raises(Refused, match="todos has no column colour"):
        db.todos.insert({"text": "x", "owner": ADA.eid, "colour": "red"})
    with pytest.raises(Refused, match=r"todos\.text is required"):
        db.todos.insert({"owner": ADA.eid})
    with pytest.raises(Refused, match="id is the store's to set"):
        db.todos.insert({"id": "0" * 16, "text": "x", "owner": ADA.eid})
    with pytest.raises(Refused, match="todos has no row 0000000000000000 to update"):
        db.todos.update("0" * 16, {"done": True})
    with pytest.raises(Refused, match="todos has no index by_text — its indexes are"):
        db.todos.with_index("by_text")
    with pytest.raises(Refused, match=r"in order \(owner, rank\): owner comes next, not rank"):
        db.todos.with_index("by_owner_rank", lambda q: q.eq("rank", 1))
    with pytest.raises(Refused, match='order is "asc" or "desc"'):
        db.todos.query().order("newest")  # type: ignore[arg-type]
    assert db.todos.query().collect() == []


_todo = st.tuples(st.sampled_from([ADA.eid, BOB.eid]), st.none() | st.integers(-2, 2))


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    todos=st.lists(_todo, max_size=12),
    desc=st.booleans(),
    n=st.integers(1, 5),
    low=st.none() | st.integers(-2, 2),
)
def test_reads_by_index_answer_what_python_would(
    store: AnyStore, todos: list[tuple[str, int | None]], desc: bool, n: int, low: int | None
) -> None:
    tables, _ = schema_document(SCHEMA)
    store.declare({"$defs": tables})
    writer = StoreAsCaller(store, ADA)
    StoreAsCaller(store, BOB).apply({"entity": {"eid": "$b"}, "doc": {"title": "Bob"}})
    db = Database(writer)
    for old in db.todos.query().collect():
        db.todos.delete(old["id"])
    made: list[dict[str, Any]] = []
    for i, (owner, rank) in enumerate(todos):
        made.append(
            {
                "id": db.todos.insert({"text": f"t{i}", "owner": owner, "rank": rank}),
                "owner": owner,
                "rank": rank,
            }
        )
    order = "desc" if desc else "asc"

    mine = [t["id"] for t in made if t["owner"] == ADA.eid]
    expected = list(reversed(mine)) if desc else mine
    read = db.todos.with_index("by_owner", lambda q: q.eq("owner", ADA.eid)).order(order)
    assert [r["id"] for r in read.collect()] == expected
    assert [r["id"] for r in read.take(n)] == expected[:n]
    walked: list[str] = []
    cursor = None
    while True:
        page = read.paginate(cursor, n)
        walked.extend(r["id"] for r in page["page"])
        if page["done"]:
            break
        cursor = page["cursor"]
    assert walked == expected

    # An index of two columns, the second bounded: by rank (empty first), then creation.
    ranked = [
        t
        for t in made
        if t["owner"] == ADA.eid and (low is None or (t["rank"] is not None and t["rank"] >= low))
    ]
    # Ascending an empty rank comes first, descending last; ties in creation order, the
    # other way round descending.
    ranked.sort(
        key=lambda t: ((t["rank"] is not None, t["rank"] or 0), made.index(t)), reverse=desc
    )

    def bounds(q: Any) -> Any:
        q.eq("owner", ADA.eid)
        return q if low is None else q.gte("rank", low)

    by_rank = db.todos.with_index("by_owner_rank", bounds).order(order)
    assert [r["id"] for r in by_rank.collect()] == [t["id"] for t in ranked]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=st.text(max_size=30) | st.sampled_from(["doc", "person", "created", "entity", "todos"]))
def test_a_table_named_by_the_caller_is_one_of_the_apps_or_refused(
    db: Database, store: AnyStore, name: str
) -> None:
    """Whatever name code asks for its rows by, the store answers that table's rows (named
    by the filter too) or refuses with a sentence; it never reads another table's."""
    db.todos.insert({"text": "milk", "owner": ADA.eid})
    try:
        rows = store.query(".todos!", ADA, table=name)
    except Refused as refused:
        assert "names" in refused.sentence and "alone" in refused.sentence
        return
    assert name == "todos" and rows and {r["text"] for r in rows} == {"milk"}
    assert all(set(r) == {"id", "created_at", "text", "done", "owner", "rank"} for r in rows)
