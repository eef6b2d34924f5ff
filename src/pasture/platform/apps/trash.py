"""The trash: an app, or a space with all its apps, removed for `DAYS` days before it goes.

    pasture app remove club/runs        the app, to the trash (its space's owners)
    pasture space remove club           the space and its apps (its owners, the server's owner)
    pasture trash                       what is there, who removed it, when it goes for good
    pasture trash restore club/runs     back as it was

Removing moves nothing but one row into the `trash` table: the app's rows in `apps`
and `versions`, its files, its store (the SQLite file, or the PostgreSQL schema), its
secrets, the space's members and the tokens' scopes all stay where they are. The
catalog reads the platform's tables without what the trash holds
(`pasture.platform.catalog`), so a trashed app is gone for every door at once, on every
server sharing the data (the database's stamp moves), and a restore is taking the row
out again: everything comes back as it was. While it is there its name is held: a
deploy to it, or `space new` of the space, is refused with the sentence that says how
to bring it back and when the name is free.

After `DAYS` days a sweep (`sweep`, hourly in the serving process, `SWEEP_ITEMS` at a
time) deletes it for good: its store and folders first, then its rows with the trash's
row in one transaction, so a sweep cut short is done again whole by the next.
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from pasture.caller import Caller
from pasture.errors import Conflict, Forbidden, NotFound, UsageError, echo
from pasture.names import SLUG
from pasture.platform.access.gate import Gate, require_writes
from pasture.platform.auth.people import People
from pasture.platform.catalog import Catalog
from pasture.platform.db.platform_db import Conn, PlatformDB, Row
from pasture.platform.db.platform_tables import REACH_MOVED
from pasture.platform.nouns import and_, plural
from pasture.result import Result

if TYPE_CHECKING:
    from pasture.platform.access.audit import Call

logger = logging.getLogger("pasture.trash")

DAYS = 30  # how long the trash keeps what was removed
SWEEP_EVERY = 3600.0  # seconds between two sweeps in a serving process
SWEEP_ITEMS = 20  # things one sweep deletes at most; the next sweep goes on
SPACE = ""  # the slug of a trash row that holds a whole space

Clock = Callable[[], datetime]


def _stamp(moment: datetime) -> str:
    """A moment as the trash keeps it, to the second (`2026-12-02T18:00:00Z`): compared as text."""
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def _day(stamp: str) -> str:
    return stamp[:10]


def _what(space: str, slug: str) -> str:
    return space if slug == SPACE else f"{space}/{slug}"


def _held_row(db: PlatformDB, space: str, slug: str) -> Row | None:
    """The trash's row that holds `space/slug`: the app's own, or its space's."""
    return db.one(
        "SELECT space, slug, removed_name, removed_at, purge_at FROM trash "
        "WHERE space = ? AND slug IN (?, ?) ORDER BY slug DESC",
        space,
        slug,
        SPACE,
    )


def _member(db: PlatformDB, caller: Caller, space: str) -> str | None:
    """The caller's role in a space as the members table says, trashed or not."""
    if caller.eid is None or not caller.reaches(space):
        return None
    row = db.one("SELECT role FROM members WHERE space = ? AND user = ?", space, caller.eid)
    return None if row is None else str(row["role"])


def held_sentence(row: Row, *, theirs: bool) -> str:
    """What a name the trash holds says: how to bring it back (to its space's members),
    and when the name is free again."""
    what = _what(str(row["space"]), str(row["slug"]))
    free = _day(str(row["purge_at"]))
    if not theirs:
        return f"{what} is in the trash — its name is free again on {free}"
    who = row["removed_name"] or "someone"
    return (
        f"{what} is in the trash (removed by {who} on {_day(str(row['removed_at']))}) — "
        f"pasture trash restore {what} brings it back; otherwise its name is free again "
        f"on {free}"
    )


