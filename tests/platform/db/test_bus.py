"""The bus (pasture.platform.db.bus): what one Service does is heard by every other sharing
its data — a second Service here, or a `pasture` process — on SQLite and PostgreSQL."""

from __future__ import annotations

import queue
import threading
import time
from pathlib import Path

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.club import RUNS
from helpers.processes import Pasture
from pasture.caller import Caller
from pasture.errors import Refused
from pasture.platform.db.bus import CHANNEL, Change, PostgresBus
from pasture.platform.service import Service

RUN = {"who": "Ada", "miles": 3, "at": "2026-09-01"}


class Heard:
    """What a bus's listener was told, in order."""

    def __init__(self, service: Service) -> None:
        self.changes: queue.Queue[Change] = queue.Queue()
        self.stop = service.bus.listen(self.changes.put)

    def next(self, kind: str, timeout: float = 60) -> Change:
        """The next change of `kind` (others before it are passed over); `timeout` is a
        deadline only, so that a listener that never hears it fails."""
        while True:
            change = self.changes.get(timeout=timeout)
            if change.kind == kind:
                return change

    def none(self, wait: float = 0.3) -> list[Change]:
        got = []
        try:
            while True:
                got.append(self.changes.get(timeout=wait))
        except queue.Empty:
            return got


def _second(service: Service) -> Service:
    return Service(service.home, database_url=service.database_url or "")


def test_a_write_deploy_and_access_change_in_one_service_reach_another(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    service.deploy(ada, RUNS, space="ada", app="runs")
    other = _second(service)
    try:
        heard = Heard(other)
        here = Heard(service)
        service.run_command(ada, "log_run", RUN)
        assert heard.next("write") == Change("write", "ada", "runs")
        assert here.next("write") == Change("write", "ada", "runs")  # at once, and once
        service.deploy(ada, RUNS, space="ada", app="runs")
        assert heard.next("deploy") == Change("deploy", "ada", "runs")
        service.people.new_user(ada, "bo")
        service.add_member(ada, "ada", "bo", "viewer")
        assert heard.next("access") == Change("access", "ada")
        service.remove_member(ada, "ada", "bo")
        assert heard.next("access") == Change("access", "ada")
        assert [c for c in here.none() if c.kind == "write"] == []  # not heard back twice
    finally:
        other.close()


def test_a_refused_write_announces_nothing(service: Service, ada: Caller) -> None:
    service.deploy(ada, RUNS, space="ada", app="runs")
    heard = Heard(service)
    with pytest.raises(Refused):
        service.run_command(ada, "log_run", {"who": "Ada"})
    assert [c for c in heard.none() if c.kind == "write"] == []


@pytest.mark.processes
def test_a_command_line_write_reaches_a_serving_process(
    service: Service, ada: Caller, database: str
) -> None:
    """Another process — `pasture command` — writes; this one hears it."""
    service.deploy(ada, RUNS, space="ada", app="runs")
    heard = Heard(service)
    pasture = Pasture(service.home, PASTURE_USER="ada", PASTURE_DATABASE_URL=database)
    done = pasture("command", "log_run", "--who=Bo", "--miles=2", "--at=2026-09-02")
    assert done.returncode == 0, done.stderr
    assert heard.next("write") == Change("write", "ada", "runs")


@given(st.text())
def test_anything_else_on_the_channel_is_not_a_change(text: str) -> None:
    change = Change.from_text(text)
    assert change is None or change.kind in ("write", "deploy", "commands", "access", "lost")


@given(
    st.sampled_from(["write", "deploy", "commands", "access", "lost"]),
    st.none() | st.text(),
    st.none() | st.text(),
)
def test_a_change_reads_back_as_it_was_said(kind: str, space: str | None, slug: str | None) -> None:
    change = Change(kind, space, slug)  # type: ignore[arg-type]
    assert Change.from_text(change.as_text()) == change


def test_postgres_a_listener_that_lost_its_connection_hears_again_and_says_so(
    service: Service, ada: Caller, database: str
) -> None:
    if not database:
        pytest.skip("the SQLite bus keeps no connection to lose")
    heard = Heard(service)
    bus = service.bus
    assert isinstance(bus, PostgresBus)
    with psycopg.connect(database, autocommit=True) as admin:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the listener's connection, once it listens
            pids = [
                r[0]
                for r in admin.execute(
                    "SELECT pid FROM pg_stat_activity WHERE query = %s", (f"LISTEN {CHANNEL}",)
                )
            ]
            if pids:
                break
            threading.Event().wait(0.05)
        assert pids
        for pid in pids:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    assert heard.next("lost") == Change("lost")
    other = Service(service.home, database_url=database)
    try:
        other.deploy(other.local_owner(), RUNS, space="ada", app="runs")
        assert heard.next("deploy") == Change("deploy", "ada", "runs")
    finally:
        other.close()
