"""Limits shared by every process on the same data: each key's calls come out of one bucket
however many processes (or servers on one PostgreSQL database) count them, a process that
ends leaves nothing stuck, and when the shared counts fail each process counts its share.

A "process" here is a Limiter with counts of its own on the same limits.db (a Counts is one
process to the others); the Services are two on one data directory or one database. Time
is a clock the tests move by hand.
"""

from __future__ import annotations

import itertools
import logging
import sqlite3
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pasture.caller import Caller
from pasture.errors import TooMany, Unauthorized
from pasture.platform.access import leases
from pasture.platform.access.limits import TOO_MANY_TRIES, Limiter, Rate, Rates
from pasture.platform.db.counts import LEASE_SECONDS, Ask, Counts, Failures, Lent, SqliteCounts
from pasture.platform.service import Service

TOKEN = Caller("e1", "ada", via="token 4f3c")
PASSWORD = "correct horse"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now

    def wait(self, seconds: float) -> None:
        self.now += seconds


def process(path: Path, clock: Clock, rates: Rates) -> Limiter:
    """One process counting on the limits.db at `path` (it looks when a test says so)."""
    return Limiter(rates, clock=clock, counts=SqliteCounts(path), looking=False)


def let_through(limiter: Limiter, caller: Caller = TOKEN) -> bool:
    try:
        limiter.caller(caller)
    except TooMany:
        return False
    return True


@pytest.fixture
def clock() -> Clock:
    return Clock()


# -- the one bucket ------------------------------------------------------------------------
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    count=st.integers(1, 12),
    steps=st.lists(
        st.tuples(
            st.integers(0, 2),  # which process calls
            st.sampled_from(["a", "b"]),  # for which token
            st.sampled_from([0.0, 0.0, 0.0, 0.5, 5.0, 40.0]),  # the time that passed first
            st.booleans(),  # whether the processes look first (give back what is wanted)
        ),
        max_size=80,
    ),
)
def test_however_the_calls_fall_on_processes_no_more_get_through_than_one_bucket_lets(
    tmp_path: Path, count: int, steps: list[tuple[int, str, float, bool]]
) -> None:
    clock = Clock()
    path = tmp_path / f"{uuid.uuid4().hex}.db"
    rate = Rate(count, 60)
    processes = [process(path, clock, Rates(caller=rate)) for _ in range(3)]
    started = clock.now
    through = {"a": 0, "b": 0}
    try:
        for which, token, passed, look in steps:
            clock.wait(passed)
            if look:
                for limiter in processes:
                    assert limiter.shared is not None
                    limiter.shared.look()
            if let_through(processes[which], Caller("e1", "ada", via=f"token {token}")):
                through[token] += 1
            # never past the bucket's size and what it filled meanwhile
            assert through[token] <= count + (clock.now - started) * count / 60 + 1e-9
    finally:
        for limiter in processes:
            limiter.close()


