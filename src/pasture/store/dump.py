"""An app's store as JSON lines and back: what `pasture app export` and `import` carry.

    header = dump(store, lines.write)          # one snapshot, one entity a line
    problems = check(header, lines, POSTGRES)  # every problem, nothing written
    load(store, header, lines)                 # into an empty store, one transaction

A line is one entity, in the order the store made them (oldest first), with what
`tables.py` keeps of it:

    {"eid": "…", "kind": "jog", "name": null,
     "created": {"at": "…", "by": "…"}, "updated": {"at": "…", "by": "…"},
     "components": {"jog": {"who": "Ada", "miles": 5}, "starred": {}},
     "edges": [{"type": "likes", "child": "…"}]}

A component lists the columns it holds a value in (`{}`: it is there, holding none);
edges are in the order they were added. The header says what the lines are made of:
the vocabulary the store declared and every component table it has with its columns'
types (`pasture_columns`, which keeps those of a component a later vocabulary dropped,
whose rows a rollback would show again), and how many lines there are. The change
journal and other bookkeeping tables are not carried: a store loaded from lines starts
its history there.

`load` keeps every eid, stamp, reference and edge as they were, and an entity's kind
and name as the source kept them, so the loaded store equals the dumped one row by
row — on either backend, from either backend.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from pasture.errors import DeployRefused
from pasture.store.dialect import POSTGRES, STAMPS, Dialect, q, table
from pasture.store.sqlstore import Executes, SqlStore
from pasture.store.tables import ENTITY_COLUMNS, UNINDEXED, component_ddl
from pasture.store.vocab import Column, Component, Vocabulary

BATCH = 1_000  # entities read or written at once
MOST_PROBLEMS = 20  # said of the lines, then how many more there were
TYPES = ("text", "number", "bool", "time", "url", "reference")
_KEYS = {"eid", "kind", "name", "created", "updated", "components", "edges"}

_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode  # made once
Progress = Callable[[int, int], None]  # (entities done, of how many)
Columns = dict[str, dict[str, str]]  # component -> column -> its type as `pasture_columns` keeps it


# -- dumping ---------------------------------------------------------------------------------


def dump(
    store: SqlStore[Any], write: Callable[[str], object], progress: Progress | None = None
) -> dict[str, Any]:
    """Every entity of `store`, one JSON line each (ending in a newline) handed to `write`,
    all read from one snapshot; answers the header: `{vocabulary, columns, entities}`."""
    with store._snapshot_connection() as conn:
        conn.execute(store.snapshot)
        try:
            return _dump(store, conn, write, progress)
        finally:
            conn.execute("COMMIT")


def _dump(
    store: SqlStore[Any], conn: Executes, write: Callable[[str], object], progress: Progress | None
) -> dict[str, Any]:
    d = store.dialect
    found = conn.execute("SELECT value FROM pasture_meta WHERE key = 'vocab'").fetchone()
    vocabulary = json.loads(found[0]) if found else {}
    kept = physical(conn)
    # every component table, one of no columns (a mark) too
    comps = sorted(t[2:] for t in store._tables(conn) if t.startswith("c_"))
    columns = {c: kept.get(c, {}) for c in comps}
    total = int(conn.execute("SELECT count(*) FROM entity").fetchone()[0])
    entity_sql = d.placeholders(
        f"SELECT {', '.join(ENTITY_COLUMNS)} FROM entity WHERE _e > ? ORDER BY _e LIMIT {BATCH}"
    )
    # the tables holding rows, read batch by batch (an empty one is not asked again)
    holding = {
        c: cols
        for c, cols in columns.items()
        if conn.execute(f"SELECT 1 FROM {table(c)} LIMIT 1").fetchone() is not None
    }
    done, last = 0, 0
    while True:
        rows = conn.execute(entity_sql, (last,)).fetchall()
        if not rows:
            break
        lo, last = int(rows[0][0]), int(rows[-1][0])
        parts = _components(conn, d, holding, lo, last)
        edges = _edges(conn, d, lo, last)
        for e, eid, kind, name, c_at, c_by, u_at, u_by in rows:
            line: dict[str, Any] = {
                "eid": eid,
                "kind": kind,
                "name": name,
                "created": {"at": c_at, "by": c_by},
                "updated": {"at": u_at, "by": u_by},
                "components": parts.get(e, {}),
            }
            if e in edges:
                line["edges"] = edges[e]
            write(_ENCODE(line) + "\n")
        done += len(rows)
        if progress is not None:
            progress(done, total)
    return {"vocabulary": vocabulary, "columns": columns, "entities": done}


def physical(conn: Executes) -> Columns:
    """Every component table's columns and their types, as `pasture_columns` keeps them."""
    out: Columns = {}
    for comp, col, kind in conn.execute(
        "SELECT component, col, type FROM pasture_columns ORDER BY component, col"
    ):
        out.setdefault(str(comp), {})[str(col)] = str(kind)
    return out


