"""Limits: buckets per token and address, anonymous writes to open apps, sign-in tries.

Time is a clock the tests move by hand: nothing here sleeps or measures time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.club import RUNS
from pasture.caller import NOBODY, Caller
from pasture.errors import TooMany, Unauthorized, UsageError
from pasture.platform.access.limits import (
    TOO_MANY_TRIES,
    Buckets,
    Limiter,
    Rate,
    Rates,
    SignInTries,
    Streams,
    address_key,
    most,
)
from pasture.platform.auth import hashing as identity
from pasture.platform.service import Service

PASSWORD = "correct horse"
MISMATCH = "that name and password do not match"
RUN = {"who": "Ada", "miles": 5, "at": "2026-09-01"}


class Clock:
    """A clock that moves only when a test moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def wait(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def slept() -> list[float]:
    return []


@pytest.fixture
def service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: Clock, slept: list[float]
) -> Iterator[Service]:
    monkeypatch.setenv("PASTURE_USER", "ada")
    monkeypatch.delenv("PASTURE_DATABASE_URL", raising=False)
    rates = Rates(caller=Rate(5), address=Rate(8), open_writes=Rate(3))
    svc = Service(tmp_path / "home", rates=rates)
    svc.limiter.clock = clock
    svc.limiter.sign_in.sleep = slept.append
    svc.people.set_password(svc.local_owner(), PASSWORD)
    yield svc
    svc.close()


# -- rates ---------------------------------------------------------------------------------
def test_a_rate_is_written_as_calls_per_time_and_said_as_a_person_would() -> None:
    assert Rate.parse("600/minute") == Rate(600, 60)
    assert Rate.parse("20/s") == Rate(20, 1)
    assert Rate.parse("5,000/hours") == Rate(5000, 3600)
    assert Rate.parse("90") == Rate(90, 60)  # a bare number is per minute
    assert Rate.parse("off") is None
    assert str(Rate(1200)) == "1,200 a minute"
    assert str(Rate(20, 1)) == "20 a second"
    assert str(Rate(3, 10)) == "3 every 10 s"
    with pytest.raises(UsageError) as bad:
        Rate.parse("lots", "--rate")
    assert bad.value.sentence == (
        "--rate is a number of calls and a time, like 600/minute or 20/second (or off) — not lots"
    )


def test_the_defaults_are_generous_and_the_environment_changes_them() -> None:
    assert Rates() == Rates(caller=Rate(600), address=Rate(1200), open_writes=Rate(60))
    assert Rates.from_env({}) == Rates()
    env = {"PASTURE_RATE": "100/minute", "PASTURE_RATE_ADDRESS": "off", "PASTURE_RATE_OPEN": ""}
    assert Rates.from_env(env) == Rates(caller=Rate(100), address=None)
    with pytest.raises(UsageError, match=r"^\$PASTURE_RATE_OPEN is a number of calls"):
        Rates.from_env({"PASTURE_RATE_OPEN": "many"})


def test_how_many_streams_is_a_number_or_off() -> None:
    assert Rates().streams == 100
    assert Rates.from_env({"PASTURE_STREAMS": "1,000"}).streams == 1000
    assert Rates.from_env({"PASTURE_STREAMS": "off"}).streams is None
    for bad in ("many", "-3", "2.5", "١٠"):
        with pytest.raises(UsageError) as caught:
            Rates.from_env({"PASTURE_STREAMS": bad})
        assert str(caught.value) == (
            f"$PASTURE_STREAMS is how many at most, like 100 (or off) — not {bad}"
        )


@given(st.integers(min_value=1, max_value=10**9), st.sampled_from(["{:d}", "{:,d}", " {:_d} "]))
def test_a_count_reads_back_as_written(count: int, form: str) -> None:
    assert most(form.format(count), "--streams") == count


# -- streams held open ---------------------------------------------------------------------
PEOPLE = [Caller(f"{n:016x}", f"p{n}") for n in range(3)]
VISITORS = [replace(NOBODY, address=a) for a in ("192.0.2.1", "2001:db8::1", "2001:db8::2")]


@given(
    st.integers(min_value=0, max_value=4),
    st.lists(st.tuples(st.booleans(), st.integers(min_value=0, max_value=5)), max_size=60),
)
def test_no_one_holds_more_streams_than_the_limit_and_each_end_gives_one_back(
    limit: int, steps: list[tuple[bool, int]]
) -> None:
    """Opening and closing in any order, over people and addresses (the two IPv6 visitors
    share one /64): refused exactly when that many are held, and a place given back once
    however often its stream says it ended."""
    streams = Streams(limit)
    callers = PEOPLE + VISITORS
    held: list[tuple[int, Callable[[], None]]] = []
    for opening, who in steps:
        key = who if who < 4 else 4  # the two visitors of one network are one
        counted = sum(1 for k, _ in held if k == key)
        if opening:
            if counted >= limit:
                with pytest.raises(TooMany, match=f"^too many live streams open — {limit} at"):
                    streams.hold(callers[who])
            else:
                held.append((key, streams.hold(callers[who])))
        elif held:
            _, release = held.pop(who % len(held))
            release()
            release()  # a stream that ends twice gives its place back once
        for k in range(5):
            assert streams.held(callers[k]) == sum(1 for h, _ in held if h == k)


