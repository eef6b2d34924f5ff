"""A code command's input: checked against its JSON Schema, console text converted, in words."""

from __future__ import annotations

import contextlib
import logging
import re
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pasture.errors import UsageError
from pasture.schema import InputSchema, args_object, from_text

CART: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "pattern": "^[A-Z0-9-]+$"},
        "qty": {"type": "integer", "minimum": 1, "default": 1},
        "color": {"enum": ["red", "green"]},
        "name": {"type": "string", "maxLength": 40},
        "gift": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        "note": {"type": ["string", "null"]},
    },
    "required": ["sku"],
}


def refusal(schema: dict[str, Any], args: dict[str, Any], *, typed_text: bool = False) -> str:
    with pytest.raises(UsageError) as refused:
        InputSchema(schema).check(args, typed_text=typed_text)
    return refused.value.sentence


def check(schema: dict[str, Any], args: dict[str, Any], *, typed_text: bool = False) -> Any:
    return InputSchema(schema).check(args, typed_text=typed_text)


# -- the sentences ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "sentence"),
    [
        ({}, "sku is required"),
        ({"sku": None}, "sku is required"),
        ({"sku": "A", "qty": 0}, "qty is at least 1"),
        ({"sku": "A", "qty": 1.5}, "qty is a whole number"),
        ({"sku": "A", "qty": True}, "qty is a whole number"),
        ({"sku": "A", "qty": "2"}, "qty is a whole number"),
        ({"sku": "A", "color": "blue"}, "color is one of red, green"),
        ({"sku": "A", "name": "x" * 41}, "name is at most 40 characters"),
        ({"sku": "a b"}, "sku matches the pattern ^[A-Z0-9-]+$"),
        ({"sku": "A", "gift": "yes"}, "gift is true or false"),
        ({"sku": "A", "tags": "a,b"}, "tags is a list"),
        ({"sku": "A", "tags": ["a", 2]}, "item 2 of tags is text"),
        ({"sku": "A", "tags": ["a", "b", "c", "d"]}, "tags has at most 3 items"),
        ({"sku": "A", "note": 5}, "note is text"),
        (
            {"sku": "A", "colour": "red"},
            "colour is not an argument — the arguments are sku, qty, color, name, gift, tags, note",
        ),
    ],
)
def test_each_keyword_is_refused_in_plain_words(args: dict[str, Any], sentence: str) -> None:
    assert refusal(CART, args) == sentence


def test_every_problem_comes_back_in_one_message_in_the_order_declared() -> None:
    assert refusal(CART, {"qty": 0, "color": "blue", "x": 1, "y": 2}) == (
        "qty is at least 1; color is one of red, green; sku is required; "
        "x, y are not arguments — the arguments are sku, qty, color, name, gift, tags, note"
    )


def test_the_other_keywords_in_words() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
            "b": {"type": "number", "multipleOf": 5, "maximum": 100},
            "c": {"type": "string", "minLength": 3},
            "d": {"type": "string", "minLength": 1},
            "e": {"const": "fast"},
            "f": {"type": "array", "minItems": 2, "uniqueItems": True},
            "g": {"type": "string", "format": "date"},
            "h": {"type": "string", "format": "date-time"},
            "i": {"type": "string", "format": "email"},
        },
    }
    args = {"a": 0, "b": 7, "c": "ab", "d": "", "e": "slow", "f": [1, 1], "g": "soon"}
    assert refusal(schema, {**args, "h": "2026-09-01", "i": "nobody"}) == (
        "a is more than 0; b is a multiple of 5; c is at least 3 characters; d is not empty; "
        "e is fast; f has no item twice; g is a date, like 2026-09-01; "
        "h is a date and time, like 2026-09-01T10:00:00Z; "
        "i is an email address, like ada@example.org"
    )
    assert refusal(schema, {"a": 10, "b": 105, "f": [1]}) == (
        "a is less than 10; b is at most 100; f has at least 2 items"
    )
    ok = {"a": 5, "b": 10, "c": "abc", "d": "x", "e": "fast", "f": [1, 2], "g": "2026-09-01"}
    assert check(schema, {**ok, "h": "2026-09-01T10:00:00Z", "i": "ada@example.org"})


def test_a_command_without_arguments_says_so() -> None:
    assert refusal({"type": "object"}, {"x": 1}) == (
        "x is not an argument — this command takes no arguments"
    )
    assert InputSchema(None).check({}) == {}


