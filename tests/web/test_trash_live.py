"""A live page of an app that goes to the trash is told so, and sent nothing more: its
subscription (`./api/subscribe`) ends with the sentence a query now answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.browser import loopback, serving
from helpers.club import RUNS, as_user
from helpers.streams import Stream
from pasture.platform.service import Service
from pasture.web import create_app

BOARD = ".jog!&.created!"


@pytest.fixture
def served(tmp_path: Path, database: str) -> Iterator[tuple[str, Service, dict[str, str]]]:
    sock, url = loopback()
    with as_user("ada"):
        service = Service(tmp_path / "home", base_url=url)
        ada = service.local_owner()
    service.people.new_user(ada, "cy")
    service.add_member(ada, "ada", "cy", "viewer")
    service.deploy(ada, RUNS, space="ada", app="runs", access="private")
    tokens = {"ada": service.new_token(ada), "cy": service.new_token(ada, user="cy")}
    try:
        with serving(create_app(service, bind_host="127.0.0.1"), sock, lifespan="on"):
            yield url, service, tokens
    finally:
        service.close()


@pytest.mark.parametrize("removed", ["app", "space"])
def test_a_live_page_of_a_removed_app_is_told_and_sent_nothing_more(
    served: tuple[str, Service, dict[str, str]], removed: str
) -> None:
    url, service, tokens = served
    ada = service.local_owner()
    if removed == "space":  # a space of its own, which can go to the trash whole
        service.spaces.new_space(ada, "club")
        service.add_member(ada, "club", "cy", "viewer")
        service.deploy(ada, RUNS, space="club", app="runs", access="private")
    at = "ada/runs" if removed == "app" else "club/runs"
    streams = [
        Stream(f"{url}/{at}/api/subscribe", {"filter": BOARD}, {"Authorization": f"Bearer {t}"})
        for t in tokens.values()
    ]
    try:
        for stream in streams:
            assert stream.next() is not None
        if removed == "app":
            service.remove_app(ada, at)
        else:
            service.remove_space(ada, "club")
        for stream in streams:
            refused = stream.next()
            assert refused is not None and refused.kind == "refused", refused
            assert refused.data["error"].startswith(f"no app {at}")
            assert stream.next() is None  # the stream ended with the refusal
    finally:
        for stream in streams:
            stream.close()