def test_nobody_from_nowhere_is_not_counted_and_off_counts_nothing() -> None:
    assert Streams(0).hold(NOBODY)() is None
    off = Streams(None)
    for _ in range(1000):
        off.hold(PEOPLE[0])
    assert off.held(PEOPLE[0]) == 0


# -- buckets -------------------------------------------------------------------------------
def test_a_bucket_lets_its_count_through_then_says_how_long_to_wait(clock: Clock) -> None:
    buckets = Buckets(Rate(3, 60), clock)
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") == pytest.approx(20.0)  # one more in 60/3 seconds
    assert buckets.take("b") == 0.0  # another key has its own
    clock.wait(10)
    assert buckets.take("a") == pytest.approx(10.0)  # a refused call takes nothing
    clock.wait(10)
    assert buckets.take("a") == 0.0
    assert buckets.take("a") > 0
    clock.wait(60)  # after the whole window it is full again
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") > 0


def test_an_ipv6_address_is_counted_by_its_network() -> None:
    assert address_key("203.0.113.9") == "203.0.113.9"
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::2")
    assert address_key("2001:db8:1:2::1") != address_key("2001:db8:1:3::1")
    assert address_key("::ffff:203.0.113.9") == "203.0.113.9"
    assert address_key("testclient") == "testclient"


def test_the_limiter_refuses_with_a_sentence_that_says_what_to_do(clock: Clock) -> None:
    limiter = Limiter(Rates(caller=Rate(5), address=Rate(8), open_writes=Rate(3)), clock=clock)
    token = Caller("e1", "ada", via="token 4f3c")
    for _ in range(5):
        limiter.caller(token)
    with pytest.raises(TooMany) as refused:
        limiter.caller(token)
    assert refused.value.sentence == (
        "too many calls from this token — 5 a minute at most; try again in 12 s"
    )
    assert refused.value.status == 429 and refused.value.retry_after == 12
    limiter.caller(Caller("e1", "ada", via="token 9d9d"))  # another token of the same person
    limiter.caller(Caller("e2", "bo", via="session"))
    for _ in range(4):
        limiter.caller(Caller("e2", "bo", via="session"))
    with pytest.raises(TooMany, match=r"^too many calls from your sign-in — "):
        limiter.caller(Caller("e2", "bo", via="session"))
    limiter.caller(NOBODY)  # nobody is counted by address only
    for _ in range(8):
        limiter.address("198.51.100.7")
    with pytest.raises(TooMany) as refused:
        limiter.address("198.51.100.7")
    assert refused.value.sentence == (
        "too many calls from your address — 8 a minute at most; try again in 8 s"
    )
    limiter.address("198.51.100.8")
    clock.wait(60)
    limiter.caller(token)
    limiter.address("198.51.100.7")


def test_a_limit_that_is_off_counts_nothing(clock: Clock) -> None:
    limiter = Limiter(Rates(caller=None, address=None, open_writes=None), clock=clock)
    for _ in range(5000):
        limiter.caller(Caller("e1", "ada", via="token 4f3c"))
        limiter.address("198.51.100.7")
        limiter.open_write("198.51.100.7")


# -- anonymous writes to open apps --------------------------------------------------------------
def test_anonymous_writes_to_an_open_app_have_their_own_lower_limit(service: Service) -> None:
    ada = service.local_owner()
    service.deploy(ada, RUNS, app="runs", access="open")
    visitor = replace(NOBODY, address="198.51.100.7")
    service.run_command(
        visitor, "log_run", RUN, "ada/runs", via_web=True
    )  # one write, counted once
    service.apply(visitor, "ada/runs", [{"jog": {"who": "Cy", "miles": 1}}], via_web=True)
    service.apply(visitor, "ada/runs", [{"jog": {"who": "Cy", "miles": 2}}], via_web=True)
    with pytest.raises(TooMany) as refused:
        service.run_command(visitor, "log_run", RUN, "ada/runs", via_web=True)
    assert refused.value.sentence == (
        "too many changes from your address without signing in — 3 a minute at most; "
        "sign in, or try again in 20 s"
    )
    # reading is not writing; another address, and the app's own people, are not counted here
    service.run_command(visitor, "leaderboard", {}, "ada/runs", via_web=True)
    service.graph.query(visitor, "ada/runs", ".jog!", via_web=True)
    other = replace(NOBODY, address="198.51.100.8")
    service.apply(other, "ada/runs", [{"jog": {"who": "Di", "miles": 3}}], via_web=True)
    for _ in range(5):
        service.apply(ada, "ada/runs", [{"jog": {"who": "Ada", "miles": 4}}])
    rows = service.graph.query(ada, "ada/runs", ".jog!").data["rows"]
    assert len(rows) == 4 + 5


