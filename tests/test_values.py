"""The five declared types: conversion from what a model sent, and its refusals."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pasture.values import BadValue, convert, normalize_time, type_of_property


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
