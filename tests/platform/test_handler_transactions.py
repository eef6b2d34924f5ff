"""A handler's data, through real worker processes and the Service, on both databases.

A mutation's writes are one transaction, kept only when it answers with JSON: whatever it
wrote before it raised, refused, answered with what is not JSON, or had its process die
under it, is gone, and the caller gets the one sentence. A query reads one snapshot and
cannot write. An action is no transaction, and each `ctx.run_mutation` it makes is one.
`ctx.db` answers JSON rows a handler can hand back as they are.
"""

from __future__ import annotations

import contextlib
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pasture.caller import Caller
from pasture.errors import PastureError, Refused
from pasture.platform.service import Service

WORKER = '''
import os

from pasture import Refused, action, boolean, mutation, query, string, table, user_id

schema = {
    "notes": table(text=string(), done=boolean().default(False), owner=user_id())
        .index("by_owner", ["owner"]),
}


@mutation
def write(ctx, args):
    """Writes n notes, then ends as `end` says."""
    me = ctx.auth.require_identity()
    ids = [ctx.db.notes.insert({"text": f"n{i}", "owner": me.user_id}) for i in range(args["n"])]
    end = args["end"]
    if end == "raise":
        raise ValueError("a bug after writing")
    if end == "refuse":
        raise Refused("not today")
    if end == "unjson":
        return {1, 2}
    if end == "applied":  # what ctx.store.apply answers is not JSON either
        note = {"text": "x", "owner": me.user_id}
        return ctx.store.apply({"entity": {"eid": "$x"}, "notes": note})
    if end == "exit":
        os._exit(3)
    return ids


@query
def mine(ctx):
    me = ctx.auth.require_identity()
    by_owner = ctx.db.notes.with_index("by_owner", lambda q: q.eq("owner", me.user_id))
    return by_owner.order("desc").collect()


@query
def sneaky(ctx):
    me = ctx.auth.require_identity()
    return ctx.db.notes.insert({"text": "from a query", "owner": me.user_id})


@action
def both(ctx, args):
    """Runs write twice, each its own transaction: the second as `end` says."""
    first = ctx.run_mutation("write", {"n": 1, "end": "ok"})
    try:
        ctx.run_mutation("write", {"n": 2, "end": args["end"]})
    except Refused as e:
        return {"first": first, "second": e.sentence}
    return {"first": first, "second": "kept"}


@mutation
def nested(ctx):
    return ctx.run_mutation("write", {"n": 1, "end": "ok"})
'''


@pytest.fixture
def notes(service: Service, ada: Caller, tmp_path: Path) -> Service:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "worker.py").write_text(textwrap.dedent(WORKER))
    service.deploy(ada, folder, app="notes")
    return service


def _count(service: Service, ada: Caller) -> int:
    return int(service.graph.query(ada, "notes", ".notes!&.count!").data["count"])


def _call(service: Service, ada: Caller, name: str, args: Any = None) -> Any:
    return service.call_handler(ada, "notes", name, args or {}).data["result"]


def test_a_mutation_that_answers_keeps_all_it_wrote(notes: Service, ada: Caller) -> None:
    ids = _call(notes, ada, "write", {"n": 3, "end": "ok"})
    assert len(ids) == 3 and _count(notes, ada) == 3
    rows = _call(notes, ada, "mine")
    assert [r["id"] for r in rows] == list(reversed(ids))  # newest first, by the index
    assert rows[0] == {
        "id": ids[-1],
        "created_at": rows[0]["created_at"],
        "text": "n2",
        "done": False,  # its default
        "owner": ada.eid,
    }


@pytest.mark.parametrize(
    ("end", "said"),
    [
        ("raise", "failed in its own code"),
        ("refuse", "not today"),
        ("unjson", "not JSON"),
        ("applied", "not JSON (Applied)"),
        ("exit", "ended in the middle of the call"),
    ],
)
def test_a_mutation_that_fails_keeps_nothing(
    notes: Service, ada: Caller, end: str, said: str
) -> None:
    _call(notes, ada, "write", {"n": 1, "end": "ok"})
    with pytest.raises(PastureError) as refused:
        _call(notes, ada, "write", {"n": 3, "end": end})
    assert said in refused.value.sentence
    assert _count(notes, ada) == 1
    _call(notes, ada, "write", {"n": 1, "end": "ok"})  # and the app writes on
    assert _count(notes, ada) == 2


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    calls=st.lists(
        st.tuples(st.integers(0, 4), st.sampled_from(["ok", "raise", "refuse", "unjson", "exit"])),
        min_size=1,
        max_size=4,
    )
)
def test_what_stays_is_what_the_answered_mutations_wrote(
    notes: Service, ada: Caller, calls: list[tuple[int, str]]
) -> None:
    before = _count(notes, ada)
    for n, end in calls:
        with contextlib.suppress(PastureError):
            _call(notes, ada, "write", {"n": n, "end": end})
    assert _count(notes, ada) == before + sum(n for n, end in calls if end == "ok")


def test_a_query_cannot_write(notes: Service, ada: Caller) -> None:
    with pytest.raises(Refused, match="only reads"):
        _call(notes, ada, "sneaky")
    assert _count(notes, ada) == 0


def test_an_action_runs_each_mutation_in_a_transaction_of_its_own(
    notes: Service, ada: Caller
) -> None:
    answer = _call(notes, ada, "both", {"end": "refuse"})
    assert answer["second"] == "not today" and len(answer["first"]) == 1
    assert _count(notes, ada) == 1  # the first kept, the second's two gone
    answer = _call(notes, ada, "both", {"end": "unjson"})
    assert "not JSON" in answer["second"] and _count(notes, ada) == 2
    assert _call(notes, ada, "both", {"end": "ok"})["second"] == "kept"
    assert _count(notes, ada) == 5


def test_only_an_action_runs_mutations(notes: Service, ada: Caller) -> None:
    with pytest.raises(Refused, match="only an action runs mutations"):
        _call(notes, ada, "nested")
    assert _count(notes, ada) == 0
