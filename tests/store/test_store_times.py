"""Time phrases against a real store, with its clock set: every phrase and every edge, on
the stamps and on an app's own time column, in the server's time zone."""

from datetime import UTC, datetime, timedelta

import pytest
from store_fixtures import ADA, AnyStore, Clock
from test_times import NOW, PHRASES

from pasture.errors import Refused
from pasture.store.times import ZONE_SETTING

TICK = timedelta(microseconds=1)
OPERATORS = ["=", "!=", "<", "<=", ">", ">="]


def holds(op: str, t: datetime, start: datetime, end: datetime) -> bool:
    """What the operator means on a span `start <= t < end`."""
    return {
        "=": start <= t < end,
        "!=": not start <= t < end,
        ">=": t >= start,  # from its start
        "<=": t < end,  # up to its end
        ">": t >= end,  # after its end
        "<": t < start,  # before its start
    }[op]


def write_at(store: AnyStore, clock: Clock, moments: list[datetime]) -> dict[str, datetime]:
    """One run created at each moment: {its eid: when}."""
    made: dict[str, datetime] = {}
    for moment in sorted(set(moments)):
        clock.now = moment
        eid = store.apply({"jog": {"who": moment.isoformat()}}, ADA).entities[0]
        made[eid] = moment
    clock.now = NOW
    return made


def edges(start: datetime, end: datetime) -> list[datetime]:
    """Moments on and either side of each edge of a span, and one inside it."""
    return [start - TICK, start, start + (end - start) / 2, end - TICK, end]


def created(store: AnyStore, line: str) -> set[str]:
    return {r["entity"]["eid"] for r in store.query(f".jog!&{line}", ADA)}


@pytest.mark.parametrize(("phrase", "start", "end"), PHRASES)
def test_each_phrase_on_the_created_stamp(
    store: AnyStore, clock: Clock, phrase: str, start: datetime, end: datetime
) -> None:
    made = write_at(store, clock, edges(start, end))
    for op in OPERATORS:
        expected = {eid for eid, t in made.items() if holds(op, t, start, end)}
        assert created(store, f".created.at{op}{phrase}") == expected, op
    if not phrase[:4].isdigit():  # the spelling with dashes for spaces answers the same
        dashed = phrase.replace(" ", "-")
        assert created(store, f".created.at={dashed}") == created(store, f".created.at={phrase}")


@pytest.mark.parametrize("op", OPERATORS)
def test_each_edge_of_today_on_both_stamps(store: AnyStore, clock: Clock, op: str) -> None:
    start, end = datetime(2026, 9, 10, tzinfo=UTC), datetime(2026, 9, 11, tzinfo=UTC)
    made = write_at(store, clock, edges(start, end))
    expected = {eid for eid, t in made.items() if holds(op, t, start, end)}
    assert created(store, f".created.at{op}today") == expected
    assert created(store, f".updated.at{op}today") == expected


def test_created_today_is_every_row_created_today(store: AnyStore, clock: Clock) -> None:
    made = write_at(store, clock, [NOW - timedelta(hours=h) for h in (1, 5, 14, 15, 30)])
    today = {eid for eid, t in made.items() if t.date() == NOW.date()}
    assert len(today) == 3
    assert created(store, ".created.at=today") == today
    assert created(store, ".created.at=yesterday") == set(made) - today


def test_an_apps_own_time_holds_dates_and_moments(store: AnyStore, clock: Clock) -> None:
    clock.now = NOW
    kept = {
        "day before": "2026-09-09",
        "day": "2026-09-10",
        "day after": "2026-09-11",
        "second before": "2026-09-09T23:59:59Z",
        "first second": "2026-09-10T00:00:00Z",
        "last second": "2026-09-10T23:59:59Z",
        "second after": "2026-09-11T00:00:00Z",
        "micro before": "2026-09-09T23:59:59.999999Z",
        "first micro": "2026-09-10T00:00:00.000000Z",
        "last micro": "2026-09-10T23:59:59.999999Z",
    }
    for who, at in kept.items():
        store.apply({"jog": {"who": who, "at": at}}, ADA)
    store.apply({"jog": {"who": "never"}}, ADA)

    def whos(line: str) -> set[str]:
        return {r["jog"]["who"] for r in store.query(f".jog!&{line}", ADA)}

    inside = {"day", "first second", "last second", "first micro", "last micro"}
    before = {"day before", "second before", "micro before"}
    after = {"day after", "second after"}
    assert whos(".jog.at=today") == inside
    assert whos(".jog.at=2026-09-10") == inside
    assert whos(".jog.at!=today") == before | after | {"never"}
    assert whos(".jog.at<today") == before
    assert whos(".jog.at<=today") == before | inside
    assert whos(".jog.at>today") == after
    assert whos(".jog.at>=today") == inside | after
    # a moment of whole seconds against a bound inside a second: 14:30:15.123456
    store.apply({"jog": {"who": "this second", "at": "2026-09-10T14:30:15Z"}}, ADA)
    store.apply({"jog": {"who": "next second", "at": "2026-09-10T14:30:16Z"}}, ADA)
    later = {"last second", "last micro", "day after", "second after", "next second"}
    assert whos(".jog.at>=now") == later
    assert whos(".jog.at~=2026-09-10T14") == {"this second", "next second"}