def test_arguments_are_an_object() -> None:
    with pytest.raises(UsageError, match="args is an object of the command's arguments"):
        InputSchema(CART).check(["A"])  # type: ignore[arg-type]


# -- not given ---------------------------------------------------------------------------
def test_null_and_missing_are_not_given_and_the_default_applies() -> None:
    assert check(CART, {"sku": "A"}) == {"sku": "A", "qty": 1}
    assert check(CART, {"sku": "A", "qty": None, "note": None}) == {"sku": "A", "qty": 1}


def test_an_empty_string_is_a_value_for_a_string_and_counts_for_required() -> None:
    schema = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
    assert check(schema, {"title": ""}) == {"title": ""}
    assert check(schema, {"title": ""}, typed_text=True) == {"title": ""}
    assert check(CART, {"sku": "A", "note": ""}, typed_text=True)["note"] == ""


def test_an_empty_value_for_a_number_a_bool_or_a_list_is_not_given() -> None:
    args = {"sku": "A", "qty": "", "gift": "", "tags": ""}
    assert check(CART, args, typed_text=True) == {"sku": "A", "qty": 1}
    assert check(CART, args) == {"sku": "A", "qty": 1}
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert refusal(schema, {"n": ""}, typed_text=True) == "n is required"


# -- console text ----------------------------------------------------------------------
def test_text_a_person_typed_is_converted_to_the_declared_type() -> None:
    typed = {"sku": "V60-02", "qty": "2", "gift": "yes", "tags": "a, b", "name": "42"}
    assert check(CART, typed, typed_text=True) == {
        "sku": "V60-02",
        "qty": 2,
        "gift": True,
        "tags": ["a", "b"],
        "name": "42",
    }
    for word, value in [("no", False), ("true", True), ("FALSE", False), ("Yes", True)]:
        assert check(CART, {"sku": "A", "gift": word}, typed_text=True)["gift"] is value


def test_numbers_lists_of_numbers_and_enums_without_a_type_convert() -> None:
    schema = {
        "type": "object",
        "properties": {
            "price": {"type": "number"},
            "sizes": {"type": "array", "items": {"type": "integer"}},
            "level": {"enum": [1, 2, 3]},
        },
    }
    got = check(schema, {"price": "2.50", "sizes": "1,2", "level": "2"}, typed_text=True)
    assert got == {"price": 2.5, "sizes": [1, 2], "level": 2}
    assert refusal(schema, {"sizes": "1,x"}, typed_text=True) == "item 2 of sizes is a whole number"
    assert refusal(schema, {"price": "cheap"}, typed_text=True) == "price is a number"
    assert refusal(schema, {"price": "inf"}, typed_text=True) == "price is a number"


def test_text_that_does_not_convert_is_refused_with_what_it_should_be() -> None:
    assert refusal(CART, {"sku": "A", "qty": "two"}, typed_text=True) == "qty is a whole number"
    assert refusal(CART, {"sku": "A", "gift": "maybe"}, typed_text=True) == "gift is true or false"
    assert refusal(CART, {"sku": "A", "qty": "0"}, typed_text=True) == "qty is at least 1"


def test_typed_values_are_never_converted() -> None:
    assert refusal(CART, {"sku": "A", "qty": "2"}) == "qty is a whole number"
    assert refusal(CART, {"sku": "A", "qty": True}) == "qty is a whole number"
    assert refusal(CART, {"sku": "A", "gift": "yes"}) == "gift is true or false"
    assert check(CART, {"sku": "A", "qty": 2.0}) == {"sku": "A", "qty": 2}


def test_from_text_leaves_text_for_a_string_and_none_for_an_empty_number() -> None:
    assert from_text("2", {"type": "string"}) == "2"
    assert from_text("", {"type": "integer"}) is None
    assert from_text("2", {"type": ["integer", "null"]}) == 2
    assert from_text("null", {"type": ["integer", "null"]}) is None


# -- the schema itself --------------------------------------------------------------------
def test_combining_keywords_are_left_unchecked_and_named() -> None:
    schema = InputSchema(
        {
            "type": "object",
            "properties": {
                "a": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                "b": {"type": "object", "properties": {"x": {"type": "string"}}},
                "c": {"$ref": "#/$defs/c"},
                "d": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
            },
            "allOf": [],
        }
    )
    assert schema.problems == []
    assert schema.unchecked == ["allOf", "a.oneOf", "b.properties", "c.$ref", "d.items.items"]
    assert schema.check({"a": 1.5, "b": {"x": 1}, "c": None, "d": [[1]]}) == {
        "a": 1.5,
        "b": {"x": 1},
        "d": [[1]],
    }


