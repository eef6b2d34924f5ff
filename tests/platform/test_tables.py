"""An app's tables through the Service: worker.py's `schema` and vocab.json's declarations
are components of the one store every door reads, and a deploy refuses what is wrong in
either, every problem in one message, installing nothing."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pasture.caller import Caller
from pasture.errors import DeployRefused, NotFound, Refused
from pasture.platform.service import Service

WORKER = """
from pasture import Refused, boolean, id, json_value, mutation, number, query, string, table
from pasture import user_id

schema = {
    "todos": table(text=string(), done=boolean().default(False), owner=user_id(),
                   parent=id("todos").optional(), rank=number().default(3))
        .index("by_owner", ["owner"])
        .index("by_rank", ["done", "rank"]),
}


@mutation
def add(ctx, args):
    me = ctx.auth.require_identity()
    written = {"text": args.get("text"), "owner": me.user_id}
    if args.get("text") is None:
        del written["text"]
    return ctx.store.apply({"todos": written}).entities[0]


@query(tool={"description": "List the current user's todos, newest first."})
def todos(ctx):
    me = ctx.auth.require_identity()
    return ctx.store.query(f".todos.owner={me.user_id}&sort=-todos.owner")
"""


def app(tmp_path: Path, worker: str | None = WORKER, vocab: Any = None, name: str = "t") -> Path:
    folder = tmp_path / "src" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.html").write_text(f"<!doctype html><title>{name}</title>\n")
    if worker is not None:
        (folder / "worker.py").write_text(textwrap.dedent(worker))
    if vocab is not None:
        (folder / "vocab.json").write_text(json.dumps(vocab))
    return folder


def test_a_worker_schema_is_a_component_every_door_reads(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    deployed = service.deploy(ada, app(tmp_path), app="t")
    assert deployed.data["commands"] == ["todos"]  # no add_todos, find_todos of its own
    eid = service.call_handler(ada, "ada/t", "add", {"text": "milk"}).data["result"]
    (row,) = service.call_handler(ada, "ada/t", "todos", {}).data["result"]
    assert row["entity"]["eid"] == eid
    assert (row["todos"]["done"], row["todos"]["rank"]) == (False, 3)
    assert row["todos"]["owner"]["eid"] == ada.eid
    with pytest.raises(Refused, match=r"todos.text is required — give it a value"):
        service.call_handler(ada, "ada/t", "add", {})
    # graph_schema says it, the read it answers is the grammar's
    described = service.graph.schema(ada, "ada/t")
    assert described.data["components"]["todos"]["indexes"] == {
        "by_owner": ["owner"],
        "by_rank": ["done", "rank"],
    }
    line = next(s for s in described.text.splitlines() if s.startswith("todos: "))
    assert line == (
        "todos: text text required, done bool default false, owner reference to a person "
        "required, parent reference to a row of todos, rank number default 3; "
        "indexes by_owner(owner), by_rank(done, rank)"
    )
    found = service.graph.query(ada, "ada/t", ".todos.done=false&sort=todos.done,todos.rank")
    assert [r["entity"]["eid"] for r in found.data["rows"]] == [eid]
    # a write from outside the code is held to the same rules
    with pytest.raises(Refused, match=r"^todos.owner is required — give it a value$"):
        service.apply(ada, "ada/t", {"todos": {"text": "no owner"}})


def test_a_version_rolled_back_to_keeps_its_tables(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    service.deploy(ada, app(tmp_path), app="t")
    bare = app(tmp_path, worker=None, vocab={"$defs": {"note": {"properties": {}}}}, name="b")
    (bare / "worker.py").unlink(missing_ok=True)
    service.deploy(ada, bare, app="t")
    assert "todos" not in service.graph.schema(ada, "ada/t").data["components"]
    service.rollback(ada, "ada/t", 1)
    assert service.graph.schema(ada, "ada/t").data["components"]["todos"]["indexes"]


def test_a_table_in_both_files_is_one_table_when_they_agree(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    same = {
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "indexes": {"by_text": ["text"]},
        "tools": False,
    }
    worker = """
        from pasture import string, table
        schema = {"notes": table(text=string()).index("by_text", ["text"])}
    """
    service.deploy(ada, app(tmp_path, worker, {"$defs": {"notes": same}}), app="n")
    details = service.graph.schema(ada, "ada/n").data["components"]["notes"]["details"]
    assert details == {"text": {"type": "text", "required": True}}


BAD_VOCAB = {
    "$defs": {
        "todos": {"properties": {"text": {"type": "string"}}},  # worker.py says otherwise
        "doc": {"properties": {"x": {"type": "string"}}},
        "limit": {"properties": {}},
        "item": {
            "properties": {
                "n": {"type": "number", "default": "many"},
                "up": {"type": "string", "format": "reference", "table": "nowhere"},
                "who": {"type": "string", "format": "person", "default": "me"},
            },
            "required": ["gone"],
            "indexes": {"by_x": ["nope"], "Bad Name": ["n"], "by_n": ["n", "n"]},
        },
    }
}
BAD_WORKER = """
from pasture import boolean, json_value, string, table