# -- signing in ------------------------------------------------------------------------------
def test_a_missing_name_and_a_wrong_password_are_refused_alike_after_the_same_check(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    ada = service.local_owner()
    service.people.new_user(ada, "nopass")  # a person with no password yet
    checked: list[str] = []
    check = identity.check_password

    def counting(password: str, stored: str | None) -> bool:
        checked.append(password)
        return check(password, stored)

    monkeypatch.setattr(identity, "check_password", counting)
    sentences = []
    for name, password in (
        ("ada", "wrong horse"),
        ("nobody-here", PASSWORD),
        ("nopass", PASSWORD),
        ("not a name!", PASSWORD),
    ):
        with pytest.raises(Unauthorized) as refused:
            service.sign_in(name, password, "198.51.100.7")
        sentences.append(refused.value.sentence)
    assert len(set(sentences)) == 1 and sentences[0].startswith(MISMATCH)
    # every try ran scrypt once, whether or not the name was anyone's
    assert checked == ["wrong horse", PASSWORD, PASSWORD, PASSWORD]
    assert identity.stand_in_hash().startswith("scrypt$")


def test_failures_for_a_name_are_slowed_then_refused_and_a_success_starts_again(
    service: Service, clock: Clock, slept: list[float]
) -> None:
    for n in range(10):
        with pytest.raises(Unauthorized, match=f"^{MISMATCH}"):
            service.sign_in("ada", f"guess {n}", f"198.51.100.{n}")  # a new address each time
    assert slept == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0, 2.0]  # from the 4th try on, growing
    with pytest.raises(TooMany) as refused:
        service.sign_in("ada", PASSWORD, "198.51.100.99")  # even the right password, for now
    assert refused.value.sentence == TOO_MANY_TRIES == "too many tries — wait a minute"
    assert refused.value.retry_after == 60
    with pytest.raises(TooMany):
        service.sign_in("ADA", PASSWORD, "198.51.100.99")  # a name in any case is the same name
    clock.wait(61)
    assert service.people.caller_for_session(service.sign_in("ada", PASSWORD, "198.51.100.99")).name
    slept.clear()
    for n in range(3):  # the count started again: refused as a mismatch, and not slowed
        with pytest.raises(Unauthorized):
            service.sign_in("ada", f"guess {n}", "198.51.100.99")
    assert slept == []


def test_the_next_failure_after_the_wait_refuses_for_another_minute(
    service: Service, clock: Clock
) -> None:
    for n in range(10):
        with pytest.raises(Unauthorized):
            service.sign_in("ada", f"guess {n}")
    clock.wait(61)
    with pytest.raises(Unauthorized):
        service.sign_in("ada", "one more guess")
    with pytest.raises(TooMany):
        service.sign_in("ada", PASSWORD)
    clock.wait(16 * 60)  # a quarter of an hour after the last failure, they are forgotten
    service.sign_in("ada", PASSWORD)


def test_failures_from_an_address_are_refused_for_every_name_but_not_elsewhere(
    service: Service, slept: list[float]
) -> None:
    for n in range(30):
        with pytest.raises(Unauthorized):
            service.sign_in(f"name{n}", PASSWORD, "198.51.100.7")
    assert len(slept) == 20  # from the 11th failure from that address
    with pytest.raises(TooMany, match=r"^too many tries — wait a minute$"):
        service.sign_in("ada", PASSWORD, "198.51.100.7")
    assert service.sign_in("ada", PASSWORD, "198.51.100.8")


def test_guessing_links_to_sign_in_is_counted_by_address(service: Service) -> None:
    for n in range(30):
        with pytest.raises(Unauthorized):
            service.session_for_link(f"psl_guess{n}", "198.51.100.7")
    with pytest.raises(TooMany, match=r"^too many tries"):
        service.session_for_link(service.sign_in_link(service.local_owner()), "198.51.100.7")
    assert service.session_for_link(service.sign_in_link(service.local_owner()), "198.51.100.8")


def test_a_flood_of_new_keys_frees_nobody_who_is_held(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A limit remembers so many keys; past that it forgets the freest, never all: one who
    sends from ever new addresses (IPv6 has plenty) would otherwise free everyone held —
    a caller at their rate, a name locked out after wrong passwords."""
    from pasture.platform.access import limits

    monkeypatch.setattr(limits, "_KEYS", 10)
    buckets = Buckets(Rate(3), clock)
    for _ in range(3):
        assert buckets.take("held") == 0.0
    assert buckets.take("held") > 0
    for n in range(50):
        buckets.take(f"2001:db8:{n}::1")
    assert buckets.take("held") > 0  # still held: nothing it had was forgotten

    tries = SignInTries(clock=clock, sleep=lambda s: None)
    for _ in range(10):
        tries.attempt("ada", None)
    with pytest.raises(TooMany):
        tries.attempt("ada", None)
    for n in range(50):
        tries.attempt(None, f"2001:db8:{n}::1")
    with pytest.raises(TooMany):
        tries.attempt("ada", None)
