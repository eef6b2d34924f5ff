"""`Service.reach_version`: every change that takes away who may reach what moves it, in
the change's own transaction, and is seen at once by another Service on the same data (on
SQLite and PostgreSQL); what takes nothing away leaves it where it was."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from helpers.club import RUNS
from pasture.caller import Caller
from pasture.platform.service import Service

RUN = {"who": "Ada", "miles": 3, "at": "2026-09-01"}


@pytest.fixture
def other(service: Service) -> Iterator[Service]:
    """A second server on the same data, whose bus nobody here listens to."""
    second = Service(service.home, database_url=service.database_url or "")
    yield second
    second.close()


def _moves(service: Service, seen_by: Service, change: Callable[[], object]) -> bool:
    before = seen_by.reach_version()
    change()
    return seen_by.reach_version() > before


def test_each_way_reach_is_taken_away_moves_it(
    service: Service, other: Service, ada: Caller
) -> None:
    service.deploy(ada, RUNS, space="ada", app="runs", access="private")
    cy = service.people.new_user(ada, "cy")
    service.add_member(ada, "ada", "cy", "editor")
    service.new_token(ada, user="cy")
    [made] = service.tokens(ada, user="cy").data["tokens"]
    session = service.new_session(cy)
    page_pass = service.new_pass(cy, "ada", "runs", session)

    takings: dict[str, Callable[[], object]] = {
        "a role made lesser": lambda: service.add_member(ada, "ada", "cy", "viewer"),
        "a page's pass ended": lambda: service.end_pass(page_pass),
        "a session ended": lambda: service.sign_out(session),
        "a token revoked": lambda: service.revoke_token(ada, made["id"], user="cy"),
        "an app's access changed": lambda: service.deploy(ada, RUNS, space="ada", app="runs"),
        "a member taken out": lambda: service.remove_member(ada, "ada", "cy"),
        "a person removed": lambda: service.remove_user(ada, "cy"),
    }
    for what, change in takings.items():
        assert _moves(service, other, change), what


def test_what_takes_nothing_away_leaves_it(service: Service, other: Service, ada: Caller) -> None:
    service.deploy(ada, RUNS, space="ada", app="runs")
    gives: dict[str, Callable[[], object]] = {
        "a write": lambda: service.run_command(ada, "log_run", RUN),
        "a read": lambda: service.graph.query(ada, "ada/runs", ".jog!"),
        "a new person": lambda: service.people.new_user(ada, "bo"),
        "a member added": lambda: service.add_member(ada, "ada", "bo", "viewer"),
        "a token made": lambda: service.new_token(ada),
        "a session begun": lambda: service.new_session(ada),
        "a space trusted": lambda: service.trust_space(ada, "ada", True),
    }
    for what, change in gives.items():
        assert not _moves(service, other, change), what