def _components(
    conn: Executes, d: Dialect, columns: Columns, lo: int, hi: int
) -> dict[int, dict[str, dict[str, Any]]]:
    """The component rows of the entities `lo`..`hi`: `_e` -> component -> what it holds."""
    out: dict[int, dict[str, dict[str, Any]]] = {}
    for comp, cols in columns.items():
        names = list(cols)
        read = [_READ.get(cols[n]) for n in names]  # None: kept as it is read
        listed = "".join(f", {q(n)}" for n in names)
        sql = d.placeholders(f"SELECT _e{listed} FROM {table(comp)} WHERE _e BETWEEN ? AND ?")
        for row in conn.execute(sql, (lo, hi)):
            held: dict[str, Any] = {}
            for n, how, v in zip(names, read, row[1:], strict=True):
                if v is not None:
                    held[n] = v if how is None else how(v)
            out.setdefault(row[0], {})[comp] = held
    return out


def _number(value: Any) -> Any:
    """A whole number as an int, as SQLite's NUMERIC reads it back."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


# A stored value as JSON carries it: SQLite keeps a bool as 0 or 1.
_READ: dict[str, Callable[[Any], Any]] = {"bool": bool, "number": _number}


def _edges(conn: Executes, d: Dialect, lo: int, hi: int) -> dict[int, list[dict[str, str]]]:
    out: dict[int, list[dict[str, str]]] = {}
    sql = d.placeholders(
        f"SELECT parent, type, child FROM edge WHERE parent BETWEEN ? AND ? "
        f"ORDER BY parent, {d.edge_seq}"
    )
    for parent, kind, child in conn.execute(sql, (lo, hi)):
        out.setdefault(int(parent), []).append({"type": kind, "child": child})
    return out


# -- checking --------------------------------------------------------------------------------


def check_header(header: Any) -> list[str]:
    """What is wrong with a header (`dump`'s answer, as a file carried it)."""
    if not isinstance(header, Mapping):
        return ["its store is not described (an object with vocabulary, columns, entities)"]
    problems: list[str] = []
    if not isinstance(header.get("vocabulary"), Mapping):
        problems.append("its store's vocabulary is not an object")
    columns = header.get("columns")
    if not isinstance(columns, Mapping) or not all(
        isinstance(cols, Mapping)
        and all(isinstance(n, str) and t in TYPES for n, t in cols.items())
        for cols in columns.values()
    ):
        problems.append(
            "its store's columns are not a component's columns and their types "
            f"({', '.join(TYPES)})"
        )
    count = header.get("entities")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        problems.append("its store's count of entities is not a whole number")
    if not problems:
        problems.extend(_agrees(header["vocabulary"], header["columns"]))
    return problems


def _agrees(doc: Mapping[str, Any], columns: Mapping[str, Mapping[str, str]]) -> list[str]:
    """Whether the vocabulary is one, and declares its columns with the types the rows of
    the store's tables have."""
    try:
        vocab = Vocabulary.from_json(doc)
    except DeployRefused as e:
        return [f"its store's vocabulary is not one pasture declares ({e.sentence})"]
    problems: list[str] = []
    for comp in vocab.components.values():
        for col in comp.columns.values():
            kept = columns.get(comp.name, {}).get(col.name)
            if comp.name not in STAMPS and kept is not None and kept != col.shown:
                problems.append(
                    f"its store's {comp.name}.{col.name} holds a {kept}, and its "
                    f"vocabulary declares a {col.shown}"
                )
    return problems


def check(header: Mapping[str, Any], lines: Iterable[str | bytes], dialect: Dialect) -> list[str]:
    """Every problem of the lines (at most `MOST_PROBLEMS` said, then how many more), checked
    against `header` and what `dialect`'s database can keep; nothing is written."""
    columns: Columns = {c: dict(cols) for c, cols in header["columns"].items()}
    said: list[str] = []
    more = 0
    seen: set[str] = set()
    count = 0
    for number, text in enumerate(lines, 1):
        count += 1
        for problem in _line_problems(number, text, columns, dialect, seen):
            if len(said) < MOST_PROBLEMS:
                said.append(problem)
            else:
                more += 1
    if count != header["entities"]:
        said.append(f"it says its store has {header['entities']} entities, and it has {count}")
    if more:
        said.append(f"and {more} more problems of the same kinds")
    return said


def _line_problems(
    number: int, text: str | bytes, columns: Columns, dialect: Dialect, seen: set[str]
) -> Iterator[str]:
    at = f"data line {number}"
    try:
        line = json.loads(text)
    except (ValueError, RecursionError):
        yield f"{at} is not JSON"
        return
    if not isinstance(line, dict) or "eid" not in line or set(line) - _KEYS:
        yield f"{at} is not an entity ({', '.join(sorted(_KEYS))})"
        return
    eid = line["eid"]
    if not isinstance(eid, str) or not eid:
        yield f"{at}: its eid is not text"
        return
    if eid in seen:
        yield f"{at}: {eid} is on an earlier line too"
    seen.add(eid)
    texts: list[tuple[str, Any, bool]] = [("eid", eid, True)]  # (where, value, indexed)
    for key in ("kind", "name"):
        if line.get(key) is not None and not isinstance(line[key], str):
            yield f"{at}: its {key} is not text"
        texts.append((key, line.get(key), True))
    for stamp in STAMPS:
        held = line.get(stamp, {})
        if not isinstance(held, dict) or set(held) - {"at", "by"}:
            yield f"{at}: {stamp} is not {{at, by}}"
            continue
        for col in ("at", "by"):
            if held.get(col) is not None and not isinstance(held[col], str):
                yield f"{at}: {stamp}.{col} is not text"
            texts.append((f"{stamp}.{col}", held.get(col), True))
    parts = line.get("components", {})
    if not isinstance(parts, dict):
        yield f"{at}: its components are not an object"
        parts = {}
    for comp, held in parts.items():
        cols = columns.get(comp)
        if cols is None:
            yield f"{at}: {comp} is no component of the store"
            continue
        if not isinstance(held, dict):
            yield f"{at}: {comp} is not an object of its columns"
            continue
        for col, value in held.items():
            kind = cols.get(col)
            if kind is None:
                yield f"{at}: {comp}.{col} is no column of {comp}"
            elif not _fits(kind, value):
                yield f"{at}: {comp}.{col} is not a {kind}"
            elif isinstance(value, str):
                texts.append((f"{comp}.{col}", value, (comp, col) not in UNINDEXED))
    edges = line.get("edges", [])
    if not isinstance(edges, list):
        yield f"{at}: its edges are not a list"
        edges = []
    pairs: set[tuple[str, str]] = set()
    for edge in edges:
        if (
            not isinstance(edge, dict)
            or set(edge) != {"type", "child"}
            or not all(isinstance(edge[k], str) for k in edge)
        ):
            yield f"{at}: an edge is not {{type, child}} in text"
            continue
        if (edge["type"], edge["child"]) in pairs:
            yield f"{at}: the edge {edge['type']} to {edge['child']} is there twice"
        pairs.add((edge["type"], edge["child"]))
        texts.append(("an edge's type", edge["type"], True))
        texts.append(("an edge's child", edge["child"], True))
    yield from _unkeepable(at, texts, dialect)


def _fits(kind: str, value: Any) -> bool:
    if value is None:
        return True
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, str)


