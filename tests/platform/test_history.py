"""Undo of one call and restore of an app to a moment, through the platform and its doors — on
SQLite and on PostgreSQL (the `service` fixture runs each test on both).

bo owns the space `club` and its public `runs` (the run club); ed is an editor of club, cy a
viewer; di has only a space of her own; ada is the server's owner and in no space of bo's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pytest
from starlette.testclient import TestClient

from helpers.club import RUNS
from helpers.code_apps import code_app, deploy
from helpers.command_line import PastureMain
from pasture.caller import NOBODY, Caller
from pasture.errors import Conflict, Forbidden, NotFound, Refused, Unauthorized, UsageError
from pasture.platform import Change
from pasture.platform.service import Service
from pasture.web import create_app

BASE = "http://127.0.0.1:8000"  # the service fixture's own address (the host is checked)


@dataclass
class Club:
    service: Service
    ada: Caller
    bo: Caller  # club's owner
    ed: Caller  # an editor of club
    cy: Caller  # a viewer of club
    di: Caller  # a stranger with a space of her own
    tokens: dict[str, str]  # each person's token (ed's also read-only, as "ed-read")


@pytest.fixture
def club(service: Service, ada: Caller) -> Club:
    people = {n: service.people.new_user(ada, n) for n in ("bo", "ed", "cy", "di")}
    bo = people["bo"]
    service.spaces.new_space(bo, "club")
    service.add_member(bo, "club", "ed", "editor")
    service.add_member(bo, "club", "cy", "viewer")
    service.deploy(bo, RUNS, space="club", app="runs", access="public")
    tokens = {n: service.new_token(c, n) for n, c in people.items()}
    tokens["ed-read"] = service.new_token(people["ed"], "ed reads", writes=False)
    return Club(service, ada, bo, people["ed"], people["cy"], people["di"], tokens)


def runs(service: Service, caller: Caller) -> list[tuple[str, float]]:
    rows = service.graph.query(caller, "club/runs", ".jog!").data["rows"]
    return [(r["jog"]["who"], r["jog"]["miles"]) for r in rows]


def last_call(service: Service) -> str:
    """The id of the newest call the audit recorded in club/runs."""
    records = service.audit_log.read(app="club/runs", limit=1)
    call = records[-1]["call"]
    assert isinstance(call, str) and len(call) == 12
    return call


def refusal(run: Any) -> tuple[type[Refused], str]:
    try:
        run()
    except Refused as e:
        return type(e), e.sentence
    raise AssertionError("it was not refused")


def test_undo_puts_back_one_call_and_is_itself_undoable(club: Club) -> None:
    service, bo, ed = club.service, club.bo, club.ed
    service.run_command(bo, "log_run", {"who": "Bo", "miles": 5, "at": "2026-09-01"}, "club/runs")
    service.run_command(ed, "log_run", {"who": "Ed", "miles": 3, "at": "2026-09-01"}, "club/runs")
    made = last_call(service)
    assert runs(service, bo) == [("Bo", 5), ("Ed", 3)]

    done = service.undo(bo, made)
    undo = done.data["undo"]
    assert done.text == (
        f"undid call {made} in club/runs: 1 row put back as they were — pasture undo {undo} "
        "puts it back again"
    )
    assert runs(service, bo) == [("Bo", 5)]
    # the audit shows the undo as a call of its own, naming the call it undid
    record = service.audit_log.of_call(undo)[0]
    assert (record["action"], record["command"], record["outcome"]) == ("undo", made, "ok")

    _, sentence = refusal(lambda: service.undo(bo, made))
    assert sentence == (
        f"call {made} was undone already, by call {undo} — pasture undo {undo} puts its change back"
    )
    # bo made the undo: ed, who made the call it undid, may not undo bo's undo
    assert refusal(lambda: service.undo(ed, undo))[0] is Forbidden
    again = service.undo(bo, undo).data["undo"]
    assert runs(service, bo) == [("Bo", 5), ("Ed", 3)]
    # the call's change is back: undoing it again is undoing what put it back
    assert refusal(lambda: service.undo(bo, made))[1] == (
        f"call {made} was undone by call {undo}, and that undone by call {again}: its change "
        f"is back — pasture undo {again} undoes it again"
    )
    service.undo(bo, again)
    assert runs(service, bo) == [("Bo", 5)]


def test_an_undo_a_later_call_would_overwrite_is_refused_naming_it(club: Club) -> None:
    service, bo, ed = club.service, club.bo, club.ed
    service.apply(ed, "club/runs", {"entity": {"eid": "$r"}, "jog": {"who": "Ed", "miles": 3}})
    made = last_call(service)
    eid = service.graph.query(bo, "club/runs", ".jog!").data["rows"][0]["entity"]["eid"]
    service.apply(bo, "club/runs", {"entity": {"eid": eid}, "jog": {"miles": 4}})
    later = last_call(service)
    kind, sentence = refusal(lambda: service.undo(ed, made))
    assert kind is Conflict
    assert sentence.startswith(f"call {made} cannot be undone: ")
    assert f"({later})" in sentence and f"pasture undo {later}" in sentence
    assert runs(service, bo) == [("Ed", 4)]  # nothing written


def test_who_may_undo_and_restore(club: Club) -> None:
    service, bo, ed, cy, di = club.service, club.bo, club.ed, club.cy, club.di
    service.run_command(bo, "log_run", {"who": "Bo", "miles": 5, "at": "2026-09-01"}, "club/runs")
    bos = last_call(service)
    service.run_command(ed, "log_run", {"who": "Ed", "miles": 3, "at": "2026-09-01"}, "club/runs")
    eds = last_call(service)
    read_only = service.caller_for_token(club.tokens["ed-read"])

    owners = f"only the owners of club, and the person who made call {bos}, can undo it"
    assert refusal(lambda: service.undo(ed, bos)) == (Forbidden, owners)  # an editor, not his
    assert refusal(lambda: service.undo(cy, bos))[0] is Forbidden  # a viewer
    kind, sentence = refusal(lambda: service.undo(di, bos))  # another space's owner
    assert kind is NotFound and "club/runs" in sentence
    assert refusal(lambda: service.undo(NOBODY, bos))[0] is Unauthorized
    assert refusal(lambda: service.undo(read_only, eds))[0] is Forbidden  # a token that reads
    kind, sentence = refusal(lambda: service.undo(bo, "not-a-call"))
    assert kind is UsageError and "12 letters and digits" in sentence
    assert refusal(lambda: service.undo(bo, "0123456789ab"))[0] is NotFound
    assert runs(service, bo) == [("Bo", 5), ("Ed", 3)]  # no refusal wrote anything

    restore = "only the owners of club can restore club/runs"
    assert refusal(lambda: service.restore_app(ed, "club/runs", "1 hour ago")) == (
        Forbidden,
        restore,
    )
    assert refusal(lambda: service.restore_app(cy, "club/runs", "1 hour ago"))[0] is Forbidden
    assert refusal(lambda: service.restore_app(di, "club/runs", "1 hour ago"))[0] is NotFound
    kind, _ = refusal(lambda: service.restore_app(NOBODY, "club/runs", "1 hour ago"))
    assert kind is Unauthorized
    kind, sentence = refusal(lambda: service.restore_app(bo, "club/runs", "whenever"))
    assert kind is UsageError and "'2 hours ago'" in sentence
    assert runs(service, bo) == [("Bo", 5), ("Ed", 3)]

    service.undo(ed, eds)  # his own call
    assert runs(service, bo) == [("Bo", 5)]


def test_restore_to_a_moment_and_undo_it(club: Club) -> None:
    service, bo = club.service, club.bo
    service.run_command(bo, "log_run", {"who": "Bo", "miles": 5, "at": "2026-09-01"}, "club/runs")
    # the moment: the next whole second, written to the second; the next writes after it
    second = int(time.time()) + 1
    moment = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)) + "Z"
    time.sleep(max(0.0, second + 0.05 - time.time()))
    service.run_command(bo, "log_run", {"who": "Bo", "miles": 8, "at": "2026-09-01"}, "club/runs")
    eid = service.graph.query(bo, "club/runs", ".jog!").data["rows"][0]["entity"]["eid"]
    service.apply(bo, "club/runs", {"entity": {"eid": eid}, "tombstone": {}})
    assert runs(service, bo) == [("Bo", 8)]

    done = service.restore_app(bo, "club/runs", moment)
    assert done.text.startswith(f"restored club/runs to {moment[:19].replace('T', ' ')} UTC: ")
    assert runs(service, bo) == [("Bo", 5)]
    service.undo(bo, done.data["undo"])
    assert runs(service, bo) == [("Bo", 8)]
    nothing = service.restore_app(bo, "club/runs", "now")
    assert nothing.text.startswith("nothing in club/runs changed since")


def test_undo_and_restore_over_the_web_api_and_the_audit_page(club: Club) -> None:
    service, bo = club.service, club.bo
    service.run_command(
        club.ed, "log_run", {"who": "Ed", "miles": 3, "at": "2026-09-01"}, "club/runs"
    )
    made = last_call(service)
    web = TestClient(create_app(service), base_url=BASE, follow_redirects=False)

    def post(path: str, body: Any, token: str | None) -> tuple[int, Any]:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        answer = web.post(path, json=body, headers=headers)
        return answer.status_code, answer.json()

    sentence = f"only the owners of club, and the person who made call {made}, can undo it"
    assert post("/api/undo", {"call": made}, club.tokens["cy"]) == (403, {"error": sentence})
    assert post("/api/undo", {"call": made}, None)[0] == 401
    # runs is public: another space's owner sees it on the web, and may not undo in it
    assert post("/api/undo", {"call": made}, club.tokens["di"]) == (403, {"error": sentence})
    assert post("/api/undo", {"nope": 1}, club.tokens["bo"])[0] == 400
    status, answer = post("/api/undo", {"call": made}, club.tokens["bo"])
    assert status == 200 and answer["data"]["entities"]
    assert runs(service, bo) == []
    status, answer = post("/api/restore", {"app": "club/runs", "to": "1h"}, club.tokens["ed"])
    assert (status, answer) == (403, {"error": "only the owners of club can restore club/runs"})

    # the audit page: each call that went through has an Undo, which says how it went
    session = service.new_session(bo)
    web.cookies.set("pasture_session", session)  # http: no __Host- prefix
    page = web.get("/audit?app=club/runs").text
    undo = answer_undo = service.audit_log.read(app="club/runs")[-2]["call"]  # bo's undo
    assert f'name="call" value="{undo}"' in page
    done = web.post(
        "/audit/undo", data={"call": answer_undo, "app": "club/runs"}, headers={"Origin": BASE}
    )
    assert done.status_code == 200
    assert f"undid call {undo} in club/runs" in done.text
    assert runs(service, bo) == [("Ed", 3)]
    again = web.post(
        "/audit/undo", data={"call": answer_undo, "app": "club/runs"}, headers={"Origin": BASE}
    )
    assert again.status_code == 400 and "was undone already" in again.text


def test_undo_and_restore_at_the_command_line(club: Club, tmp_path: Any) -> None:
    service, bo = club.service, club.bo
    service.run_command(
        club.ed, "log_run", {"who": "Ed", "miles": 3, "at": "2026-09-01"}, "club/runs"
    )
    made = last_call(service)
    service.audit_log.flush()
    pasture = PastureMain(service.home)
    refused = pasture("undo", made, "--token", club.tokens["cy"])
    assert refused.returncode != 0
    assert refused.stderr.strip().endswith(
        f"only the owners of club, and the person who made call {made}, can undo it"
    )
    done = pasture("undo", made, "--token", club.tokens["bo"])
    assert done.returncode == 0, done.stderr
    assert f"undid call {made} in club/runs" in done.stdout
    assert runs(service, bo) == []
    restored = pasture(
        "app", "restore", "club/runs", "--to", "1 hour ago", "--token", club.tokens["ed"]
    )
    assert restored.returncode != 0
    assert "only the owners of club can restore club/runs" in restored.stderr


def test_a_code_commands_writes_are_its_call_and_undone_with_it(
    service: Service, ada: Caller, tmp_path: Any
) -> None:
    """App code writes through `ctx.store` from its own process: the server writes for it in
    the call's own thread, so each write is journaled as that call's, and one undo takes back
    all of them."""
    worker = """
