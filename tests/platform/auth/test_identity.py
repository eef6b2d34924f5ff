"""People, tokens, sessions and passwords: kept hashed, checked on the way in."""

from __future__ import annotations

import pytest

from helpers.platform_db import everything_kept, kept
from pasture.caller import NOBODY, Caller
from pasture.errors import Forbidden, Refused
from pasture.platform.service import Service


def test_the_first_use_makes_the_owner_and_their_space(service: Service, ada: Caller) -> None:
    assert ada.name == "ada" and ada.signed_in
    assert service.local_owner() == ada
    assert service.spaces.of(ada) == [("ada", "owner")]
    assert Service(service.home).local_owner() == ada


def test_tokens_sign_their_person_in_and_are_kept_hashed(service: Service, ada: Caller) -> None:
    token = service.new_token(ada)
    assert service.caller_for_token(token) == ada
    assert service.caller_for_token(None) == NOBODY
    with pytest.raises(Refused) as bad:
        service.caller_for_token("pst_nothing")
    assert "pasture token new" in bad.value.sentence
    session = service.session_for_link(service.sign_in_link(ada))
    assert service.people.caller_for_session(session) == ada
    assert service.people.caller_for_session("nope") == NOBODY
    service.sign_out(session)
    assert service.people.caller_for_session(session) == NOBODY
    raw = everything_kept(service)
    assert token.encode() not in raw and session.encode() not in raw


def test_passwords_sign_in_on_the_web(service: Service, ada: Caller) -> None:
    service.people.set_password(ada, "correct horse")
    session = service.sign_in("ada", "correct horse")
    assert service.people.caller_for_session(session) == ada
    with pytest.raises(Refused):
        service.sign_in("ada", "wrong horse")
    [(stored,)] = kept(service, "SELECT password FROM users WHERE name = 'ada'")
    assert stored.startswith("scrypt$") and "correct horse" not in stored


def test_only_the_owner_adds_people(service: Service, ada: Caller) -> None:
    bo = service.people.new_user(ada, "bo", "bo's password")
    assert service.spaces.of(bo) == [("bo", "owner")]
    with pytest.raises(Forbidden):
        service.people.new_user(bo, "cy")
    with pytest.raises(Refused):
        service.add_member(bo, "ada", "bo", "owner")
    assert service.add_member(ada, "ada", "bo", "editor").text == "bo is now an editor of ada"
