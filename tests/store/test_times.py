"""Time values in a filter: each phrase and each written time as the span it names,
in the server's time zone, and hypothesis over any text and any clock."""

from datetime import UTC, date, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pasture.errors import Refused
from pasture.store.grammar import format_filter, parse
from pasture.store.syntax import Compare, Filter, Has
from pasture.store.times import (
    ZONE_SETTING,
    Span,
    day_text,
    moment_text,
    server_zone,
    span,
    whole_second_text,
)

# A Thursday afternoon, to the microsecond.
NOW = datetime(2026, 9, 10, 14, 30, 15, 123456, tzinfo=UTC)
NEW_YORK = ZoneInfo("America/New_York")  # UTC-4 in September
KIRITIMATI = ZoneInfo("Pacific/Kiritimati")  # UTC+14: already Friday there


def at(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


def days(first: date, count: int = 1) -> tuple[datetime, datetime]:
    start = datetime.combine(first, datetime.min.time(), tzinfo=UTC)
    return start, start + timedelta(days=count)


THU = date(2026, 9, 10)

# Every phrase of the grammar, as it reads at NOW in UTC: (text, start, end).
PHRASES: list[tuple[str, datetime, datetime]] = [
    ("now", NOW, NOW),
    ("today", *days(THU)),
    ("yesterday", *days(THU - timedelta(days=1))),
    ("tomorrow", *days(THU + timedelta(days=1))),
    ("this minute", at(2026, 9, 10, 14, 30), at(2026, 9, 10, 14, 31)),
    ("last minute", at(2026, 9, 10, 14, 29), at(2026, 9, 10, 14, 30)),
    ("next minute", at(2026, 9, 10, 14, 31), at(2026, 9, 10, 14, 32)),
    ("this hour", at(2026, 9, 10, 14), at(2026, 9, 10, 15)),
    ("last hour", at(2026, 9, 10, 13), at(2026, 9, 10, 14)),
    ("next hour", at(2026, 9, 10, 15), at(2026, 9, 10, 16)),
    ("this day", *days(THU)),
    ("last day", *days(THU - timedelta(days=1))),
    ("next day", *days(THU + timedelta(days=1))),
    ("this week", *days(date(2026, 9, 7), 7)),  # from Monday
    ("last week", *days(date(2026, 8, 31), 7)),
    ("next week", *days(date(2026, 9, 14), 7)),
    ("this month", at(2026, 9, 1), at(2026, 10, 1)),
    ("last month", at(2026, 8, 1), at(2026, 9, 1)),
    ("next month", at(2026, 10, 1), at(2026, 11, 1)),
    ("this year", at(2026, 1, 1), at(2027, 1, 1)),
    ("last year", at(2025, 1, 1), at(2026, 1, 1)),
    ("next year", at(2027, 1, 1), at(2028, 1, 1)),
    ("30 seconds ago", NOW - timedelta(seconds=30), NOW),
    ("5 minutes ago", NOW - timedelta(minutes=5), NOW),
    ("2 hours ago", NOW - timedelta(hours=2), NOW),
    ("3 days ago", NOW - timedelta(days=3), NOW),
    ("2 weeks ago", NOW - timedelta(weeks=2), NOW),
    ("1 month ago", NOW.replace(month=8), NOW),
    ("1 year ago", NOW.replace(year=2025), NOW),
    ("in 2 days", NOW, NOW + timedelta(days=2)),
    ("in 3 months", NOW, NOW.replace(month=12)),
    ("after 8h", NOW, NOW + timedelta(hours=8)),
    ("9am", at(2026, 9, 10, 9), at(2026, 9, 10, 10)),
    ("9:30pm", at(2026, 9, 10, 21, 30), at(2026, 9, 10, 21, 31)),
    ("12am", at(2026, 9, 10, 0), at(2026, 9, 10, 1)),
    ("12pm", at(2026, 9, 10, 12), at(2026, 9, 10, 13)),
    ("14:00", at(2026, 9, 10, 14), at(2026, 9, 10, 14, 1)),
    ("noon", at(2026, 9, 10, 12), at(2026, 9, 10, 12, 1)),
    ("midnight", at(2026, 9, 10), at(2026, 9, 10, 0, 1)),
    ("9am tomorrow", at(2026, 9, 11, 9), at(2026, 9, 11, 10)),
    ("yesterday 9pm", at(2026, 9, 9, 21), at(2026, 9, 9, 22)),
    ("2026-09-01", *days(date(2026, 9, 1))),
    ("2026-09-01T10:00", at(2026, 9, 1, 10), at(2026, 9, 1, 10, 1)),
    ("2026-09-01 10:00", at(2026, 9, 1, 10), at(2026, 9, 1, 10, 1)),
    ("2026-09-01T10:00:05", at(2026, 9, 1, 10, 0, 5), at(2026, 9, 1, 10, 0, 6)),
    ("2026-09-01T10:00:05Z", at(2026, 9, 1, 10, 0, 5), at(2026, 9, 1, 10, 0, 6)),
    ("2026-09-01T12:00+02:00", at(2026, 9, 1, 10), at(2026, 9, 1, 10, 1)),
    ("2026-09-01T06:00-0400", at(2026, 9, 1, 10), at(2026, 9, 1, 10, 1)),
    (
        "2026-09-01T10:00:00.5Z",
        at(2026, 9, 1, 10, 0, 0, 500000),
        at(2026, 9, 1, 10, 0, 0, 500001),
    ),
]


@pytest.mark.parametrize(("text", "start", "end"), PHRASES)
def test_each_phrase_names_its_span(text: str, start: datetime, end: datetime) -> None:
    found = span(text, NOW, UTC)
    assert found is not None
    assert (found.start, found.end) == (start, end)


@pytest.mark.parametrize(
    ("text", "same_as"),
    [
        ("3-days-ago", "3 days ago"),
        ("3_days_ago", "3 days ago"),
        ("3d ago", "3 days ago"),
        ("3d-ago", "3 days ago"),
        ("3days ago", "3 days ago"),
        ("1-day-ago", "1 days ago"),
        ("5m-ago", "5 minutes ago"),
        ("5-mins-ago", "5 minutes ago"),
        ("2h ago", "2 hours ago"),
        ("2-hrs-ago", "2 hours ago"),
        ("1mo ago", "1 month ago"),
        ("1y ago", "1 year ago"),
        ("in-2-days", "in 2 days"),
        ("in 2d", "in 2 days"),
        ("after 2 days", "in 2 days"),
        ("last-week", "last week"),
        ("this_month", "this month"),
        (" Today ", "today"),
        ("TODAY", "today"),
        ("9 am", "9am"),
        ("9AM", "9am"),
        ("9am-today", "9am"),
        ("tomorrow 9am", "9am tomorrow"),
        ("2026-09-01t10:00z", "2026-09-01T10:00Z"),
    ],
)
def test_a_phrase_has_other_spellings(text: str, same_as: str) -> None:
    assert span(text, NOW, UTC) == span(same_as, NOW, UTC)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "tuesday",
        "three-days-ago",
        "3-days",
        "-3-days-ago",
        "3-fortnights-ago",
        "in 3 fortnights",
        "2026-02-30",
        "2026-13-01",
        "2026-09-01T25:00",
        "2026-09-01T10:00+25:00",
        "13pm",
        "0am",
        "9:60pm",
        "24:00",
        "09/01/2026",
        "next tuesday",
        "3 days from now",
    ],
)
def test_text_that_names_no_time_is_none(text: str) -> None:
    assert span(text, NOW, UTC) is None


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        (
            "9999999-days-ago",
            "9999999-days-ago reaches outside the years 1 to 9999: use a smaller number",
        ),
        (
            "in 99999 years",
            "in 99999 years reaches outside the years 1 to 9999: use a smaller number",
        ),
        (
            "9999-12-31T23:59-23:59",
            "9999-12-31T23:59-23:59 is outside the years 1 to 9999 in UTC — write a time within "
            "them",
        ),
    ],
)
def test_a_time_outside_the_years_is_refused(text: str, sentence: str) -> None:
    with pytest.raises(Refused) as caught:
        span(text, NOW, UTC)
    assert caught.value.sentence == sentence


