"""The call a write belongs to: its id, who made it and through which door.

The audit opens a call around every command, apply, deploy, undo and restore
(`pasture.platform.access.audit.Call`) and marks it here for as long as it runs;
an app's store journals each write it makes with the mark it finds
(`pasture.store.journal`), so `pasture undo CALL` can put back exactly what one
call changed. A context variable rather than an argument: the write happens far
below the door, in the call's own thread (a worker's `ctx.store` is answered
there too), and nothing in between needs to carry it.

A call made inside another (a command whose code runs a mutation) is part of the
call around it: it keeps that call's id, so undoing the person's one call undoes
all of it.
"""

from __future__ import annotations

import secrets
from contextvars import ContextVar, Token
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CallMark:
    """One call as the journal keeps it: `id` (what the audit shows), `by` (the caller's
    eid, None for nobody) and `door` (`web`, `webmcp`, `mcp`, `cli`)."""

    id: str
    by: str | None
    door: str | None


_current: ContextVar[CallMark | None] = ContextVar("pasture_call", default=None)


def new_id() -> str:
    """A call's id: 12 lowercase hex digits, short enough to type after `pasture undo`."""
    return secrets.token_hex(6)


def current() -> CallMark | None:
    """The call running in this context, if one is."""
    return _current.get()


def mark(call: CallMark) -> Token[CallMark | None]:
    """Make `call` the one running here until `unmark` is handed the token."""
    return _current.set(call)


def unmark(token: Token[CallMark | None]) -> None:
    _current.reset(token)


def looks_like_id(text: str) -> bool:
    """Whether `text` could be a call's id (a caller typed it: nothing else is looked up)."""
    return len(text) == 12 and all(c in "0123456789abcdef" for c in text)


__all__ = ["CallMark", "current", "looks_like_id", "mark", "new_id", "unmark"]
