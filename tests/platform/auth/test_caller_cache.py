"""Remembered reads and throttled notes of the platform database, on both databases.

A value is kept until the database changes — through this Service or another one
sharing it — and a note of last use is written once a minute, however often asked."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from helpers.platform_db import kept
from pasture.caller import NOBODY, Caller
from pasture.errors import Unauthorized
from pasture.platform.auth.caller_cache import TOUCH, Remembered, Touches
from pasture.platform.service import Service

RUNS = Path(__file__).resolve().parents[3] / "examples" / "runs"


def test_a_value_is_kept_until_the_database_changes(service: Service, ada: Caller) -> None:
    remembered: Remembered[str] = Remembered(service.db)
    values = remembered.current()
    remembered.keep(values, "k", "read once")
    assert remembered.current() == {"k": "read once"}
    service.people.new_user(ada, "bo")  # any write to the platform database
    assert remembered.current() == {}


def test_it_keeps_at_most_its_bound(service: Service) -> None:
    remembered: Remembered[int] = Remembered(service.db, most=3)
    values = remembered.current()
    for n in range(5):
        remembered.keep(values, str(n), n)
    assert len(remembered.current()) <= 3


def test_a_change_by_another_server_is_seen(
    service: Service, ada: Caller, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not service.database_url:
        other = Service(service.home)  # another process's connection to the same file
    else:
        other = Service(tmp_path / "other", database_url=service.database_url)
    remembered: Remembered[str] = Remembered(service.db)
    remembered.keep(remembered.current(), "k", "v")
    other.people.new_user(other.local_owner(), "cy")
    other.close()
    assert remembered.current() == {}


def test_a_value_outlives_the_audits_own_records(service: Service, ada: Caller) -> None:
    """The audit writes on a connection of its own, off the calls' path: what it writes
    changes nothing a cache holds, so a call's record throws none away."""
    service.deploy(ada, RUNS, space="ada", app="runs")
    service.audit_log.flush()
    remembered: Remembered[str] = Remembered(service.db)
    remembered.keep(remembered.current(), "k", "v")
    before = len(kept(service, "SELECT id FROM audit"))
    for n in range(3):
        service.run_command(
            ada, "log_run", {"who": "ada", "miles": n + 1, "at": "2026-01-01"}, app="ada/runs"
        )
    service.audit_log.flush()
    assert len(kept(service, "SELECT id FROM audit")) == before + 3  # written, and aside
    assert remembered.current() == {"k": "v"}


def test_a_note_is_written_once_a_minute(
    service: Service, ada: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.new_token(ada, "laptop")
    touches = Touches(service.db, "UPDATE tokens SET last_used = ? WHERE label = ?")
    clock = [1000.0]
    monkeypatch.setattr("pasture.platform.auth.caller_cache.time.monotonic", lambda: clock[0])
    monkeypatch.setattr("pasture.platform.auth.caller_cache.now", lambda *_: f"at {clock[0]}")
    touches.touch("laptop")
    clock[0] += TOUCH / 2
    touches.touch("laptop")
    assert kept(service, "SELECT last_used FROM tokens WHERE label = 'laptop'") == [("at 1000.0",)]
    clock[0] += TOUCH
    touches.touch("laptop")
    assert kept(service, "SELECT last_used FROM tokens WHERE label = 'laptop'") == [("at 1090.0",)]


# -- at once: what an event loop may ask, never waiting -----------------------------------
def test_the_stamp_at_once_is_the_stamp_or_nothing(service: Service, ada: Caller) -> None:
    at_once = service.db.stamp_at_once()
    if service.database_url:  # every look is a round trip to the server: never on a loop
        assert at_once is None
        return
    assert at_once == service.db.stamp()
    with service.db.transaction():  # a thread in the middle of a write holds the connection
        seen: list[tuple[int, int] | None] = []
        looking = threading.Thread(target=lambda: seen.append(service.db.stamp_at_once()))
        looking.start()
        looking.join(30)
        assert seen == [None]  # told so at once, not waited for


def test_a_token_is_known_at_once_only_while_it_stands(service: Service, ada: Caller) -> None:
    token = service.new_token(ada, "laptop")
    assert service.caller_at_once(token) is None  # not read yet: only a thread may read it
    caller = service.caller_for_token(token)
    assert service.caller_at_once(token) is None  # its note of use moved the database since
    assert service.caller_for_token(token) == caller
    if service.database_url:
        assert service.caller_at_once(token) is None
        return
    assert service.caller_at_once(token) == caller
    listed = service.tokens(ada).data["tokens"]
    service.revoke_token(ada, listed[0]["id"])
    assert service.caller_at_once(token) is None  # the database moved: asked again, refused
    with pytest.raises(Unauthorized):
        service.caller_for_token(token)


def test_a_token_whose_note_of_use_is_due_is_not_known_at_once(
    service: Service, ada: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    if service.database_url:
        pytest.skip("nothing is known at once over PostgreSQL")
    token = service.new_token(ada, "laptop")
    clock = [1000.0]
    monkeypatch.setattr("pasture.platform.auth.caller_cache.time.monotonic", lambda: clock[0])
    caller = service.caller_for_token(token)
    service.caller_for_token(token)  # read again since its note moved the database
    assert service.caller_at_once(token) == caller
    clock[0] += TOUCH  # the note is a write: only a thread writes it
    assert service.caller_at_once(token) is None
    service.caller_for_token(token)
    service.caller_for_token(token)
    assert service.caller_at_once(token) == caller


def test_whether_a_client_is_due_is_known_at_once_once_read(service: Service, ada: Caller) -> None:
    lists = service.tool_lists
    assert lists.due_at_once(ada, "r1") is None
    assert lists.due(ada, "r1") is False
    assert lists.due_at_once(ada, "r1") is False
    lists.listed(ada, "r0")
    assert lists.due_at_once(ada, "r1") is True
    assert lists.due_at_once(NOBODY, "r1") is False


def test_the_listing_version_moves_with_a_deploy(service: Service, ada: Caller) -> None:
    before = service.listing_version()
    assert before is not None and service.listing_version() == before
    service.deploy(ada, RUNS, app="runs", title="Run club")
    assert service.listing_version() != before
    if not service.database_url:
        assert service.listing_version(at_once=True) == service.listing_version()