def test_lists_and_ranges_of_phrases(store: AnyStore, clock: Clock) -> None:
    day = timedelta(days=1)
    made = write_at(store, clock, [NOW, NOW - day, NOW - 2 * day, NOW - 3 * day])
    ids = sorted(made, key=made.__getitem__)  # oldest first: 3, 2, 1, 0 days ago
    assert created(store, ".created.at=today,yesterday") == set(ids[2:])
    assert created(store, ".created.at!=today,yesterday") == set(ids[:2])
    assert created(store, ".created.at=3-days-ago..yesterday") == set(ids[:3])
    assert created(store, ".created.at=last-week...today") == set(ids[:3])
    assert created(store, ".created.at=3 days ago..today") == set(ids)


def test_a_phrase_is_read_afresh_each_time_it_runs(store: AnyStore, clock: Clock) -> None:
    made = write_at(store, clock, [NOW])
    assert created(store, ".created.at=today") == set(made)
    clock.now = NOW + timedelta(days=1)
    assert created(store, ".created.at=today") == set()
    assert created(store, ".created.at=yesterday") == set(made)


def test_days_and_clock_times_are_in_the_servers_zone(
    store: AnyStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 02:00 UTC on the 10th is still the 9th in New York (UTC-4)
    made = write_at(store, clock, [datetime(2026, 9, 10, 2, tzinfo=UTC)])
    assert created(store, ".created.at=2026-09-10") == set(made)
    monkeypatch.setenv(ZONE_SETTING, "America/New_York")
    assert created(store, ".created.at=2026-09-10") == set()  # not what was read in UTC
    assert created(store, ".created.at=2026-09-09") == set(made)
    assert created(store, ".created.at=yesterday") == set(made)  # NOW is 10:30 on the 10th
    assert created(store, ".created.at=2026-09-09T22:00") == set(made)
    assert created(store, ".created.at=2026-09-10T02:00Z") == set(made)
    monkeypatch.setenv(ZONE_SETTING, "Mars/Olympus_Mons")
    with pytest.raises(Refused, match="PASTURE_TIME_ZONE is 'Mars/Olympus_Mons'"):
        store.query(".created.at=today", ADA)


def test_a_moment_without_a_zone_is_the_servers_written_and_asked(
    store: AnyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ZONE_SETTING, "Europe/Paris")
    store.apply({"jog": {"who": "Ada", "miles": 5, "at": "2026-09-01T10:00"}}, ADA)
    [row] = store.query(".jog.at=2026-09-01T10:00", ADA)
    assert row["jog"]["at"] == "2026-09-01T08:00:00Z"  # kept in UTC
    assert store.query(".jog.at<2026-09-01T10:00", ADA) == []
    assert len(store.query(".jog.at=2026-09-01", ADA)) == 1


@pytest.mark.parametrize(
    ("line", "sentence"),
    [
        (
            ".created.at>=tuesday",
            "created.at is a time — write .created.at>=2026-09-01, a moment like "
            "2026-09-01T10:00, or a phrase: today, yesterday, 3-days-ago, last-week, 9am",
        ),
        (
            ".jog.at=2026-02-30",
            "jog.at is a time — write .jog.at=2026-09-01, a moment like 2026-09-01T10:00, or a "
            "phrase: today, yesterday, 3-days-ago, last-week, 9am",
        ),
        (
            ".created.at<99999999-weeks-ago",
            "99999999-weeks-ago reaches outside the years 1 to 9999: use a smaller number",
        ),
    ],
)
def test_a_time_that_cannot_be_read_is_refused_saying_how(
    store: AnyStore, line: str, sentence: str
) -> None:
    with pytest.raises(Refused) as caught:
        store.query(line, ADA)
    assert caught.value.sentence == sentence