def refuse_held(db: PlatformDB, caller: Caller, space: str, slug: str | None = None) -> None:
    """Conflict when the trash holds the app `space/slug` (or, `slug` None, the space): the
    name stays its until it is restored or goes for good. A deploy asks this only of its
    space's members; anyone else is told what they would be told of any space not theirs."""
    if not SLUG.fullmatch(space) or (slug is not None and not SLUG.fullmatch(slug)):
        return  # no name the trash can hold: refused as a name, where names are checked
    row = _held_row(db, space, SPACE if slug is None else slug)
    if row is None:
        return
    theirs = _member(db, caller, space) is not None
    if slug is not None and not theirs:
        return  # a deploy into a space not theirs: refused as it is refused elsewhere
    raise Conflict(held_sentence(row, theirs=theirs))


class Trash:
    """Removing apps and spaces, listing and restoring them, and deleting them for good."""

    def __init__(
        self,
        db: PlatformDB,
        catalog: Catalog,
        people: People,
        gate: Gate,
        *,
        now: Clock | None = None,
    ) -> None:
        self.db = db
        self.catalog = catalog
        self.people = people
        self.gate = gate
        # the moment it is; a test gives its own
        self.now: Clock = now or (lambda: datetime.now(UTC))
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    # -- removing ---------------------------------------------------------------------
    def remove_app(self, caller: Caller, app: str, noted: Call | None = None) -> Result:
        """Move an app to the trash (its space's owners do this)."""
        require_writes(caller)
        reached = self.gate.reach(caller, app)
        if noted is not None:
            noted.app = reached.at
        if reached.role != "owner":
            raise Forbidden(
                f"you are {reached.role} of {reached.space}; only its owners "
                f"({self._owners(reached.space)}) can remove {reached.at}"
            )
        purge = self._put(caller, reached.space, reached.slug)
        self.catalog.forget(reached.space, reached.slug)
        return Result(
            f"{reached.at} is in the trash: gone for every door until "
            f"pasture trash restore {reached.at} brings it back as it was; it goes for good "
            f"on {_day(purge)}",
            {"removed": reached.at, "kind": "app", "purge_at": purge},
        )

    def remove_space(self, caller: Caller, space: str) -> Result:
        """Move a space and all its apps to the trash (its owners, or the server's owner)."""
        self.people.require_signed_in(caller)
        require_writes(caller)
        space = space.strip()
        role = self.catalog.role(caller, space)
        # a grant for other spaces alone, or no space's name at all
        if role is None and (not caller.reaches(space) or not SLUG.fullmatch(space)):
            raise NotFound(f"no space {echo(space)} of yours — pasture space new makes one")
        if role != "owner" and not self._admin(caller):
            if role is None:
                raise NotFound(f"no space {echo(space)} of yours — pasture space new makes one")
            raise Forbidden(
                f"you are {role} of {space}; only its owners ({self._owners(space)}) or the "
                "server's owner can remove it"
            )
        if self.db.one("SELECT 1 FROM spaces WHERE name = ?", space) is None:
            raise NotFound(f"no space {echo(space)} — pasture space new {echo(space)} makes one")
        refuse_held(self.db, caller, space)
        person = self.db.one("SELECT name FROM users WHERE space = ?", space)
        if person is not None:
            raise UsageError(
                f"{space} is {person['name']}'s own space, which cannot go to the trash — "
                "remove its apps one by one with pasture app remove"
            )
        apps = [
            str(r["slug"])
            for r in self.db.all(
                "SELECT slug FROM apps WHERE space = ? "
                "AND slug NOT IN (SELECT slug FROM trash WHERE space = ?)",
                space,
                space,
            )
        ]
        purge = self._put(caller, space, SPACE)
        self.catalog.forget_space(space)
        held = f" with its {plural(len(apps), 'app', 'apps')}" if apps else ""
        return Result(
            f"{space} is in the trash{held}: gone for every door until "
            f"pasture trash restore {space} brings it back as it was; it goes for good "
            f"on {_day(purge)}",
            {"removed": space, "kind": "space", "apps": sorted(apps), "purge_at": purge},
        )

    def _put(self, caller: Caller, space: str, slug: str) -> str:
        """The trash's row, written with the move of `reach` (someone's reach shrank)."""
        moment = self.now()
        removed, purge = _stamp(moment), _stamp(moment + timedelta(days=DAYS))
        with self.db.transaction() as conn:
            put = conn.execute(
                "INSERT INTO trash (space, slug, removed_by, removed_name, removed_at, purge_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (space, slug, caller.eid, caller.name, removed, purge),
            )
            if put.rowcount == 0:  # removed by someone else a moment before
                raise Conflict(
                    f"{_what(space, slug)} is in the trash already — pasture trash lists it"
                )
            conn.execute(REACH_MOVED)
        return purge

    # -- what is there ----------------------------------------------------------------
    def listing(self, caller: Caller) -> Result:
        """What the trash holds of the caller's spaces (the server's owner: of every space)."""
        self.people.require_signed_in(caller)
        rows = self._visible(caller)
        items = [
            {
                "what": _what(str(r["space"]), str(r["slug"])),
                "kind": "space" if r["slug"] == SPACE else "app",
                "removed_by": r["removed_name"],
                "removed_at": str(r["removed_at"]),
                "purge_at": str(r["purge_at"]),
            }
            for r in rows
        ]
        if not items:
            return Result("the trash is empty", {"trash": []})
        lines = [f"the trash holds {plural(len(items), 'thing', 'things')}, oldest first:"]
        for item in items:
            removed = str(item["removed_at"])[:16].replace("T", " ")
            lines.append(
                f"{item['what']}  ({item['kind']})  removed by {item['removed_by'] or 'someone'} "
                f"{removed}  goes for good {_day(str(item['purge_at']))}"
            )
        lines.append("pasture trash restore NAME brings one back")
        return Result("\n".join(lines), {"trash": items})

    def _visible(self, caller: Caller) -> list[Row]:
        rows = self.db.all(
            "SELECT space, slug, removed_name, removed_at, purge_at FROM trash "
            "ORDER BY removed_at, space, slug"
        )
        if self._admin(caller) and caller.spaces is None:
            return rows
        spaces = {
            str(r["space"])
            for r in self.db.all("SELECT space FROM members WHERE user = ?", caller.eid)
            if caller.reaches(str(r["space"]))
        }
        return [r for r in rows if r["space"] in spaces]

    # -- restoring --------------------------------------------------------------------
    def restore(self, caller: Caller, name: str, noted: Call | None = None) -> Result:
        """Bring an app (`space/slug`, or a slug of the caller's) or a space back as it was."""
        self.people.require_signed_in(caller)
        require_writes(caller)
        row = self._find(caller, name)
        space, slug = str(row["space"]), str(row["slug"])
        what = _what(space, slug)
        if noted is not None and slug != SPACE:
            noted.app = what
        role = _member(self.db, caller, space)
        if slug == SPACE:
            if role != "owner" and not self._admin(caller):
                raise Forbidden(
                    f"you are {role or 'no member'} of {space}; only its owners "
                    f"({self._owners(space)}) or the server's owner can restore it"
                )
        else:
            if role != "owner":
                raise Forbidden(
                    f"you are {role or 'no member'} of {space}; only its owners "
                    f"({self._owners(space)}) can restore {what}"
                )
            if _held_row(self.db, space, SPACE) is not None:
                raise UsageError(
                    f"{space} is in the trash itself — pasture trash restore {space} brings "
                    f"it back with its apps, then pasture trash restore {what}"
                )
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM trash WHERE space = ? AND slug = ?", (space, slug))
        return Result(
            f"{what} is back as it was: its files, versions, data, members and secrets",
            {"restored": what, "kind": "space" if slug == SPACE else "app"},
        )

    def _find(self, caller: Caller, name: str) -> Row:
        """The trash's row `name` means among what the caller sees of it."""
        name = name.strip().strip("/")
        rows = self._visible(caller)
        if "/" in name:
            space, _, slug = name.partition("/")
            found = [r for r in rows if r["space"] == space and r["slug"] == slug]
        else:
            found = [r for r in rows if r["space"] == name and r["slug"] == SPACE]
            if not found:
                found = [r for r in rows if r["slug"] == name]
        if not found:
            raise NotFound(
                f"nothing named {echo(name)} is in your trash — pasture trash lists what is there"
            )
        if len(found) > 1:
            ats = sorted(_what(str(r["space"]), str(r["slug"])) for r in found)
            raise UsageError(
                f"{echo(name)} is in the trash more than once — say which: {' or '.join(ats)}"
            )
        return found[0]

    # -- for good ---------------------------------------------------------------------
    def sweep(self, now: datetime | None = None) -> list[str]:
        """Delete for good what has been in the trash `DAYS` days (`SWEEP_ITEMS` at most);
        what went."""
        moment = _stamp(now or self.now())
        due = self.db.all(
            "SELECT space, slug FROM trash WHERE purge_at <= ? ORDER BY purge_at LIMIT ?",
            moment,
            SWEEP_ITEMS,
        )
        gone: list[str] = []
        for row in due:
            space, slug = str(row["space"]), str(row["slug"])
            try:
                if slug == SPACE:
                    self._purge_space(space)
                else:
                    self._purge_app(space, slug)
            except Exception:
                logger.exception("%s could not be deleted from the trash", _what(space, slug))
                continue
            gone.append(_what(space, slug))
        return gone

    def _purge_app(self, space: str, slug: str) -> None:
        self._drop(space, slug)
        shutil.rmtree(self.catalog.app_dir(space, slug), ignore_errors=True)
        with self.db.transaction() as conn:
            self._forget_app(conn, space, slug)
            conn.execute("DELETE FROM trash WHERE space = ? AND slug = ?", (space, slug))

    def _purge_space(self, space: str) -> None:
        slugs = [
            str(r["slug"]) for r in self.db.all("SELECT slug FROM apps WHERE space = ?", space)
        ]
        for slug in slugs:
            self._drop(space, slug)
        shutil.rmtree(self.catalog.home / "apps" / space, ignore_errors=True)
        with self.db.transaction() as conn:
            for slug in slugs:
                self._forget_app(conn, space, slug)
            for table in ("secrets", "passes"):
                conn.execute(f"DELETE FROM {table} WHERE space = ?", (space,))
            conn.execute("DELETE FROM members WHERE space = ?", (space,))
            conn.execute("DELETE FROM trash WHERE space = ?", (space,))
            conn.execute("DELETE FROM spaces WHERE name = ?", (space,))

    def _drop(self, space: str, slug: str) -> None:
        """The app's store, gone: closed here first, then its file or schema."""
        self.catalog.forget(space, slug)
        self.db.drop_store(space, slug, self.catalog.app_dir(space, slug))

    def _forget_app(self, conn: Conn, space: str, slug: str) -> None:
        self.db.forget_app_files(conn, space, slug)
        for table in ("versions", "secrets", "passes", "apps"):
            conn.execute(f"DELETE FROM {table} WHERE space = ? AND slug = ?", (space, slug))

    def sweeping(self) -> Callable[[], None]:
        """Sweep now and every `SWEEP_EVERY` seconds on a thread of its own (a serving
        process does this); returns the way to stop."""
        with self._lock:
            if self._thread is None:
                self._stop.clear()
                self._thread = threading.Thread(target=self._run, name="pasture-trash", daemon=True)
                self._thread.start()
        return self.stop

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.sweep()
            except Exception:
                logger.exception("the trash could not be swept")
            self._stop.wait(SWEEP_EVERY)

    def stop(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(10.0)

    # -- who ----------------------------------------------------------------------------
    def _admin(self, caller: Caller) -> bool:
        if caller.eid is None:
            return False
        row = self.db.one("SELECT admin FROM users WHERE eid = ?", caller.eid)
        return row is not None and bool(row["admin"])

    def _owners(self, space: str) -> str:
        return owners_named(self.db, space)


def owners_named(db: PlatformDB, space: str) -> str:
    """Who can, in a refusal: the space's owners, by name (`ada and bo`)."""
    names = [
        str(r["name"])
        for r in db.all(
            "SELECT u.name AS name FROM members m JOIN users u ON u.eid = m.user "
            "WHERE m.space = ? AND m.role = 'owner' ORDER BY u.name",
            space,
        )
    ]
    return and_(names) if names else "nobody now"


__all__ = [
    "DAYS",
    "SWEEP_EVERY",
    "SWEEP_ITEMS",
    "Trash",
    "held_sentence",
    "owners_named",
    "refuse_held",
]
