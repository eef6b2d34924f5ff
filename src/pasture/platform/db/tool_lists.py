"""Which release of the connector's fixed tool list each MCP client last listed.

The tools never change with a deploy; only a release of pasture changes them. A
client that listed the tools of an earlier release is told, once, on its next
call: `notifications/tools/list_changed` where its connection can carry one, and
a line on the reply (`pasture.mcp._server`). A client is a person and what they
came through (a token, an OAuth grant, the command line), so two agents of one
person are told each in turn. Kept in the platform database, as a release is a
restart: the memory of one process would forget it.
"""

from __future__ import annotations

import threading

from pasture.caller import Caller
from pasture.errors import Unavailable
from pasture.platform.db.platform_db import PlatformDB
from pasture.values import now

_MOST = 4096  # clients remembered in memory at most; past it they are read again


def client_of(caller: Caller) -> str | None:
    """The key a client is remembered by; None for nobody, who lists nothing of theirs."""
    if caller.eid is None:
        return None
    return f"{caller.eid} {caller.via or ''}".strip()


class ToolLists:
    """The release each client last listed (or was told of)."""

    def __init__(self, db: PlatformDB) -> None:
        self.db = db
        self._lock = threading.Lock()
        self._known: dict[str, str | None] = {}

    def listed(self, caller: Caller, release: str) -> None:
        """The caller's client has the tools of `release` now: it listed them, or was told."""
        client = client_of(caller)
        if client is None or self._release(client) == release:
            return
        try:  # a note, never a reason to refuse the call
            with self.db.transaction() as conn:
                conn.execute(
                    "INSERT INTO tool_lists (client, release, listed) VALUES (?, ?, ?) "
                    "ON CONFLICT (client) DO UPDATE SET release = excluded.release, "
                    "listed = excluded.listed",
                    (client, release, now("seconds")),
                )
        except Unavailable:
            return
        self._keep(client, release)

    def due(self, caller: Caller, release: str) -> bool:
        """Whether the caller's client listed the tools of another release, and was not told."""
        client = client_of(caller)
        if client is None:
            return False
        last = self._release(client)
        return last is not None and last != release

    def due_at_once(self, caller: Caller, release: str) -> bool | None:
        """`due`'s answer when memory holds the client's release; None when only `due`,
        which may read the database, can tell."""
        client = client_of(caller)
        if client is None:
            return False
        with self._lock:  # held for a look in memory, never across a read
            if client not in self._known:
                return None
            last = self._known[client]
        return last is not None and last != release

    def _release(self, client: str) -> str | None:
        with self._lock:
            if client in self._known:
                return self._known[client]
        try:
            row = self.db.one("SELECT release FROM tool_lists WHERE client = ?", client)
        except Unavailable:
            return None
        release = None if row is None else str(row["release"])
        self._keep(client, release)
        return release

    def _keep(self, client: str, release: str | None) -> None:
        with self._lock:
            if len(self._known) >= _MOST:
                self._known.clear()
            self._known[client] = release


__all__ = ["ToolLists", "client_of"]
