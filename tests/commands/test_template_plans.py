"""A template compiled once fills exactly as reading it afresh on every call would.

`reference_apply` and `reference_query` below are the rules of
`pasture.commands.template` written the plain way, scanning each string for
its variables on every call; random templates, arguments and optional sets
must fill the same through the compiled plans.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Set
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pasture.commands.template import ApplyPlan, QueryPlan, fill_apply, fill_query
from pasture.store.grammar import percent_encode_value

VARIABLE = re.compile(r"\$\$|\$([A-Za-z_][A-Za-z0-9_]*)")
LEFT_OUT = object()


def as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(value)


def encode(text: str) -> str:
    return str(percent_encode_value(text))


def whole(value: object) -> str | None:
    match = VARIABLE.fullmatch(value) if isinstance(value, str) else None
    return None if match is None else match.group(1)


def names(text: str) -> list[str]:
    return [m.group(1) for m in VARIABLE.finditer(text) if m.group(1) is not None]


def splice(text: str, args: Mapping[str, Any], encoded: bool) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group(1) is None:
            return encode("$") if encoded else "$"
        if m.group(1) not in args:
            return m.group(0)
        value = as_text(args[m.group(1)])
        return encode(value) if encoded else value

    return VARIABLE.sub(one, text)


def value(item: Any, args: Mapping[str, Any], optional: Set[str]) -> Any:
    if isinstance(item, str):
        name = whole(item)
        if name is not None:
            if name in args:
                return args[name]
            return LEFT_OUT if name in optional else item
        if any(v in optional and v not in args for v in names(item)):
            return LEFT_OUT
        return splice(item, args, encoded=False)
    if isinstance(item, dict):
        out = {k: value(v, args, optional) for k, v in item.items()}
        return {k: v for k, v in out.items() if v is not LEFT_OUT}
    if isinstance(item, list):
        return [v for v in (value(i, args, optional) for i in item) if v is not LEFT_OUT]
    return item


def reference_apply(
    template: Any, args: Mapping[str, Any], optional: Set[str], keep: Set[str]
) -> Any:
    def bundle(b: dict[str, Any]) -> Any:
        out: dict[str, Any] = {}
        for key, item in b.items():
            filled = value(item, args, optional)
            if filled is LEFT_OUT:
                continue
            if filled == {} and isinstance(item, dict) and item and key not in keep:
                continue
            out["$was" if key == "was" else key] = filled
        return out

    return [bundle(b) for b in template] if isinstance(template, list) else bundle(template)


def reference_query(
    template: str, args: Mapping[str, Any], optional: Set[str], words: Set[str]
) -> str:
    clauses: list[str] = []
    for clause in template.split("&"):
        if any(v in optional and v not in args for v in names(clause)):
            continue
        name = whole(clause)
        if name is not None and name in words and name in args:
            clauses.extend(encode(w) for w in as_text(args[name]).split())
            continue
        clauses.append(splice(clause, args, encoded=True))
    return "&".join(clauses)


NAMES = ["who", "miles", "run", "at", "x"]
variable = st.sampled_from(NAMES).map(lambda n: f"${n}")
piece = st.one_of(
    variable, st.sampled_from(["$$", "$", "$1", " ", "Run by ", "&", "=", "%", "é", "x_"])
)
text = st.one_of(variable, st.lists(piece, max_size=5).map("".join), st.text(max_size=6))
leaf = st.one_of(text, st.integers(), st.floats(allow_nan=False), st.booleans(), st.none())
values = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(NAMES), inner, max_size=3)
    ),
    max_leaves=10,
)
keys = st.sampled_from(["entity", "jog", "doc", "was", "edges", "tombstone", "alias"])
bundle = st.dictionaries(keys, values, max_size=4)
arg_values = st.one_of(
    st.text(max_size=8), st.integers(), st.floats(allow_nan=False), st.booleans()
)
arguments = st.dictionaries(st.sampled_from(NAMES), arg_values, max_size=5)
subset = st.sets(st.sampled_from(NAMES))


@given(
    st.one_of(bundle, st.lists(bundle, max_size=3)),  # deploy refuses anything else
    arguments,
    subset,
    st.sets(keys),
)
def test_a_compiled_apply_template_fills_as_the_plain_reading(
    template: Any, args: dict[str, Any], optional: set[str], keep: set[str]
) -> None:
    expected = reference_apply(template, args, optional, keep)
    plan = ApplyPlan(template, optional, keep)
    assert plan.fill(args) == expected
    assert plan.fill(args) == expected  # the plan is not used up by a call
    assert fill_apply(template, args, optional, keep) == expected


@given(
    st.lists(st.one_of(text, variable), min_size=1, max_size=5).map("&".join),
    arguments,
    subset,
    subset,
)
def test_a_compiled_query_template_fills_as_the_plain_reading(
    template: str, args: dict[str, Any], optional: set[str], words: set[str]
) -> None:
    expected = reference_query(template, args, optional, words)
    assert QueryPlan(template, optional, words).fill(args) == expected
    assert fill_query(template, args, optional, words) == expected
