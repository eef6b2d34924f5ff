"""JSON from outside, read strictly: what Python's own `json` takes and JSON has no room for
is refused with a sentence naming where it was and what to send instead."""

from __future__ import annotations

import pytest

from pasture.errors import Refused
from pasture.jsontext import MAX_DEPTH, check, loads

WHERE = "the body"
EXPECTED = "a JSON object"


def test_json_reads_as_json() -> None:
    assert loads(b'{"a": [1, 2.5, "\\u00e9", null, true]}', WHERE, EXPECTED) == {
        "a": [1, 2.5, "é", None, True]
    }


@pytest.mark.parametrize(
    ("raw", "sentence"),
    [
        ("{", "the body is not JSON — send a JSON object"),
        ("[NaN]", "the body holds NaN, which JSON has no number for"),
        ("[-Infinity]", "the body holds -Infinity, which JSON has no number for"),
        ("[1e999]", "the body holds a number too large for JSON to carry"),
        ('["\\ud800"]', "the body holds"),
        (b'"\xff"', "the body is not JSON"),
    ],
)
def test_what_json_has_no_room_for_is_refused_with_its_sentence(
    raw: str | bytes, sentence: str
) -> None:
    with pytest.raises(Refused) as refused:
        loads(raw, WHERE, EXPECTED)
    assert str(refused.value).startswith(sentence)


def test_lists_and_objects_nest_at_most_max_depth_deep() -> None:
    deepest = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert loads(deepest, WHERE, EXPECTED) is not None
    for raw in (
        "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        '{"a":' * 10_000 + "1" + "}" * 10_000,
    ):
        with pytest.raises(Refused, match=f"nests lists and objects more than {MAX_DEPTH} deep"):
            loads(raw, WHERE, EXPECTED)


def test_a_value_another_parser_made_is_held_to_the_same_rules() -> None:
    check({"a": [1.5, "x"]}, WHERE)
    for value in (float("inf"), {"k": float("nan")}, {"\udc80": 1}, ["\ud800"]):
        with pytest.raises(Refused, match="the body holds"):
            check(value, WHERE)
