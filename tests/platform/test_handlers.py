"""Handlers tagged as tools (`@query`, `@mutation`, `@action` in worker.py), through the
Service: examples/todos deployed and used by two people; what each kind may do; the deploy's
refusals, every problem in one message; and the agent's input checked against the args."""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.club import TODOS
from pasture.caller import NOBODY, Caller
from pasture.commands.handlers import Arg, boolean, id, input_schema, number, string
from pasture.errors import DeployRefused, NotFound, Refused
from pasture.platform.service import Service
from pasture.schema import InputSchema

# The component the apps these tests write their own worker.py for keep, in vocab.json.
TODO_VOCAB = {
    "$defs": {
        "todo": {
            "properties": {
                "text": {"type": "string"},
                "done": {"type": "boolean"},
                "owner": {"type": "string"},
            }
        }
    },
    "tools": False,
}


def todos_app(tmp_path: Path, source: str | None = None) -> Path:
    folder = tmp_path / "src" / "todos"
    shutil.copytree(TODOS, folder, dirs_exist_ok=True)
    if source is not None:
        (folder / "worker.py").write_text(textwrap.dedent(source))
        (folder / "vocab.json").write_text(json.dumps(TODO_VOCAB))
    return folder


@pytest.fixture
def todos(service: Service, ada: Caller) -> Service:
    service.deploy(ada, TODOS, app="todos", access="open")
    service.people.new_user(ada, "bo")
    return service


def as_user(service: Service, name: str) -> Caller:
    owner = service.local_owner()
    return service.caller_for_token(service.new_token(owner, f"{name}'s", user=name))


def test_tagged_handlers_are_commands_and_the_rest_only_the_pages(
    todos: Service, ada: Caller
) -> None:
    listing = todos.listing.list_commands(ada, "todos").data["commands"]
    by_name = {c["name"]: c for c in listing}
    assert set(by_name) == {"todos", "set_todo_done", "clear_done"}
    assert by_name["todos"]["readOnly"] is True and by_name["set_todo_done"]["readOnly"] is False
    assert by_name["clear_done"]["consequential"] is True
    # The listing's title is the app's; a command's own short name is its commandTitle,
    # and the text shows it before the command's sentence.
    assert by_name["set_todo_done"]["commandTitle"] == "Mark a todo done"
    assert {c["title"] for c in listing} == {"Todos"}
    text = todos.listing.list_commands(ada, "todos").text
    assert "set_todo_done(todo_id, done) — Mark a todo done: " in text
    assert by_name["set_todo_done"]["input"] == {
        "type": "object",
        "properties": {
            "todo_id": {
                "type": "string",
                "pattern": "^[0-9a-f]{16}$",
                "description": "the id of a row of todos",
            },
            "done": {"type": "boolean"},
        },
        "required": ["todo_id", "done"],
        "additionalProperties": False,
    }
    with pytest.raises(NotFound):
        todos.run_command(ada, "add_todo", {"text": "x"}, "todos")  # no agent sees it
    added = todos.call_handler(ada, "todos", "add_todo", {"text": "buy milk"})
    assert added.data["result"]["text"] == "buy milk"


def test_each_person_sees_and_changes_only_their_own(todos: Service, ada: Caller) -> None:
    bo = as_user(todos, "bo")
    mine = todos.call_handler(ada, "ada/todos", "add_todo", {"text": "ada's"}).data["result"]
    todos.call_handler(bo, "ada/todos", "add_todo", {"text": "bo's"}, via_web=True)
    listed = todos.run_command(ada, "todos", {}, "ada/todos")
    assert [t["text"] for t in listed.data["result"]] == ["ada's"]
    [row] = json.loads(listed.text)  # the rows themselves, as JSON, for an agent reading text
    assert row == {**mine, "done": False} and row["owner"] == ada.eid
    with pytest.raises(Refused) as refused:
        todos.call_handler(
            bo, "ada/todos", "set_todo_done", {"todo_id": mine["id"], "done": True}, via_web=True
        )
    assert refused.value.sentence == "Todo not found."
    done = todos.run_command(ada, "set_todo_done", {"todo_id": mine["id"], "done": True}, "todos")
    assert done.data == {"result": {"id": mine["id"], "done": True}}


def test_ctx_auth_is_the_caller_never_an_argument(todos: Service) -> None:
    with pytest.raises(Refused) as refused:
        todos.call_handler(NOBODY, "ada/todos", "todos", {}, via_web=True)
    assert refused.value.sentence == (
        "sign in to use todos — it acts for the person who is signed in"
    )


