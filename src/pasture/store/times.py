"""Time in a filter: a value compared with a time column is read as the span it names.

A value is a span of time, and the operator picks its edge (DESIGN.md §4):

    =   within it          start <= t < end
    !=  outside it         (or no time at all)
    >=  from its start     start <= t
    <=  up to its end      t < end
    >   after its end      end <= t
    <   before its start   t < start

The values, case aside, with `-` or `_` where a space may go (`3-days-ago`):

    now                                 the moment itself
    today  yesterday  tomorrow          a day
    this|last|next minute|hour|day|week|month|year
    5 minutes ago  2 hours ago  3d ago  from that long ago until now
    in 2 days  after 8h                 from now until then
    9am  9:30pm  14:00  noon  midnight  an hour (9am) or a minute, today;
                                        `9am tomorrow`, `yesterday 9pm`
    2026-09-01                          a day
    2026-09-01T10:00                    a minute (with seconds a second, with a
                                        fraction that microsecond; with Z or an
                                        offset, in that zone)

Days, weeks (from Monday), months, years and the clock are read in the server's
time zone, `PASTURE_TIME_ZONE` (an IANA name such as `Europe/Paris`; UTC when it
is not set), and so is a date or a moment written without a zone.
"""

from __future__ import annotations

import re
from calendar import monthrange
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo

from pasture.errors import Refused, echo
from pasture.values import ZONE_SETTING, server_zone, zone_name

