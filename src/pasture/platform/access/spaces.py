"""Spaces and their members: making a space, adding people in a role, who is what where."""

from __future__ import annotations

from typing import NoReturn, cast

from pasture.caller import Caller
from pasture.errors import Conflict, Forbidden, NotFound, Unauthorized, UsageError, echo
from pasture.names import check_space_name
from pasture.platform.access.gate import require_writes
from pasture.platform.apps.trash import refuse_held
from pasture.platform.auth.people import People
from pasture.platform.catalog import Catalog
from pasture.platform.db.platform_db import PlatformDB, Row
from pasture.platform.db.platform_tables import REACH_MOVED
from pasture.platform.nouns import ROLES, SIGN_IN, Role, plural
from pasture.platform.workers.sandbox import confinement
from pasture.result import Result
from pasture.values import now


class Spaces:
    """The spaces people belong to, and the role each has in them."""

    def __init__(self, db: PlatformDB, catalog: Catalog, people: People) -> None:
        self.db = db
        self.catalog = catalog
        self.people = people

    def new_space(self, caller: Caller, name: str) -> Result:
        self.people.require_signed_in(caller)
        require_writes(caller)
        check_space_name(name)
        refuse_held(self.db, caller, name)  # its name is held while it is in the trash
        with self.db.transaction() as conn:
            if conn.execute("SELECT 1 FROM spaces WHERE name = ?", (name,)).fetchone():
                raise Conflict(f"there is already a space named {name} — pick another name")
            conn.execute("INSERT INTO spaces (name, created) VALUES (?, ?)", (name, now("seconds")))
            conn.execute(
                "INSERT INTO members (space, user, role) VALUES (?, ?, 'owner')",
                (name, caller.eid),
            )
        return Result(
            f"space {name} made, with you as its owner: deploy into it with "
            f"pasture deploy DIR --space {name}",
            {"space": name, "role": "owner"},
        )

    def _person_for_owner(
        self, caller: Caller, space: str, user: str, doing: str, unknown: str
    ) -> Row:
        """The person named `user`, for an owner of `space` changing who is in it; refused
        (saying what the caller wanted `doing`) for anyone else, NotFound (then `unknown`)
        for a name nobody has."""
        if self.role(caller, space) != "owner":
            self.no_space(caller, space, doing)
        row = self.db.one("SELECT eid, name FROM users WHERE name = ?", user)
        if row is None:
            raise NotFound(f"no user {user} — {unknown}")
        return row

    def add_member(self, caller: Caller, space: str, user: str, role: Role) -> Result:
        require_writes(caller)
        if role not in ROLES:
            raise UsageError(f"{echo(role, 40)} is not a role — say owner, editor or viewer")
        row = self._person_for_owner(
            caller,
            space,
            user,
            "add people to it",
            "the server's owner adds them with pasture user new",
        )
        with self.db.transaction() as conn:
            was = conn.execute(
                "SELECT role FROM members WHERE space = ? AND user = ?", (space, row["eid"])
            ).fetchone()
            conn.execute(
                "INSERT INTO members (space, user, role) VALUES (?, ?, ?) "
                "ON CONFLICT (space, user) DO UPDATE SET role = excluded.role",
                (space, row["eid"], role),
            )
            if was is not None and was["role"] != role:
                conn.execute(REACH_MOVED)  # a role made lesser reaches less
        article = "an" if role in ("owner", "editor") else "a"
        return Result(
            f"{row['name']} is now {article} {role} of {space}",
            {"space": space, "user": row["name"], "role": role},
        )

    def remove_member(self, caller: Caller, space: str, user: str) -> Result:
        """Take a person out of a space (its owners do this); their grants reach it no more."""
        require_writes(caller)
        row = self._person_for_owner(
            caller,
            space,
            user,
            "take people out of it",
            "pasture member add lists nobody by that name",
        )
        with self.db.transaction() as conn:
            owners = conn.execute(
                "SELECT user FROM members WHERE space = ? AND role = 'owner'", (space,)
            ).fetchall()
            if [r["user"] for r in owners] == [row["eid"]]:
                raise UsageError(
                    f"{row['name']} is the only owner of {space} — make another person its owner "
                    "first (pasture member add SPACE USER owner)"
                )
            done = conn.execute(
                "DELETE FROM members WHERE space = ? AND user = ?", (space, row["eid"])
            )
            if done.rowcount == 0:
                raise NotFound(f"{row['name']} is not a member of {space}")
            conn.execute(REACH_MOVED)
        return Result(
            f"{row['name']} is no longer a member of {space}: its apps' private parts, and "
            "their tokens' reach into it, are gone for them",
            {"space": space, "user": row["name"]},
        )

    def trust(self, caller: Caller, space: str, trusted: bool) -> Result:
        """Let a space's apps run code (worker.py), or stop them; the server's owner does this."""
        self.people.require_admin(caller, "trusts a space to run code")
        require_writes(caller)
        if self.db.one("SELECT 1 FROM spaces WHERE name = ?", space) is None:
            raise NotFound(f"no space {space} — pasture space new {space} makes one")
        own = self.db.one("SELECT 1 FROM users WHERE admin = 1 AND space = ?", space)
        if own is not None and not trusted:
            raise UsageError(
                f"{space} is the server owner's own space, which always runs code — "
                "untrust the spaces of other people"
            )
        with self.db.transaction() as conn:
            conn.execute("UPDATE spaces SET trusted = ? WHERE name = ?", (int(trusted), space))
        if trusted:
            how = confinement().describe()
            return Result(
                f"{space} is trusted: apps deployed to it may carry worker.py, "
                f"whose code runs {how}",
                {"space": space, "trusted": True, "confinement": confinement().name},
            )
        self.catalog.workers.retire_space(space)
        return Result(
            f"{space} is no longer trusted: its apps' code does not run, and a deploy with "
            "worker.py is refused; their pages, data and declared commands are as they were",
            {"space": space, "trusted": False, "confinement": confinement().name},
        )

    def of(self, caller: Caller) -> list[tuple[str, Role]]:
        """The spaces the caller belongs to, with their role in each."""
        if not caller.signed_in:
            return []
        rows = self.db.all(
            "SELECT space, role FROM members WHERE user = ? "
            "AND space NOT IN (SELECT space FROM trash WHERE slug = '') ORDER BY space",
            caller.eid,
        )
        return [(r["space"], cast(Role, r["role"])) for r in rows]

    def listing(self, caller: Caller) -> Result:
        """The spaces the caller belongs to: their role, whether it runs code, its apps."""
        self.people.require_signed_in(caller)
        counts = {
            r["space"]: int(r["n"])
            for r in self.db.all(
                "SELECT space, COUNT(*) AS n FROM apps WHERE NOT EXISTS (SELECT 1 FROM trash "
                "WHERE trash.space = apps.space AND trash.slug = apps.slug) GROUP BY space"
            )
        }
        mine = [(space, role, self.catalog.trusted(space)) for space, role in self.of(caller)]
        spaces: list[dict[str, object]] = [
            {"space": space, "role": role, "trusted": trusted, "apps": counts.get(space, 0)}
            for space, role, trusted in mine
        ]
        width = max((len(space) for space, _, _ in mine), default=0)
        lines = "".join(
            f"\n{space:<{width}}  {role}, {plural(counts.get(space, 0), 'app', 'apps')}"
            + (", runs code" if trusted else "")
            for space, role, trusted in mine
        )
        return Result(
            f"{caller.name} is in {plural(len(spaces), 'space', 'spaces')}{':' if spaces else ''}"
            + lines,
            {"spaces": spaces},
        )

    def members(self, caller: Caller, space: str) -> Result:
        """Who is in a space and in which role; its members see this, owners first."""
        if self.role(caller, space) is None:
            if not caller.signed_in:
                raise Unauthorized(SIGN_IN)
            raise NotFound(
                f"no space {space} of yours — pasture space list shows the spaces you are in"
            )
        rows = self.db.all(
            "SELECT users.name AS name, members.role AS role FROM members "
            "JOIN users ON users.eid = members.user WHERE members.space = ? "
            "ORDER BY CASE members.role WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END, "
            "users.name",
            space,
        )
        members = [{"user": r["name"], "role": r["role"]} for r in rows]
        width = max((len(m["user"]) for m in members), default=0)
        lines = "".join(f"\n{m['user']:<{width}}  {m['role']}" for m in members)
        return Result(
            f"{space} has {plural(len(members), 'member', 'members')}:{lines}",
            {"space": space, "members": members},
        )

    def role(self, caller: Caller, space: str) -> Role | None:
        """The caller's role in a space, or None when they are not a member."""
        return self.catalog.role(caller, space)

    def no_space(self, caller: Caller, space: str, doing: str) -> NoReturn:
        """The refusal for changing a space the caller does not own."""
        role = self.role(caller, space)
        if role is None:
            if not caller.signed_in:
                raise Unauthorized(SIGN_IN)
            raise NotFound(f"no space {space} of yours — make one with pasture space new {space}")
        raise Forbidden(f"you are {role} of {space}; only its owners {doing}")

    def no_deploy(self, caller: Caller, space: str) -> NoReturn:
        """The refusal for deploying into a space the caller may not deploy to."""
        role = self.role(caller, space)
        if role is None:
            if not caller.signed_in:
                raise Unauthorized(SIGN_IN)
            raise NotFound(
                f"no space {space} of yours — deploy into your own, or make one with "
                f"pasture space new {space}"
            )
        raise Forbidden(
            f"you can read the apps of {space} but not deploy to it — its owner can make you "
            "an editor"
        )