def _unkeepable(at: str, texts: list[tuple[str, Any, bool]], dialect: Dialect) -> Iterator[str]:
    """What PostgreSQL cannot keep: a NUL character, or indexed text past a btree entry."""
    if dialect is not POSTGRES:
        return
    from pasture.store.postgres import MAX_INDEXED

    for where, value, indexed in texts:
        if not isinstance(value, str):
            continue
        if "\x00" in value:
            yield f"{at}: {where} holds a NUL character, which PostgreSQL cannot keep"
        elif indexed and len(value) * 4 > MAX_INDEXED and len(value.encode()) > MAX_INDEXED:
            yield (
                f"{at}: {where} is {len(value.encode())} bytes, more than PostgreSQL "
                f"indexes ({MAX_INDEXED})"
            )


# -- loading ---------------------------------------------------------------------------------


def is_empty(store: SqlStore[Any]) -> bool:
    """Whether the store keeps no entity at all."""
    with store._reading() as conn:
        return conn.execute("SELECT 1 FROM entity LIMIT 1").fetchone() is None


def load(
    store: SqlStore[Any],
    header: Mapping[str, Any],
    lines: Iterable[str | bytes],
    progress: Progress | None = None,
) -> int:
    """The lines (checked first with `check`) written into `store`, which is empty and has
    declared the header's vocabulary, in one transaction; how many entities it wrote.

    A component the header has and the store lacks (one a later vocabulary dropped) gets its
    table, as its columns' types say."""
    columns: Columns = {c: dict(cols) for c, cols in header["columns"].items()}
    total = int(header["entities"])
    w = store.writes
    d = store.dialect
    with store._lock, store._writing() as cur:
        had = physical(cur)
        tables = set(store._tables(cur))
        for comp, cols in columns.items():
            missing = {n: t for n, t in cols.items() if n not in had.get(comp, {})}
            if not missing and table(comp) in tables:
                continue
            existing = dict(had.get(comp, {})) if table(comp) in tables else None
            for statement in component_ddl(d, _component(comp, missing), existing):
                cur.execute(statement)
            if missing:
                cur.executemany(w.column, [(comp, n, t) for n, t in missing.items()])
        done = 0
        batch: list[dict[str, Any]] = []
        for text in lines:
            batch.append(json.loads(text))
            if len(batch) == BATCH:
                _write(store, cur, columns, batch, done)
                done += len(batch)
                batch = []
                if progress is not None:
                    progress(done, total)
        if batch:
            _write(store, cur, columns, batch, done)
            done += len(batch)
            if progress is not None:
                progress(done, total)
    store._forget()  # what a write kept known (the largest `_e`, its persons) moved
    store._kinds()  # a tombstone empties every table there is now
    return done


