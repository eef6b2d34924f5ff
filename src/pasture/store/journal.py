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
call's change would be overwritten without anyone saying so. So is an undo
that would take away an entity it made which a later call's row now points at
(an edge, a reference column): the edge would go with it, the reference point
at nothing. The sentence names the rows and the later calls.

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
from pasture.store.dialect import SQLITE, Dialect, q, table

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
        # One index beside the key: what a write costs is mostly the pages it dirties, and
        # only an undo's lookup of its call must be quick however long the journal is. The
        # rest read along `seq` — lines after a call (an undo's check: a recent call has few),
        # lines after a moment (a restore, seldom), the oldest lines (a sweep, a few at a
        # time) — since `seq` follows the order of the writes, and so does `at`.
        "CREATE INDEX IF NOT EXISTS pasture_journal_call ON pasture_journal(call)",
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


# one encoder for every image: `json.dumps` with options makes a new one each time
_ENCODER = json.JSONEncoder(default=_json, separators=(",", ":"), ensure_ascii=False)


def dumps(image: Image | None) -> str | None:
    return None if image is None else _ENCODER.encode(image)


def loads(text: str | None) -> Image | None:
    return None if text is None else dict(json.loads(text))


class Reader:
    """Reads the before-images of a write's entities: each entity with the rows of the
    components it may change in one statement (a few hundred entities at a time), and its
    edges in another where they may change."""

    def __init__(self, dialect: Dialect, cur: Any, columns: Mapping[str, Sequence[str]]) -> None:
        self.d = dialect
        self.cur = cur
        self.columns = columns  # each component table there is → its columns

    def images(self, scopes: Mapping[int, Scope]) -> dict[int, Image]:
        """`{_e: image}` of the entities there are among `scopes`' keys."""
        d, cur = self.d, self.cur
        every = any(s.comps is None for s in scopes.values())
        named: set[str] = set()
        for scope in scopes.values():
            named.update(scope.comps or ())
        comps = [c for c in self.columns if every or c in named]
        picks = [f"e.{c}" for c in ENTITY.split(", ")]
        joins = []
        for n, comp in enumerate(comps):
            picks.append(f"j{n}._e")
            picks.extend(f"j{n}.{q(col)}" for col in self.columns[comp])
            joins.append(f" LEFT JOIN {table(comp)} j{n} ON j{n}._e = e._e")
        select = f"SELECT {', '.join(picks)} FROM entity e{''.join(joins)} WHERE e._e "
        out: dict[int, Image] = {}
        for among, params in d.among(list(scopes)):
            for found in cur.execute(d.placeholders(select + among), params).fetchall():
                row = found[0]
                scope = scopes[row]
                kept: dict[str, Any] = {}
                at = 8
                for comp in comps:
                    cols = self.columns[comp]
                    if scope.comps is None or comp in scope.comps:
                        has = found[at] is not None
                        kept[comp] = (
                            dict(zip(cols, found[at + 1 : at + 1 + len(cols)], strict=True))
                            if has
                            else None
                        )
                    at += 1 + len(cols)
                for comp in scope.comps or ():
                    kept.setdefault(comp, None)  # named by the write, no table yet
                out[row] = {"e": list(found[:8]), "c": kept}
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


# PostgreSQL takes at most 100 arguments to a function: a wider component's image is read
# by `Reader` instead.
_WIDEST = 45


def keeping_sql(
    dialect: Dialect, columns: Mapping[str, Sequence[str]], comps: Iterable[str], among: str
) -> str | None:
    """One statement that keeps, as journal lines, the before-images of the entities whose
    `_e` is `among`, made by the database itself — each entity and its rows of `comps` as
    JSON, nothing read back into Python; its parameters are the line's call, at, who and
    door, then `among`'s. None where it cannot be one statement (a component too wide)."""
    obj, arr = (
        ("json_object", "json_array")
        if dialect is SQLITE
        else ("json_build_object", "json_build_array")
    )
    entity = ", ".join(f"e.{c}" for c in ENTITY.split(", "))
    parts: list[str] = []
    joins: list[str] = []
    for n, comp in enumerate(sorted(comps)):
        cols = columns.get(comp)
        if cols is None:
            parts.append(f"'{comp}', NULL")  # named by the write, no table yet
            continue
        if dialect is not SQLITE and len(cols) > _WIDEST:
            return None
        # names are words (`pasture.names`): safe inside the statement's own text
        if dialect is SQLITE:
            # SQLite's JSON writes a real to 15 digits: to 17 as text, which a number
            # column reads back as the same real
            inner = ", ".join(
                f"'{col}', CASE typeof(j{n}.{q(col)}) WHEN 'real' THEN "
                f"printf('%!.17g', j{n}.{q(col)}) ELSE j{n}.{q(col)} END"
                for col in cols
            )
        else:
            inner = ", ".join(f"'{col}', j{n}.{q(col)}" for col in cols)
        parts.append(f"'{comp}', CASE WHEN j{n}._e IS NULL THEN NULL ELSE {obj}({inner}) END")
        joins.append(f" LEFT JOIN {table(comp)} j{n} ON j{n}._e = e._e")
    image = f"{obj}('e', {arr}({entity}), 'c', {obj}({', '.join(parts)}))"
    text = image if dialect is SQLITE else f"({image})::text"
    return dialect.placeholders(
        f"INSERT INTO pasture_journal({LINE}) SELECT ?, ?, ?, ?, e.eid, {text} "
        f"FROM entity e{''.join(joins)} WHERE e._e {among}"
    )


def merged(lines: Iterable[tuple[int, str, str | None]]) -> dict[str, Image | None]:
    """Each entity's state before the first of `lines` (`(seq, eid, before)`, oldest first):
    of every part of it, the first image any line kept; None where the first line made it.
    Which line kept its edges is noted (`out_at`, `in_at`: see `edges_to_put_back`)."""
    out: dict[str, Image | None] = {}
    for seq, eid, before in lines:
        image = loads(before)
        if image is not None:
            for part in ("out", "in"):
                if part in image:
                    image[f"{part}_at"] = seq
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
                first[f"{part}_at"] = image[f"{part}_at"]
    return out


def edges_to_put_back(images: Mapping[str, Image | None]) -> list[tuple[str, str, str]]:
    """The edges `(parent, type, child)` to other entities that tombstones took, to put back
    beside each entity's own: an edge a tombstone took from a parent whose own edges are put
    back as they were before it is among those already; from a parent whose edges were kept
    only after it (or not at all), it is not, and comes back here."""
    out = []
    for child, image in images.items():
        if image is None or "in" not in image:
            continue
        for parent, kind in image["in"]:
            own = images.get(parent)
            if own is not None and "out" in own and own["out_at"] < image["in_at"]:
                continue
            out.append((parent, kind, child))
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
    "edges_to_put_back",
    "full_scope",
    "history_days",
    "journal_ddl",
    "keeping_sql",
    "loads",
    "merged",
]
