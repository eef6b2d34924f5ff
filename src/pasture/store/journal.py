"""The change journal: what each write changed, as it was before, and the call that made it.

    pasture_journal(seq, call, at, who, door, eid, before)

A write (`SqlStore.apply`) adds one line per entity it touches, in the same
transaction as the write: the call's id, who made it and through which door
(`pasture.calls`), the write's stamp, and the entity's **before-image** — NULL
for an entity the write made, else what the write was about to change of it:

    {"e":   [_e, kind, name, created_at, created_by, updated_at, updated_by],
     "c":   {component: {column: value} or null (it had no row), …},
     "out": [[type, child eid], …],           the edges it held (where edges changed)
     "in":  [[parent eid, type], …]}          edges to it (where a tombstone took them)

Only the components the write names are kept for an update; a tombstone keeps
them all. So undoing one call (`SqlStore.undo`) puts back each entity's first
image of that call — exactly what it changed, nothing else — and restoring to a
moment (`SqlStore.restore`) puts back, of every entity changed since, each
part's first image after it. Both are writes of their own, journaled like any
other: an undo can be undone.

An undo is refused when a later line names one of its entities: the later
call's change would be overwritten without anyone saying so. The sentence
names the rows and the later calls.

Lines are kept `days` days (`serve --history-days`, `$PASTURE_HISTORY_DAYS`,
30) and swept by the writes themselves, at most once an hour and a bounded
number at a time. `PASTURE_HISTORY=off` keeps none (the benchmarks' baseline).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pasture.errors import UsageError
from pasture.store.dialect import SQLITE, Dialect, table

DAYS = 30.0
SWEEP_EVERY = 3600.0  # seconds between two sweeps of one store
SWEEP_STEP = 5000  # lines one sweep deletes at most; the next goes on

ENTITY = "_e, eid, kind, name, created_at, created_by, updated_at, updated_by"
LINE = "call, at, who, door, eid, before"

Image = dict[str, Any]


def journal_ddl(dialect: Dialect) -> list[str]:
    """The journal's table and its indexes."""
    t = dialect.text
    seq = (
        "INTEGER PRIMARY KEY"
        if dialect is SQLITE
        else "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
    )
    return [
        f"""CREATE TABLE IF NOT EXISTS pasture_journal (
        seq {seq}, call {t} NOT NULL, at {t} NOT NULL, who {t}, door {t},
        eid {t} NOT NULL, before {t})""",
        "CREATE INDEX IF NOT EXISTS pasture_journal_call ON pasture_journal(call)",
        "CREATE INDEX IF NOT EXISTS pasture_journal_eid ON pasture_journal(eid, seq)",
        "CREATE INDEX IF NOT EXISTS pasture_journal_at ON pasture_journal(at)",
    ]


def history_days(days: float | None = None) -> float | None:
    """The days the journal keeps (`days`, else `$PASTURE_HISTORY_DAYS`, else 30); None when
    `$PASTURE_HISTORY` is `off` and no journal is kept."""
    if os.environ.get("PASTURE_HISTORY", "on").strip().lower() in ("off", "0", "no"):
        return None
    if days is None:
        try:
            days = float(os.environ.get("PASTURE_HISTORY_DAYS") or DAYS)
        except ValueError:
            days = DAYS
    if days <= 0:
        raise UsageError(
            "the journal keeps what calls changed for some days: --history-days is at least 1"
        )
    return days


@dataclass(frozen=True, slots=True)
class Scope:
    """What of one entity a write may change, so what its image keeps: `comps` (None for
    every component), its edges out, and the edges to it (a tombstone takes them)."""

    comps: frozenset[str] | None
    out: bool = False
    into: bool = False


