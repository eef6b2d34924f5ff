"""What a filter answered, said in one line and carried as data, the same through every door.

    12 rows in ada/runs                          {"rows": [...]}
    1,000 rows in ada/runs, and more follow —    {"rows": [...], "more": true,
      the next page is the same filter with        "cursor": "WyI4…"}
      &after=WyI4… (a command: with after=WyI4…)
    4 entities in ada/runs                       {"count": 4}
    tally of jog.who in ada/runs: Ada 2, Bo 1    {"tally": {"Ada": 2, "Bo": 1}}
    2 distinct jog.who in ada/runs: Ada, Bo      {"distinct": ["Ada", "Bo"]}

The data is the answer as the store gave it (rows under `rows`; an aggregate's
object as it is), so `./api/query`, MCP's structured content and `--json` carry
exactly that; the line is for people and for a model reading the text.
"""

from __future__ import annotations

from typing import Any

from pasture.errors import echo
from pasture.store import syntax
from pasture.store.base import Answer
from pasture.store.pages import Rows

SHOWN = 20  # values a line names before it says how many more there are


def answer_data(answer: Answer) -> dict[str, Any]:
    """The data of a query's `Result`: `{rows}` (and, for a page with more after it, `more`
    and the `cursor` of the next), or the aggregate's own object."""
    if isinstance(answer, Rows) and answer.more:
        return {"rows": list(answer), "more": True, "cursor": answer.cursor}
    return {"rows": answer} if isinstance(answer, list) else dict(answer)


def answer_text(filter: str, answer: Answer, at: str, *, after: str | None = None) -> str:
    """The line that says what a filter answered in the app at `at`. `after`: the argument
    of the command that asked it which takes a cursor, so a page cut short says to call the
    command again with it rather than to change a filter the caller never wrote."""
    if isinstance(answer, list):
        rows = f"{len(answer):,} row{'' if len(answer) == 1 else 's'} in {at}"
        if isinstance(answer, Rows) and answer.cursor is not None:
            if after is not None:
                again = f"the same command with {after}={answer.cursor}"
            elif _continues(filter):  # a second after= is refused: this one replaces it
                again = f"the same filter with after={answer.cursor} in place of its after="
            else:
                again = f"the same filter with &after={answer.cursor}"
            return f"{rows}, and more follow — the next page is {again}"
        if isinstance(answer, Rows) and answer.more:
            return f"the best {rows}, of more — search for more words to narrow them"
        return rows
    if "count" in answer:
        return f"{_plural(int(answer['count']), 'entity', 'entities')} in {at}"
    column = _column(filter)
    if "tally" in answer:
        tally: dict[str, int] = answer["tally"]
        counted = [f"{_shown(value)} {n}" for value, n in tally.items()]
        return f"tally of {column} in {at}: {_listed(counted) if counted else 'no values'}"
    values = [_shown(value) for value in answer.get("distinct", [])]
    head = f"{len(values)} distinct {column} in {at}"
    return f"{head}: {_listed(values)}" if values else head


def _continues(filter: str) -> bool:
    """Whether the filter reads on from a cursor already (`after=`)."""
    from pasture.store.grammar import parse

    return any(isinstance(p, syntax.After) for p in parse(filter).predicates)


def _column(filter: str) -> str:
    """The column the filter's first aggregate reads, as written (`jog.who`)."""
    from pasture.store.grammar import parse

    for p in parse(filter).predicates:
        if isinstance(p, syntax.Count):
            break
        if isinstance(p, syntax.Tally | syntax.Distinct):
            return ".".join(p.path)
    return "values"  # pragma: no cover - a store answers a tally only to a filter asking one


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return echo(str(value), 40)


def _listed(items: list[str]) -> str:
    listed = ", ".join(items[:SHOWN])
    more = len(items) - SHOWN
    return f"{listed}, and {more} more" if more > 0 else listed


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


__all__ = ["answer_data", "answer_text"]
