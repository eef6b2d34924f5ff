"""Remembered reads and throttled notes of the platform database, on both databases.

A value is kept until the database changes — through this Service or another one
sharing it — and a note of last use is written once a minute, however often asked."""

from __future__ import annotations

from pathlib import Path

import pytest
from platform_db import kept

from pasture.caller import Caller
from pasture.platform.remembered import TOUCH, Remembered, Touches
from pasture.platform.service import Service


def test_a_value_is_kept_until_the_database_changes(service: Service, ada: Caller) -> None:
    remembered: Remembered[str] = Remembered(service.db)
    values = remembered.current()
    remembered.keep(values, "k", "read once")
    assert remembered.current() == {"k": "read once"}
    service.new_user(ada, "bo")  # any write to the platform database
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
    other.new_user(other.local_owner(), "cy")
    other.close()
    assert remembered.current() == {}


def test_a_note_is_written_once_a_minute(
    service: Service, ada: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.new_token(ada, "laptop")
    touches = Touches(service.db, "UPDATE tokens SET last_used = ? WHERE label = ?")
    clock = [1000.0]
    monkeypatch.setattr("pasture.platform.remembered.time.monotonic", lambda: clock[0])
    monkeypatch.setattr("pasture.platform.remembered.now", lambda: f"at {clock[0]}")
    touches.touch("laptop")
    clock[0] += TOUCH / 2
    touches.touch("laptop")
    assert kept(service, "SELECT last_used FROM tokens WHERE label = 'laptop'") == [("at 1000.0",)]
    clock[0] += TOUCH
    touches.touch("laptop")
    assert kept(service, "SELECT last_used FROM tokens WHERE label = 'laptop'") == [("at 1090.0",)]