def test_calls_through_two_processes_are_counted_once(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "limits.db"
    rates = Rates(caller=Rate(10, 3600))
    one, other = process(path, clock, rates), process(path, clock, rates)
    through = [let_through(p) for p in itertools.islice(itertools.cycle([one, other]), 40)]
    assert sum(through) == 10  # not 20: the one rate
    assert any(through[0::2]) and any(through[1::2])  # each let some through
    for p in (one, other):
        assert p.shared is not None
        p.shared.look()  # each lets go of what it held (all spent): nothing is lent
    clock.wait(1)  # (those refused were told a second, while others held some)
    with pytest.raises(TooMany) as refused:
        one.caller(TOKEN)
    assert refused.value.sentence == (
        "too many calls from this token — 10 an hour at most; try again in 359 s"
    )
    clock.wait(360)  # the bucket fills for everyone: one more, through either
    assert let_through(other)
    assert not let_through(one)
    one.close()
    other.close()


@settings(max_examples=30, deadline=None)
@given(which=st.lists(st.integers(0, 1), min_size=30, max_size=30))
def test_a_slow_rate_through_several_processes_is_never_refused_early(
    tmp_path_factory: pytest.TempPathFactory, which: list[int]
) -> None:
    # 20 an hour is lent a call at a time: no process holds tokens another is refused for
    clock = Clock()
    path = tmp_path_factory.mktemp("slow") / "limits.db"
    rates = Rates(caller=Rate(20, 3600))
    processes = [process(path, clock, rates), process(path, clock, rates)]
    try:
        through = [let_through(processes[n]) for n in which]
        assert through == [True] * 20 + [False] * 10
    finally:
        for limiter in processes:
            limiter.close()


def test_a_process_that_was_refused_gets_what_another_gives_back(
    tmp_path: Path, clock: Clock
) -> None:
    path = tmp_path / "limits.db"
    rates = Rates(caller=Rate(10, 60))  # fast enough that a lease is half the bucket
    one, other = process(path, clock, rates), process(path, clock, rates)
    assert let_through(one)  # it holds half the bucket now, and spent one of it
    for _ in range(5):  # the other takes the rest
        assert let_through(other)
    with pytest.raises(TooMany) as refused:
        other.caller(TOKEN)
    assert refused.value.retry_after == 1  # another holds some: they come back soon
    assert one.shared is not None and other.shared is not None
    one.shared.look()  # it sees the bucket was wanted, and gives back the 4 it held
    clock.wait(1)
    assert [let_through(other) for _ in range(5)] == [True] * 4 + [False]
    one.close()
    other.close()


def test_what_a_process_holds_comes_back_when_it_closes_or_ends(
    tmp_path: Path, clock: Clock
) -> None:
    path = tmp_path / "limits.db"
    rates = Rates(caller=Rate(10, 60))
    closing = process(path, clock, rates)
    assert let_through(closing)
    closing.close()  # gives back the 4 it held unspent
    ending = process(path, clock, rates)
    assert let_through(ending)  # ... and ends without giving back what it holds
    other = process(path, clock, rates)
    through = sum(let_through(other) for _ in range(20))
    assert through == 10 - 2 - 3  # the 3 the ended one held unspent are its, for now
    # Its hold runs out, and the bucket fills again as if it had spent them.
    clock.wait(LEASE_SECONDS * 2 + 60)
    assert sum(let_through(other) for _ in range(20)) == 10
    other.close()


# -- the counts failing ---------------------------------------------------------------------
class Flaky(Counts):
    """Real counts on a file, that fail while `broken`, as a disk or a database does."""

    def __init__(self, path: Path) -> None:
        self.real = SqliteCounts(path)
        self.broken = False
        super().__init__(self._never, self._never, self.real.process)

    def _never(self) -> AbstractContextManager[Any]:
        raise AssertionError("not used")

    def _check(self) -> None:
        if self.broken:
            raise sqlite3.OperationalError("disk I/O error")

    def lease(self, asks: Sequence[Ask], now: float) -> list[Lent]:
        self._check()
        return self.real.lease(asks, now)

    def wanted(self, since: float) -> list[tuple[str, str, float]]:
        self._check()
        return self.real.wanted(since)

    def alive(self, now: float, within: float) -> int:
        self._check()
        return self.real.alive(now, within)

    def leave(self) -> None:
        self._check()
        self.real.leave()

    def tidy(self, now: float, failures_before: float) -> None:
        self._check()
        self.real.tidy(now, failures_before)

    def failures(self, whose: Sequence[str], change: Callable[[Failures], Any]) -> Any:
        self._check()
        return self.real.failures(whose, change)

    def close(self) -> None:
        self.real.close()


def test_when_the_counts_fail_each_process_counts_its_share_and_owes_it_after(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(leases, "RETRY", 0.0)  # tried again at every call
    path = tmp_path / "limits.db"
    rates = Rates(caller=Rate(10, 3600))
    counts = [Flaky(path), Flaky(path)]
    processes = [Limiter(rates, clock=clock, counts=c, looking=False) for c in counts]
    warm = Caller("e2", "bo", via="token 9d9d")
    for p in processes:  # both say they are there ...
        assert let_through(p, warm)
    clock.wait(leases.ALIVE_EVERY)
    for p in processes:  # ... and see each other
        assert p.shared is not None
        p.shared.look()
        assert p.shared.processes == 2
    for c in counts:
        c.broken = True
    with caplog.at_level(logging.WARNING, logger="pasture.limits"):
        through = [let_through(p) for p in itertools.islice(itertools.cycle(processes), 40)]
    # No call waited on the counts nor was refused for them; each counted as one of two.
    assert sum(through) == 10
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2 and all(
        s.startswith("the counts of calls every process shares cannot be reached (")
        and s.endswith("each counts alone, as one of 2, until they can")
        for s in said
    ), said
    for c in counts:
        c.broken = False
    # Answering again, the bucket is charged what was let through meanwhile.
    for p in processes:
        assert p.shared is not None
        p.shared.look()
    assert not any(let_through(p) for p in processes for _ in range(3))
    for p in processes:
        p.close()


def test_a_limiter_on_counts_it_cannot_open_lets_its_share_through(
    tmp_path: Path, clock: Clock
) -> None:
    (tmp_path / "limits.db").mkdir()  # not a file SQLite can open
    limiter = process(tmp_path / "limits.db", clock, Rates(caller=Rate(3, 60)))
    assert [let_through(limiter) for _ in range(4)] == [True, True, True, False]
    limiter.close()


# -- on one data directory, or one database ----------------------------------------------------
@pytest.fixture
def two(tmp_path: Path, database: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Service]]:
    """Two Services sharing the data: one data directory on SQLite; on PostgreSQL, one
    database and a data directory each, as two machines would."""
    monkeypatch.setenv("PASTURE_USER", "ada")
    rates = Rates(caller=Rate(10, 3600))
    homes = [tmp_path / "home", tmp_path / ("home" if not database else "elsewhere")]
    services = [Service(home, rates=rates) for home in homes]
    clock = Clock()
    for service in services:
        service.limiter.clock = clock
        service.limiter.sign_in.sleep = lambda seconds: None
    services[0].people.set_password(services[0].local_owner(), PASSWORD)
    yield services
    for service in services:
        service.close()


def test_two_services_on_the_same_data_let_a_token_s_one_rate_through(
    two: list[Service],
) -> None:
    limiters = [s.limiter for s in two]
    through = [let_through(p) for p in itertools.islice(itertools.cycle(limiters), 40)]
    assert sum(through) == 10
    assert any(through[0::2]) and any(through[1::2])


def test_failed_sign_ins_are_counted_by_every_service_on_the_same_data(
    two: list[Service],
) -> None:
    for n in range(10):  # a new address each time: the name's count, over both
        with pytest.raises(Unauthorized):
            two[n % 2].sign_in("ada", f"guess {n}", f"198.51.100.{n}")
    for service in two:
        with pytest.raises(TooMany) as refused:
            service.sign_in("ada", PASSWORD, "198.51.100.99")
        assert refused.value.sentence == TOO_MANY_TRIES
    clock = two[0].limiter.clock
    assert isinstance(clock, Clock)
    clock.wait(61)
    assert two[1].sign_in("ada", PASSWORD, "198.51.100.99")
    for n in range(3):  # the count started again, for both
        with pytest.raises(Unauthorized):
            two[0].sign_in("ada", f"guess {n}", "198.51.100.99")
