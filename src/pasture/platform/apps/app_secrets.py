"""An app's secrets: values its code needs (an API key, a password) that nobody is shown.

    pasture secret set cart STRIPE_KEY     (the value is read from stdin)
    pasture secret list cart               (names and when each was set, never values)
    pasture secret rm cart STRIPE_KEY

Owners and editors of the app's space set, list and remove them, as they deploy
it. A worker reads them as `ctx.secrets["STRIPE_KEY"]`; they reach that app's
worker processes and nothing else: no page, no listing, no other app, no
answer of the platform's carries a value. Changing one starts the app's
worker processes afresh, so the next call sees it.
"""

from __future__ import annotations

from pasture.caller import Caller
from pasture.errors import Forbidden, NotFound, UsageError
from pasture.names import SECRET_NAME
from pasture.platform.access.gate import Gate, require_writes
from pasture.platform.db.platform_db import PlatformDB
from pasture.platform.nouns import Reached, plural
from pasture.result import Result
from pasture.values import lone_surrogate, not_characters, now

NAME_RULE = "letters, digits and _, starting with a letter or _, like STRIPE_KEY"
MAX_VALUE = 64 * 1024


class Secrets:
    """Setting, listing and removing apps' secrets; reading them is the catalog's."""

    def __init__(self, db: PlatformDB, gate: Gate) -> None:
        self.db = db
        self.gate = gate

    def _reach(self, caller: Caller, app: str) -> Reached:
        reached = self.gate.reach(caller, app)
        if reached.role not in ("owner", "editor"):
            raise Forbidden(
                f"you can use {reached.at} but not see or change its secrets — its space's "
                "owner can make you an editor"
            )
        return reached

    def set(self, caller: Caller, app: str, name: str, value: str) -> Result:
        require_writes(caller)
        if not SECRET_NAME.fullmatch(name):
            raise UsageError(f"a secret's name is {NAME_RULE} (not {name[:40]!r})")
        if not value:
            raise UsageError(f"give {name} a value on standard input — it is empty")
        surrogate = lone_surrogate(value)
        if surrogate is not None:
            raise UsageError(not_characters(f"the value of {name}", surrogate))
        if len(value.encode()) > MAX_VALUE:
            raise UsageError(f"a secret is at most {MAX_VALUE // 1024} KB")
        reached = self._reach(caller, app)
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO secrets (space, slug, name, value, updated) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (space, slug, name) DO UPDATE SET value = excluded.value, "
                "updated = excluded.updated",
                (reached.space, reached.slug, name, value, now("seconds")),
            )
        return Result(
            f"{name} is set for {reached.at}: its code reads it as ctx.secrets[{name!r}]",
            {"at": reached.at, "name": name},
        )

    def list(self, caller: Caller, app: str) -> Result:
        reached = self._reach(caller, app)
        rows = self.db.all(
            "SELECT name, updated FROM secrets WHERE space = ? AND slug = ? ORDER BY name",
            reached.space,
            reached.slug,
        )
        found = [{"name": str(r["name"]), "updated": str(r["updated"])} for r in rows]
        if not found:
            text = f"{reached.at} has no secrets — pasture secret set {reached.slug} NAME sets one"
        else:
            lines = "".join(f"\n{s['name']}  set {s['updated']}" for s in found)
            text = f"{reached.at}: {plural(len(found), 'secret', 'secrets')}{lines}"
        return Result(text, {"at": reached.at, "secrets": found})

    def remove(self, caller: Caller, app: str, name: str) -> Result:
        require_writes(caller)
        reached = self._reach(caller, app)
        with self.db.transaction() as conn:
            done = conn.execute(
                "DELETE FROM secrets WHERE space = ? AND slug = ? AND name = ?",
                (reached.space, reached.slug, name),
            )
            if done.rowcount == 0:
                raise NotFound(
                    f"{reached.at} has no secret {name} — pasture secret list names them"
                )
        return Result(f"{name} is gone from {reached.at}", {"at": reached.at, "name": name})