def _json(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return str(value)  # a number type of the driver's (Decimal), a date


def dumps(image: Image | None) -> str | None:
    return None if image is None else json.dumps(image, default=_json, separators=(",", ":"))


def loads(text: str | None) -> Image | None:
    return None if text is None else dict(json.loads(text))


class Reader:
    """Reads the before-images of a write's entities, a statement per table at a time."""

    def __init__(self, dialect: Dialect, cur: Any, all_tables: Sequence[str]) -> None:
        self.d = dialect
        self.cur = cur
        self.all_tables = all_tables

    def images(self, scopes: Mapping[int, Scope]) -> dict[int, Image]:
        """`{_e: image}` of the entities there are among `scopes`' keys."""
        d, cur = self.d, self.cur
        rows = list(scopes)
        out: dict[int, Image] = {}
        for among, params in d.among(rows):
            sql = d.placeholders(f"SELECT {ENTITY} FROM entity WHERE _e {among}")
            for found in cur.execute(sql, params).fetchall():
                out[found[0]] = {"e": list(found), "c": {}}
        if not out:
            return out
        wanted: dict[str, list[int]] = {}
        for row, scope in scopes.items():
            if row not in out:
                continue
            for comp in self.all_tables if scope.comps is None else scope.comps:
                wanted.setdefault(comp, []).append(row)
                out[row]["c"][comp] = None
        for comp, of in wanted.items():
            if comp not in self.all_tables:
                continue  # named by a write, not made yet: no row to keep
            for among, params in d.among(of):
                found = cur.execute(
                    d.placeholders(f"SELECT * FROM {table(comp)} WHERE _e {among}"), params
                )
                got = found.fetchall()  # before the names: a pipeline has them only then
                names = [c[0] for c in found.description]
                for values in got:
                    kept = dict(zip(names, values, strict=True))
                    row = kept["_e"]
                    out[row]["c"][comp] = {k: v for k, v in kept.items() if not k.startswith("_")}
        out_rows = [r for r, s in scopes.items() if s.out and r in out]
        for among, params in d.among(out_rows):
            for row in out_rows:
                out[row]["out"] = []
            sql = d.placeholders(
                f"SELECT parent, type, child FROM edge WHERE parent {among} "
                f"ORDER BY parent, {d.edge_seq}"
            )
            for parent, kind, child in cur.execute(sql, params).fetchall():
                out[parent]["out"].append([kind, child])
        into = {out[r]["e"][1]: r for r, s in scopes.items() if s.into and r in out}
        for among, params in d.among(list(into)):
            for row in into.values():
                out[row]["in"] = []
            sql = d.placeholders(
                "SELECT g.child, p.eid, g.type FROM edge g JOIN entity p ON p._e = g.parent "
                f"WHERE g.child {among} ORDER BY g.parent, g.{d.edge_seq}"
            )
            for child, parent, kind in cur.execute(sql, params).fetchall():
                out[into[child]]["in"].append([parent, kind])
        return out


def merged(lines: Iterable[tuple[str, str | None]]) -> dict[str, Image | None]:
    """Each entity's state before the first of `lines` (`(eid, before)`, oldest first):
    of every part of it, the first image any line kept; None where the first line made it."""
    out: dict[str, Image | None] = {}
    for eid, before in lines:
        image = loads(before)
        if eid not in out:
            out[eid] = image
            continue
        first = out[eid]
        if first is None or image is None:
            continue  # made by the first line: it was not there at all
        for comp, value in image["c"].items():
            first["c"].setdefault(comp, value)
        for part in ("out", "in"):
            if part in image and part not in first:
                first[part] = image[part]
    return out


def full_scope(image: Image | None) -> Scope:
    """What a write putting `image` back changes of an entity (all of it, where the image
    says it was not there and it goes)."""
    if image is None:
        return Scope(None, out=True, into=True)
    return Scope(frozenset(image["c"]), out="out" in image, into="in" in image)


def changed_since(later: Sequence[tuple[str, str, str | None]]) -> str:
    """The part of a refused undo's sentence naming the rows and the calls that changed
    them since: `later` is `(call, eid, name)`."""
    calls = list(dict.fromkeys(c for c, _, _ in later))
    rows = list(dict.fromkeys(name or eid for _, eid, name in later))
    shown = ", ".join(rows[:5]) + (f" and {len(rows) - 5} more" if len(rows) > 5 else "")
    undo = " ".join(f"pasture undo {c}" for c in reversed(calls[-3:]))
    which = "a later call" if len(calls) == 1 else f"{len(calls)} later calls"
    return (
        f"{shown} changed since, by {which} ({', '.join(calls[:5])}) — undo "
        f"{'it' if len(calls) == 1 else 'them, newest first'} first ({undo}), or restore the "
        "app to a moment before"
    )


__all__ = [
    "DAYS",
    "ENTITY",
    "LINE",
    "Image",
    "Reader",
    "Scope",
    "changed_since",
    "dumps",
    "full_scope",
    "history_days",
    "journal_ddl",
    "loads",
    "merged",
]
