"""Every request's id: a short hex word, so that "it said fault 3f9a1c2e" can be found in the log.

The web door begins one for each request it is sent (`pasture.web.traffic`): it goes
back as the `X-Request-Id` header, it is in the request's line in the server's log and
in every record logged while the request is served (`pasture.log_lines`), and the
sentence of a fault names it (`fault_id`). The id lives in a context variable, so the
threads the doors run the platform in (`pasture.threads`) see the request they serve.

A door that learns who is asking says so (`named`), for the request's log line: their
name, never what they signed in with.

A fault met outside any request — a tool call over MCP's stdio — is given an id of its
own where it is first told (`fault_id`), and the log record told with it carries it.
"""

from __future__ import annotations

import secrets
from contextvars import ContextVar, Token
from dataclasses import dataclass


@dataclass
class Served:
    """The request being served: its id, and the person asking once a door knows them."""

    id: str
    person: str | None = None


_serving: ContextVar[Served | None] = ContextVar("pasture_request", default=None)


def new_id() -> str:
    """A fresh request id: 8 hex digits."""
    return secrets.token_hex(4)


def begin() -> tuple[Served, Token[Served | None]]:
    """A request begins: its id, made now, for everything that serves it; `end` with the token."""
    served = Served(new_id())
    return served, _serving.set(served)


def end(token: Token[Served | None]) -> None:
    """The request `begin` gave `token` for is done."""
    _serving.reset(token)


def current() -> str | None:
    """The id of the request being served here, or None outside any."""
    served = _serving.get()
    return None if served is None else served.id


def named(person: str | None) -> None:
    """Who is asking, as the door found them (a name, or None for nobody)."""
    served = _serving.get()
    if served is not None and person is not None:
        served.person = person


def fault_id() -> str:
    """The id a fault's sentence names: the request's; outside a request, one made now and
    kept for the rest of this context, so the record logged with the fault carries it."""
    served = _serving.get()
    if served is None:
        served = Served(new_id())
        _serving.set(served)
    return served.id


__all__ = ["Served", "begin", "current", "end", "fault_id", "named", "new_id"]
