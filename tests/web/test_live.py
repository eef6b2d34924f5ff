"""`./api/subscribe` (pasture.web.live) against a real server: the answer `./api/query`
gives, at once and again after each change; the same refusals; a watcher who loses the
app is told so and sent nothing more; a change made by another process arrives too."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.browser import loopback, serving
from helpers.club import RUNS, as_user
from helpers.processes import Pasture, running_server
from helpers.streams import Stream
from pasture.caller import Caller
from pasture.platform.access.limits import Rates
from pasture.platform.service import Service
from pasture.web import create_app

# The servers these tests share run in processes of their own.
pytestmark = pytest.mark.processes

BOARD = ".jog!&.created!"


@dataclass
class Live:
    url: str
    service: Service
    ada: Caller
    tokens: dict[str, str]

    def subscribe(
        self, who: str, app: str = "ada/runs", filter: str = BOARD, **headers: str
    ) -> Stream:
        return Stream(
            f"{self.url}/{app}/api/subscribe",
            {"filter": filter},
            {"Authorization": f"Bearer {self.tokens[who]}", **headers},
        )

    def query(self, who: str, app: str, filter: str) -> httpx.Response:
        return httpx.get(
            f"{self.url}/{app}/api/query",
            params={"filter": filter},
            headers={"Authorization": f"Bearer {self.tokens[who]}"},
            timeout=60,
        )

    def log_run(self, who: str, miles: float, app: str = "ada/runs") -> None:
        self.service.run_command(
            self.ada, "log_run", {"who": who, "miles": miles, "at": "2026-09-01"}, app=app
        )


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    home = tmp_path_factory.mktemp("home")
    sock, url = loopback()
    with as_user("ada"):
        service = Service(home, base_url=url)
        ada = service.local_owner()
    for name in ("cy", "bo"):
        service.people.new_user(ada, name)
    service.add_member(ada, "ada", "cy", "viewer")
    service.deploy(ada, RUNS, space="ada", app="runs", access="public")
    service.deploy(ada, RUNS, space="ada", app="secret", access="private")
    tokens = {
        "ada": service.new_token(ada),
        "cy": service.new_token(ada, user="cy"),
        "bo": service.new_token(ada, user="bo"),
    }
    try:
        with serving(create_app(service, bind_host="127.0.0.1"), sock, lifespan="on"):
            yield Live(url, service, ada, tokens)
    finally:
        service.close()


def _rows(event: object) -> list[tuple[str, float]]:
    data = event.data["data"]
    return [(r["jog"]["who"], r["jog"]["miles"]) for r in data["rows"]]


def test_the_answer_comes_at_once_and_again_after_each_write(live: Live) -> None:
    stream = live.subscribe("ada")
    try:
        first = stream.next()
        assert first is not None and first.kind == "answer"
        assert first.data == live.query("ada", "ada/runs", BOARD).json()
        live.log_run("Grace", 4.5)
        second = stream.next()
        assert second is not None and ("Grace", 4.5) in _rows(second)
        assert second.data == live.query("ada", "ada/runs", BOARD).json()
        assert second.id != first.id
        live.log_run("Grace", 1, app="ada/secret")  # another app's write alters nothing here
        assert stream.quiet()
    finally:
        stream.close()


def test_an_aggregate_is_sent_again_only_when_it_changes(live: Live) -> None:
    stream = live.subscribe("ada", filter=".jog!&.tally=jog.who")
    try:
        first = stream.next()
        assert first is not None
        live.log_run("Hal", 2)
        second = stream.next()
        assert second is not None
        assert second.data["data"]["tally"]["Hal"] == first.data["data"]["tally"].get("Hal", 0) + 1
    finally:
        stream.close()


def test_a_stream_opened_again_with_the_last_id_skips_what_the_page_has(live: Live) -> None:
    stream = live.subscribe("ada")
    first = stream.next()
    stream.close()
    assert first is not None and first.id
    again = live.subscribe("ada", **{"Last-Event-ID": first.id})
    try:
        assert again.quiet()  # nothing changed since: nothing to send
        live.log_run("Ida", 3)
        moved = again.next()
        assert moved is not None and ("Ida", 3) in _rows(moved)
    finally:
        again.close()
    stale = live.subscribe("ada", **{"Last-Event-ID": first.id})
    try:  # missed a change while away: the newest answer at once
        caught_up = stale.next()
        assert caught_up is not None and ("Ida", 3) in _rows(caught_up)
    finally:
        stale.close()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.sampled_from(["ada", "cy", "bo"]),
    st.sampled_from(["ada/runs", "ada/secret", "ada/nothing", "nobody/runs"]),
    st.one_of(
        st.sampled_from([BOARD, ".jog!", ".jog!&.count!", ".nope!", ".jog.miles>", "{tally}"]),
        st.text(max_size=20),
    ),
)
def test_what_a_stream_first_says_is_what_a_query_answers(
    live: Live, who: str, app: str, filter: str
) -> None:
    """The same rows for the same person, and the same refusal with the same status."""
    stream = live.subscribe(who, app, filter)
    try:
        asked = live.query(who, app, filter)
        if asked.status_code != 200:
            assert (stream.status, stream.refusal) == (asked.status_code, asked.json())
            return
        first = stream.next()
        assert first is not None and first.data == asked.json()
    finally:
        stream.close()


def test_a_viewer_taken_out_of_the_space_is_told_and_sent_nothing_more(live: Live) -> None:
    service, ada = live.service, live.ada
    watching = live.subscribe("cy", "ada/secret")
    try:
        assert watching.next() is not None
        service.remove_member(ada, "ada", "cy")
        refused = watching.next()
        assert refused is not None and refused.kind == "refused"
        assert refused.data["error"] == live.query("cy", "ada/secret", BOARD).json()["error"]
        live.log_run("Secret", 9, app="ada/secret")
        assert watching.next() is None  # the stream ended with the refusal
    finally:
        watching.close()
        service.add_member(ada, "ada", "cy", "viewer")


def test_reach_taken_away_elsewhere_is_heeded_before_the_bus_tells_of_it(live: Live) -> None:
    """Another server takes cy out of the space and then writes; its notice of the first
    has not arrived when the write's does. cy's stream is still refused before the row is
    sent to anyone, and ada's gets it."""
    service, ada = live.service, live.ada
    other = Service(service.home)  # a second server on the same data
    said = other.bus.publish
    # ... whose notice that reach was taken away has not arrived yet
    other.bus.publish = lambda c: None if c.kind == "access" else said(c)  # type: ignore[method-assign]
    watching = live.subscribe("ada", "ada/secret")  # the longest watching: a write is asked as ada
    taken_out = live.subscribe("cy", "ada/secret")
    try:
        assert watching.next() is not None and taken_out.next() is not None
        other.remove_member(ada, "ada", "cy")
        late = {"who": "Late", "miles": 7, "at": "2026-09-03"}
        other.run_command(ada, "log_run", late, app="ada/secret")
        moved = watching.next()
        assert moved is not None and ("Late", 7) in _rows(moved)
        refused = taken_out.next()
        assert refused is not None and refused.kind == "refused", refused
        assert taken_out.next() is None
    finally:
        watching.close()
        taken_out.close()
        other.close()
        service.add_member(ada, "ada", "cy", "viewer")


