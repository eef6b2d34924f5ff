"""Running a command or a handler as its caller: access checked once, then the command's run.

A command arrives here found (`Resolved`, by `pasture.platform.listing`): its app
reached by its caller, its version loaded. Running it checks, once, that the caller may
change the app when the command writes, and that a command hard to undo (`consequential`)
was confirmed by the person (refused otherwise, with `pasture.asking.unconfirmed`, which
says how); it converts nothing itself (each family converts its own arguments), and
gives the command its context: the app's store as the caller
(`pasture.platform.graph.CheckedStore`).

A declared command runs here and now, so its first use of the store is the one this
call reached and checked a moment ago, not reached and checked again; any later use,
and every use by code (which may come back to its store long after the call began, and
from another process), is asked afresh — nobody keeps through a running command what
they have lost on the page.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pasture.asking import unconfirmed
from pasture.caller import Caller
from pasture.commands.model import Command, Context
from pasture.errors import NotFound, Refused, echo
from pasture.long_calls import LongCall
from pasture.platform.access.gate import Gate
from pasture.platform.catalog import Catalog
from pasture.platform.graph import CheckedStore, Graph
from pasture.platform.nouns import Reached, Resolved
from pasture.platform.workers.dispatch import handlers_of
from pasture.result import Result
from pasture.schema import args_object

if TYPE_CHECKING:
    from pasture.platform.access.audit import Call


class Running:
    """Runs the commands and handlers of a caller's apps, as that caller."""

    def __init__(self, catalog: Catalog, gate: Gate, graph: Graph) -> None:
        self.catalog = catalog
        self.gate = gate
        self.graph = graph

    def run(
        self,
        caller: Caller,
        resolved: Resolved,
        args: Mapping[str, Any],
        *,
        typed_text: bool = False,
        confirmed: bool = False,
        noted: Call | None = None,
        long_call: LongCall | None = None,
    ) -> Result:
        """Run a found command as the caller it was found for.

        `typed_text`: the values are text a person typed, which code commands convert.
        `confirmed`: the person said yes to it (asked by the door, or `"confirm": true`),
        without which a consequential command is refused and nothing runs.
        `noted`: the audit's record of this call, told which app and command it ran.
        `long_call`: the door's watch on it, which its code reports progress to and which
        may stop it (`pasture.long_calls`)."""
        if resolved.caller.eid != caller.eid:  # a handle is its caller's alone
            raise ValueError("a command found for one caller was run by another")
        cmd, reached = resolved.found, resolved.reached
        if noted is not None:
            noted.app, noted.command = reached.at, cmd.agent_name
            noted.known = cmd.input.get("properties", {})
        if not cmd.read_only:
            self.gate.check_write(caller, reached, resolved.loaded)
        args = args_object(args)
        if cmd.consequential and not confirmed:  # the person is asked first, always
            raise Refused(unconfirmed(cmd.title, cmd.agent_name, reached.at, args))
        checked = reached if cmd.family == "declared" else None
        ctx = self.context(caller, reached.at, cmd, resolved.via_web, typed_text, checked)
        if long_call is not None:
            ctx = replace(ctx, long_call=long_call)
        return cmd.run(args, ctx)

    def call_handler(
        self,
        caller: Caller,
        app: str,
        name: str,
        args: Any,
        *,
        via_web: bool = False,
        noted: Call | None = None,
        long_call: LongCall | None = None,
    ) -> Result:
        """Run one of an app's handlers as its page calls it, as the caller: a query with a
        store that refuses writes, a mutation or action as one who may write there."""
        reached = self.gate.reach(caller, app, via_web=via_web)
        if noted is not None:
            noted.app, noted.command = reached.at, name
        loaded = self.catalog.load(reached.space, reached.slug)
        kinds = handlers_of(loaded.code)
        kind = kinds.get(name) if isinstance(name, str) else None
        if kind is None:
            have = ", ".join(sorted(kinds)) or "none"
            raise NotFound(
                f"no handler {echo(str(name))} in {reached.at} — its handlers are {have}"
            )
        args = args_object(args, "handler")
        if kind != "query":
            self.gate.check_write(caller, reached, loaded)
        read_only = name if kind == "query" else None
        ctx = self._context(caller, reached.at, read_only, via_web)
        if long_call is not None:
            ctx = replace(ctx, long_call=long_call)
        version = self.catalog.version_of(reached.space, reached.slug, loaded.version)
        return self.catalog.workers.run_handler(version, name, args, ctx, kind=kind)

    def context(
        self,
        caller: Caller,
        at: str,
        cmd: Command,
        via_web: bool,
        typed_text: bool = False,
        checked: Reached | None = None,
    ) -> Context:
        """What a command runs with: its app's store as the caller, checked on every call
        (but the first, when `checked` is the reach this call has just made)."""
        read_only = cmd.name if cmd.read_only else None
        return self._context(caller, at, read_only, via_web, typed_text, checked)

    def _context(
        self,
        caller: Caller,
        at: str,
        read_only: str | None,
        via_web: bool,
        typed_text: bool = False,
        checked: Reached | None = None,
    ) -> Context:
        """A command's or handler's: `read_only` names what only reads (its store refuses
        writes)."""
        if caller.address is not None:  # an anonymous write was counted once, as the call
            caller = replace(caller, address=None)
        store = CheckedStore(
            self.graph, caller, at, via_web=via_web, read_only=read_only, checked=checked
        )
        return Context(caller, store, at, typed_text=typed_text)


__all__ = ["Running"]
