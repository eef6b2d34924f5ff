"""A worker reaches its store only back through the platform, as the caller, with their rights.

The worker's process is untrusted: it may write whatever it likes on its
channel. So besides the store's own API, these tests speak the protocol by
hand from inside a worker — naming another caller, another app, a call that
has ended — and throw arbitrary replies and manifests at the server's side (the bytes
themselves: test_wire.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.club import RUNS
from helpers.code_apps import code_app, deploy
from pasture.caller import NOBODY, Caller
from pasture.errors import Fault, Forbidden, PastureError, Refused, Unauthorized
from pasture.platform.nouns import VIEWER_WRITES
from pasture.platform.service import Service
from pasture.platform.workers.dispatch import Version, _answer, commands_of
from pasture.platform.workers.process import Stopped
from pasture.platform.workers.sandbox import Limits
from pasture.result import Result

WORKER = '''
import json, os, sys, time

KEPT = {}
LATER = []  # messages the next call is to send, as if they were this one's


def sneaky_count(args, ctx):
    # Marked read-only, and writes all the same.
    ctx.store.apply({"entity": {"eid": "$n"}, "note": {"text": "sneaked"}})
    return {"text": "counted", "data": {}}


def forge(args, ctx):
    """Speak the protocol by hand: another caller, another app, this call's own id."""
    store = ctx.store
    store.channel.send({
        "store": "apply",
        "call": store.call,
        "caller": {"eid": args["as_eid"], "name": "someone else"},
        "app": "ada/other",
        "at": "ada/other",
        "bundles": [{"entity": {"eid": "$n"}, "note": {"text": "forged"}}],
    })
    return {"text": "forged", "data": store.channel.receive()}


def stale(args, ctx):
    """A store kept from an earlier call, used in a later one (by its own API, then by hand)."""
    if "store" not in KEPT:
        KEPT["store"] = ctx.store
        return {"text": "kept", "data": {}}
    old = KEPT.pop("store")
    try:
        old.apply({"entity": {"eid": "$n"}, "note": {"text": "stale"}})
        by_api = "written"
    except Exception as e:
        by_api = str(e)
    ctx.store.channel.send({
        "store": "apply", "call": old.call,
        "bundles": [{"entity": {"eid": "$n"}, "note": {"text": "stale by hand"}}],
    })
    return {"text": "stale", "data": {"api": by_api, "hand": ctx.store.channel.receive()}}


def batched(args, ctx):
    with ctx.store.batch() as batch:
        for n in range(args["n"]):
            ctx.store.apply({"entity": {"eid": f"$n{n}"}, "note": {"text": f"batch {n}"}})
        if args.get("fail"):
            raise ValueError("changed its mind")
    return {"text": "batched", "data": {"entities": batch.applied.entities}}


def refused_inside(args, ctx):
    with ctx.store.batch():
        ctx.store.apply({"entity": {"eid": "$a"}, "note": {"text": "first"}})
        ctx.store.apply({"entity": {"eid": "$b"}, "nonsense": {"x": 1}})
    return {"text": "never", "data": {}}


def who(args, ctx):
    rows = ctx.store.query(".note!&.created!")
    return {"text": "who", "data": {"by": [r["created"]["by"] for r in rows]}}


def _frame(message):
    body = json.dumps(message).encode()
    return len(body).to_bytes(4, "big") + body


def answers_extra(args, ctx):
    """Its own answer, and more messages straight onto its socket: now, before its answer,
    or left for the next call to send."""
    for extra in json.loads(args["extras"]):
        message = dict(extra["message"])
        if extra["id"] == "own":
            message["call"] = ctx.store.call
        elif extra["id"] == "guessed":
            message["call"] = "0" * 16
        if extra["when"] == "now":
            os.write(int(sys.argv[1]), _frame(message))
        else:
            LATER.append(_frame(message))
    return {"text": f"for {ctx.caller.name}", "data": {"for": ctx.caller.name}}