def test_what_moves_with_the_clock_and_what_the_zone_decides() -> None:
    def flags(text: str) -> tuple[bool, bool]:
        found = span(text, NOW, UTC)
        assert found is not None
        return found.moving, found.local

    assert flags("today") == (True, True)
    assert flags("3 days ago") == (True, False)
    assert flags("now") == (True, False)
    assert flags("2026-09-01") == (False, True)
    assert flags("2026-09-01T10:00") == (False, True)
    assert flags("2026-09-01T10:00Z") == (False, False)


# -- the server's time zone ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "zone", "start", "end"),
    [
        ("today", NEW_YORK, at(2026, 9, 10, 4), at(2026, 9, 11, 4)),
        ("yesterday", NEW_YORK, at(2026, 9, 9, 4), at(2026, 9, 10, 4)),
        ("9am", NEW_YORK, at(2026, 9, 10, 13), at(2026, 9, 10, 14)),
        ("2026-09-01", NEW_YORK, at(2026, 9, 1, 4), at(2026, 9, 2, 4)),
        ("2026-09-01T10:00", NEW_YORK, at(2026, 9, 1, 14), at(2026, 9, 1, 14, 1)),
        ("2026-09-01T10:00Z", NEW_YORK, at(2026, 9, 1, 10), at(2026, 9, 1, 10, 1)),
        ("3 days ago", NEW_YORK, NOW - timedelta(days=3), NOW),
        # 04:30 on Friday the 11th in Kiritimati
        ("today", KIRITIMATI, at(2026, 9, 10, 10), at(2026, 9, 11, 10)),
        ("this week", KIRITIMATI, at(2026, 9, 6, 10), at(2026, 9, 13, 10)),
        ("9am", KIRITIMATI, at(2026, 9, 10, 19), at(2026, 9, 10, 20)),
        ("this month", KIRITIMATI, at(2026, 8, 31, 10), at(2026, 9, 30, 10)),
        # the day the clocks go back in New York is 25 hours long
        ("2026-11-01", NEW_YORK, at(2026, 11, 1, 4), at(2026, 11, 2, 5)),
    ],
)
def test_days_and_clock_times_are_the_server_zones(
    text: str, zone: tzinfo, start: datetime, end: datetime
) -> None:
    found = span(text, NOW, zone)
    assert found is not None
    assert (found.start, found.end) == (start, end)


