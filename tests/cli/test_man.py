"""A command as a person reads it (pasture.cli._man): types in words, limits as refusals say
them, an example line made from the arguments, and the man page's sections. The console
showing them: test_console.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pasture.cli._man import example_line, limits_of, man_page, quoted, type_words, value_text
from pasture.commands.model import Command, Context
from pasture.result import Result


def _run(args: Mapping[str, Any], ctx: Context) -> Result:
    return Result("done", dict(args))


CART_ADD = Command(
    name="cart add",
    title="Add to the cart",
    description="Add a product to the cart",
    input={
        "type": "object",
        "properties": {
            "sku": {"type": "string", "description": "The product code, e.g. V60-02"},
            "qty": {"type": "integer", "minimum": 1, "default": 1},
            "size": {"type": "string", "enum": ["small", "large"]},
        },
        "required": ["sku", "size"],
    },
    read_only=False,
    run=_run,
    family="code",
    provider="cart",
    positional=("sku", "qty", "size"),
)


def test_types_and_values_in_words() -> None:
    assert type_words({"type": "integer"}) == "whole number"
    assert type_words({"type": "string", "enum": ["a", "b"]}) == "one of a, b"
    assert type_words({"type": "array", "items": {"type": "string"}}) == "list of text"
    assert type_words({"type": ["integer", "null"]}) == "integer"
    assert (value_text(True), value_text(5), quoted(""), quoted("a b")) == (
        "true",
        "5",
        "''",
        "'a b'",
    )


def test_limits_are_worded_as_their_refusals_less_the_verb() -> None:
    assert limits_of({"type": "integer", "minimum": 1}) == ["at least 1"]
    assert limits_of({"type": "string", "maxLength": 40}) == ["at most 40 characters"]
    assert limits_of({"type": "string", "format": "date-time"}) == []


def test_an_example_line_takes_a_value_for_each_required_argument() -> None:
    assert example_line(CART_ADD) == "cart add V60-02 small"


def test_a_man_page_has_its_sections_in_order() -> None:
    lines = man_page(CART_ADD, "ada/cart", "Cart")
    assert lines[:2] == ["cart add — Add to the cart", "  Add a product to the cart"]
    headings = [line for line in lines if line and not line.startswith(" ")][1:]
    assert headings == ["ABOUT", "ARGUMENTS", "USAGE", "EXAMPLES"]
    assert "  qty — whole number, optional, default 1" in lines
    assert "      at least 1" in lines
    assert "  cart add SKU QTY SIZE" in lines