def answers_early(args, ctx):
    """Its answer straight onto its socket, then a while before it returns: the server
    takes the first and stops the process, which sends its own answer once it goes on."""
    answer = {"text": f"for {ctx.caller.name}", "data": {"for": ctx.caller.name}}
    os.write(int(sys.argv[1]), _frame({"result": answer, "call": ctx.store.call}))
    time.sleep(0.5)
    return answer


def asks_then_forges(args, ctx):
    """Reaches its store, then sends an answer under another call's id before its own."""
    ctx.store.query(".note!")
    forged = {"result": {"text": "forged", "data": {}}, "call": "0" * 16}
    os.write(int(sys.argv[1]), _frame(forged))
    return {"text": "mine", "data": {}}


def whoami(args, ctx):
    while LATER:
        os.write(int(sys.argv[1]), LATER.pop(0))
    return {"text": f"for {ctx.caller.name}", "data": {"for": ctx.caller.name}}


def setup(app):
    register_notes(app)
    app.register("box answers extra", description="Extra", annotations={"readOnly": True},
                 input={"type": "object", "properties": {"extras": {"type": "string"}}},
                 run=answers_extra)
    app.register("box whoami", description="Who am I", annotations={"readOnly": True},
                 run=whoami)
    app.register("box answers early", description="Early", annotations={"readOnly": True},
                 run=answers_early)
    app.register("box asks then forges", description="Forge", annotations={"readOnly": True},
                 run=asks_then_forges)
    app.register("box sneaky count", description="Count", annotations={"readOnly": True},
                 run=sneaky_count)
    app.register("box forge", description="Forge", annotations={},
                 input={"type": "object", "properties": {"as_eid": {"type": "string"}}},
                 run=forge)
    app.register("box stale", description="Stale", annotations={}, run=stale)
    app.register("box batched", description="Batch", annotations={},
                 input={"type": "object", "properties": {"n": {"type": "integer"},
                                                          "fail": {"type": "boolean"}}},
                 run=batched)
    app.register("box refused inside", description="Refused", annotations={}, run=refused_inside)
    app.register("box who", description="Who", annotations={"readOnly": True}, run=who)
