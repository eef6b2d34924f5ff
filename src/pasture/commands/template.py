"""Filling a declared command's template with its arguments.

A `$var` in a template is bound by the argument of that name. A string that is
nothing but a bound variable keeps the argument's own type (`"$miles"` → 5); a
variable inside a longer string is spliced in as text, percent-encoded in a
query line; `$$` is a dollar sign. A variable nothing binds is an alias, passed
to the store as `$name`, so every `$run` in one call is the same new entity.

Generated commands have optional arguments: a column or a clause whose
argument was left out is left out of what is sent.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Set
from typing import Any

from pasture.values import ValueType

# `$$` first, so `$$run` is a dollar sign followed by the word "run".
VARIABLE = re.compile(r"\$\$|\$([A-Za-z_][A-Za-z0-9_]*)")

# A bundle's own keys, beside its components. `was` is the store's `$was` guard.
BUNDLE_KEYS = frozenset({"entity", "edges", "tombstone", "was", "$was"})

# What stands in for an argument when a query template is checked at deploy:
# a value every column of that type accepts (the text one also reads as an eid).
PLACEHOLDERS: dict[ValueType, Any] = {
    "text": "0123456789abcdef",
    "number": 1,
    "bool": True,
    "time": "2026-09-01",
    "url": "https://example.com/page",
}


def whole_variable(value: object) -> str | None:
    """The variable's name when `value` is a string that is nothing but one `$var`."""
    if not isinstance(value, str):
        return None
    match = VARIABLE.fullmatch(value)
    if match is None or match.group(1) is None:
        return None
    return match.group(1)


def variables(text: str) -> list[str]:
    """Every variable named in a string, in order (a `$$` names none)."""
    return [m.group(1) for m in VARIABLE.finditer(text) if m.group(1) is not None]


def strings(value: object) -> Iterator[str]:
    """Every string value inside a template (keys are names, never variables)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def as_text(value: Any) -> str:
    """An argument's value spliced into a longer string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(value)


def _splice(text: str, args: Mapping[str, Any], encode: bool) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return _encode("$") if encode else "$"
        if name not in args:
            return match.group(0)  # an alias: the store resolves it
        spliced = as_text(args[name])
        return _encode(spliced) if encode else spliced

    return VARIABLE.sub(one, text)


def _encode(text: str) -> str:
    # The grammar owns how a value is written into a filter line.
    from pasture.store.grammar import percent_encode_value

    return str(percent_encode_value(text))


class _Drop:
    """A value whose optional argument was left out: its key goes too."""


_DROP = _Drop()


def fill_apply(
    template: Any,
    args: Mapping[str, Any],
    optional: Set[str] = frozenset(),
    keep_empty: Set[str] = frozenset(),
) -> Any:
    """The bundle (or list of bundles) a template writes with these arguments.

    `args` holds the converted arguments that arrived; an optional one that did
    not arrive drops its column, and a component left with no columns by that is
    dropped too, unless it is named in `keep_empty`.
    """
    if isinstance(template, list):
        return [_bundle(b, args, optional, keep_empty) for b in template]
    return _bundle(template, args, optional, keep_empty)


def _bundle(bundle: Any, args: Mapping[str, Any], optional: Set[str], keep_empty: Set[str]) -> Any:
    if not isinstance(bundle, Mapping):
        return _value(bundle, args, optional)
    filled: dict[str, Any] = {}
    for key, value in bundle.items():
        name = "$was" if key == "was" else key
        item = _value(value, args, optional)
        if isinstance(item, _Drop):
            continue
        if (
            isinstance(item, dict)
            and not item
            and isinstance(value, Mapping)
            and value
            and key not in keep_empty
        ):
            continue  # every column of it was left out
        filled[name] = item
    return filled


def _value(value: Any, args: Mapping[str, Any], optional: Set[str]) -> Any:
    if isinstance(value, str):
        name = whole_variable(value)
        if name is not None:
            if name in args:
                return args[name]  # keeps the argument's own type
            if name in optional:
                return _DROP
            return value  # an alias
        if any(v in optional and v not in args for v in variables(value)):
            return _DROP
        return _splice(value, args, encode=False)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            filled = _value(item, args, optional)
            if not isinstance(filled, _Drop):
                out[key] = filled
        return out
    if isinstance(value, list):
        return [v for v in (_value(i, args, optional) for i in value) if not isinstance(v, _Drop)]
    return value


def fill_query(
    template: str,
    args: Mapping[str, Any],
    optional: Set[str] = frozenset(),
    words: Set[str] = frozenset(),
) -> str:
    """The filter line a query template reads with these arguments.

    A clause that is nothing but a variable named in `words` is full-text
    search: each word of the value becomes a word of the filter. A clause whose
    optional argument was left out is left out.
    """
    clauses: list[str] = []
    for clause in template.split("&"):
        named = variables(clause)
        if any(v in optional and v not in args for v in named):
            continue
        name = whole_variable(clause)
        if name is not None and name in words and name in args:
            clauses.extend(_encode(word) for word in as_text(args[name]).split())
            continue
        clauses.append(_splice(clause, args, encode=True))
    return "&".join(clauses)


def placeholders(types: Mapping[str, ValueType]) -> dict[str, Any]:
    """A stand-in value for every argument, to check a query template before it runs."""
    return {name: PLACEHOLDERS[kind] for name, kind in types.items()}


__all__ = [
    "BUNDLE_KEYS",
    "VARIABLE",
    "as_text",
    "fill_apply",
    "fill_query",
    "placeholders",
    "strings",
    "variables",
    "whole_variable",
]