def test_the_zone_is_the_setting_or_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ZONE_SETTING, raising=False)
    assert server_zone() is UTC
    monkeypatch.setenv(ZONE_SETTING, "  ")
    assert server_zone() is UTC
    monkeypatch.setenv(ZONE_SETTING, "America/New_York")
    assert server_zone() == NEW_YORK
    monkeypatch.setenv(ZONE_SETTING, "Mars/Olympus_Mons")
    with pytest.raises(Refused) as caught:
        server_zone()
    assert caught.value.sentence == (
        "PASTURE_TIME_ZONE is 'Mars/Olympus_Mons', which is no time zone known here — the "
        "server's owner sets it to an IANA name like Europe/Paris, or leaves it unset for UTC"
    )


# -- the bounds stored times are compared with ------------------------------------------------


def test_a_bound_compares_with_each_form_of_stored_time() -> None:
    moment = at(2026, 9, 1, 10, 0, 0, 500000)
    bound = moment_text(moment)
    assert bound == "2026-09-01T10:00:00.500000"
    assert "2026-09-01T10:00:00.500000Z" >= bound > "2026-09-01T10:00:00.499999Z"
    assert moment_text(at(2026, 9, 1, 10)) == "2026-09-01T10:00:00"
    assert "2026-09-01T10:00:00.000000Z" >= "2026-09-01T10:00:00" > "2026-09-01T09:59:59.999999Z"
    # a time of whole seconds is at or after the moment from the next whole second
    assert whole_second_text(moment) == "2026-09-01T10:00:01"
    assert whole_second_text(at(2026, 9, 1, 10)) == "2026-09-01T10:00:00"
    # a date is at or after the moment from the first midnight at or after it
    assert day_text(at(2026, 9, 1), UTC) == "2026-09-01"
    assert day_text(moment, UTC) == "2026-09-02"
    assert day_text(at(2026, 9, 1, 3), NEW_YORK) == "2026-09-01"
    assert day_text(at(2026, 9, 1, 5), NEW_YORK) == "2026-09-02"


# -- any text, any clock ---------------------------------------------------------------------

