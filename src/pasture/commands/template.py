"""Filling a declared command's template with its arguments.

A `$var` in a template is bound by the argument of that name. A string that is
nothing but a bound variable keeps the argument's own type (`"$miles"` → 5); a
variable inside a longer string is spliced in as text, percent-encoded in a
query line; `$$` is a dollar sign. A variable nothing binds is an alias, passed
to the store as `$name`, so every `$run` in one call is the same new entity.

Generated commands have optional arguments: a column or a clause whose
argument was left out is left out of what is sent.

The arguments arrive converted to their declared types. A bundle says which
columns hold an argument whole (a `TypedBundle`), so the store keeps those
values as they are rather than converting them a second time.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Set
from typing import TYPE_CHECKING, Any

from pasture.store.bundles import TypedBundle

if TYPE_CHECKING:
    from pasture.values import ValueType

# `$$` first, so `$$run` is a dollar sign followed by the word "run".
VARIABLE = re.compile(r"\$\$|\$([A-Za-z_][A-Za-z0-9_]*)")

# A bundle's own keys, beside its components. `was` is the store's `$was` guard.
BUNDLE_KEYS = frozenset({"entity", "edges", "tombstone", "was", "$was"})


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


def _encode(text: str) -> str:
    # The grammar owns how a value is written into a filter line.
    from pasture.store.grammar import percent_encode_value

    return str(percent_encode_value(text))


class _Drop:
    """A value whose optional argument was left out: its key goes too."""


_DROP = _Drop()

# -- compiling: where each variable stands, worked out once ---------------------------
#
# A template is compiled when its command is loaded into a tree of fillers, one a
# value; filling walks that tree with the arguments of a call and never scans a string.


class _Filler:
    """One value of a template: `fill` gives what it is with these arguments (or _DROP)."""

    __slots__ = ()

    def fill(self, args: Mapping[str, Any]) -> Any:
        raise NotImplementedError


class _Same(_Filler):
    """A value with no variable in it: itself (a string with `$$` already unescaped)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def fill(self, args: Mapping[str, Any]) -> Any:
        return self.value


class _Whole(_Filler):
    """A string that is one `$var`: the argument, with its own type; else an alias."""

    __slots__ = ("name", "optional", "text")

    def __init__(self, name: str, text: str, optional: bool) -> None:
        self.name, self.text, self.optional = name, text, optional

    def fill(self, args: Mapping[str, Any]) -> Any:
        if self.name in args:
            return args[self.name]
        return _DROP if self.optional else self.text


class _Spliced(_Filler):
    """A longer string: its literal parts, and the variables spliced between them as text.

    `parts` alternate literal text and a variable's name (`None` where there is no
    variable), so part 2i is text and part 2i+1 a name.
    """

    __slots__ = ("encode", "optional", "parts")

    def __init__(self, parts: tuple[str, ...], optional: tuple[str, ...], encode: bool) -> None:
        self.parts, self.optional, self.encode = parts, optional, encode

    def fill(self, args: Mapping[str, Any]) -> Any:
        for name in self.optional:
            if name not in args:
                return _DROP
        parts = self.parts
        out = [parts[0]]
        for i in range(1, len(parts), 2):
            name = parts[i]
            if name in args:
                text = as_text(args[name])
                out.append(_encode(text) if self.encode else text)
            else:
                out.append("$" + name)  # an alias: the store resolves it
            out.append(parts[i + 1])
        return "".join(out)


class _Object(_Filler):
    """An object: each key's value filled; a key whose value was left out goes."""

    __slots__ = ("items",)

    def __init__(self, items: tuple[tuple[str, _Filler], ...]) -> None:
        self.items = items

    def fill(self, args: Mapping[str, Any]) -> Any:
        out: dict[str, Any] = {}
        for key, filler in self.items:
            value = filler.fill(args)
            if value is not _DROP:
                out[key] = value
        return out


class _List(_Filler):
    __slots__ = ("items",)

    def __init__(self, items: tuple[_Filler, ...]) -> None:
        self.items = items

    def fill(self, args: Mapping[str, Any]) -> Any:
        return [v for v in (f.fill(args) for f in self.items) if v is not _DROP]


class _Bundle(_Filler):
    """A bundle: as an object, but `was` is sent as `$was`, and a component all of whose
    columns were left out goes too (unless it is kept empty). It is sent as a
    `TypedBundle` naming the columns an argument that arrived stands in whole."""

    __slots__ = ("all_typed", "items", "optional", "typed")

    def __init__(
        self,
        items: tuple[tuple[str, _Filler, bool], ...],
        typed: dict[tuple[str, str], tuple[str, ValueType]],
        optional: Set[str],
    ) -> None:
        self.items = items  # (key sent, filler, drop it when it comes out empty)
        self.typed = typed  # (component, column) -> (the argument whole in it, its type)
        # the columns' types when every argument arrives, worked out once
        self.all_typed = {at: kind for at, (_, kind) in typed.items()}
        self.optional = frozenset(arg for arg, _ in typed.values() if arg in optional)

    def fill(self, args: Mapping[str, Any]) -> Any:
        out: dict[str, Any] = {}
        if self.typed:
            typed = self.all_typed
            if any(arg not in args for arg in self.optional):
                typed = {at: kind for at, (arg, kind) in self.typed.items() if arg in args}
            out = TypedBundle({}, typed)
        for key, filler, drop_empty in self.items:
            value = filler.fill(args)
            if value is _DROP or (drop_empty and not value and isinstance(value, dict)):
                continue
            out[key] = value
        return out


