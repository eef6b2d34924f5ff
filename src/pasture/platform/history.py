"""Undo and restore: what one call changed put back, or an app's data as it was at a moment.

    pasture undo 3f9a2b1c0d4e                          its space's owners, or who made it
    pasture app restore ada/runs --to "2 hours ago"    its space's owners

An app's store keeps what each write changed, with the call that made it
(`pasture.store.journal`); this part finds a call in the audit (whose records
keep each call's id), decides who may, and has the store put it back. Each is a
call of its own, recorded in the audit with its id, so it can be undone in turn;
every server's live pages redraw (`Change("write", …)` on the bus). A door that watches
(`long_call`: a terminal's bar, Ctrl-C) is told how many entities are put back as it goes;
stopped, the undo or restore keeps nothing (it is one write).

Who may: the owners of the app's space undo any call in it and restore it; the
person who made a call may undo it, while they may still write the app. Anyone
else is refused with the sentence saying who can — a viewer, another space's
owner, a signed-out visitor, a token or grant that only reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pasture import calls
from pasture.caller import Caller
from pasture.errors import Cancelled, Forbidden, NotFound, Refused, UsageError, echo
from pasture.long_calls import LongCall, progress_of
from pasture.platform.access.audit import Audit
from pasture.platform.access.gate import Gate
from pasture.platform.auth.people import People
from pasture.platform.catalog import Catalog
from pasture.platform.db.bus import Bus, Change
from pasture.platform.nouns import Reached
from pasture.result import Result
from pasture.store.base import Told

if TYPE_CHECKING:
    from pasture.platform.access.audit import Call


def _telling(long_call: LongCall | None, doing: str) -> Told | None:
    """What the store tells as it puts entities back, told on to the door's watch; a stop
    asked for ends the write (nothing of it kept)."""
    if long_call is None:
        return None
    said = f"{doing}: entities put back"

    def told(done: int, total: int) -> None:
        if long_call.cancelled:
            raise Cancelled(f"{doing} was stopped — nothing of it was kept")
        long_call.report(progress_of(done, max(total, 1), said))

    return told


def _rows(n: int) -> str:
    return f"{n} row{'' if n == 1 else 's'}"


class History:
    """Undoing a call and restoring an app to a moment, as the caller."""

    def __init__(
        self, catalog: Catalog, gate: Gate, people: People, audit: Audit, bus: Bus
    ) -> None:
        self.catalog = catalog
        self.gate = gate
        self.people = people
        self.audit = audit
        self.bus = bus

    def undo(
        self,
        caller: Caller,
        call: str,
        app: str | None = None,
        *,
        via_web: bool = False,
        noted: Call | None = None,
        long_call: LongCall | None = None,
    ) -> Result:
        """Put back what `call` changed in its app's data. `app` names the app where the audit
        has no record of the call (it was off). Data `{call, undo, app, entities}`: `undo`
        is this undo's own call id, which undoes it in turn."""
        self.people.require_signed_in(caller)
        call = call.strip().lower()
        if not calls.looks_like_id(call):
            raise UsageError(
                f"{echo(call, 40)} is not a call's id — an id is 12 letters and digits "
                "(0-9, a-f), as `pasture audit APP` shows after `call`"
            )
        records = self.audit.of_call(call)
        made_by = {r["eid"] for r in records if r["eid"] is not None}
        at = next((r["app"] for r in records if r["app"]), None)
        if at is None:
            if app is None:
                raise NotFound(
                    f"no call {call} is in the audit — `pasture audit APP` shows each call with "
                    "its id; where the audit was off, name its app (pasture undo CALL --app APP)"
                )
            at = app
        reached = self.gate.reach(caller, at, via_web=via_web)
        if noted is not None:
            noted.app = reached.at
        if reached.role != "owner" and caller.eid not in made_by:
            raise Forbidden(
                f"only the owners of {reached.space}, and the person who made call {call}, "
                "can undo it"
            )
        self.gate.check_write(caller, reached)
        if app is not None and records and self.gate.reach(caller, app).at != reached.at:
            raise UsageError(f"call {call} was made in {reached.at}, not in {echo(app, 60)}")
        self._not_undone_already(call, reached)
        store = self.catalog.store(reached.space, reached.slug)
        applied = store.undo(call, caller, _telling(long_call, f"the undo of call {call}"))
        self.bus.publish(Change("write", reached.space, reached.slug))
        own = calls.current()
        again = "" if own is None else f" — pasture undo {own.id} puts it back again"
        return Result(
            f"undid call {call} in {reached.at}: {_rows(len(applied.entities))} put back as "
            f"they were{again}",
            {
                "call": call,
                "undo": None if own is None else own.id,
                "app": reached.at,
                "entities": applied.entities,
            },
        )

    def _not_undone_already(self, call: str, reached: Reached) -> None:
        """Refuse undoing a call twice, saying which undo did it and what to undo instead
        (the journal would refuse it too, naming the undo's rows as changed since): the
        undo that put its change back, or the one that put it back again."""
        chain: list[str] = []
        at = call
        while len(chain) < 20:
            undone_by = next((r["call"] for r in self.audit.undos_of(at, reached.at)), None)
            if not undone_by or undone_by in chain:
                break
            chain.append(undone_by)
            at = undone_by
        if not chain:
            return
        last = chain[-1]
        if len(chain) % 2:
            raise Refused(
                f"call {call} was undone already, by call {last} — pasture undo {last} puts "
                "its change back"
            )
        raise Refused(
            f"call {call} was undone by call {chain[0]}, and that undone by call {last}: its "
            f"change is back — pasture undo {last} undoes it again"
        )

    def restore(
        self,
        caller: Caller,
        app: str,
        when: str,
        *,
        noted: Call | None = None,
        long_call: LongCall | None = None,
    ) -> Result:
        """Put an app's data back as it was at `when` (a time phrase such as `2 hours ago`,
        or a written time), for the owners of its space. Data `{app, moment, undo,
        entities}`: `undo` is this restore's call id, which undoes it."""
        self.people.require_signed_in(caller)
        reached = self.gate.reach(caller, app)
        if noted is not None:
            noted.app = reached.at
        if reached.role != "owner":
            raise Forbidden(f"only the owners of {reached.space} can restore {reached.at}")
        self.gate.check_write(caller, reached)
        store = self.catalog.store(reached.space, reached.slug)
        moment = store.moment(when)
        applied = store.restore(moment, caller, _telling(long_call, f"the restore of {reached.at}"))
        if applied.entities:
            self.bus.publish(Change("write", reached.space, reached.slug))
        own = calls.current()
        shown = moment[:19].replace("T", " ")
        if not applied.entities:
            text = (
                f"nothing in {reached.at} changed since {shown} UTC: there was nothing to restore"
            )
        else:
            again = "" if own is None else f" — pasture undo {own.id} undoes this restore"
            text = (
                f"restored {reached.at} to {shown} UTC: {_rows(len(applied.entities))} put back "
                f"as they were{again}"
            )
        return Result(
            text,
            {
                "app": reached.at,
                "moment": moment,
                "undo": None if own is None or not applied.entities else own.id,
                "entities": applied.entities,
            },
        )


__all__ = ["History"]
