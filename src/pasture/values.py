"""The five declared types a component's columns and a command's arguments use.

`text`, `number`, `bool`, `time` and `url`. A vocabulary's JSON Schema property
maps onto one of them (`type_of_property`); a declared command's argument is
converted to one of them from whatever a model sent (`convert`), refused in the
spec's own words when it cannot be.

What the store keeps bounds what a value may be: a whole number fits in 64
bits (`MIN_WHOLE`..`MAX_WHOLE`; a larger one is written as a decimal, kept as
a double), a decimal is finite, and text is made of whole characters (no lone
UTF-16 surrogate, which neither SQLite nor PostgreSQL can keep).
"""

from __future__ import annotations

import math
import os
import re
from datetime import UTC, date, datetime, tzinfo
from functools import lru_cache
from typing import Any, Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pasture.errors import Refused

ValueType = Literal["text", "number", "bool", "time", "url"]
TYPES: tuple[ValueType, ...] = ("text", "number", "bool", "time", "url")

TIME_FORMAT = "2026-09-01 or 2026-09-01T10:00:00Z"
MIN_WHOLE = -(2**63)
MAX_WHOLE = 2**63 - 1
URL_FORMAT = "https://example.com/page"

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_PLAIN_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_PLAIN_MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}Z", re.ASCII)


class BadValue(ValueError):
    """A value that is not of its declared type; the message is the refusal."""


class OutOfRange(BadValue):
    """A whole number beyond what the store keeps: the message says the range."""


def out_of_range(name: str) -> OutOfRange:
    return OutOfRange(
        f"{name} is a number between {MIN_WHOLE} and {MAX_WHOLE} — write a larger one "
        "as a decimal, like 1.2e21"
    )


def lone_surrogate(text: str) -> str | None:
    """The first lone UTF-16 surrogate in `text`, escaped (`\\ud800`), or None when there is none.

    Such a code point is half of a pair, not a character: no database keeps it,
    and no UTF-8 encoder writes it. JSON can carry one (`"\\ud800"`), and so can
    a command line that was given bytes that are not UTF-8.
    """
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return text[e.start].encode("unicode_escape").decode("ascii")
    return None


def not_characters(name: str, surrogate: str) -> str:
    """The refusal for text holding a lone surrogate (see `lone_surrogate`)."""
    return (
        f"{name} holds {surrogate}, half of a UTF-16 surrogate pair and not a character — "
        "send text as whole characters"
    )


def is_type(name: object) -> bool:
    return isinstance(name, str) and name in TYPES


def json_schema(kind: ValueType) -> dict[str, Any]:
    """The JSON Schema an argument of this type is listed with."""
    if kind == "number":
        return {"type": "number"}
    if kind == "bool":
        return {"type": "boolean"}
    if kind == "time":
        # A date alone is a time too: a client that checks formats must accept 2026-09-01.
        return {
            "type": "string",
            "anyOf": [{"format": "date"}, {"format": "date-time"}],
            "description": f"a time: {TIME_FORMAT}",
        }
    if kind == "url":
        return {"type": "string", "format": "uri", "description": f"a web address: {URL_FORMAT}"}
    return {"type": "string"}


def type_of_property(prop: object) -> ValueType | None:
    """The declared type of a vocabulary property, or None if it has none of the five."""
    if not isinstance(prop, dict):
        return None
    kind = prop.get("type")
    if kind == "string":
        fmt = prop.get("format")
        if fmt == "date-time" or _date_or_date_time(prop):
            return "time"
        if fmt == "uri":
            return "url"
        return "text" if fmt is None else None
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "bool"
    return None


def _date_or_date_time(prop: dict[Any, Any]) -> bool:
    """Whether a property says `anyOf` a date or a date-time, as `json_schema("time")` does."""
    either = prop.get("anyOf")
    if not isinstance(either, list) or not either:
        return False
    formats = {f.get("format") for f in either if isinstance(f, dict)}
    return len(formats) == len(either) and formats <= {"date", "date-time"}


# The server's time zone: where a date or a moment written without a zone is read, as a
# value written and in a filter (`pasture.store.times`).
ZONE_SETTING = "PASTURE_TIME_ZONE"


def zone_name() -> str:
    """The server's time zone as set (`PASTURE_TIME_ZONE`), or UTC."""
    return os.environ.get(ZONE_SETTING, "").strip() or "UTC"


def server_zone() -> tzinfo:
    """The server's time zone; Refused with how to set it when it names none."""
    return _zone(zone_name())


@lru_cache(maxsize=16)
def _zone(name: str) -> tzinfo:
    if name.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise Refused(
            f"{ZONE_SETTING} is {name[:60]!r}, which is no time zone known here — the server's "
            "owner sets it to an IANA name like Europe/Paris, or leaves it unset for UTC"
        ) from None


