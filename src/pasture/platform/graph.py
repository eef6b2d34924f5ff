"""An app's graph reached directly: apply bundles, query with a filter, describe the schema.

`via_web=True`: `app` is `space/slug` from a page's address, and a public or
open app of a space the caller is not in is reachable (as on the web).

Every read and write of an app's store goes through here, whoever asks: the
graph tools and `./api/` directly, and a running command — declared or code —
through `CheckedStore`, its `ctx.store`, which asks the same questions of the
same caller on every call. So nobody gets more through a command than they
have on the page.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pasture.caller import Caller
from pasture.commands.appstore import AppStore
from pasture.errors import Refused
from pasture.platform.access.gate import Gate
from pasture.platform.catalog import Catalog
from pasture.platform.db.bus import Bus, Change
from pasture.platform.nouns import Reached, plural
from pasture.result import Result
from pasture.store.answers import answer_data, answer_text
from pasture.store.base import Answer, Applied, Bundle, Transaction

if TYPE_CHECKING:
    from pasture.platform.access.audit import Call


class Graph:
    """Reads and writes on an app's store, under the app's access."""

    def __init__(self, catalog: Catalog, gate: Gate, bus: Bus) -> None:
        self.catalog = catalog
        self.gate = gate
        self.bus = bus

    def write(
        self,
        caller: Caller,
        app: str,
        bundles: Any,
        *,
        via_web: bool = False,
        noted: Call | None = None,
        checked: Reached | None = None,
        publish: bool = True,
    ) -> tuple[Reached, Applied]:
        """Write bundles as the caller, if the app's access lets them; Refused otherwise.

        `noted`: the audit's record of this call, told which app it reached. `checked`:
        the app as this call reached it a moment ago, already allowed to write: not
        reached or checked again. `publish`: tell live pages now (not inside a transaction,
        whose writes are news only once it commits)."""
        reached = checked
        if reached is None:
            reached = self.gate.reach(caller, app, via_web=via_web)
            if noted is not None:
                noted.app = reached.at
            self.gate.check_write(caller, reached)
        applied = self.catalog.store(reached.space, reached.slug).apply(bundles, caller)
        if publish:
            self.bus.publish(Change("write", reached.space, reached.slug))
        return reached, applied

    def read(
        self,
        caller: Caller,
        app: str,
        filter: str,
        *,
        via_web: bool = False,
        checked: Reached | None = None,
        table: str | None = None,
    ) -> tuple[Reached, Answer]:
        """What a filter answers (its rows, or an aggregate's object), if the caller reaches
        the app; Refused otherwise. `checked`: the app as this call reached it. `table`:
        the rows as that table's (`ctx.db`'s)."""
        reached = checked or self.gate.reach(caller, app, via_web=via_web)
        store = self.catalog.store(reached.space, reached.slug)
        return reached, store.query(filter, caller, table=table)

    def apply(
        self,
        caller: Caller,
        app: str,
        bundles: Any,
        *,
        via_web: bool = False,
        noted: Call | None = None,
    ) -> Result:
        """Write bundles under the app's access; data `{entities, aliases}`."""
        reached, applied = self.write(caller, app, bundles, via_web=via_web, noted=noted)
        named = ", ".join(
            f"{k if k.startswith('$') else '$' + k}={v}" for k, v in applied.aliases.items()
        )
        text = f"wrote {plural(len(applied.entities), 'entity', 'entities')} in {reached.at}"
        return Result(
            f"{text}: {named}" if named else text,
            {"entities": list(applied.entities), "aliases": dict(applied.aliases)},
        )

    def query(self, caller: Caller, app: str, filter: str, *, via_web: bool = False) -> Result:
        """Read under the app's access; data `{rows}`, or an aggregate's `{count}`,
        `{tally}` or `{distinct}`."""
        reached, answer = self.read(caller, app, filter, via_web=via_web)
        return Result(answer_text(filter, answer, reached.at), answer_data(answer))

    def schema(self, caller: Caller, app: str, *, via_web: bool = False) -> Result:
        """Every component of the app with its columns and types."""
        reached = self.gate.reach(caller, app, via_web=via_web)
        described = self.catalog.store(reached.space, reached.slug).schema()
        lines = [f"## {reached.at}"]
        components = described.get("components", described)
        if isinstance(components, Mapping):
            for name, spec in components.items():
                lines.append(f"{name}: {_columns_text(spec)}")
        return Result("\n".join(lines), dict(described))