def test_taken_out_and_written_to_at_once_sends_the_row_only_to_who_still_reaches(
    live: Live,
) -> None:
    """Both changes may be taken in one round: every watcher is asked as themselves before
    anyone is sent the new answer, so the one taken out never sees the row."""
    service, ada = live.service, live.ada
    for round_ in range(3):
        watching = live.subscribe("ada", "ada/secret")
        taken_out = live.subscribe("cy", "ada/secret")
        try:
            assert watching.next() is not None and taken_out.next() is not None
            service.remove_member(ada, "ada", "cy")
            run = {"who": f"Now{round_}", "miles": 1, "at": "2026-09-04"}
            service.run_command(ada, "log_run", run, app="ada/secret")
            while (event := taken_out.next()) is not None:
                assert event.kind == "refused", event
            seen = watching.next()
            while seen is not None and (f"Now{round_}", 1) not in _rows(seen):
                seen = watching.next()
            assert seen is not None  # ada, still a member, was sent the row
        finally:
            watching.close()
            taken_out.close()
            service.add_member(ada, "ada", "cy", "viewer")


def test_while_reach_keeps_being_taken_away_a_write_waits_then_comes(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No answer is shared while reach moves on every look; the round tries again later,
    and once it holds still the row arrives."""
    stream = live.subscribe("ada", "ada/secret")
    try:
        assert stream.next() is not None
        moving = itertools.count(10**9)
        monkeypatch.setattr(live.service, "reach_version", lambda: next(moving))
        live.log_run("Moving", 2, app="ada/secret")
        assert stream.quiet(1.0)
        monkeypatch.undo()
        moved = stream.next()
        assert moved is not None and ("Moving", 2) in _rows(moved)
    finally:
        stream.close()


def test_a_revoked_token_ends_its_streams(live: Live) -> None:
    service, ada = live.service, live.ada
    token = service.new_token(ada, "doomed")
    stream = Stream(
        f"{live.url}/ada/runs/api/subscribe",
        {"filter": BOARD},
        {"Authorization": f"Bearer {token}"},
    )
    try:
        assert stream.next() is not None
        [made] = [t for t in service.tokens(ada).data["tokens"] if t["label"] == "doomed"]
        service.revoke_token(ada, made["id"])
        refused = stream.next()
        assert refused is not None and refused.kind == "refused"
        assert refused.data["status"] == 401
    finally:
        stream.close()


def test_a_write_through_another_server_reaches_the_stream(tmp_path: Path, database: str) -> None:
    """Two `pasture serve` processes on one database: watched on A, written through B."""
    env = {"PASTURE_USER": "ada"}
    home_a, home_b = tmp_path / "a", tmp_path / "b"
    if not database:
        home_b = home_a  # processes sharing one data directory
    pasture = Pasture(home_a, **env)
    assert pasture("deploy", str(RUNS), "--app", "runs").returncode == 0
    token = pasture("token", "new").stdout.split()[0]
    auth = {"Authorization": f"Bearer {token}"}
    with running_server(home_a, **env) as a, running_server(home_b, **env) as b:
        stream = Stream(f"{a}/ada/runs/api/subscribe", {"filter": BOARD}, auth)
        try:
            assert stream.next() is not None
            run = {"name": "log_run", "args": {"who": "Bo", "miles": 2, "at": "2026-09-02"}}
            done = httpx.post(f"{b}/ada/runs/api/command", json=run, headers=auth, timeout=60)
            assert done.status_code == 200, done.text
            moved = stream.next()
            assert moved is not None and ("Bo", 2) in _rows(moved)
        finally:
            stream.close()


# -- how many streams one person may hold open -------------------------------------------
@dataclass
class Limited:
    live: Live
    cy: Caller
    second: str  # another token of cy's


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Limited]:
    """A server where a person (signed out: an address) may hold two streams open."""
    home = tmp_path_factory.mktemp("limited")
    sock, url = loopback()
    with as_user("ada"):
        service = Service(home, base_url=url, rates=Rates(streams=2))
        ada = service.local_owner()
    cy = service.people.new_user(ada, "cy")
    service.add_member(ada, "ada", "cy", "viewer")
    service.deploy(ada, RUNS, space="ada", app="runs", access="public")
    service.deploy(ada, RUNS, space="ada", app="secret", access="private")
    tokens = {"ada": service.new_token(ada), "cy": service.new_token(ada, user="cy")}
    second = service.new_token(ada, user="cy")
    try:
        with serving(create_app(service, bind_host="127.0.0.1"), sock, lifespan="on"):
            yield Limited(Live(url, service, ada, tokens), cy, second)
    finally:
        service.close()


def _opens(stream: Stream) -> bool:
    try:
        return stream.status == 200 and stream.next() is not None
    finally:
        stream.close()


def _given_back(service: Service, caller: Caller, held: int) -> None:
    """Wait until the server has noticed closed streams and counts `held` of the caller's
    (a deadline only so that a place never given back fails the test)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if service.limiter.streams.held(caller) == held:
            return
        time.sleep(0.025)
    raise AssertionError(f"{service.limiter.streams.held(caller)} streams held, not {held}")


def test_one_person_holds_so_many_streams_over_all_their_tokens(limited: Limited) -> None:
    live, cy = limited.live, limited.cy
    first = live.subscribe("cy")
    other = Stream(
        f"{live.url}/ada/secret/api/subscribe",
        {"filter": ".jog!"},
        {"Authorization": f"Bearer {limited.second}"},
    )
    try:
        assert first.next() is not None and other.next() is not None
        for app in ("ada/runs", "ada/secret"):
            past = live.subscribe("cy", app)
            assert past.status == 429
            assert past.refusal == {
                "error": "too many live streams open — 2 at most for one person on this server;"
                " end one (a page that watches, an agent that listens), then try again"
            }
        assert live.query("cy", "ada/runs", BOARD).status_code == 200  # calls are not streams
        assert _opens(live.subscribe("ada"))  # another person counts apart
        other.close()
        _given_back(live.service, cy, 1)
        assert _opens(live.subscribe("cy"))
    finally:
        first.close()
        other.close()
    _given_back(live.service, cy, 0)


def test_a_stream_gives_its_place_back_however_it_ends(limited: Limited) -> None:
    """Refused as it opens (a bad filter, an app it may not read), refused later (taken out
    of the space), closed by the page: none of them keeps a place."""
    live, cy = limited.live, limited.cy
    refused_at_once = [("ada/runs", ".nope!"), ("ada/nothing", BOARD), ("ada/runs", ".jog.miles>")]
    for app, filter in refused_at_once * 2:
        assert live.subscribe("cy", app, filter).status in (400, 404)
    assert live.service.limiter.streams.held(cy) == 0
    watching = [live.subscribe("cy", "ada/secret"), live.subscribe("cy", "ada/secret")]
    try:
        assert all(w.next() is not None for w in watching)
        live.service.remove_member(live.ada, "ada", "cy")
        assert all(getattr(w.next(), "kind", None) == "refused" for w in watching)
        _given_back(live.service, cy, 0)
    finally:
        for w in watching:
            w.close()
        live.service.add_member(live.ada, "ada", "cy", "viewer")


def test_signed_out_visitors_are_counted_by_their_address(limited: Limited) -> None:
    url = f"{limited.live.url}/ada/runs/api/subscribe"
    held = [Stream(url, {"filter": BOARD}), Stream(url, {"filter": ".jog!"})]
    try:
        assert all(s.status == 200 for s in held)
        past = Stream(url, {"filter": BOARD})
        assert past.status == 429
        assert "2 at most for one address signed out" in past.refusal["error"]
        assert _opens(limited.live.subscribe("cy"))  # a signed-in person counts apart
    finally:
        for s in held:
            s.close()


def test_serve_takes_the_limit_from_its_option(tmp_path: Path) -> None:
    pasture = Pasture(tmp_path, PASTURE_USER="ada")
    assert pasture("deploy", str(RUNS), "--app", "runs").returncode == 0
    token = pasture("token", "new").stdout.split()[0]
    auth = {"Authorization": f"Bearer {token}"}
    with running_server(tmp_path, "--streams", "1", PASTURE_USER="ada") as url:
        held = Stream(f"{url}/ada/runs/api/subscribe", {"filter": BOARD}, auth)
        try:
            assert held.status == 200
            past = Stream(f"{url}/ada/runs/api/subscribe", {"filter": ".jog!"}, auth)
            assert past.status == 429 and "— 1 at most for one person" in past.refusal["error"]
        finally:
            held.close()
    bad = pasture("serve", "--port", "0", "--streams", "many")
    assert bad.returncode != 0
    assert "--streams is how many at most, like 100 (or off) — not many" in bad.stderr


def test_a_sign_in_that_ends_by_itself_ends_its_streams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session grown old says nothing on the bus. cy's stream is refused once its session
    has ended (at the next keep-alive, here a fifth of a second), and is sent none of the
    rows written after; ada's, with a token, goes on. The session is made old once both
    streams have their first answer, as test_sessions makes one old: were it given a few
    seconds to live, a busy machine could spend them before the streams opened."""
    from pasture.web import live as live_module

    monkeypatch.setattr(live_module, "KEEPALIVE", 0.2)
    sock, url = loopback()
    with as_user("ada"):
        service = Service(tmp_path / "home", base_url=url)
        ada = service.local_owner()
    cy = service.people.new_user(ada, "cy")
    service.add_member(ada, "ada", "cy", "viewer")
    service.deploy(ada, RUNS, space="ada", app="secret", access="private")
    session = service.new_session(cy)
    token = service.new_token(ada)
    try:
        with serving(create_app(service, bind_host="127.0.0.1"), sock, lifespan="on"):
            address = f"{url}/ada/secret/api/subscribe"
            watching = Stream(address, {"filter": BOARD}, {"Cookie": f"pasture_session={session}"})
            owner = Stream(address, {"filter": BOARD}, {"Authorization": f"Bearer {token}"})
            try:
                assert watching.next() is not None and owner.next() is not None
                sessions = service.people.sessions
                monkeypatch.setattr(sessions, "longest", sessions.longest * 0)  # nothing said
                refused = watching.next()
                assert refused is not None and refused.kind == "refused"
                assert refused.data["error"] == (
                    "your sign-in has ended — sign in again, and the page watches again"
                )
                service.run_command(
                    ada, "log_run", {"who": "Late", "miles": 1, "at": "2026-09-01"}, "ada/secret"
                )
                assert watching.next() is None  # ended, with nothing more sent
                written = owner.next()
                assert written is not None and ("Late", 1) in _rows(written)
            finally:
                watching.close()
                owner.close()
    finally:
        service.close()
