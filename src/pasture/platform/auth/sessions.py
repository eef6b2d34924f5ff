"""Web sessions: a signed-in browser, for as long as it is used — and no longer.

A session ends when its person signs out (it is forgotten on the server, not
only in the browser), when it has not been used for a while (idle: 7 days by
default, `$PASTURE_SESSION_IDLE_HOURS`), when it is old (30 days whatever
happens, `$PASTURE_SESSION_MAX_HOURS`), or when its person is removed.

A **sign-in link** (`/signin?link=…`, what `make run` prints) is a one-time
code, ten minutes long, that becomes a session when it is opened; it carries
no token that lasts. Sessions and links are kept only as their sha256.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

from pasture.caller import Caller
from pasture.errors import Unauthorized
from pasture.platform.auth import hashing as _id
from pasture.platform.auth.caller_cache import Touches
from pasture.platform.db.platform_db import PlatformDB
from pasture.values import now

LINK_LIFE = timedelta(minutes=10)


def _hours(name: str, default: float) -> timedelta:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        value = default
    return timedelta(hours=value if value > 0 else default)


def _moment(text: object) -> datetime:
    return datetime.fromisoformat(str(text).replace("Z", "+00:00"))


def _stamp(at: datetime) -> str:
    return at.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class Sessions:
    """Making, reading and ending sessions and sign-in links."""

    def __init__(self, db: PlatformDB) -> None:
        self.db = db
        self.idle = _hours("PASTURE_SESSION_IDLE_HOURS", 7 * 24)
        self.longest = _hours("PASTURE_SESSION_MAX_HOURS", 30 * 24)
        self._seen = Touches(db, "UPDATE sessions SET last_seen = ? WHERE hash = ?")

    def new(self, caller: Caller) -> str:
        """A new session id for a signed-in caller (the cookie's value)."""
        if not caller.signed_in:
            raise Unauthorized("sign in first")
        session = _id.new_secret("pss")
        moment = now("seconds")
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO sessions (hash, user, created, last_seen) VALUES (?, ?, ?, ?)",
                (_id.secret_hash(session), caller.eid, moment, moment),
            )
        return session

    def caller_for(self, session: str) -> Caller | None:
        """The person a session names, while it lasts; None when it is not one, or is over."""
        digest = _id.secret_hash(session)
        row = self.db.one(
            "SELECT users.eid, users.name, sessions.created, sessions.last_seen FROM sessions "
            "JOIN users ON users.eid = sessions.user WHERE sessions.hash = ?",
            digest,
        )
        if row is None:
            return None
        moment = datetime.now(UTC)
        created = _moment(row["created"])
        seen = _moment(row["last_seen"] or row["created"])
        if moment - created > self.longest or moment - seen > self.idle:
            with self.db.transaction() as conn:
                conn.execute("DELETE FROM sessions WHERE hash = ?", (digest,))
            return None
        self._seen.touch(digest)
        return Caller(row["eid"], row["name"], via="session")

    def end(self, session: str) -> None:
        self.db.take_away(("DELETE FROM sessions WHERE hash = ?", (_id.secret_hash(session),)))

    def end_all(self, user: Caller) -> None:
        """Every session of a person ends (they were removed)."""
        self.db.take_away(
            ("DELETE FROM sessions WHERE user = ?", (user.eid,)),
            ("DELETE FROM links WHERE user = ?", (user.eid,)),
        )

    # -- sign-in links ---------------------------------------------------------------------
    def new_link(self, caller: Caller) -> str:
        """A one-time sign-in code for the caller, ten minutes long."""
        if not caller.signed_in:
            raise Unauthorized("sign in first")
        code = _id.new_secret("psl")
        moment = datetime.now(UTC)
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM links WHERE expires < ?", (_stamp(moment),))
            conn.execute(
                "INSERT INTO links (hash, user, expires) VALUES (?, ?, ?)",
                (_id.secret_hash(code), caller.eid, _stamp(moment + LINK_LIFE)),
            )
        return code

    def session_for_link(self, code: str) -> str:
        """Spend a sign-in link: a new session for its person; Unauthorized when it is spent."""
        digest = _id.secret_hash(code)
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT users.eid, users.name FROM links JOIN users ON users.eid = links.user "
                "WHERE links.hash = ? AND links.expires >= ?",
                (digest, _stamp(datetime.now(UTC))),
            ).fetchone()
            conn.execute("DELETE FROM links WHERE hash = ?", (digest,))
        if row is None:
            raise Unauthorized(
                "that sign-in link has been used or is over ten minutes old — sign in with your "
                "password, or make another link (pasture signin)"
            )
        return self.new(Caller(row["eid"], row["name"]))