def _columns_text(spec: Any) -> str:
    """`text text required, done bool default false, owner person required; indexes
    by_owner(owner)`: each column's type and what its rows must hold, then the indexes."""
    if isinstance(spec, Mapping):
        cols = spec.get("columns", spec.get("properties", spec))
        details = spec.get("details")
        details = details if isinstance(details, Mapping) else {}
        if isinstance(cols, Mapping):
            parts = []
            for col, kind in cols.items():
                if isinstance(kind, Mapping):
                    kind = kind.get("type", "")
                held = details.get(col)
                parts.append(" ".join([f"{col} {kind}".strip(), *_held(held)]).strip())
            text = ", ".join(parts)
            indexes = spec.get("indexes")
            if isinstance(indexes, Mapping) and indexes:
                text += "; indexes " + ", ".join(
                    f"{name}({', '.join(map(str, on))})" for name, on in indexes.items()
                )
            return text
    return str(spec)


def _held(details: Any) -> list[str]:
    """What a column's details add to its type: whom it names, its default, required."""
    if not isinstance(details, Mapping):
        return []
    out: list[str] = []
    if details.get("person"):
        out.append("to a person")
    if details.get("table"):
        out.append(f"to a row of {details['table']}")
    if "default" in details:
        out.append(f"default {json.dumps(details['default'])}")
    if details.get("required"):
        out.append("required")
    return out


class CheckedStore(AppStore):
    """`ctx.store` of a command the platform runs: its app, as its caller, checked each time.

    Each read asks whether the caller still reaches the app, and each write
    whether the app's access lets them change it, exactly as `./api/query` and
    `./api/apply` ask; a command marked read-only writes nothing at all. `checked` is
    the reach (and, for a command that writes, the leave to write) its call made just
    before running it: the store's first read or write takes it instead of asking again
    (`pasture.platform.running` says when), every later one asks.
    """

    def __init__(
        self,
        graph: Graph,
        caller: Caller,
        at: str,
        *,
        via_web: bool = False,
        read_only: str | None = None,
        checked: Reached | None = None,
    ) -> None:
        super().__init__(read_only=read_only)
        self.graph = graph
        self.caller = caller
        self.at = at
        self.via_web = via_web
        self._checked = checked
        # The transaction held open (`begin`), the app it is of, and whether the call's
        # own code began it (`end` from its code ends only what its code began).
        self._held: tuple[Transaction, Reached, bool] | None = None

    def begin(self, *, read_only: bool = False, by_code: bool = False) -> None:
        if self._held is not None:
            raise Refused(
                "a transaction is open already — a mutation's writes are one transaction; an "
                "action runs each mutation (ctx.run_mutation) in one of its own, one after another"
            )
        reached = self._checked or self.graph.gate.reach(self.caller, self.at, via_web=self.via_web)
        store = self.graph.catalog.store(reached.space, reached.slug)
        self._held = (store.begin(read_only=read_only), reached, by_code)

    def end(self, *, keep: bool, by_code: bool = False) -> None:
        held = self._held
        if held is None or (by_code and not held[2]):
            return
        self._held = None
        transaction, reached, _ = held
        if not keep:
            transaction.rollback()
            return
        transaction.commit()
        if transaction.wrote:
            self.graph.bus.publish(Change("write", reached.space, reached.slug))

    def _spend(self) -> Reached | None:
        """The call's own reach, once: for the first use of the store, then never again."""
        checked, self._checked = self._checked, None
        return checked

    def query(self, filter: str, *, table: str | None = None) -> Answer:
        checked = self._spend()
        return self.graph.read(
            self.caller, self.at, filter, via_web=self.via_web, checked=checked, table=table
        )[1]

    def schema(self) -> dict[str, Any]:
        return self.graph.schema(self.caller, self.at, via_web=self.via_web).data

    def _write(self, bundles: list[Bundle]) -> Applied:
        checked = self._spend()
        return self.graph.write(
            self.caller,
            self.at,
            bundles,
            via_web=self.via_web,
            checked=checked,
            publish=self._held is None,
        )[1]
