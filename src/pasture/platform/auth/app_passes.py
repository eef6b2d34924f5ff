"""Passes: a person's sign-in for one app's pages, and nothing else.

A page of an app never holds the server's session cookie (its origin is its
own, or opaque: `pasture.platform.apps.origins`). What it holds is a **pass**: a
random secret naming one person and one app, that expires, and that ends
with the session it came from. A request carrying a pass acts as that person
on that app only; on any other app it names nobody.

- Sandboxed pages carry their pass in their `<base href>`; one is made each
  time a signed-in person is served an app's page.
- On an app's own origin, a one-time **code** (a minute long) made on the
  main origin is exchanged there for a pass held in that origin's cookie.

Like tokens and sessions, passes and codes are kept only as their sha256.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal

from pasture.caller import Caller
from pasture.errors import Unauthorized
from pasture.platform.auth import hashing as _id
from pasture.platform.db.platform_db import PlatformDB

Kind = Literal["pass", "code"]

PASS_LIFE = timedelta(hours=12)
CODE_LIFE = timedelta(minutes=1)
EXPIRED = (
    "this page's sign-in has ended (it lasts 12 hours, and ends when you sign out) — reload "
    "the page, signed in"
)

_WHO = (
    "SELECT users.eid, users.name FROM passes JOIN users ON users.eid = passes.user "
    "WHERE passes.hash = ? AND passes.space = ? AND passes.slug = ? AND passes.kind = ? "
    "AND passes.expires > ?"
)


def _stamp(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Passes:
    """Making, reading and ending passes and codes."""

    def __init__(self, db: PlatformDB) -> None:
        self.db = db

    def make(
        self,
        caller: Caller,
        space: str,
        slug: str,
        *,
        kind: Kind = "pass",
        session: str | None,
        bound: str = "",
    ) -> str:
        """A new pass (or code) for the caller on one app; `session` is the one it comes from.
        A code is `bound` to the secret the browser that asked for it holds (its app origin's
        cookie): only with it is the code worth a pass (`exchange`)."""
        if not caller.signed_in:
            raise Unauthorized("sign in first — a pass is made for a signed-in person")
        secret = _id.new_secret("psp" if kind == "pass" else "psc")
        now = datetime.now(UTC)
        life = PASS_LIFE if kind == "pass" else CODE_LIFE
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM passes WHERE expires <= ?", (_stamp(now),))
            conn.execute(
                "INSERT INTO passes (hash, user, space, slug, kind, session, expires) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    _id.secret_hash(_bound(secret, bound) if kind == "code" else secret),
                    caller.eid,
                    space,
                    slug,
                    kind,
                    None if session is None else _id.secret_hash(session),
                    _stamp(now + life),
                ),
            )
        return secret

    def who(self, secret: str, space: str, slug: str, *, kind: Kind = "pass") -> Caller:
        """The person a pass names on this app; Unauthorized when it is not one, or has ended."""
        row = self.db.one(
            _WHO, _id.secret_hash(secret), space, slug, kind, _stamp(datetime.now(UTC))
        )
        if row is None:
            raise Unauthorized(EXPIRED)
        return Caller(row["eid"], row["name"], through="pass")

    def exchange(self, code: str, space: str, slug: str, bound: str = "") -> str:
        """A one-time code for a pass of the same person on the same app; the code is spent.
        Only in the browser it was made for (`bound`): another's code, sent in a link to
        sign someone in as its maker, is worth nothing there."""
        digest = _id.secret_hash(_bound(code, bound))
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT users.eid, users.name, passes.session FROM passes "
                "JOIN users ON users.eid = passes.user WHERE passes.hash = ? AND passes.space = ? "
                "AND passes.slug = ? AND passes.kind = 'code' AND passes.expires > ?",
                (digest, space, slug, _stamp(datetime.now(UTC))),
            ).fetchone()
            conn.execute("DELETE FROM passes WHERE hash = ?", (digest,))
        if row is None:
            raise Unauthorized(
                "that sign-in link has been used, is over a minute old, or was not started "
                "in this browser — sign in again from the app's page"
            )
        secret = _id.new_secret("psp")
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO passes (hash, user, space, slug, kind, session, expires) "
                "VALUES (?, ?, ?, ?, 'pass', ?, ?)",
                (
                    _id.secret_hash(secret),
                    row["eid"],
                    space,
                    slug,
                    row["session"],
                    _stamp(datetime.now(UTC) + PASS_LIFE),
                ),
            )
        return secret

    def end_session(self, session: str) -> None:
        """Signing out ends every pass the session made."""
        self.db.take_away(("DELETE FROM passes WHERE session = ?", (_id.secret_hash(session),)))

    def end(self, secret: str) -> None:
        """End one pass (an app origin's sign-out)."""
        self.db.take_away(("DELETE FROM passes WHERE hash = ?", (_id.secret_hash(secret),)))


def _bound(code: str, bound: str) -> str:
    """A code together with the browser's secret it was made for: what is kept, hashed."""
    return f"{code}\n{bound}"


__all__ = ["EXPIRED", "Passes"]
