"""The app's store as a running command sees it: bound to the person who called.

A command never names a caller or an app. `ctx.store` reads and writes one
app, as the one person the call came from, with that person's rights:

    rows = ctx.store.query(".line.sku=V60-02")
    ctx.store.apply({"entity": {"eid": "$line"}, "line": {"sku": "V60-02", "qty": 1}})
    with ctx.store.batch() as batch:          # one transaction: all of it or none
        for row in rows:
            ctx.store.apply({"entity": row["entity"], "tombstone": {}})
    batch.applied.entities                    # what the batch wrote, once it is over

`AppStore` is the interface and the batching every implementation shares; it
has three: `StoreAsCaller` here (a registry used on its own, around any
`Store`), the platform's checked one (`pasture.platform.graph`, every read and
write under the app's access), and a worker process's, which reaches the
platform's over its channel (`pasture.platform.workers.worker_main`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pasture.caller import Caller
from pasture.errors import Refused
from pasture.store.base import Answer, Applied, Bundle
from pasture.store.bundles import listed

if TYPE_CHECKING:
    from pasture.store.base import Store, Transaction


@dataclass
class Batch:
    """The bundles a `with store.batch():` block gathered; `applied` once it is over."""

    bundles: list[Bundle] = field(default_factory=list)
    applied: Applied = field(default_factory=Applied)


class AppStore:
    """One app's store, for one caller. Subclasses give `query`, `_write` and `schema`."""

    def __init__(self, *, read_only: str | None = None) -> None:
        # `read_only` is the name of a command that only reads: its writes are refused.
        self.read_only = read_only
        self._batch: Batch | None = None

    # -- what each kind of store gives ---------------------------------------------------
    def query(self, filter: str, *, table: str | None = None) -> Answer:
        """The rows a filter selects, as the caller may read them; or, for an aggregate
        (`.count!`, `.tally=`, `.distinct=`), the one object it answers. With `table`, the
        rows of that table as `ctx.db` gives them (`pasture.store.base.Store.query`)."""
        raise NotImplementedError

    def schema(self) -> dict[str, Any]:
        """Every component of the app, with its columns and their types."""
        raise NotImplementedError

    def _write(self, bundles: list[Bundle]) -> Applied:
        """Write bundles in one transaction, as the caller."""
        raise NotImplementedError

    # -- a transaction over many reads and writes (a mutation's, a query's snapshot) -----
    def begin(self, *, read_only: bool = False, by_code: bool = False) -> None:
        """Hold every read and write from here in one transaction until `end`; with
        `read_only`, one snapshot that cannot write. One at a time. `by_code`: the call's
        own code asks (an action's `ctx.run_mutation`), not the platform."""
        raise Refused("this store keeps no transactions open — each write is one of its own")

    def end(self, *, keep: bool, by_code: bool = False) -> None:
        """End the transaction `begin` opened: keep what it wrote, or none of it. With none
        open, nothing happens; `by_code`, nor with one the platform began."""

    # -- writing, one call or one batch ------------------------------------------------------
    def apply(self, bundles: Bundle | Sequence[Bundle]) -> Applied:
        """Write one bundle or a list of them, all or nothing.

        Inside `batch()` the bundles wait for the end of the block, and this
        answers an empty `Applied`: the batch's own `applied` has the eids.
        """
        if self.read_only is not None:
            raise Refused(
                f"{self.read_only} only reads (it is marked readOnly), so it cannot write — "
                "its app's author registers it without readOnly if it changes things"
            )
        each = listed(bundles)
        if self._batch is not None:
            self._batch.bundles.extend(each)
            return Applied()
        return self._write(each)

    @contextmanager
    def batch(self) -> Iterator[Batch]:
        """Gather every write of the block into one transaction, written as the block ends.

        A block that raises writes nothing; a batch inside a batch joins the outer one.
        """
        if self._batch is not None:
            yield self._batch
            return
        batch = self._batch = Batch()
        try:
            yield batch
        finally:
            self._batch = None
        if batch.bundles:
            batch.applied = self.apply(batch.bundles)


class StoreAsCaller(AppStore):
    """Any `Store`, read and written as one caller: a registry used on its own, and tests."""

    def __init__(self, store: Store, caller: Caller, *, read_only: str | None = None) -> None:
        super().__init__(read_only=read_only)
        self.store = store
        self.caller = caller
        self._held: Transaction | None = None

    def query(self, filter: str, *, table: str | None = None) -> Answer:
        return self.store.query(filter, self.caller, table=table)

    def schema(self) -> dict[str, Any]:
        return self.store.schema()

    def _write(self, bundles: list[Bundle]) -> Applied:
        return self.store.apply(bundles, self.caller)

    def begin(self, *, read_only: bool = False, by_code: bool = False) -> None:
        if self._held is not None:
            raise Refused("a transaction is open already — end it before beginning another")
        self._held = self.store.begin(read_only=read_only)

    def end(self, *, keep: bool, by_code: bool = False) -> None:
        held, self._held = self._held, None
        if held is not None:
            (held.commit if keep else held.rollback)()


__all__ = ["AppStore", "Batch", "StoreAsCaller"]
