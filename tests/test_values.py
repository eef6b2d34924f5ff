"""The five declared types: conversion from what a model sent, and its refusals."""

import math
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from pasture.values import BadValue, convert, json_schema, normalize_time, type_of_property

# What a client that checks formats does with a listed argument's schema.
FORMATS = Draft202012Validator.FORMAT_CHECKER


def test_text_a_number_sent_as_a_string_becomes_a_number() -> None:
    assert convert("miles", "number", "5") == 5
    assert convert("miles", "number", "5.5") == 5.5
    assert convert("miles", "number", 7) == 7


@pytest.mark.parametrize(
    ("kind", "value", "sentence"),
    [
        ("number", "many", "miles is a number"),
        ("number", True, "miles is a number"),
        ("number", "nan", "miles is a number"),
        ("bool", "maybe", "miles is true or false"),
        ("text", {"a": 1}, "miles is text"),
        ("time", "tuesday", "miles is a time, like 2026-09-01 or 2026-09-01T10:00:00Z"),
        ("url", "not a url", "miles is a web address, like https://example.com/page"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_in_plain_words(
    kind: str, value: object, sentence: str
) -> None:
    with pytest.raises(BadValue) as refused:
        convert("miles", kind, value)  # type: ignore[arg-type]
    assert str(refused.value) == sentence


def test_bool_accepts_the_words_true_and_false() -> None:
    assert convert("ready", "bool", "true") is True
    assert convert("ready", "bool", "False") is False
    assert convert("ready", "bool", True) is True


def test_times_are_kept_in_utc_and_dates_stay_dates() -> None:
    assert normalize_time("2026-09-01") == "2026-09-01"
    assert normalize_time("2026-09-01T12:00:00+02:00") == "2026-09-01T10:00:00Z"
    assert convert("at", "time", "2026-09-01T10:00:00Z") == "2026-09-01T10:00:00Z"


def test_a_moment_written_without_a_zone_is_the_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    assert normalize_time("2026-09-01T10:00") == "2026-09-01T10:00:00Z"  # UTC unless set
    monkeypatch.setenv("PASTURE_TIME_ZONE", "Europe/Paris")
    assert normalize_time("2026-09-01T10:00") == "2026-09-01T08:00:00Z"  # summer: +02:00
    assert normalize_time("2026-12-01 10:00:00") == "2026-12-01T09:00:00Z"  # winter: +01:00
    assert normalize_time("2026-09-01T10:00:00Z") == "2026-09-01T10:00:00Z"  # a zone wins
    assert normalize_time("2026-09-01") == "2026-09-01"  # a date stays a date


def test_a_client_that_checks_formats_accepts_the_documented_times() -> None:
    checker = Draft202012Validator(json_schema("time"), format_checker=FORMATS)
    for written in ("2026-09-01", "2026-09-01T10:00:00Z", "2026-09-01T12:00:00+02:00"):
        assert checker.is_valid(written), written
    for wrong in ("yesterday", "2026-13-01", "09/01/2026"):
        assert not checker.is_valid(wrong), wrong
    assert type_of_property(json_schema("time")) == "time"


@given(
    st.one_of(
        st.dates().map(date.isoformat),
        st.datetimes(
            min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
        ).map(lambda d: d.isoformat().replace("+00:00", "Z")),
        st.builds(
            lambda d, minutes: d.replace(tzinfo=timezone(timedelta(minutes=minutes))).isoformat(),
            st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
            st.integers(-23 * 60, 23 * 60),
        ),
    )
)
def test_every_time_the_schema_accepts_the_command_takes(written: str) -> None:
    # The listed schema and the conversion agree: what a checking client lets through is
    # a time the command converts, never a refusal the client could not have foreseen.
    assert Draft202012Validator(json_schema("time"), format_checker=FORMATS).is_valid(written)
    convert("at", "time", written)


def test_vocabulary_properties_map_onto_the_five_types() -> None:
    assert type_of_property({"type": "string"}) == "text"
    assert type_of_property({"type": "string", "format": "date-time"}) == "time"
    assert type_of_property({"type": "string", "format": "uri"}) == "url"
    assert type_of_property({"type": "integer"}) == "number"
    assert type_of_property({"type": "boolean"}) == "bool"
    assert type_of_property({"type": "object"}) is None


@given(st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none()))
def test_any_value_is_converted_or_refused_never_another_error(value: object) -> None:
    for kind in ("text", "number", "bool", "time", "url"):
        try:
            out = convert("x", kind, value)  # type: ignore[arg-type]
        except BadValue:
            continue
        if kind == "number":
            assert isinstance(out, int | float) and math.isfinite(out)
        if kind == "bool":
            assert isinstance(out, bool)


def _either(text: str) -> tuple[str, str]:
    """What normalize_time answers, and what its general path answers, ValueError as a word."""
    from pasture.values import _normalize_time

    answers = []
    for fn in (normalize_time, lambda t: _normalize_time(t.strip())):
        try:
            answers.append(fn(text))
        except ValueError:
            answers.append("refused")
    return answers[0], answers[1]


_DIGITS = st.sampled_from("0123456789٠١٢٣٩")  # a few digits of another script as well


def _field(width: int) -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(0, 10**width - 1).map(lambda n: str(n).zfill(width)),
        st.text(_DIGITS, min_size=width - 1, max_size=width + 1),
    )


_MOMENTS = st.builds(
    lambda y, mo, d, sep, h, mi, s, end, pad: f"{pad}{y}-{mo}-{d}{sep}{h}:{mi}:{s}{end}{pad}",
    _field(4),
    _field(2),
    _field(2),
    st.sampled_from(["T", " ", "t", "x"]),
    _field(2),
    _field(2),
    _field(2),
    st.sampled_from(["Z", "", "z", "+02:00", ".5Z", "Z "]),
    st.sampled_from(["", " ", "\n"]),
)
_DATES = st.builds(
    lambda y, mo, d, pad: f"{pad}{y}-{mo}-{d}{pad}",
    _field(4),
    _field(2),
    _field(2),
    st.sampled_from(["", " ", "\t"]),
)


@given(st.one_of(_DATES, _MOMENTS, st.text(max_size=30)))
def test_the_short_way_for_plain_dates_and_moments_answers_as_the_general_way(text: str) -> None:
    fast, general = _either(text)
    assert fast == general


def test_plain_dates_and_moments_are_checked_for_being_real() -> None:
    assert normalize_time(" 2026-09-01 ") == "2026-09-01"
    assert normalize_time("2026-09-01 10:00:00Z") == "2026-09-01T10:00:00Z"
    for bad in ("2026-02-30", "0000-01-01", "2026-13-01", "2026-09-01T24:00:00Z"):
        with pytest.raises(ValueError):
            normalize_time(bad)
