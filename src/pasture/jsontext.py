"""JSON from outside — a request's body, a tool's arguments — read strictly, before it is used.

Python's own `json` takes more than JSON: `NaN` and `Infinity`, numbers too
large for a double (`1e999` reads as infinity), text holding half of a UTF-16
surrogate pair (`"\\ud800"`), and nesting as deep as its recursion allows. None
of them can be stored, sent on or even written out again, so each is refused
here with a sentence saying what to send instead:

    loads(raw, where, expected)   JSON text in, a value out, or Refused
    check(value, where)           a value some other parser made (the MCP SDK's)

A value passes when it nests at most `MAX_DEPTH` lists and objects deep, every
number in it is finite, and every text in it (keys too) is whole characters.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pasture.errors import Refused
from pasture.values import lone_surrogate, not_characters

MAX_DEPTH = 64  # lists and objects inside each other; a bundle needs five


class _Constant(ValueError):
    """`NaN`, `Infinity` or `-Infinity`: JavaScript's, not JSON's."""


def _constant(name: str) -> Any:
    raise _Constant(name)


class _Infinite(ValueError):
    """A number too large for a double: `1e999` reads as infinity."""


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Infinite(text)
    return value


# A surrogate can come out of JSON text only as an escape (`\ud800`): UTF-8 has no bytes
# for one. Text with no such escape and fewer brackets than the depth allowed is sure to
# pass `check`, so it is not walked again (most bodies and messages are such).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _plainly_fine(raw: bytes | str) -> bool:
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    if isinstance(raw, str) and not raw.isascii():
        return False
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH:
        return False
    return b"\\u" not in data or _SURROGATE_ESCAPE.search(data) is None


def loads(raw: bytes | str, where: str, expected: str) -> Any:
    """The value `raw` holds; Refused with a sentence naming `where` when it is not JSON we take.

    `expected` says what to send instead (`the bundles, a JSON object or a list of them`).
    """
    try:
        value = json.loads(raw, parse_constant=_constant, parse_float=_finite)
    except _Infinite:
        raise Refused(_not_finite(where)) from None
    except _Constant as e:
        raise Refused(
            f"{where} holds {e}, which JSON has no number for — send a finite number, or null"
        ) from None
    except RecursionError:
        raise Refused(too_deep(where)) from None
    except ValueError as e:  # UnicodeDecodeError is one
        if "integer string conversion" in str(e):
            raise Refused(
                f"{where} holds a number of more than 4300 digits — send a shorter one"
            ) from None
        raise Refused(f"{where} is not JSON — send {expected}") from None
    if not _plainly_fine(raw):
        check(value, where)
    return value


def check(value: Any, where: str) -> None:
    """Refused unless `value` nests at most MAX_DEPTH deep, its numbers are finite and its
    text is whole characters. Walks the value without recursion, so no depth breaks it."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _text(item, where)
        elif isinstance(item, dict):
            if depth >= MAX_DEPTH:
                raise Refused(too_deep(where))
            for key, inner in item.items():
                if isinstance(key, str):
                    _text(key, where)
                stack.append((inner, depth + 1))
        elif isinstance(item, list | tuple):
            if depth >= MAX_DEPTH:
                raise Refused(too_deep(where))
            stack.extend((inner, depth + 1) for inner in item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise Refused(_not_finite(where))


def _not_finite(where: str) -> str:
    return (
        f"{where} holds a number too large for JSON to carry (beyond about 1.8e308) "
        "or none at all (NaN) — send a finite number, or null"
    )


def too_deep(where: str) -> str:
    return (
        f"{where} nests lists and objects more than {MAX_DEPTH} deep — pasture reads at most "
        f"{MAX_DEPTH} levels"
    )


def _text(text: str, where: str) -> None:
    surrogate = lone_surrogate(text)
    if surrogate is not None:
        raise Refused(not_characters(where, surrogate))


__all__ = ["MAX_DEPTH", "check", "loads", "too_deep"]
