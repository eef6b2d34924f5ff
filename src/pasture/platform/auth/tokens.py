"""Bearer tokens: what a person makes for an agent or a script, with the rights they choose.

    pasture token new --label laptop [--read] [--space club]   (shown once)
    pasture token list                                          (never the secret)
    pasture token revoke 4f3c2a1b0c9d

A token acts as the person who made it, with a scope: it reads and writes, or
only reads (`writes`), in all of their spaces or in the ones named (`spaces`).
A token never has more than the sign-in that made it: a read-only token makes
only read-only ones, and one limited to some spaces only tokens within them.
It is kept only as its sha256; its id is the first 12 hex digits of that hash,
which names it in a listing and for revoking. Every person manages their own;
the server's owner may act for anyone (`--user NAME`).
"""

from __future__ import annotations

import json
from typing import Any

from pasture.caller import Caller
from pasture.errors import NotFound, Unauthorized, UsageError
from pasture.platform.auth import hashing as _id
from pasture.platform.auth.caller_cache import Remembered, Touches
from pasture.platform.db.platform_db import PlatformDB
from pasture.platform.db.platform_tables import REACH_MOVED
from pasture.platform.nouns import plural
from pasture.result import Result
from pasture.values import now

_BY_HASH = (
    "SELECT users.eid, users.name, tokens.writes, tokens.spaces FROM tokens "
    "JOIN users ON users.eid = tokens.user WHERE tokens.hash = ?"
)
ID = 12  # hex digits of a token's hash that name it


def scope_words(writes: bool, spaces: frozenset[str] | None) -> str:
    """`reads and writes, in all your spaces` — a grant's scope, as people read it."""
    what = "reads and writes" if writes else "reads only"
    where = "in all your spaces" if spaces is None else "in " + ", ".join(sorted(spaces))
    return f"{what}, {where}"


def _listed(spaces: frozenset[str] | None) -> list[str] | None:
    return None if spaces is None else sorted(spaces)


def spaces_of(text: Any) -> frozenset[str] | None:
    """The `spaces` column as a set (None: every space)."""
    if not text:
        return None
    found = json.loads(text)
    return frozenset(str(s) for s in found) if isinstance(found, list) else None


class Tokens:
    """Making, reading, listing and revoking bearer tokens."""

    def __init__(self, db: PlatformDB) -> None:
        self.db = db
        self._known: Remembered[Caller] = Remembered(db)
        self._used = Touches(db, "UPDATE tokens SET last_used = ? WHERE hash = ?")

    def caller_for(self, token: str) -> Caller | None:
        """The caller a token names, with its scope; None when no token of ours has that hash."""
        digest = _id.secret_hash(token)
        known = self._known.current()
        found = known.get(digest)
        if found is None:
            row = self.db.one(_BY_HASH, digest)
            if row is None:
                return None
            found = Caller(
                row["eid"],
                row["name"],
                writes=bool(row["writes"]),
                spaces=spaces_of(row["spaces"]),
                via=f"token {digest[:ID]}",
                through="token",
            )
            self._known.keep(known, digest, found)
        self._used.touch(digest)
        return found

    def caller_at_once(self, token: str) -> Caller | None:
        """`caller_for`'s answer when memory holds it still valid and no note of use is due
        (a write): never a wait. None when only `caller_for` can tell."""
        digest = _id.secret_hash(token)
        known = self._known.at_once()
        found = None if known is None else known.get(digest)
        if found is None or self._used.due(digest):
            return None
        return found

    def new(
        self,
        caller: Caller,
        user: Caller,
        label: str,
        *,
        writes: bool = True,
        spaces: list[str] | None = None,
        member_of: set[str],
    ) -> str:
        """A token for `user` (the caller, or anyone for the server's owner), shown once.

        `member_of` is the spaces `user` belongs to: a token is limited to some of them.
        """
        if not user.signed_in:
            raise Unauthorized("sign in to make a token")
        if not label.strip() or len(label) > 80 or not label.isprintable():
            raise UsageError("a token's label is a short line of text, like laptop or Claude")
        chosen: frozenset[str] | None = None
        if spaces:
            unknown = sorted(set(spaces) - member_of)
            if unknown:
                raise UsageError(
                    f"{', '.join(unknown)} is not a space of {user.name}'s — a token reaches "
                    f"only spaces its person belongs to: {', '.join(sorted(member_of)) or 'none'}"
                )
            chosen = frozenset(spaces)
        # Never more than the sign-in that makes it.
        writes = writes and caller.writes
        if caller.spaces is not None:
            chosen = caller.spaces if chosen is None else chosen & caller.spaces
        token = _id.new_secret("pst")
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO tokens (hash, user, label, created, writes, spaces) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    _id.secret_hash(token),
                    user.eid,
                    label.strip(),
                    now("seconds"),
                    int(writes),
                    None if chosen is None else json.dumps(sorted(chosen)),
                ),
            )
        return token

    def listing(self, user: Caller) -> Result:
        """A person's tokens: id, label, scope, when made and last used — never the secret."""
        rows = self.db.all(
            "SELECT hash, label, created, last_used, writes, spaces FROM tokens WHERE user = ? "
            "ORDER BY created",
            user.eid,
        )
        found = [
            {
                "id": str(r["hash"])[:ID],
                "label": str(r["label"]),
                "writes": bool(r["writes"]),
                "spaces": None
                if spaces_of(r["spaces"]) is None
                else sorted(spaces_of(r["spaces"]) or ()),
                "scope": scope_words(bool(r["writes"]), spaces_of(r["spaces"])),
                "created": str(r["created"]),
                "last_used": None if r["last_used"] is None else str(r["last_used"]),
            }
            for r in rows
        ]
        if not found:
            return Result(
                f"{user.name} has no tokens — pasture token new makes one", {"tokens": []}
            )
        lines = "".join(
            f"\n{t['id']}  {t['label']} — {t['scope']}; made {t['created']}, "
            f"last used {t['last_used'] or 'never'}"
            for t in found
        )
        return Result(
            f"{user.name}: {plural(len(found), 'token', 'tokens')}{lines}", {"tokens": found}
        )

    def revoke(self, user: Caller, token_id: str) -> Result:
        """End one of a person's tokens at once, by its id."""
        ident = token_id.strip().lower()
        if len(ident) < 6 or not all(ch in "0123456789abcdef" for ch in ident):
            raise UsageError(
                "a token's id is the hex word pasture token list shows, like 4f3c2a1b0c9d"
            )
        with self.db.transaction() as conn:
            rows = conn.execute(
                "SELECT hash, label FROM tokens WHERE user = ? AND substr(hash, 1, ?) = ?",
                (user.eid, len(ident), ident),
            ).fetchall()
            if len(rows) != 1:
                if rows:
                    raise UsageError(f"{ident} names {len(rows)} tokens — give more of its id")
                raise NotFound(f"{user.name} has no token {ident} — pasture token list shows them")
            conn.execute("DELETE FROM tokens WHERE hash = ?", (rows[0]["hash"],))
            conn.execute(REACH_MOVED)
        return Result(
            f"token {ident} ({rows[0]['label']}) is revoked: it signs nobody in from now on",
            {"id": ident, "label": str(rows[0]["label"])},
        )

    def end_all(self, user: Caller) -> None:
        """Every token of a person ends (they were removed)."""
        self.db.take_away(("DELETE FROM tokens WHERE user = ?", (user.eid,)))


__all__ = ["Tokens", "scope_words", "spaces_of"]