def setup(app):
    register_notes(app)
    app.register(
        "note three",
        description="Add three notes",
        input={"type": "object", "properties": {}},
        annotations={},
        run=lambda args, ctx: [ctx.store.apply({"note": {"text": str(i)}}) for i in range(3)]
        and {"text": "three noted"},
    )
"""
    at = deploy(service, ada, code_app(tmp_path, "box", worker))
    service.run_command(ada, "note add", {"text": "first"}, at)
    service.run_command(ada, "note three", {}, at)
    call = service.audit_log.read(app=at, limit=1)[-1]["call"]

    def texts() -> list[str]:
        rows = service.graph.query(ada, at, ".note!").data["rows"]
        return sorted(r["note"]["text"] for r in rows)

    assert texts() == ["0", "1", "2", "first"]
    service.undo(ada, call)
    assert texts() == ["first"]


def test_another_server_hears_of_an_undo_and_a_restore(club: Club) -> None:
    """Live pages redraw on every server: the undo's and the restore's writes are told on the
    bus as any write is, and a second server on the same data reads what they put back."""
    service, bo = club.service, club.bo
    other = Service(service.home)  # a second `pasture serve` on the same data
    try:
        heard: list[Change] = []
        stop = other.bus.listen(heard.append)
        service.run_command(
            bo, "log_run", {"who": "Bo", "miles": 5, "at": "2026-09-01"}, "club/runs"
        )
        made = last_call(service)

        def told() -> None:
            deadline = time.monotonic() + 30
            while Change("write", "club", "runs") not in heard and time.monotonic() < deadline:
                time.sleep(0.02)
            assert Change("write", "club", "runs") in heard
            heard.clear()

        told()
        undo = service.undo(bo, made).data["undo"]
        told()
        assert runs(other, bo) == []
        service.undo(bo, undo)
        told()
        assert runs(other, bo) == [("Bo", 5)]
        stop()
    finally:
        other.close()


def test_a_big_undo_and_restore_tell_how_far_they_came_and_a_stopped_one_keeps_nothing(
    club: Club,
) -> None:
    """A watching door (a terminal's bar) hears the entities put back as they go; stopped
    (Ctrl-C), the undo or restore is one write that keeps nothing."""
    from pasture.errors import Cancelled
    from pasture.long_calls import LongCall, Progress

    service, bo = club.service, club.bo
    before = time.time()
    time.sleep(0.01)
    many = [{"jog": {"who": f"R{i}", "miles": i % 7}} for i in range(450)]
    service.apply(bo, "club/runs", many)
    made = last_call(service)
    assert len(runs(service, bo)) == 450

    stopped = LongCall()
    stopped.cancel()
    with pytest.raises(Cancelled) as said:
        service.undo(bo, made, long_call=stopped)
    assert said.value.sentence == f"the undo of call {made} was stopped — nothing of it was kept"
    assert len(runs(service, bo)) == 450  # nothing put back

    heard: list[Progress] = []
    service.undo(bo, made, long_call=LongCall(heard.append, most_per_second=1e9))
    told = f"the undo of call {made}: entities put back"
    assert [(p.done, p.total, p.message) for p in heard] == [
        (0, 450, told),
        (200, 450, told),
        (400, 450, told),
        (450, 450, told),
    ]
    assert runs(service, bo) == []

    service.apply(bo, "club/runs", many)
    moment = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(before)) + f"{before % 1:.3f}"[1:]
    with pytest.raises(Cancelled) as said:
        service.restore_app(bo, "club/runs", moment + "Z", long_call=stopped)
    assert said.value.sentence == "the restore of club/runs was stopped — nothing of it was kept"
    assert len(runs(service, bo)) == 450
    heard.clear()
    service.restore_app(
        bo, "club/runs", moment + "Z", long_call=LongCall(heard.append, most_per_second=1e9)
    )
    assert heard[-1].as_data() == {
        "done": 900,
        "total": 900,
        "message": "the restore of club/runs: entities put back",
    }
    assert runs(service, bo) == []