@pytest.mark.parametrize(
    ("prop", "problem"),
    [
        (
            {"type": "strin"},
            "q's type is one of string, integer, number, boolean, array, object, "
            "null, or a list of them",
        ),
        ({"type": "integer", "minimum": "1"}, "q's minimum is a number"),
        ({"type": "string", "maxLength": -1}, "q's maxLength is a whole number, 0 or more"),
        ({"type": "number", "multipleOf": 0}, "q's multipleOf is more than 0"),
        ({"enum": "red"}, "q's enum is a list of the values it may take"),
        (
            {"type": "string", "pattern": "("},
            "q's pattern is not a regular expression (missing ), unterminated subpattern)",
        ),
        (
            {"type": "string", "pattern": r"^(a)\1$"},
            "q's pattern uses a backreference or a lookaround, which pasture does not match "
            "(it matches in time linear in the text) — write it without them",
        ),
        (
            {"type": "string", "pattern": "^(?!admin)"},
            "q's pattern uses a backreference or a lookaround, which pasture does not match "
            "(it matches in time linear in the text) — write it without them",
        ),
        (
            {"type": "integer", "minimum": 1, "default": 0},
            "q's default 0 does not fit: q is at least 1",
        ),
        (
            {"type": "array", "items": {"type": "nope"}},
            "q.items's type is one of string, "
            "integer, number, boolean, array, object, null, or a list of them",
        ),
    ],
)
def test_a_bad_schema_is_a_problem_in_words(prop: dict[str, Any], problem: str) -> None:
    assert InputSchema({"type": "object", "properties": {"q": prop}}).problems == [problem]


def test_required_must_name_a_property_and_the_input_is_an_object() -> None:
    assert InputSchema({"type": "object", "required": ["x"]}).problems == [
        "required names x, which is not in properties"
    ]
    assert InputSchema({"type": "string"}).problems == [
        'input is the schema of an object: "type": "object"'
    ]


# -- any schema, any value: a value or a UsageError ---------------------------------------
_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "array", "null"])
_NUMBER = st.one_of(st.integers(-1000, 1000), st.floats(-1e6, 1e6, allow_nan=False))
_VALUE_KEYWORDS = st.fixed_dictionaries(
    {},
    optional={
        "type": st.one_of(_TYPES, st.lists(_TYPES, min_size=1, max_size=3, unique=True)),
        "enum": st.lists(st.one_of(st.text(max_size=3), st.integers(-3, 3)), min_size=1),
        "const": st.one_of(st.text(max_size=3), st.integers(-3, 3), st.booleans()),
        "format": st.sampled_from(["date", "date-time", "email", "uri", "uuid", "time", "x"]),
        "minimum": _NUMBER,
        "maximum": _NUMBER,
        "exclusiveMinimum": _NUMBER,
        "exclusiveMaximum": _NUMBER,
        "multipleOf": st.one_of(st.integers(1, 7), st.floats(0.01, 10)),
        "minLength": st.integers(0, 5),
        "maxLength": st.integers(0, 5),
        "pattern": st.sampled_from(["^a", "[0-9]+", "^[A-Z0-9-]+$", "x|y"]),
        "minItems": st.integers(0, 3),
        "maxItems": st.integers(0, 3),
        "uniqueItems": st.booleans(),
        "default": st.one_of(st.none(), st.integers(-5, 5), st.text(max_size=3)),
    },
)
_PROPERTY = _VALUE_KEYWORDS.flatmap(
    lambda prop: st.fixed_dictionaries(
        {k: st.just(v) for k, v in prop.items()}, optional={"items": _VALUE_KEYWORDS}
    )
)
_NAMES = st.text(string.ascii_lowercase, min_size=1, max_size=4)
_SCHEMAS = st.dictionaries(_NAMES, _PROPERTY, max_size=4).flatmap(
    lambda props: st.fixed_dictionaries(
        {"type": st.just("object"), "properties": st.just(props)},
        optional={"required": st.lists(st.sampled_from(sorted(props)), unique=True)}
        if props
        else {},
    )
)
_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=8),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(_NAMES, inner, max_size=3)
    ),
    max_leaves=6,
)
_TEXT = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["", "2", "-3", "2.5", "yes", "no", "a,b", "1,2", "null", "1e999", "9" * 5000]),
)


