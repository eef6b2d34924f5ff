"""The store's interface: what every backend (SQLite, PostgreSQL) provides.

An app's store is an entity–component graph. `declare` installs a vocabulary,
`apply` writes bundles in one transaction, `query` reads with the filter
grammar, `schema` describes every component. Callers never see SQL.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pasture.caller import Caller

Bundle = Mapping[str, Any]


def new_eid() -> str:
    """A fresh entity id: 16 lowercase hex digits. People's eids are made the same way."""
    return secrets.token_hex(8)


Row = dict[str, Any]
# What a filter answers: its rows, or, for an aggregate, one object —
# {"count": n}, {"tally": {value: n, …}} or {"distinct": [value, …]}.
Answer = list[Row] | dict[str, Any]

# What an undo or a restore tells as it puts entities back: (done, total).
Told = Callable[[int, int], None]


@dataclass(frozen=True)
class Applied:
    """What a write did: the eids it touched, in order, and each alias's eid."""

    entities: list[str] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)


class Transaction(Protocol):
    """A transaction a store holds open for the thread that began it (`Store.begin`)."""

    wrote: bool  # it has written something

    def commit(self) -> None:
        """Keep what it wrote, and end it."""
        ...

    def rollback(self) -> None:
        """Keep nothing it wrote, and end it."""
        ...


class Store(Protocol):
    """One app's graph. `max_rows`: the rows one answer holds at most, None for no bound
    (`pasture.store.pages`). `history`: the days its journal keeps what each write
    changed, None for no journal (`pasture.store.journal`)."""

    max_rows: int | None
    history: float | None

    def declare(self, vocab: Mapping[str, Any]) -> None:
        """Install a vocabulary (vocab.json's document); refuses every problem at once."""
        ...

    def apply(self, bundles: Bundle | Sequence[Bundle], caller: Caller) -> Applied:
        """Write one bundle or a list of them, all or nothing."""
        ...

    def begin(self, *, read_only: bool = False) -> Transaction:
        """Hold this thread's reads and writes in one transaction until it is committed or
        rolled back; `read_only`: a snapshot that reads one moment and cannot write."""
        ...

    def query(self, filter: str, caller: Caller, *, table: str | None = None) -> Answer:
        """The rows a filter line selects, oldest first (words: best first); or the one
        object its first aggregate answers. With `table` (a filter naming that component
        alone), each row is a table's: `{id, created_at, …its columns}`."""
        ...

    def undo(self, call: str, caller: Caller, told: Told | None = None) -> Applied:
        """Put back what the call `call` changed, as a write of its own (`journal.py`);
        Conflict when a later call changed any of those rows. `told(done, total)` hears
        how many entities are put back as it goes; what it raises ends the write, nothing
        of it kept."""
        ...

    def moment(self, when: str) -> str:
        """The stamp a time phrase (`2 hours ago`) or a written time names, by this store's
        clock; UsageError when it names none."""
        ...

    def restore(self, moment: str, caller: Caller, told: Told | None = None) -> Applied:
        """Put the store back as it was at `moment` (a stamp or a time phrase), as a write of
        its own (`journal.py`); `told` as `undo`'s."""
        ...

    def count(self) -> int:
        """How many things the app keeps: entities carrying a component of its own or a
        doc (not the persons kept for bylines), counted by the database."""
        ...

    def schema(self) -> dict[str, Any]:
        """Every component with its columns and their types."""
        ...

    def close(self) -> None: ...
