"""Sessions end when they should; sign-in links open once; a removed person signs in nowhere."""

from __future__ import annotations

import pytest

from helpers.club import RUNS
from pasture.caller import NOBODY, Caller
from pasture.errors import NotFound, Unauthorized, UsageError
from pasture.platform.service import Service


def test_a_sign_in_link_opens_once(service: Service, ada: Caller) -> None:
    link = service.sign_in_link(ada)
    session = service.session_for_link(link)
    assert service.people.caller_for_session(session).eid == ada.eid
    with pytest.raises(Unauthorized, match="that sign-in link has been used"):
        service.session_for_link(link)


def test_sessions_end_when_idle_or_old_and_on_sign_out(
    service: Service, ada: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = service.new_session(ada)
    assert service.people.caller_for_session(session).eid == ada.eid
    sessions = service.people.sessions
    monkeypatch.setattr(sessions, "idle", sessions.idle * 0)  # anything unused is over
    assert service.people.caller_for_session(session) == NOBODY
    monkeypatch.undo()
    other = service.new_session(ada)
    monkeypatch.setattr(sessions, "longest", sessions.longest * 0)
    assert service.people.caller_for_session(other) == NOBODY
    monkeypatch.undo()
    third = service.new_session(ada)
    service.sign_out(third)
    assert service.people.caller_for_session(third) == NOBODY


def test_removing_a_person_ends_every_way_they_sign_in(service: Service, ada: Caller) -> None:
    bo = service.people.new_user(ada, "bo", "correct horse battery")
    service.add_member(ada, ada.name or "", "bo", "editor")
    token = service.new_token(bo, "bo's agent")
    session = service.sign_in("bo", "correct horse battery")
    link = service.sign_in_link(bo)
    with pytest.raises(UsageError, match="the server's owner, who cannot be removed"):
        service.remove_user(ada, ada.name or "")
    done = service.remove_user(ada, "bo")
    assert done.text.startswith("bo is removed")
    with pytest.raises(Unauthorized):
        service.caller_for_token(token)
    assert service.people.caller_for_session(session) == NOBODY
    with pytest.raises(Unauthorized):
        service.session_for_link(link)
    with pytest.raises(Unauthorized):
        service.sign_in("bo", "correct horse battery")


def test_a_member_is_taken_out_of_a_space(service: Service, ada: Caller) -> None:
    service.deploy(ada, RUNS)
    bo = service.people.new_user(ada, "bo")
    space = ada.name or ""
    service.add_member(ada, space, "bo", "viewer")
    assert service.graph.query(bo, f"{space}/runs", ".jog!").text.startswith("0 rows")
    service.remove_member(ada, space, "bo")
    with pytest.raises(NotFound):
        service.graph.query(bo, f"{space}/runs", ".jog!")
    with pytest.raises(UsageError, match="the only owner"):
        service.remove_member(ada, space, space)