_MOMENTS = st.datetimes(
    min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
)
_ZONES = st.sampled_from(
    [UTC, NEW_YORK, KIRITIMATI, ZoneInfo("Asia/Kolkata"), ZoneInfo("Europe/Paris")]
)
_UNITS = ["minute", "hour", "day", "week", "month", "year"]
_WORDS = st.sampled_from(
    [
        "now",
        "today",
        "yesterday",
        "tomorrow",
        "this",
        "last",
        "next",
        "in",
        "after",
        "ago",
        "am",
        "pm",
        "noon",
        "midnight",
        *_UNITS,
        "s",
        "d",
        "mo",
        " ",
        "-",
        "_",
        ":",
        "T",
        "Z",
        "+",
        ".",
    ]
)
_TIMEISH = st.lists(st.one_of(_WORDS, st.integers(0, 99999).map(str)), max_size=8).map("".join)


@given(st.one_of(st.text(), _TIMEISH), _MOMENTS, _ZONES)
@example("9" * 5000 + " days ago", NOW, UTC)
@example("99999999\n\tdays ago", NOW, UTC)
@example("0001-01-01", NOW, KIRITIMATI)
@example("9999-12-31", NOW, NEW_YORK)
def test_any_text_names_a_span_no_time_or_is_refused(
    text: str, now: datetime, zone: tzinfo
) -> None:
    try:
        found = span(text, now, zone)
    except Refused as refused:
        assert refused.sentence and "\n" not in refused.sentence
        return
    if found is not None:
        assert found.start <= found.end
        assert found.start.tzinfo is UTC and found.end.tzinfo is UTC


def _span(text: str, now: datetime, zone: tzinfo) -> Span:
    found = span(text, now, zone)
    assert found is not None, text
    return found


@given(_MOMENTS, _ZONES)
def test_named_spans_tile_time_around_now(now: datetime, zone: tzinfo) -> None:
    today = _span("today", now, zone)
    assert today.start <= now < today.end
    assert _span("yesterday", now, zone).end == today.start
    assert _span("tomorrow", now, zone).start == today.end
    for unit in _UNITS:
        this = _span(f"this {unit}", now, zone)
        assert this.start <= now < this.end, unit
        assert _span(f"last-{unit}", now, zone).end == this.start, unit
        assert _span(f"next_{unit}", now, zone).start == this.end, unit
    monday = _span("this week", now, zone).start.astimezone(zone)
    # midnight, or just after where the clocks jump over it
    assert monday.weekday() == 0 and monday.hour in (0, 1)


@given(_MOMENTS, _ZONES, st.integers(0, 5000), st.sampled_from(["minute", "hour", "day", "week"]))
def test_so_long_ago_and_in_so_long_round_trip(
    now: datetime, zone: tzinfo, count: int, unit: str
) -> None:
    size = timedelta(**{unit + "s": count})
    ago = _span(f"{count} {unit}s ago", now, zone)
    assert (ago.start, ago.end) == (now - size, now)
    assert _span(f"{count}-{unit}s-ago", now, zone) == ago
    assert _span(f"{count}{unit[0]} ago", now, zone) == ago
    ahead = _span(f"in {count} {unit}s", now, zone)
    assert (ahead.start, ahead.end) == (now, now + size)


@given(_MOMENTS, _ZONES)
def test_a_time_written_out_reads_back_as_the_span_holding_it(now: datetime, zone: tzinfo) -> None:
    local = now.astimezone(zone)
    day = _span(local.date().isoformat(), now, zone)
    today = _span("today", now, zone)
    assert (day.start, day.end) == (today.start, today.end)
    minute = _span(local.strftime("%Y-%m-%dT%H:%M"), now, zone)
    assert minute.start <= now < minute.end or local.fold  # an hour the clocks repeat
    exact = _span(now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), now, zone)
    assert (exact.start, exact.end) == (now, now + timedelta(microseconds=1))


@given(
    st.sampled_from([text for text, _, _ in PHRASES]),
    st.sampled_from(["=", "!=", "<", "<=", ">", ">="]),
)
def test_a_phrase_in_a_filter_reads_back_as_itself(text: str, op: str) -> None:
    for written in (text, text.replace(" ", "-")):
        line = f".jog!&.created.at{op}{written}"
        parsed = parse(line)
        assert parsed == Filter((Has("jog"), Compare(("created", "at"), op, (written,))))
        assert parse(format_filter(parsed)) == parsed
