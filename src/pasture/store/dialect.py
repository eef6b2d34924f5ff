"""What differs between SQLite and PostgreSQL, and the names SQL is written with on both.

A `Dialect` holds what the two databases write differently: their column
types, their parameter marks, their spelling of a case-insensitive match, of
an insert that skips a taken key and of a typed parameter, and their full-text
search. `table`, `q` and `STAMPS` are how a component's table, a checked name
and the stamps on `entity` are named in SQL text on every backend.

It is apart so the filter compiler (`sql.py`) and the tables and writes
(`tables.py`) both build on it without either importing the other.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pasture.store.vocab import Column

# The stamps every entity carries, kept as columns of `entity`.
STAMPS = {"created": ("created_at", "created_by"), "updated": ("updated_at", "updated_by")}


_PART = 500  # values in one `IN (…)` list


def table(component: str) -> str:
    return f"c_{component}"


def q(name: str) -> str:
    """A checked name quoted as an SQL identifier (so `at`, `by` or `order` are fine)."""
    return f'"{name}"'


@dataclass(frozen=True)
class Dialect:
    """What SQLite and PostgreSQL write differently.

    The compiler writes `?` for every parameter; `placeholders` turns the
    finished text into the driver's own marks. No SQL text the compiler
    writes holds a `?` or a `%` of its own (names are `[a-z0-9_]`, values are
    parameters), so the swap is exact.
    """

    name: str
    types: dict[str, str]  # column type -> SQL type
    key: str = "INTEGER PRIMARY KEY"  # an entity's own integer, `_e`
    text: str = "TEXT"  # what the store keeps of its own (eids, stamps, names)
    like: str = "LIKE"  # a case-insensitive (ASCII) match
    max_name: int = 1000  # the longest identifier the database keeps whole
    # a reference's name read in the row's own SELECT (a join the planner may memoize),
    # not once per eid afterwards
    inline_names: bool = False
    # whether the doc rows a full-text search finds carry their entity's kind (`_kind`)
    # as well as its eid and `created` stamps, so a search need not join `entity`
    fts_kind: bool = False
    # whether a read may be planned once for any value (`Compiled.generic`), where planning
    # it afresh each time costs more than it could save: PostgreSQL plans a search joined to
    # every component, or a walk through references, anew for each call (its generic plan
    # looks a little dearer; planning a dozen joins takes ~10 ms, a walk's four ~1 ms), and
    # the generic plan starts where a fresh one would: the search, or an equality's index
    generic_plans: bool = False
    keeps_nul: bool = True  # whether text may hold a NUL character
    # How a whole row leaves out the component tables that are empty, which it would look
    # each one up in for every row it finds: SQLite asks first which are, in the read's own
    # snapshot (`probes_empty`); on PostgreSQL, where a question of its own costs a round
    # trip, the read leaves out those found empty last time and its own statement says
    # which are empty now (`checks_empty`), read again only when one it left out is not.
    probes_empty: bool = True
    checks_empty: bool = False
    edge_seq: str = "rowid"  # the column of `edge` that keeps the order edges were added in

    def placeholders(self, sql: str) -> str:
        return sql

    def among(self, values: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        """What follows a column that is to be one of `values`, with its parameters: in
        parts, as many as a statement takes parameters (SQLite's are bounded)."""
        for i in range(0, len(values), _PART):
            part = list(values[i : i + _PART])
            yield f"IN ({', '.join('?' * len(part))})", part

    def boolean(self, value: bool) -> Any:
        """A bool as a parameter compared with a bool column."""
        return 1 if value else 0

    def typed(self, sql_type: str) -> str:
        """A parameter in a SELECT list that is written into a column of `sql_type`."""
        return "?"

    def insert_or_skip(self, into: str, rest: str, key: str = "") -> str:
        """An INSERT that leaves alone a row whose `key` is taken already."""
        return f"INSERT OR IGNORE INTO {into} {rest}"

    def fts(self, words: Sequence[str], doc: str | None) -> tuple[str, list[str], list[Any], str]:
        """Full text over doc: the driving FROM, its conditions, their parameters, the order.
        With `doc`, the FROM also joins the doc rows found, with that alias (PostgreSQL's
        always does: its search is in them)."""
        raise NotImplementedError

    def order_term(self, expr: str, descending: bool) -> str:
        """`expr` in an ORDER BY: an empty value first ascending and last descending, as
        SQLite orders them (and its indexes hold them)."""
        return f"{expr} DESC" if descending else f"{expr} ASC"

    def index_term(self, expr: str) -> str:
        """`expr` in a declared index: kept in `order_term`'s ascending order, so one index
        serves a read in either direction."""
        return expr


class SqliteDialect(Dialect):
    def fts(self, words: Sequence[str], doc: str | None) -> tuple[str, list[str], list[Any], str]:
        # Every word or phrase as an FTS5 string, so nothing in it is FTS syntax.
        # (a NUL would end FTS5's string early, so it goes)
        text = " ".join('"' + w.replace("\x00", " ").replace('"', '""') + '"' for w in words)
        found = "doc_fts JOIN entity e ON e._e = doc_fts.rowid"
        if doc is not None:
            found = f"doc_fts JOIN c_doc {doc} ON {doc}._e = doc_fts.rowid "
            found += f"JOIN entity e ON e._e = {doc}._e"
        return (found, ["doc_fts MATCH ?"], [text], "doc_fts.rank")


class PostgresDialect(Dialect):
    def order_term(self, expr: str, descending: bool) -> str:
        # PostgreSQL puts an empty value last ascending: said, so both order alike
        return f"{expr} DESC NULLS LAST" if descending else f"{expr} ASC NULLS FIRST"

    def index_term(self, expr: str) -> str:
        return f"{expr} NULLS FIRST"  # as `order_term` ascends; read backwards, it descends

    def placeholders(self, sql: str) -> str:
        return sql.replace("%", "%%").replace("?", "%s")

    def among(self, values: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        yield "= ANY(?)", [list(values)]  # one array, however long

    def boolean(self, value: bool) -> Any:
        return value

    def typed(self, sql_type: str) -> str:
        # a bare parameter in a SELECT list would be taken for text; CAST takes no collation
        return f"CAST(? AS {sql_type.split(' COLLATE ')[0]})"

    def insert_or_skip(self, into: str, rest: str, key: str = "") -> str:
        conflict = f"ON CONFLICT ({key})" if key else "ON CONFLICT"
        return f"INSERT INTO {into} {rest} {conflict} DO NOTHING"

    def fts(self, words: Sequence[str], doc: str | None) -> tuple[str, list[str], list[Any], str]:
        # each word or quoted phrase a phrase query, all of them required; the query is
        # made once in a one-row subquery so ranking needs no second copy of it (OFFSET 0
        # keeps the planner from folding it into the rows, which would make it again for
        # every row its index finds and every row it ranks)
        query = " && ".join(f"phraseto_tsquery('{FTS_CONFIG}', ?)" for _ in words)
        doc = doc or "fts"
        return (
            f"(SELECT {query} AS q OFFSET 0) fq JOIN c_doc {doc} ON {doc}._fts @@ fq.q "
            f"JOIN entity e ON e._e = {doc}._e",
            [],
            [w.replace("\x00", " ") for w in words],
            f"ts_rank({doc}._fts, fq.q) DESC, e._e",
        )


# PostgreSQL's text search configuration in each app's schema: English stems, no stop
# words dropped (as SQLite's porter tokenizer keeps them).
FTS_CONFIG = "pasture_fts"

SQLITE = SqliteDialect(
    "sqlite",
    {"text": "TEXT", "time": "TEXT", "url": "TEXT", "number": "NUMERIC", "bool": "INTEGER"},
)
# Text compares byte for byte ("C"), as SQLite's does, so `<`, ties in a tally and
# ILIKE's case folding (ASCII only) read the same on both.
_PG_TEXT = 'TEXT COLLATE "C"'
POSTGRES = PostgresDialect(
    "postgres",
    {
        "text": _PG_TEXT,
        "time": _PG_TEXT,
        "url": _PG_TEXT,
        "number": "DOUBLE PRECISION",
        "bool": "BOOLEAN",
    },
    key="BIGINT PRIMARY KEY",
    text=_PG_TEXT,
    like="ILIKE",
    max_name=63,
    inline_names=True,
    fts_kind=True,
    generic_plans=True,
    probes_empty=False,
    checks_empty=True,
    keeps_nul=False,
    edge_seq="seq",  # PostgreSQL has no rowid
)


def sql_type(dialect: Dialect, column: Column) -> str:
    return dialect.types["text" if column.reference else column.type]


__all__ = [
    "FTS_CONFIG",
    "POSTGRES",
    "SQLITE",
    "STAMPS",
    "Dialect",
    "PostgresDialect",
    "SqliteDialect",
    "q",
    "sql_type",
    "table",
]