def _text(text: str, optional: Set[str], encode: bool) -> _Filler:
    if "$" not in text:
        return _Same(text)
    name = None if encode else whole_variable(text)  # a filter line holds only text
    if name is not None:
        return _Whole(name, text, name in optional)
    dollar = _encode("$") if encode else "$"
    parts: list[str] = []
    literal: list[str] = []
    at = 0
    for match in VARIABLE.finditer(text):
        literal.append(text[at : match.start()])
        at = match.end()
        if match.group(1) is None:
            literal.append(dollar)  # `$$`
        else:
            parts += ["".join(literal), match.group(1)]
            literal = []
    literal.append(text[at:])
    parts.append("".join(literal))
    if len(parts) == 1:
        return _Same(parts[0])
    names = parts[1::2]
    return _Spliced(tuple(parts), tuple(dict.fromkeys(n for n in names if n in optional)), encode)


def _compile(value: Any, optional: Set[str]) -> _Filler:
    if isinstance(value, str):
        return _text(value, optional, encode=False)
    if isinstance(value, Mapping):
        return _Object(tuple((k, _compile(v, optional)) for k, v in value.items()))
    if isinstance(value, list):
        return _List(tuple(_compile(v, optional) for v in value))
    return _Same(value)


def _compile_bundle(
    bundle: Any, optional: Set[str], keep_empty: Set[str], types: Mapping[str, ValueType]
) -> _Filler:
    if not isinstance(bundle, Mapping):
        return _compile(bundle, optional)
    items = tuple(
        (
            "$was" if key == "was" else key,
            _compile(value, optional),
            isinstance(value, Mapping) and bool(value) and key not in keep_empty,
        )
        for key, value in bundle.items()
    )
    typed = {
        (key, column): (arg, types[arg])
        for key, value in bundle.items()
        if key not in BUNDLE_KEYS and isinstance(value, Mapping)
        for column, item in value.items()
        if (arg := whole_variable(item)) is not None and arg in types
    }
    return _Bundle(items, typed, optional)


class ApplyPlan:
    """An apply template compiled once: `fill(args)` is the bundle (or list) it writes.

    `types` are the arguments' declared types: the values `fill` is given are of
    them, and the bundles it makes say so (see `_Bundle`)."""

    __slots__ = ("_many", "_one")

    def __init__(
        self,
        template: Any,
        optional: Set[str] = frozenset(),
        keep_empty: Set[str] = frozenset(),
        types: Mapping[str, ValueType] | None = None,
    ) -> None:
        self._many = isinstance(template, list)
        bundles = template if isinstance(template, list) else [template]
        typed = types or {}
        self._one = tuple(_compile_bundle(b, optional, keep_empty, typed) for b in bundles)

    def fill(self, args: Mapping[str, Any]) -> Any:
        if self._many:
            return [b.fill(args) for b in self._one]
        return self._one[0].fill(args)


class QueryPlan:
    """A query template compiled once: `fill(args)` is the filter line it reads."""

    __slots__ = ("_clauses",)

    def __init__(
        self, template: str, optional: Set[str] = frozenset(), words: Set[str] = frozenset()
    ) -> None:
        clauses: list[tuple[tuple[str, ...], str | None, _Filler]] = []
        for clause in template.split("&"):
            left_out = tuple(dict.fromkeys(v for v in variables(clause) if v in optional))
            name = whole_variable(clause)
            as_words = name if name is not None and name in words else None
            clauses.append((left_out, as_words, _text(clause, frozenset(), encode=True)))
        self._clauses = tuple(clauses)

    def fill(self, args: Mapping[str, Any]) -> str:
        out: list[str] = []
        for left_out, as_words, filler in self._clauses:
            if any(v not in args for v in left_out):
                continue
            if as_words is not None and as_words in args:
                out.extend(_encode(word) for word in as_text(args[as_words]).split())
                continue
            out.append(filler.fill(args))
        return "&".join(out)


def fill_apply(
    template: Any,
    args: Mapping[str, Any],
    optional: Set[str] = frozenset(),
    keep_empty: Set[str] = frozenset(),
) -> Any:
    """The bundle (or list of bundles) a template writes with these arguments.

    `args` holds the converted arguments that arrived; an optional one that did
    not arrive drops its column, and a component left with no columns by that is
    dropped too, unless it is named in `keep_empty`. (A command compiles its
    template once, as an `ApplyPlan`.)
    """
    return ApplyPlan(template, optional, keep_empty).fill(args)


def fill_query(
    template: str,
    args: Mapping[str, Any],
    optional: Set[str] = frozenset(),
    words: Set[str] = frozenset(),
) -> str:
    """The filter line a query template reads with these arguments.

    A clause that is nothing but a variable named in `words` is full-text
    search: each word of the value becomes a word of the filter. A clause whose
    optional argument was left out is left out. (A command compiles its
    template once, as a `QueryPlan`.)
    """
    return QueryPlan(template, optional, words).fill(args)


__all__ = [
    "BUNDLE_KEYS",
    "VARIABLE",
    "ApplyPlan",
    "QueryPlan",
    "as_text",
    "fill_apply",
    "fill_query",
    "strings",
    "variables",
    "whole_variable",
]