def normalize_time(text: str) -> str:
    """A time as the store keeps it: a date stays a date, a moment becomes UTC `…Z`.

    Raises ValueError when the text is neither.
    """
    text = text.strip()
    # The two forms nearly every caller sends take a short way; any other form (an
    # offset, a fraction, digits of another script) takes the general one, which
    # gives these two the same answers.
    if _PLAIN_DATE.fullmatch(text):
        date.fromisoformat(text)  # ValueError for a day there is not, like 2026-02-30
        return text
    if _PLAIN_MOMENT.fullmatch(text):
        datetime.fromisoformat(text[:-1])  # ValueError for a moment there is not
        return text if text[10] == "T" else f"{text[:10]}T{text[11:]}"
    return _normalize_time(text)


def _normalize_time(text: str) -> str:
    """`normalize_time` for any form, of a stripped text."""
    if _DATE.match(text):
        datetime.strptime(text, "%Y-%m-%d")
        return text
    moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace(" ", "T", 1))
    if moment.tzinfo is None:  # written without a zone: the server's, as a filter reads it
        moment = moment.replace(tzinfo=server_zone())
    try:
        moment = moment.astimezone(UTC)
    except OverflowError:  # an offset that carries it past the year 9999 or before 1
        raise ValueError(f"{text} is out of the years 1 to 9999 in UTC") from None
    spec = "seconds" if moment.microsecond == 0 else "microseconds"
    return moment.replace(tzinfo=None).isoformat(timespec=spec) + "Z"


def now(timespec: Literal["seconds", "microseconds"] = "microseconds") -> str:
    """This moment in UTC as pasture writes one: to the microsecond, as the store stamps
    (`2026-09-01T10:00:00.000000Z`), or to the second, as the platform's records keep it
    (`2026-09-01T10:00:00Z`). One precision per table: they are compared as text."""
    return datetime.now(UTC).replace(tzinfo=None).isoformat(timespec=timespec) + "Z"


def stamp(moment: datetime) -> str:
    """A moment as the store stamps it: UTC, to the microsecond (`2026-09-01T10:00:00.000000Z`)."""
    moment = moment.astimezone(UTC) if moment.tzinfo is not None else moment
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def is_url(text: str) -> bool:
    parts = urlsplit(text)
    return bool(parts.scheme) and bool(parts.netloc or parts.scheme in ("mailto", "tel"))


def convert(name: str, kind: ValueType, value: Any) -> Any:
    """`value` as `kind`, converting text a model sent (`"5"` → 5, `"true"` → True).

    Raises `BadValue` with the sentence the caller sees: `miles is a number`.
    """
    if kind == "number":
        if isinstance(value, bool):
            raise BadValue(f"{name} is a number")
        if isinstance(value, int):
            if not MIN_WHOLE <= value <= MAX_WHOLE:
                raise out_of_range(name)
            return value
        if isinstance(value, float):
            if not math.isfinite(value):
                raise BadValue(f"{name} is a number")
            return value
        if isinstance(value, str):
            return _number(name, value)
        raise BadValue(f"{name} is a number")
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise BadValue(f"{name} is true or false")
    if not isinstance(value, str):
        if kind == "text" and isinstance(value, int | float) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):
                raise BadValue(_wanted(name, kind))
            try:
                return str(value)
            except ValueError:  # a whole number of more digits than Python writes out
                raise BadValue(_wanted(name, kind)) from None
        raise BadValue(_wanted(name, kind))
    surrogate = lone_surrogate(value)
    if surrogate is not None:
        raise BadValue(not_characters(name, surrogate))
    if kind == "time":
        try:
            return normalize_time(value)
        except ValueError:
            raise BadValue(_wanted(name, kind)) from None
    if kind == "url":
        if not is_url(value.strip()):
            raise BadValue(_wanted(name, kind))
        return value.strip()
    return value


def _wanted(name: str, kind: ValueType) -> str:
    if kind == "time":
        return f"{name} is a time, like {TIME_FORMAT}"
    if kind == "url":
        return f"{name} is a web address, like {URL_FORMAT}"
    return f"{name} is text"


def _number(name: str, text: str) -> int | float:
    stripped = text.strip()
    try:
        number = int(stripped)
    except ValueError:
        try:
            real = float(stripped)
        except ValueError:
            raise BadValue(f"{name} is a number") from None
        if not math.isfinite(real):
            raise BadValue(f"{name} is a number") from None
        if real.is_integer() and "e" not in stripped.lower() and -(2.0**63) <= real < 2.0**63:
            return int(real)
        return real
    if not MIN_WHOLE <= number <= MAX_WHOLE:
        raise out_of_range(name)
    return number


def same_type(kind: ValueType, value: object) -> bool:
    """Whether a stored value already has the declared type (no conversion)."""
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    return isinstance(value, str)


__all__ = [
    "MAX_WHOLE",
    "MIN_WHOLE",
    "TIME_FORMAT",
    "TYPES",
    "URL_FORMAT",
    "BadValue",
    "OutOfRange",
    "ValueType",
    "convert",
    "is_type",
    "json_schema",
    "lone_surrogate",
    "normalize_time",
    "not_characters",
    "now",
    "out_of_range",
    "same_type",
    "type_of_property",
]