def test_an_agents_input_is_checked_all_problems_in_one_sentence(
    todos: Service, ada: Caller
) -> None:
    with pytest.raises(Refused) as refused:
        todos.run_command(ada, "set_todo_done", {"done": "yes", "owner": "bo"}, "todos")
    assert refused.value.sentence == (
        "done is true or false; todo_id is required; owner is not an argument — the arguments "
        "are todo_id, done"
    )
    with pytest.raises(Refused) as refused:
        todos.run_command(ada, "set_todo_done", {"todo_id": "0" * 16, "done": True}, "todos")
    assert (
        refused.value.sentence
        == "todo_id is not the id of a row of todos in ada/todos that you can read"
    )
    # The page's own call is the handler's to check.
    with pytest.raises(Refused) as refused:
        todos.call_handler(ada, "todos", "set_todo_done", {"done": "yes"})
    assert refused.value.sentence.startswith("set_todo_done takes a todo_id")


KINDS = """
from pasture import action, mutation, query, string

@query
def sneaky(ctx):
    ctx.store.apply({"entity": {"eid": "$t"}, "todo": {"text": "written by a query"}})

@mutation
def secret_of_mutation(ctx):
    return ctx.secrets["KEY"]

@action(tool={"description": "Say the key's length", "args": {"word": string()}})
def key_length(ctx, args):
    return {"text": f"{args['word']}: {len(ctx.secrets['KEY'])}", "data": {}}
"""