# What a store reads the time from: an aware datetime (tests hand it a fixed one).
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The clock a store reads unless it is handed another."""
    return datetime.now(UTC)


# The phrases in a sentence that says how to write a time.
EXAMPLES = "today, yesterday, 3-days-ago, last-week, 9am"

_UNITS = {
    "s": "second",
    "sec": "second",
    "secs": "second",
    "m": "minute",
    "min": "minute",
    "mins": "minute",
    "h": "hour",
    "hr": "hour",
    "hrs": "hour",
    "d": "day",
    "w": "week",
    "mo": "month",
    "y": "year",
}
_WHOLE_UNITS = ("second", "minute", "hour", "day", "week", "month", "year")
_SIZE = {
    "second": timedelta(seconds=1),
    "minute": timedelta(minutes=1),
    "hour": timedelta(hours=1),
    "day": timedelta(days=1),
    "week": timedelta(weeks=1),
}
_ISO = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[t ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(z|[+-]\d{2}(?::?\d{2})?)?)?",
    re.ASCII,
)
_DAY_WORDS = {"yesterday": -1, "today": 0, "tomorrow": 1}
_CLOCK_12 = re.compile(r"(\d{1,2})(?::(\d{2}))?(am|pm)", re.ASCII)
_CLOCK_24 = re.compile(r"(\d{1,2}):(\d{2})", re.ASCII)
_AGO = re.compile(r"(\d{1,12}) ?([a-z]+) ago", re.ASCII)
_AHEAD = re.compile(r"(?:in|after) (\d{1,12}) ?([a-z]+)", re.ASCII)
EARLIEST = datetime.min.replace(tzinfo=UTC)
LATEST = datetime.max.replace(tzinfo=UTC)
_NAMED = re.compile(r"(this|last|next) (minute|hour|day|week|month|year)", re.ASCII)


@dataclass(frozen=True)
class Span:
    """The span a time value names: `start <= t < end`, both aware and in UTC.

    `moving`: it is counted from the clock (`today`, `3 days ago`), so a filter
    holding it is read afresh each time it runs. `local`: it is counted in the
    server's time zone (a day, a clock time, a moment written without a zone).
    """

    start: datetime
    end: datetime
    moving: bool = False
    local: bool = False


# -- reading a value ----------------------------------------------------------------------


def span(text: str, now: datetime, zone: tzinfo) -> Span | None:
    """The span `text` names, counted from `now` in `zone`; None when it names no time.

    Refused (saying so) when it names a time outside the years 1 to 9999.
    """
    raw = " ".join(text.strip().lower().split())
    now = now.astimezone(UTC) if now.tzinfo is not None else now.replace(tzinfo=UTC)
    iso = _ISO.fullmatch(raw)
    try:
        if iso is not None:
            return _written(iso, zone)
        # `-` and `_` stand for spaces (`3-days-ago`); a leading one makes no phrase
        return _phrase(re.sub(r"[-_]+", " ", raw), now, zone)
    except _NoSuchTime:
        return None
    except (OverflowError, ValueError):
        shown = echo(" ".join(text.split()), 60)
        if iso is not None:
            raise Refused(
                f"{shown} is outside the years 1 to 9999 in UTC — write a time within them"
            ) from None
        raise Refused(
            f"{shown} reaches outside the years 1 to 9999: use a smaller number"
        ) from None


class _NoSuchTime(ValueError):
    """Text shaped like a time that names none (2026-02-30, 25:00)."""


def _written(iso: re.Match[str], zone: tzinfo) -> Span:
    """A date or a moment as written: a day, a minute, a second, or a microsecond."""
    year, month, day, hour, minute, second, fraction, offset = iso.groups()
    try:
        on = date(int(year), int(month), int(day))
        if hour is None:
            return Span(*_days(on, 1, zone), local=True)
        micro = int((fraction or "0")[:6].ljust(6, "0"))
        at = time(int(hour), int(minute), int(second or 0), micro)
    except ValueError:
        raise _NoSuchTime() from None
    if offset is None:
        start = _at(datetime.combine(on, at), zone)
    else:  # a moment in a zone of its own names that moment, or is refused past the years
        start = datetime.combine(on, at, tzinfo=_offset(offset)).astimezone(UTC)
    if fraction is not None:
        size = timedelta(microseconds=1)
    elif second is not None:
        size = timedelta(seconds=1)
    else:
        size = timedelta(minutes=1)
    return Span(start, _later(start, size), local=offset is None)


def _offset(text: str) -> tzinfo:
    if text == "z":
        return UTC
    digits = text[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
    if hours > 23 or minutes > 59:
        raise _NoSuchTime()
    size = timedelta(hours=hours, minutes=minutes)
    return UTC if not size else timezone(-size if text[0] == "-" else size)


def _phrase(t: str, now: datetime, zone: tzinfo) -> Span | None:
    local = now.astimezone(zone)
    today = local.date()
    if t == "now":
        return Span(now, now, moving=True)
    if t in _DAY_WORDS:
        return Span(*_days(today + timedelta(days=_DAY_WORDS[t]), 1, zone), True, True)
    named = _NAMED.fullmatch(t)
    if named is not None:
        step = {"this": 0, "last": -1, "next": 1}[named.group(1)]
        return _named(named.group(2), step, local, zone)
    ago = _AGO.fullmatch(t)
    if ago is not None:
        unit = _unit(ago.group(2))
        if unit is None:
            return None
        return Span(_shift(now, -int(ago.group(1)), unit, zone), now, moving=True)
    ahead = _AHEAD.fullmatch(t)
    if ahead is not None:
        unit = _unit(ahead.group(2))
        if unit is None:
            return None
        return Span(now, _shift(now, int(ahead.group(1)), unit, zone), moving=True)
    return _clock(t, today, zone)


def _unit(word: str) -> str | None:
    if word in _UNITS:
        return _UNITS[word]
    single = word[:-1] if word.endswith("s") else word
    return single if single in _WHOLE_UNITS else None


def _shift(now: datetime, count: int, unit: str, zone: tzinfo) -> datetime:
    """`now` moved by `count` units: exact for seconds to weeks, by the calendar after."""
    if unit in _SIZE:
        return now + _SIZE[unit] * count
    local = now.astimezone(zone).replace(tzinfo=None)
    months = count * (12 if unit == "year" else 1)
    index = local.year * 12 + local.month - 1 + months
    year, month = divmod(index, 12)
    day = min(local.day, monthrange(year, month + 1)[1])  # 31 January + 1 month: 28 February
    moved = local.replace(year=year, month=month + 1, day=day)
    return _at(moved, zone)


def _named(unit: str, step: int, local: datetime, zone: tzinfo) -> Span:
    """`this|last|next <unit>`: the whole unit holding now, or the one before or after it."""
    wall = local.replace(tzinfo=None)
    if unit in ("minute", "hour"):
        # what of the unit has gone by on the wall clock, taken off the moment itself: exact
        # in an hour the clocks go back through twice
        gone = timedelta(seconds=local.second, microseconds=local.microsecond)
        if unit == "hour":
            gone += timedelta(minutes=local.minute)
        start = _later(local.astimezone(UTC) - gone, _SIZE[unit] * step)
        return Span(start, _later(start, _SIZE[unit]), True, True)
    if unit == "day":
        return Span(*_days(wall.date() + timedelta(days=step), 1, zone), True, True)
    if unit == "week":
        monday = wall.date() - timedelta(days=wall.weekday()) + timedelta(weeks=step)
        return Span(*_days(monday, 7, zone), True, True)
    if unit == "month":
        index = wall.year * 12 + wall.month - 1 + step
        first = date(index // 12, index % 12 + 1, 1)
        after = date((index + 1) // 12, (index + 1) % 12 + 1, 1)
        return Span(_midnight(first, zone), _midnight(after, zone), True, True)
    first = date(wall.year + step, 1, 1)
    return Span(_midnight(first, zone), _midnight(date(first.year + 1, 1, 1), zone), True, True)


def _clock(t: str, today: date, zone: tzinfo) -> Span | None:
    """A time of day — today, or the day a word beside it names: `9am`, `9am tomorrow`."""
    words = t.split(" ")
    shift = 0
    if len(words) > 1 and words[0] in _DAY_WORDS:
        shift, words = _DAY_WORDS[words[0]], words[1:]
    elif len(words) > 1 and words[-1] in _DAY_WORDS:
        shift, words = _DAY_WORDS[words[-1]], words[:-1]
    said = "".join(words)
    if said in ("noon", "midnight"):
        hour, minute, size = (12 if said == "noon" else 0), 0, timedelta(minutes=1)
    elif (twelve := _CLOCK_12.fullmatch(said)) is not None:
        hour = int(twelve.group(1))
        minute = int(twelve.group(2) or 0)
        if not 1 <= hour <= 12 or minute > 59:
            return None
        hour = hour % 12 + (12 if twelve.group(3) == "pm" else 0)
        size = timedelta(hours=1) if twelve.group(2) is None else timedelta(minutes=1)
    elif (plain := _CLOCK_24.fullmatch(said)) is not None:
        hour, minute = int(plain.group(1)), int(plain.group(2))
        if hour > 23 or minute > 59:
            return None
        size = timedelta(minutes=1)
    else:
        return None
    start = _at(datetime.combine(today + timedelta(days=shift), time(hour, minute)), zone)
    return Span(start, _later(start, size), True, True)


def _days(first: date, count: int, zone: tzinfo) -> tuple[datetime, datetime]:
    try:
        after = first + timedelta(days=count)
    except OverflowError:  # the days up to 9999-12-31 reach the end of time
        return _midnight(first, zone), LATEST
    return _midnight(first, zone), _midnight(after, zone)


def _midnight(day: date, zone: tzinfo) -> datetime:
    return _at(datetime.combine(day, time()), zone)


def _later(moment: datetime, size: timedelta) -> datetime:
    try:
        return moment + size
    except OverflowError:
        return LATEST


def _at(wall: datetime, zone: tzinfo) -> datetime:
    """A wall-clock time in `zone` as a UTC moment (the first or last there is, at the edges)."""
    try:
        return wall.replace(tzinfo=zone).astimezone(UTC)
    except OverflowError:
        return EARLIEST if wall.year == 1 else LATEST


# -- comparing with what the store keeps ----------------------------------------------------


def moment_text(moment: datetime) -> str:
    """A UTC moment as a bound on stored times (`2026-09-01T10:00:00.5Z` style values).

    Without the `Z`: a stored time at that very moment has this as its beginning,
    so it compares as equal or after, and one a microsecond before as before.
    """
    text = moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds")
    return text[:19] if text.endswith(".000000") else text


def whole_second_text(moment: datetime) -> str:
    """The bound a stored time of whole seconds (`…T10:00:00Z`) is compared with."""
    moment = moment.astimezone(UTC)
    if moment.microsecond:
        if moment.replace(microsecond=0) == LATEST.replace(microsecond=0):
            return "9999-12-31T23:59:60"  # after the last whole second there is
        moment = moment.replace(microsecond=0) + timedelta(seconds=1)
    return moment.replace(tzinfo=None).isoformat(timespec="seconds")


def day_text(moment: datetime, zone: tzinfo) -> str:
    """The bound a stored date is compared with: a date counts as its midnight in `zone`,
    so it is at or after `moment` exactly when it is at or after this first such day."""
    try:
        first = moment.astimezone(zone).date()
        if _midnight(first, zone) < moment:
            first += timedelta(days=1)
    except OverflowError:  # at the edges of time: before every date, or after every one
        return "0000-00-00" if moment.year == 1 else "9999-99-99"
    return first.isoformat()


__all__ = [
    "EXAMPLES",
    "ZONE_SETTING",
    "Clock",
    "Span",
    "day_text",
    "moment_text",
    "server_zone",
    "span",
    "utc_now",
    "whole_second_text",
    "zone_name",
]
