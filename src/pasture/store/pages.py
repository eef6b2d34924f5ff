"""A read's pages: at most so many rows an answer, and a cursor that says where the next begins.

No read answers more than one page: 1,000 rows unless the server says otherwise
(`pasture serve --max-rows`, or `$PASTURE_MAX_ROWS`). An answer cut short carries a
**cursor**, and the same filter with `after=<cursor>` answers the page after it, in the
same order (`sort=`, else oldest first). A cursor is the last row's place in that
order — the values it was sorted by and its position in creation — so a page is found
by seeking there, not by counting past the pages before it: the last page of a million
rows costs what the first does.

A cursor is text anyone may send: it is read strictly (its form, its values' types for
the columns of the order it names, and that order's being the filter's own), and one
that does not fit is refused with a sentence. It grants nothing: the filter is asked
again as the caller, with the caller's access.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import os
import re
from collections.abc import Sequence
from typing import Any

from pasture.errors import Refused, UsageError
from pasture.store.base import Row

MAX_ROWS = 1000
_LEAST, _MOST = -(2**63), 2**63 - 1
_HALF = re.compile(r"[\ud800-\udfff]")  # a lone half of a UTF-16 surrogate pair
SENTENCE = (
    "after= takes the cursor an answer gave, unchanged — ask again without after= for the "
    "first page"
)


def max_rows(given: int | None = None) -> int:
    """The rows one answer holds at most: `given`, else `$PASTURE_MAX_ROWS`, else 1,000."""
    if given is None:
        text = os.environ.get("PASTURE_MAX_ROWS", "").strip()
        if not text:
            return MAX_ROWS
        try:
            given = int(text)
        except ValueError:
            raise UsageError(
                f"$PASTURE_MAX_ROWS is how many rows one answer holds at most: a whole "
                f"number like {MAX_ROWS}, not {text[:40]!r}"
            ) from None
    if given < 1:
        raise UsageError(
            f"--max-rows is how many rows one answer holds at most: at least 1, not {given}"
        )
    return given


class Rows(list[Row]):
    """A page of rows. `more`: rows follow it that it does not hold; `cursor` names where the
    next page begins (None for the last page, and for a search for words, whose best matches
    are one page). `place`: the order, sort values and position the cursor is made of, when
    it is made only if asked for (a read that takes its page and goes no further never is)."""

    __slots__ = ("_cursor", "_place", "more")  # one is made for every page read

    def __init__(
        self,
        rows: Sequence[Row] = (),
        cursor: str | None = None,
        *,
        more: bool = False,
        place: tuple[str, Sequence[Any], int] | None = None,
    ) -> None:
        list.__init__(self, rows)
        self._cursor = cursor
        self._place = place
        self.more = more or cursor is not None or place is not None

    @property
    def cursor(self) -> str | None:
        if self._cursor is None and self._place is not None:
            self._cursor = cursor_of(*self._place)
        return self._cursor


def _digest(order: str) -> str:
    return hashlib.sha256(order.encode()).hexdigest()[:8]


def cursor_of(order: str, values: Sequence[Any], position: int) -> str:
    """The cursor of a row: where it stands in `order` (its sort values, then its place in
    creation)."""
    raw = json.dumps([_digest(order), list(values), position], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


Kind = str  # "number", "bool", "text": what a sorted column's values may be


def read_cursor(cursor: str, order: str, kinds: Sequence[Kind]) -> tuple[list[Any], int]:
    """The sort values and position a cursor names, for a read in `order` whose columns hold
    `kinds`; Refused when it is not a cursor of that order."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        body = json.loads(base64.urlsafe_b64decode(padded.encode()), parse_constant=_no_constant)
    except (ValueError, binascii.Error, UnicodeDecodeError, RecursionError):
        raise Refused(SENTENCE) from None
    if not (
        isinstance(body, list)
        and len(body) == 3
        and isinstance(body[0], str)
        and isinstance(body[1], list)
        and _whole(body[2])
    ):
        raise Refused(SENTENCE)
    digest, values, position = body
    if digest != _digest(order):
        asked = f"sort={order}" if order else "oldest first"
        raise Refused(
            f"this cursor continues a read in another order than {asked} — ask with the "
            "sort= of the answer that gave it, or without after="
        )
    if len(values) != len(kinds) or not all(
        _fits(v, k) for v, k in zip(values, kinds, strict=True)
    ):
        raise Refused(SENTENCE)
    return values, position


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a value a cursor holds")


def _whole(value: Any) -> bool:
    """A whole number a database holds (64 bits), as every position and stored one is."""
    return isinstance(value, int) and not isinstance(value, bool) and _LEAST <= value <= _MOST


def _fits(value: Any, kind: Kind) -> bool:
    """Whether `value` is one a column of `kind` can hold — so only such values reach the
    database: no number past 64 bits or past a double, no NUL, no half of a surrogate pair."""
    if value is None:
        return True
    if kind == "number":
        return _whole(value) or (isinstance(value, float) and math.isfinite(value))
    if kind == "bool":
        return isinstance(value, bool) or value in (0, 1)
    return isinstance(value, str) and "\x00" not in value and not _HALF.search(value)


__all__ = ["MAX_ROWS", "Rows", "cursor_of", "max_rows", "read_cursor"]