def test_a_query_writes_nothing_and_only_an_action_reads_secrets(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    service.deploy(ada, todos_app(tmp_path, KINDS), app="kinds")
    service.secrets.set(ada, "kinds", "KEY", "s3cret")
    with pytest.raises(Refused) as refused:
        service.call_handler(ada, "kinds", "sneaky", {})
    assert "sneaky only reads" in refused.value.sentence
    assert service.graph.query(ada, "kinds", ".todo!").data["rows"] == []
    with pytest.raises(Refused) as refused:
        service.call_handler(ada, "kinds", "secret_of_mutation", {})
    assert refused.value.sentence == (
        "secret_of_mutation is a mutation, and only an action reads ctx.secrets — make it an "
        "action to reach outside"
    )
    said = service.run_command(ada, "key_length", {"word": "key"}, "kinds")
    assert said.text == "key: 6"


BROKEN = """
from pasture import boolean, id, json_value, mutation, query, string, user_id, action, number

@query(tool={"description": "List"})
def things(ctx):
    return []

@mutation(tool={"description": "Also things"})
def things(ctx):
    return None

@mutation(tool={"description": "Give", "args": {"who": user_id(), "what": json_value(),
                                                  "many": number().default(1), "of": id("")}})
def give(ctx, args):
    return None

@action(tool={"args": {"x": string()}, "colour": "red"})
def nameless(ctx, args):
    return None

@query(tool={"description": "Takes args it does not declare"})
def grabby(ctx, args):
    return None
"""


def test_a_deploy_names_every_problem_of_its_handlers(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    with pytest.raises(DeployRefused) as refused:
        service.deploy(ada, todos_app(tmp_path, BROKEN), app="broken")
    said = str(refused.value)
    for part in (
        "things: two handlers are named things (a query and a mutation)",
        "give: args: who: user_id() is not for a tool's args — the caller comes from ctx.auth",
        "give: args: what: json_value() is not for a tool's args",
        "give: args: many: .default() is not for a tool's args",
        'give: args: of: id() names a component of this app, like id("todo")',
        "nameless: tool takes description, args, title and consequential, not colour",
        "nameless: tool needs a description",
        "grabby: it has no args, so it is def grabby(ctx)",
    ):
        assert part in said, said
    with pytest.raises(NotFound):
        service.listing.list_commands(ada, "broken")  # nothing was installed


BROKEN_TOOLS = {
    "tally": {"description": "How many", "input": {}, "query": ".todo.count!", "colour": "red"},
    "stamp": {"description": "Stamp one", "input": {}, "apply": {"todo": {"text": "$nobody"}}},
}


def test_a_broken_vocab_still_names_every_tools_json_and_worker_py_problem(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    folder = todos_app(tmp_path, BROKEN)
    vocab = json.loads((folder / "vocab.json").read_text())
    vocab["$defs"]["todo"]["properties"]["due"] = {"type": "object"}
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "tools.json").write_text(json.dumps(BROKEN_TOOLS))
    with pytest.raises(DeployRefused) as refused:
        service.deploy(ada, folder, app="broken")
    said = str(refused.value)
    for part in (
        "vocab.json: todo.due has type object",
        "tools.json: ",
        "tally: ",
        "colour",
        "stamp: ",
        "$nobody",
        "worker.py: ",
        "things: two handlers are named things (a query and a mutation)",
        "grabby: it has no args, so it is def grabby(ctx)",
    ):
        assert part in said, said
    # What vocab.json did read is what tools.json is checked against: its good columns
    # are no problem of tools.json's.
    assert "todo has no column text" not in said, said

    # vocab.json that is not JSON at all: tools.json's own reading is still checked.
    (folder / "vocab.json").write_text("{")
    (folder / "tools.json").write_text('{"a": 1, "a": 2}')
    with pytest.raises(DeployRefused) as refused:
        service.deploy(ada, folder, app="broken")
    said = str(refused.value)
    assert "vocab.json: not JSON" in said and "tools.json: " in said, said
    assert "things: two handlers are named things" in said, said
    with pytest.raises(NotFound):
        service.listing.list_commands(ada, "broken")  # nothing was installed

    # ...and each entry's every problem but what it says of the app's own components, which
    # only the vocabulary could tell.
    (folder / "tools.json").write_text(
        '{"Bad": {"description": "", "screen": 1, "input": {"n": "int"}, "query": ".todo!"},'
        ' "mark": {"description": "Mark", "input": {}, "apply": {"todo": {"done": "$when"},'
        ' "doc": {"size": 1}, "created": {"at": "now"}}}}'
    )
    with pytest.raises(DeployRefused) as refused:
        service.deploy(ada, folder, app="broken")
    said = str(refused.value)
    for part in (
        "vocab.json: not JSON",
        "Bad — a command's name is",
        "Bad: screen — a tool says description, input, apply, query, view",
        "Bad: description is the sentence a model chooses the command by",
        'Bad: n is "int" — an argument\'s type is one of',
        "mark: $when names no input and no entity — declare it in mark.input",
        "mark: doc has no column size — its columns are",
        "mark: created is stamped by the store — leave it out of the template",
    ):
        assert part in said, said
    tools_json = said.split("tools.json:", 1)[1].split("worker.py:", 1)[0]
    assert "todo" not in tools_json, said  # the app's own component: not known, so not named


ARGS = st.dictionaries(
    st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
    st.sampled_from([string(), number(), boolean(), id("todo")]).flatmap(
        lambda a: st.sampled_from([a, a.optional()])
    ),
    max_size=5,
)
VALUES = st.one_of(
    st.text(max_size=5), st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False)
)


def _given(arg: Arg, value: object) -> bool:
    """Whether a value counts as given: null never, and "" only for text (the guide's rule)."""
    return value is not None and (value != "" or arg.type in ("string", "id"))


def _fits(arg: Arg, value: object) -> bool:
    if value is None:
        return False
    if arg.type in ("string", "id"):
        return isinstance(value, str) and (arg.type == "string" or len(value) == 16)
    if arg.type == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, bool)


@settings(max_examples=200)
@given(ARGS, st.dictionaries(st.from_regex(r"[a-z]{1,9}", fullmatch=True), VALUES, max_size=6))
def test_args_check_unknown_missing_and_wrong_types(args: dict[str, Arg], given: dict) -> None:
    schema = InputSchema(input_schema(args), reserved=())
    unknown = [k for k in given if k not in args]
    missing = [k for k, a in args.items() if not a.optional_ and not _given(a, given.get(k))]
    wrong = [
        k for k, v in given.items() if k in args and _given(args[k], v) and not _fits(args[k], v)
    ]
    try:
        schema.check(given)
    except Refused as e:
        assert unknown or missing or wrong, e.sentence
        assert "\n" not in e.sentence  # one sentence, naming every argument that is wrong
        for name in unknown:
            assert re.search(rf"\b{name}\b.* (is not an argument|are not arguments)", e.sentence)
        for name in missing:
            assert f"{name} is required" in e.sentence
        for name in wrong:
            # its own clause: `qty is a whole number`, `todo_id matches the pattern …`
            assert re.search(rf"(^|; ){name} (is|matches) ", e.sentence), e.sentence
    else:
        assert not unknown and not missing and not wrong
