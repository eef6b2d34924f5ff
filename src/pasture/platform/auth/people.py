"""Who is asking: users, the machine's owner, passwords — and, through them, sessions.

Passwords are kept as scrypt hashes (`pasture.platform.auth.hashing`); a password
that signs nobody in is `Unauthorized` with a sentence saying how to get a good
one. Web sessions are `pasture.platform.auth.sessions`'; bearer tokens
`pasture.platform.auth.tokens`'; OAuth grants `pasture.platform.auth.oauth`'.
"""

from __future__ import annotations

import getpass
import os

from pasture.caller import NOBODY, Caller
from pasture.errors import Conflict, Forbidden, NotFound, Unauthorized, UsageError
from pasture.names import RESERVED, USER_NAME, check_user_name, space_name_for
from pasture.platform.auth import hashing as _id
from pasture.platform.auth.sessions import Sessions
from pasture.platform.db.platform_db import Conn, PlatformDB
from pasture.platform.nouns import SIGN_IN
from pasture.result import Result
from pasture.values import now

SHORT_PASSWORD = "a password is at least 8 characters long"
_OWNER = "SELECT eid, name FROM users WHERE admin = 1 ORDER BY created LIMIT 1"


class People:
    """Users and the secrets that name them."""

    def __init__(self, db: PlatformDB, base_url: str) -> None:
        self.db = db
        self.base_url = base_url
        self.sessions = Sessions(db)

    def local_owner(self) -> Caller:
        """The machine's owner (created with a personal space on first use)."""
        row = self.db.one(_OWNER)
        if row is not None:
            return Caller(row["eid"], row["name"])
        name = os.environ.get("PASTURE_USER") or getpass.getuser()
        check_user_name(name)
        with self.db.transaction() as conn:
            # Another process may have made the owner between the read and the lock.
            found = conn.execute(_OWNER).fetchone()
            if found is not None:
                return Caller(found["eid"], found["name"])
            return self._create_user(conn, name, None, admin=True)

    def _create_user(self, conn: Conn, name: str, password: str | None, *, admin: bool) -> Caller:
        from pasture.store.base import new_eid

        if conn.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone():
            raise Conflict(f"there is already a user named {name} — pick another name")
        space = space_name_for(name)
        if (
            space in RESERVED
            or conn.execute("SELECT 1 FROM spaces WHERE name = ?", (space,)).fetchone()
        ):
            raise Conflict(
                f"there is already a space named {space} — pick another name for the user"
            )
        eid = new_eid()
        conn.execute(
            "INSERT INTO users (eid, name, space, password, admin, created) VALUES (?,?,?,?,?,?)",
            (
                eid,
                name,
                space,
                _id.hash_password(password) if password else None,
                int(admin),
                now("seconds"),
            ),
        )
        conn.execute("INSERT INTO spaces (name, created) VALUES (?, ?)", (space, now("seconds")))
        conn.execute("INSERT INTO members (space, user, role) VALUES (?, ?, 'owner')", (space, eid))
        return Caller(eid, name)

    def new_user(self, caller: Caller, name: str, password: str | None = None) -> Caller:
        """A new person (with a personal space of the same name); only the owner adds people."""
        self.require_admin(caller)
        check_user_name(name)
        if password is not None and len(password) < 8:
            raise UsageError(SHORT_PASSWORD)
        with self.db.transaction() as conn:
            return self._create_user(conn, name, password, admin=False)

    # -- tokens and sessions --------------------------------------------------
    def caller_for_session(self, session: str | None) -> Caller:
        """The person a session cookie belongs to, while it lasts; or nobody."""
        if not session:
            return NOBODY
        return self.sessions.caller_for(session) or NOBODY

    def sign_in(self, name: str, password: str) -> str:
        """A new session id for the web's cookie; Refused on a wrong name or password.

        It takes as long whether or not the name is a user's (or has a password): a
        password is always checked once, against a stand-in hash when there is none."""
        name = name.strip()
        # a name no user can have (not a user name at all) is looked up nowhere
        row = (
            self.db.one("SELECT eid, name, password FROM users WHERE name = ?", name)
            if USER_NAME.fullmatch(name)
            else None
        )
        stored = row["password"] if row is not None else None
        matches = _id.check_password(password, stored or _id.stand_in_hash())
        if row is None or not stored or not matches:
            raise Unauthorized(
                "that name and password do not match — the owner sets a password with "
                "pasture password"
            )
        return self.new_session(Caller(row["eid"], row["name"]))

    def new_session(self, caller: Caller) -> str:
        """A new session id for a signed-in caller."""
        self.require_signed_in(caller)
        return self.sessions.new(caller)

    def sign_out(self, session: str | None) -> None:
        """Forget a session id; nothing happens for one this server never gave out."""
        if session:
            self.sessions.end(session)

    def set_password(self, caller: Caller, password: str, user: str | None = None) -> Result:
        """Set the caller's web password (or, for the machine's owner, another user's)."""
        self.require_signed_in(caller)
        if len(password) < 8:
            raise UsageError(SHORT_PASSWORD)
        target = caller.name
        if user is not None and user.lower() != (caller.name or "").lower():
            self.require_admin(caller)
            target = user
        with self.db.transaction() as conn:
            done = conn.execute(
                "UPDATE users SET password = ? WHERE name = ?",
                (_id.hash_password(password), target),
            )
            if done.rowcount == 0:
                raise NotFound(f"no user {target} — add them with pasture user new {target}")
        return Result(f"password set for {target}: sign in at {self.base_url}/signin")

    # -- checks other parts make ------------------------------------------------
    def require_signed_in(self, caller: Caller) -> None:
        if not caller.signed_in:
            raise Unauthorized(SIGN_IN)

    def require_themselves(self, caller: Caller, doing: str) -> None:
        """Refuse what only a person signed in themselves may do (`Caller.themselves`): a
        token, an agent's grant or a page's pass making or ending another sign-in would
        let it outlive or outgrow what the person gave it."""
        self.require_signed_in(caller)
        if not caller.themselves:
            raise Forbidden(
                f"only you, signed in yourself (with your password, or at this machine's "
                f"command line), can {doing} — not a token, an agent or a page"
            )

    def remove_user(self, caller: Caller, name: str) -> Caller:
        """Take a person off this server (the owner does this): their memberships go with
        them; their sessions, tokens, passes and grants are ended by the Service first."""
        self.require_admin(caller, "removes people")
        found = self.by_name(name)
        if found is None:
            raise NotFound(f"no user {name} — nobody of that name is on this server")
        row = self.db.one("SELECT admin FROM users WHERE eid = ?", found.eid)
        if row is not None and row["admin"]:
            raise UsageError(f"{found.name} is the server's owner, who cannot be removed")
        return found

    def forget_user(self, user: Caller) -> None:
        """The last step of removing a person: their memberships and their row."""
        self.db.take_away(
            ("DELETE FROM members WHERE user = ?", (user.eid,)),
            ("DELETE FROM passes WHERE user = ?", (user.eid,)),
            ("DELETE FROM users WHERE eid = ?", (user.eid,)),
        )

    def by_name(self, name: str) -> Caller | None:
        """A person by their name (any case), or None."""
        row = self.db.one("SELECT eid, name FROM users WHERE name = ?", name.strip())
        return None if row is None else Caller(row["eid"], row["name"])

    def listing(self, caller: Caller) -> Result:
        """Everyone on this server: their name, own space, whether they can sign in on the
        web (a password set) and which one is the server's owner. The owner alone sees it."""
        self.require_signed_in(caller)
        if not self.is_owner(caller):
            owner = self.db.one("SELECT name FROM users WHERE admin = 1 ORDER BY created")
            who = f" ({owner['name']})" if owner is not None else ""
            raise Forbidden(
                f"only the server's owner{who} lists the people on it — ask them; "
                "pasture member list SPACE shows who is in a space of yours"
            )
        rows = self.db.all(
            "SELECT name, space, admin, password IS NOT NULL AS web, created FROM users "
            "ORDER BY admin DESC, name"
        )
        people = [
            {
                "name": r["name"],
                "space": r["space"],
                "owner": bool(r["admin"]),
                "password": bool(r["web"]),
                "created": r["created"],
            }
            for r in rows
        ]
        width = max((len(p["name"]) for p in people), default=0)
        lines = "".join(
            f"\n{p['name']:<{width}}  space {p['space']}"
            + (", the server's owner" if p["owner"] else "")
            + ("" if p["password"] else ", no web password yet")
            for p in people
        )
        count = f"{len(people)} {'person' if len(people) == 1 else 'people'}"
        return Result(f"{count} on this server:{lines}", {"users": people})

    def is_owner(self, caller: Caller) -> bool:
        """Whether the caller is the server's owner (who adds and removes people)."""
        if not caller.signed_in:
            return False
        row = self.db.one("SELECT admin FROM users WHERE eid = ?", caller.eid)
        return row is not None and bool(row["admin"])

    def require_admin(self, caller: Caller, doing: str = "adds people") -> None:
        self.require_signed_in(caller)
        if not self.is_owner(caller):
            raise Forbidden(f"only the server's owner {doing} — ask them")

    def personal_space(self, caller: Caller) -> str:
        self.require_signed_in(caller)
        row = self.db.one("SELECT space FROM users WHERE eid = ?", caller.eid)
        if row is None:
            raise Unauthorized(SIGN_IN)
        return str(row["space"])
