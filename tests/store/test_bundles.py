"""Checking a bundle (pasture.store.bundles) before any write: a `TypedBundle`'s values,
converted already by the command that sent it, are kept as they are only where their
column has that type, and checking one is checking the plain bundle it stands for."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from store_fixtures import RUNS

from pasture.errors import Refused
from pasture.store.bundles import Checked, TypedBundle, check
from pasture.store.vocab import Vocabulary
from pasture.values import TYPES, BadValue, ValueType, convert

VOCABULARY = Vocabulary.from_json(RUNS)
COLUMNS = [
    (component, column)
    for component in ("jog", "recipe")
    for column in VOCABULARY.components[component].columns.values()
]

raw_values = st.one_of(
    st.text(max_size=12),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.booleans(),
    st.none(),
    st.sampled_from(
        ["5", "5.5", "true", "2026-09-01", "2026-09-01T10:00:00+02:00", "https://example.com/r"]
    ),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=1),
)


def checked(bundle: Any) -> list[Checked] | str:
    """What `check` makes of a bundle, or the sentence it refuses it with."""
    try:
        return check(bundle, VOCABULARY)
    except Refused as refused:
        return str(refused)


def trusted(component: str, column: str, kind: ValueType) -> bool:
    found = VOCABULARY.components[component].columns[column]
    return not found.reference and found.type == kind


@st.composite
def bundles(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for component, column in draw(st.lists(st.sampled_from(COLUMNS), unique=True, min_size=1)):
        out.setdefault(component, {})[column.name] = draw(raw_values)
    return out


@given(bundles())
def test_a_typed_bundle_is_checked_as_the_plain_one_it_was_converted_from(
    raw: dict[str, dict[str, Any]],
) -> None:
    """Values a command converted to their columns' types, kept as they are, make what the
    store's own conversion of the values as sent makes: typing saves work, it changes nothing."""
    sent: dict[str, dict[str, Any]] = {}
    typed: dict[tuple[str, str], ValueType] = {}
    for component, columns in raw.items():
        sent[component] = {}
        for name, value in columns.items():
            column = VOCABULARY.components[component].columns[name]
            sent[component][name] = value
            if column.reference or value is None:
                continue
            try:
                sent[component][name] = convert(name, column.type, value)
            except BadValue:
                continue  # the command refuses it: never sent
            typed[(component, name)] = column.type
    assert checked(TypedBundle(sent, typed)) == checked(raw)


@given(bundles(), st.data())
def test_a_value_typed_otherwise_than_its_column_is_converted_as_if_untyped(
    raw: dict[str, dict[str, Any]], data: st.DataObject
) -> None:
    """A type that is not the column's (the vocabulary changed since, a number in a text
    column, any type in a reference column) earns no trust: the store converts the value."""
    typed: dict[tuple[str, str], ValueType] = {}
    for component, columns in raw.items():
        for name in columns:
            kind = data.draw(st.sampled_from(TYPES))
            if not trusted(component, name, kind):
                typed[(component, name)] = kind
    assert checked(TypedBundle(raw, typed)) == checked(raw)


def test_a_typed_value_is_kept_as_it_is_and_a_plain_one_is_converted() -> None:
    moment = "2026-09-01T12:00:00+02:00"
    plain = check({"jog": {"at": moment, "miles": "5"}}, VOCABULARY)[0]
    assert plain.writes["jog"] == {"at": "2026-09-01T10:00:00Z", "miles": 5}
    kept = check(TypedBundle({"jog": {"at": moment}}, {("jog", "at"): "time"}), VOCABULARY)[0]
    assert kept.writes["jog"] == {"at": moment}


def test_a_typed_bundle_is_still_held_to_its_shape() -> None:
    with pytest.raises(Refused, match=r"^jog has no column pace — its columns are who, miles, at$"):
        check(TypedBundle({"jog": {"pace": 5}}, {("jog", "pace"): "number"}), VOCABULARY)
    with pytest.raises(Refused, match=r"^miles is not a component of this app"):
        check(TypedBundle({"miles": {"n": 5}}, {("miles", "n"): "number"}), VOCABULARY)