schema = {
    "todos": table(text=string(), done=boolean().default("no"))
        .index("by_done", ["done"])
        .index("by_done", ["text"])
        .index("by_what", ["what"]),
    "blob": table(body=json_value()),
    "created": table(at=string()),
}
"""


def test_a_deploy_names_every_problem_of_its_tables_at_once(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    with pytest.raises(DeployRefused) as refused:
        service.deploy(ada, app(tmp_path, BAD_WORKER, BAD_VOCAB), app="bad")
    said = str(refused.value)
    for part in (
        "vocab.json: ",
        "doc is the platform's own component",
        "limit is a word bundles and filters use",
        'item.n has a default of "many", and item.n is a number — give a default of its type',
        "item.up is a reference to a row of nowhere, and there is no table nowhere",
        "item.who is a reference, and a reference has no default",
        "item: \"required\" names 'gone', which is not one of its columns",
        "item: the index by_x names 'nope', which is not one of its columns",
        "'Bad Name' is not an index name",
        "item: the index by_n names a column twice",
        "worker.py: schema: todos: the index by_done is declared twice",
        "todos: the index by_what names 'what', which is not one of its columns",
        'todos.done has a default of "no", and todos.done is true or false',
        "blob.body is JSON (json_value()), which no store keeps as a column yet",
        "created is the platform's own component",
    ):
        assert part in said, said
    with pytest.raises(NotFound):
        service.graph.schema(ada, "ada/bad")  # nothing was installed


def test_two_tables_of_one_name_that_differ_are_refused(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    vocab = {"$defs": {"todos": {"properties": {"text": {"type": "string"}}}}}
    with pytest.raises(DeployRefused) as refused:
        service.deploy(ada, app(tmp_path, WORKER, vocab), app="two")
    assert (
        "worker.py: schema: todos is a table of worker.py's schema and a component of "
        "vocab.json, declared differently — declare it in one of them"
    ) in str(refused.value)


def test_a_column_whose_type_changes_is_refused_on_redeploy(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    service.deploy(ada, app(tmp_path), app="t")
    changed = WORKER.replace("rank=number().default(3)", 'rank=string().default("3")')
    with pytest.raises(DeployRefused) as refused:
        service.deploy(ada, app(tmp_path, changed), app="t")
    assert "worker.py: schema: todos.rank was number and is text now" in str(refused.value)
    assert service.graph.schema(ada, "ada/t").data["components"]["todos"]["columns"]["rank"] == (
        "number"
    )


# -- random declarations in vocab.json, deployed --------------------------------------------

_columns = st.dictionaries(
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["string", "number", "boolean"]),
    min_size=1,
)
_defaults = {"string": "x", "number": 2, "boolean": True}
_wrong = {"string": 5, "number": "two", "boolean": "yes"}


@st.composite
def _declared(draw: st.DrawFn) -> tuple[dict[str, Any], list[str]]:
    """A vocab.json of one component, and what is wrong in it (nothing: it deploys)."""
    columns = draw(_columns)
    props: dict[str, Any] = {}
    wrong: list[str] = []
    for name, kind in columns.items():
        prop: dict[str, Any] = {"type": kind}
        choice = draw(st.sampled_from(["none", "default", "wrong"]))
        if choice == "default":
            prop["default"] = _defaults[kind]
        elif choice == "wrong":
            prop["default"] = _wrong[kind]
            wrong.append(f"thing.{name} has a default of {json.dumps(_wrong[kind])}")
        props[name] = prop
    indexes: dict[str, list[str]] = {}
    for index in draw(st.lists(st.sampled_from(["by_a", "by_b", "9"]), unique=True, max_size=2)):
        on = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=2, unique=True))
        indexes[index] = on
        if index == "9":
            wrong.append("'9' is not an index name")
        for col in on:
            if col not in props:
                wrong.append(f"the index {index} names {col!r}")
    body = {"properties": props, "indexes": indexes, "required": sorted(props)[:1]}
    return {"$defs": {"thing": body}}, wrong


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(declared=_declared())
def test_a_declaration_deploys_and_reads_back_or_is_refused_naming_each_problem(
    service: Service, ada: Caller, tmp_path: Path, declared: tuple[dict[str, Any], list[str]]
) -> None:
    vocab, wrong = declared
    name = f"v{abs(hash(json.dumps(vocab, sort_keys=True))) % 10**8}"
    folder = app(tmp_path, worker=None, vocab=vocab, name=name)
    if wrong:
        with pytest.raises(DeployRefused) as refused:
            service.deploy(ada, folder, app=name)
        for part in wrong:
            assert part in str(refused.value), str(refused.value)
        with pytest.raises(NotFound):
            service.graph.schema(ada, f"ada/{name}")
        return
    service.deploy(ada, folder, app=name)
    described = service.graph.schema(ada, f"ada/{name}").data["components"]["thing"]
    body = vocab["$defs"]["thing"]
    assert described["indexes"] == body["indexes"]
    for col, prop in body["properties"].items():
        assert described["details"][col].get("default") == prop.get("default")
        assert described["details"][col]["required"] == (
            col in body["required"] and "default" not in prop
        )
