"""The filter grammar's syntax tree: what `grammar.parse` returns, what a backend compiles.

A filter line is predicates joined by `&`, every one of which must hold. Values
are kept as the text that was written (quotes removed, percent-escapes decoded):
only a backend that knows the vocabulary can say whether `many` is a number.
"""

from __future__ import annotations

from dataclasses import dataclass

# A path names a column: ("jog", "miles"). Walking a reference makes it longer:
# ("comment", "target", "doc", "title") reads comment.target, then that entity's doc.title.
Path = tuple[str, ...]


@dataclass(frozen=True)
class Has:
    """`.comp!` — the entity has the component (and the row carries it)."""

    component: str


@dataclass(frozen=True)
class Lacks:
    """`.comp=` — the entity has no such component."""

    component: str


@dataclass(frozen=True)
class Maybe:
    """`.comp?` — bring the component along where the entity has it."""

    component: str


@dataclass(frozen=True)
class Reach:
    """`.comment.target.doc?` — bring the component a reference points at, on the reference's
    value in the row (`comment.target.doc`); with `!` (`required`), only where it is there.

    `path` is the reference column's path and then the component: ("comment", "target", "doc").
    """

    path: Path
    required: bool


@dataclass(frozen=True)
class Every:
    """`*` — bring every component the entity has."""


@dataclass(frozen=True)
class Compare:
    """`.comp.col OP value`; several `values` (`a,b`) mean any of them (only with `=`/`!=`)."""

    path: Path
    op: str  # one of = != ~= < <= > >=
    values: tuple[str, ...]


@dataclass(frozen=True)
class Range:
    """`.comp.col=20..35` (both ends) or `=20...35` (without the high end)."""

    path: Path
    low: str
    high: str
    include_high: bool


@dataclass(frozen=True)
class Empty:
    """`.comp.col=` — the column is empty or absent."""

    path: Path


@dataclass(frozen=True)
class Present:
    """`.comp.col~=` — the column has a value."""

    path: Path


@dataclass(frozen=True)
class Words:
    """A bare word or quoted phrase: full-text search over doc title and body, ranked."""

    text: str


@dataclass(frozen=True)
class Limit:
    """`limit=N` — the newest N rows, listed oldest first."""

    count: int


@dataclass(frozen=True)
class Sort:
    """`sort=jog.miles` (ascending) or `sort=-jog.miles` (descending); several columns,
    comma-separated, each ordering what the one before it leaves tied, and creation the last
    tie (oldest first, or newest first where the last column descends). Spelled without a
    dot, as `limit=` is: it is not a column of a component (`.order=…` is one).

    `keys` are (path, descending) pairs, a path being `(component, column)`."""

    keys: tuple[tuple[Path, bool], ...]


@dataclass(frozen=True)
class After:
    """`after=<cursor>` — the rows that follow the last one an answer gave; the cursor is the
    one that answer carried (`cursor` in its data), for the same order."""

    cursor: str


@dataclass(frozen=True)
class Id:
    """`id=<eid>` — that one entity."""

    eid: str


@dataclass(frozen=True)
class Count:
    """`.count!` — answer `{count: n}`, the number of matching rows, instead of the rows."""


@dataclass(frozen=True)
class Tally:
    """`.tally=comp.col` — answer `{tally: {value: n, …}}`, matching rows by each value."""

    path: Path


@dataclass(frozen=True)
class Distinct:
    """`.distinct=comp.col` — answer `{distinct: [value, …]}`, a column's values, sorted."""

    path: Path


# An aggregate answers one value instead of rows; the first in a filter is the one used.
Aggregate = Count | Tally | Distinct


@dataclass(frozen=True)
class Plural:
    """`.comments>=2` — how many entities point at this one through a reference column.

    `word` is the plural as written (`comments`); the store resolves it against the
    vocabulary (`comment`, whose `target` points here). `op` and `number` compare the count.
    """

    word: str
    op: str
    number: int


Predicate = (
    Has
    | Lacks
    | Maybe
    | Reach
    | Every
    | Compare
    | Range
    | Empty
    | Present
    | Words
    | Limit
    | Sort
    | After
    | Id
    | Count
    | Tally
    | Distinct
    | Plural
)


@dataclass(frozen=True)
class Filter:
    """A whole filter line: its predicates in the order written."""

    predicates: tuple[Predicate, ...]