@settings(max_examples=300, deadline=None)
@given(_SCHEMAS, st.data())
def test_any_schema_and_any_values_give_values_or_a_usage_error(schema: Any, data: Any) -> None:
    checker = InputSchema(schema)
    typed_text = data.draw(st.booleans())
    names = st.sampled_from([*sorted(schema["properties"]), "extra"])
    values = _TEXT if typed_text else _JSON
    args = data.draw(st.dictionaries(names, values, max_size=5))
    try:
        got = checker.check(args, typed_text=typed_text)
    except UsageError as refused:
        assert refused.sentence
        assert "Traceback" not in refused.sentence and "is not of type" not in refused.sentence
        return
    assert set(got) <= set(schema["properties"])
    assert all(value is not None for value in got.values())


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_NAMES, _JSON, max_size=4))
def test_any_schema_document_gives_problems_never_an_exception(doc: Any) -> None:
    schema = InputSchema({"type": "object", "properties": doc})
    assert isinstance(schema.problems, list)
    if not schema.problems:
        with contextlib.suppress(UsageError):
            schema.check({})


def test_unchecked_keywords_are_logged_by_the_registry_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from pasture.commands.registry import Registry

    registry = Registry()
    schema = {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}}
    with caplog.at_level(logging.WARNING, logger="pasture.commands"):
        for _ in range(2):
            remove = registry.register(
                "shop anyof", description="d", input=schema, annotations={}, run=lambda a, c: None
            )
            remove()
    warned = [r.getMessage() for r in caplog.records if "not checked" in r.getMessage()]
    assert warned == [
        "shop anyof: input keywords a.anyOf are not checked before run() — check them in run()"
    ]


@pytest.mark.parametrize("args", [["A"], "qty=2", 2, None])
def test_args_not_an_object_is_one_sentence_for_a_command_or_a_handler(args: Any) -> None:
    with pytest.raises(UsageError) as refused:
        args_object(args)
    assert (
        refused.value.sentence
        == """args is an object of the command's arguments, like {"who": "Ada"}"""
    )
    with pytest.raises(UsageError) as refused:
        args_object(args, "handler")
    assert (
        refused.value.sentence
        == """args is an object of the handler's arguments, like {"text": "…"}"""
    )
    assert args_object({"qty": 2}) == {"qty": 2}


# -- an app's pattern cannot stall the server ------------------------------------------

# Patterns that backtrack for ever in Python's own engine on a long near-miss.
CATASTROPHIC = ["^(a+)+$", "^(a|a)*$", "^(a|aa)+$", "^([a-z]+)*[0-9]$", "^(\\w+\\s?)*$"]


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_a_pattern_that_backtracks_is_matched_in_linear_time(pattern: str) -> None:
    """Each of these takes Python's `re` hours on 40 letters; linear, 100,000 are nothing.
    Were the engine to backtrack again this would hang, and the suite's timeout says so."""
    schema = {"type": "object", "properties": {"word": {"type": "string", "pattern": pattern}}}
    near_miss = "a" * 100_000 + "!"
    assert refusal(schema, {"word": near_miss}) == f"word matches the pattern {pattern}"
    assert check(schema, {"word": "a" * 100_000 + ("1" if "0-9" in pattern else "")})


atoms = st.sampled_from(["a", "b", "[ab]", "[^a]", "\\d", ".", "(a|b)", "(ab)", "\\w", "x"])
quantifiers = st.sampled_from(["", "*", "+", "?", "{2}", "{1,3}"])
simple_patterns = st.builds(
    lambda anchored, parts, ends: (
        ("^" if anchored else "") + "".join(parts) + ("$" if ends else "")
    ),
    st.booleans(),
    st.lists(st.tuples(atoms, quantifiers).map("".join), min_size=1, max_size=5),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(pattern=simple_patterns, text=st.text(alphabet="ab1x _", max_size=12))
def test_a_pattern_matches_what_pythons_own_engine_would(pattern: str, text: str) -> None:
    """RE2 is the engine, not a different reading: for the patterns both run, a value
    passes exactly when `re.search` finds the pattern in it."""
    schema = {"type": "object", "properties": {"v": {"type": "string", "pattern": pattern}}}
    try:
        check(schema, {"v": text})
        passed = True
    except UsageError:
        passed = False
    assert passed == (re.search(pattern, text) is not None)