def _component(name: str, cols: Mapping[str, str]) -> Component:
    def column(col: str, kind: str) -> Column:
        if kind == "reference":
            return Column(col, "text", reference=True)
        return Column(col, kind)  # type: ignore[arg-type]

    return Component(name, {n: column(n, t) for n, t in cols.items()})


def _write(
    store: SqlStore[Any], cur: Any, columns: Columns, batch: list[dict[str, Any]], before: int
) -> None:
    """One batch of lines: entities numbered on from `before` in their order, then their
    component rows, then their edges."""
    w = store.writes
    entities: list[tuple[Any, ...]] = []
    rows: dict[str, list[tuple[Any, ...]]] = {}
    edges: list[tuple[Any, ...]] = []
    for i, line in enumerate(batch, before + 1):
        created, updated = line.get("created", {}), line.get("updated", {})
        eid, kind = line["eid"], line.get("kind")
        c_at, c_by = created.get("at"), created.get("by")
        entities.append(
            (i, eid, kind, line.get("name"), c_at, c_by, updated.get("at"), updated.get("by"))
        )
        for comp, held in line.get("components", {}).items():
            carried: tuple[Any, ...] = (i, eid, c_at, c_by)
            if w.carries_kind(comp):
                carried = (*carried, kind)
            cols = columns[comp]
            values = tuple(_kept(store.dialect, cols[n], held.get(n)) for n in cols)
            rows.setdefault(comp, []).append((*carried, *values))
        edges.extend((i, e["type"], e["child"]) for e in line.get("edges", []))
    store._insert(cur, "entity", ENTITY_COLUMNS, entities)
    for comp, found in rows.items():
        names = (*w.carry(comp), *map(q, columns[comp]))
        store._insert(cur, table(comp), names, found)
    if edges:
        store._insert(cur, "edge", ("parent", "type", "child"), edges)


def _kept(d: Dialect, kind: str, value: Any) -> Any:
    """A value from a line as the database keeps it."""
    if kind == "bool" and value is not None:
        return d.boolean(bool(value))
    return value


def empty(store: SqlStore[Any]) -> None:
    """Take every entity, component row and edge away, in one transaction (an import that
    could not be finished leaves no half app)."""
    with store._lock, store._writing() as cur:
        for name in store._tables(cur):
            if name.startswith("c_") or name in ("entity", "edge"):
                cur.execute(f"DELETE FROM {q(name)}")
    store._forget()


__all__ = ["check", "check_header", "dump", "empty", "is_empty", "load", "physical"]