'''

READ_ONLY = (
    "box sneaky count only reads (it is marked readOnly), so it cannot write — its app's author "
    "registers it without readOnly if it changes things"
)


@pytest.fixture
def box(service: Service, ada: Caller, tmp_path: Path) -> str:
    deploy(service, ada, RUNS)
    deploy(service, ada, code_app(tmp_path, "other", "", notes=False))
    return deploy(service, ada, code_app(tmp_path, "box", WORKER, notes=True))


def notes(service: Service, who: Caller) -> list[str]:
    return [r["note"]["text"] for r in service.graph.query(who, "ada/box", ".note!").data["rows"]]


def test_a_read_only_command_cannot_write(service: Service, ada: Caller, box: str) -> None:
    with pytest.raises(Refused) as refused:
        service.run_command(ada, "box_sneaky_count", {})
    assert refused.value.sentence == READ_ONLY
    assert notes(service, ada) == []


def test_a_viewer_and_nobody_write_only_where_the_page_lets_them(
    service: Service, ada: Caller, box: str
) -> None:
    cy = service.people.new_user(ada, "cy")
    service.add_member(ada, "ada", "cy", "viewer")
    with pytest.raises(Forbidden) as refused:
        service.run_command(cy, "note_add", {"text": "by a viewer"})
    assert refused.value.sentence == VIEWER_WRITES
    with pytest.raises(Refused, match="only reads"):
        service.run_command(cy, "box_sneaky_count", {})
    # A read-only command is the viewer's to run; its reads are theirs.
    assert service.run_command(cy, "note_count", {}).data == {"count": 0}
    # A stranger on the web, on a public app: reads, cannot write.
    with pytest.raises(Unauthorized) as refused:
        service.run_command(NOBODY, "note_add", {"text": "x"}, app="ada/box", via_web=True)
    assert refused.value.sentence == (
        "sign in to change ada/box — anyone reads it, its space's editors change it"
    )
    with pytest.raises(Refused, match="only reads"):
        service.run_command(NOBODY, "box_sneaky_count", {}, app="ada/box", via_web=True)
    assert notes(service, ada) == []
    # An open app lets anyone write, as its page does; the row says nobody wrote it.
    service.deploy(ada, service.home / "apps" / "ada" / "box" / "v1", app="box", access="open")
    service.run_command(NOBODY, "note_add", {"text": "by anyone"}, app="ada/box", via_web=True)
    assert notes(service, ada) == ["by anyone"]


def test_a_worker_writes_as_its_caller_whoever_it_names(
    service: Service, ada: Caller, box: str
) -> None:
    bo = service.people.new_user(ada, "bo")
    service.add_member(ada, "ada", "bo", "editor")
    forged = service.run_command(bo, "box_forge", {"as_eid": ada.eid})
    assert forged.data["entities"] and forged.data["aliases"]
    service.run_command(ada, "note_add", {"text": "by ada"})
    by = service.run_command(ada, "box_who", {}).data["by"]
    assert [b["name"] for b in by] == ["bo", "ada"]
    # It went to the app the call was for, not the one it named.
    assert service.graph.query(ada, "other", ".note!").text == "0 rows in ada/other"


def test_a_store_kept_past_its_call_is_refused(service: Service, ada: Caller, box: str) -> None:
    service.run_command(ada, "box_stale", {})
    stale = service.run_command(ada, "box_stale", {}).data
    ended = "this ctx.store belongs to a call that has ended"
    assert stale["api"].startswith(ended)
    assert stale["hand"]["refused"]["sentence"].startswith(ended)
    assert notes(service, ada) == []


def test_a_batch_is_one_transaction(service: Service, ada: Caller, box: str) -> None:
    done = service.run_command(ada, "box_batched", {"n": 3})
    assert len(done.data["entities"]) == 3
    assert notes(service, ada) == ["batch 0", "batch 1", "batch 2"]
    with pytest.raises(Fault, match=r"box batched failed in its own code \(ValueError\)"):
        service.run_command(ada, "box_batched", {"n": 3, "fail": True})
    with pytest.raises(Refused, match="nonsense"):
        service.run_command(ada, "box_refused_inside", {})
    assert notes(service, ada) == ["batch 0", "batch 1", "batch 2"]


# -- every answer is its own call's ---------------------------------------------------------
NOT_ITS = (
    "box whoami stopped: its worker process sent pasture an answer that was not this call's, "
    "and is started again for the next call"
)
EXTRA = st.fixed_dictionaries(
    {
        "message": st.sampled_from(
            [
                {"result": {"text": "for ada", "data": {"for": "ada"}}},  # the owner's answer
                {"refused": {"sentence": "not for you"}},
                {"failed": "SystemExit"},
                {"limit": "memory"},
                {"unjson": "set"},
                {"store": "query", "filter": ".note!"},
                {"x": 1},
            ]
        ),
        "id": st.sampled_from(["own", "none", "guessed"]),
        "when": st.sampled_from(["now", "next call"]),
    }
)


def _whoami(service: Service, who: Caller) -> Result | str:
    try:
        return service.run_command(who, "box_whoami", {}, app="ada/box", via_web=True)
    except PastureError as refused:
        return refused.sentence


@pytest.fixture
def cy(service: Service, ada: Caller) -> Caller:
    """Someone with an account here who is no member of ada's space."""
    return service.people.new_user(ada, "cy")


def test_an_extra_reply_never_reaches_the_next_caller(
    service: Service, ada: Caller, cy: Caller, box: str
) -> None:
    """The audit's case: the owner's call sends its answer twice; the next caller, who is
    no member of the space, gets their own answer or a sentence — never the owner's."""
    extra = [
        {
            "message": {"result": {"text": "for ada", "data": {"for": "ada"}}},
            "id": "own",
            "when": "now",
        }
    ]
    said = service.run_command(ada, "box_answers_extra", {"extras": json.dumps(extra)})
    assert said.data == {"for": "ada"}
    got = _whoami(service, cy)
    assert isinstance(got, Result) and got.data == {"for": "cy"}, got
    assert service.run_command(ada, "note_count", {}).text == "counted"


def test_a_call_that_reached_its_store_and_then_speaks_for_another_is_stopped(
    service: Service, ada: Caller, box: str
) -> None:
    """Once a call has asked its store something, it is not given to another process: an
    answer under another call's id ends it with the sentence that says so."""
    with pytest.raises(PastureError) as stopped:
        service.run_command(ada, "box_asks_then_forges", {}, app="ada/box")
    assert stopped.value.sentence == NOT_ITS.replace("box whoami", "box asks then forges")


def test_an_answer_held_back_past_its_call_goes_to_nobody(
    service: Service, ada: Caller, cy: Caller, box: str
) -> None:
    """The owner's call answers early and sends its own answer once the process, stopped at
    the call's end, goes on — in the next call, which is served by another process: each
    next caller gets their own answer, and the owner's is never anyone else's."""
    for _ in range(3):
        said = service.run_command(ada, "box_answers_early", {}, app="ada/box")
        assert said.data == {"for": "ada"}
        got = _whoami(service, cy)
        assert isinstance(got, Result) and got.data == {"for": "cy"}, got


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(extras=st.lists(EXTRA, max_size=3))
def test_whatever_a_worker_sends_besides_its_answer_no_other_caller_gets_it(
    service: Service, ada: Caller, cy: Caller, box: str, extras: list[dict[str, Any]]
) -> None:
    """Messages of any kind, with its call's id, none, or a guessed one, sent before its
    answer or by the next call's code: the owner gets an answer or a sentence; the next
    caller (no member) their own answer, from another process where the one they were
    given spoke first of another call."""
    try:
        said = service.run_command(ada, "box_answers_extra", {"extras": json.dumps(extras)})
    except PastureError as refused:
        assert refused.sentence and "Traceback" not in refused.sentence
    else:
        assert said.data == {"for": "ada"}
    got = _whoami(service, cy)
    assert isinstance(got, Result) and got.data == {"for": "cy"}, got
    assert service.run_command(ada, "note_count", {}).text == "counted"


# -- what a worker sends, held to the protocol ------------------------------------------------
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
REPLY_KEYS = st.sampled_from(["result", "refused", "failed", "limit", "unjson", "store", "x"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(REPLY_KEYS, JSON, max_size=3))
def test_any_reply_of_a_worker_is_an_answer_or_a_sentence(reply: dict[str, Any]) -> None:
    try:
        answer = _answer("box x", reply, Limits())
    except PastureError as refused:  # a refusal, or a fault of the worker's code
        assert refused.sentence and "Traceback" not in refused.sentence
    except Stopped as stopped:  # not the protocol: the caller is told, the process stopped
        assert stopped.sentence.startswith("box x stopped: its worker process sent pasture")
    else:
        assert isinstance(answer, Result)
        assert isinstance(answer.text, str) and isinstance(answer.data, dict)


ENTRY = st.fixed_dictionaries(
    {},
    optional={
        "name": JSON | st.sampled_from(["box go", "help me", "box status", "Box"]),
        "description": JSON,
        "input": JSON,
        "annotations": JSON | st.just({"readOnly": True}),
        "provider": JSON,
        "title": JSON,
        "positional": JSON,
        "output": JSON,
        "examples": JSON,
        "see_also": JSON,
        "suggest": JSON,
    },
)


@settings(max_examples=300, deadline=None)
@given(st.lists(ENTRY, max_size=4) | JSON)
def test_any_manifest_a_worker_sends_is_held_to_the_registry_s_rules(manifest: Any) -> None:
    commands, problems = commands_of(manifest, Version("ada", "box", 1, Path()), None)  # type: ignore[arg-type]
    for command in commands:
        assert command.name.islower() and command.description
    if isinstance(manifest, list) and len(manifest) != len(commands):
        assert problems
