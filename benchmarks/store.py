"""The store against the same work written by hand in SQL, side by side in one run.

    .venv/bin/python benchmarks/store.py [--only SECTION] [--quick] [--postgres [URL]]
        [--entities 100000 | --sizes 10000,100000,1000000] [--clock wall|cpu]
        [--rounds 21] [--batches 5] [--rows 1000000] [--owners 1000]

Two sections, each runnable alone with `--only` (given again for more than one):
`graph`, the run club's entities against a typed table (below), and `tables`, a
table declared as examples/todos declares it at a million rows (see `tables_section`):
`reads` (by its index, through ctx.db and as a filter), `pages` (the last page by
cursor against the first) and `mutations` (a mutation through the worker against an
action's ctx.store.apply). `--quick` is every size made small, for a look while
working. Every figure ends up in one summary line at the end:

    name  value  baseline  ratio (goal …)

## graph

Both sides hold the same data: ours through `apply` (a `jog` and a `doc` on
each run, and for every fifth run a `note{target, text}` on a run picked at
random, written by one caller), the hand-written side through plain INSERTs
into one typed table `runs` (a column per field, an index on each column, the
eid unique, the same FTS5 table over title and body kept by the same
triggers), a table `notes` (the same, its `target` the eid of a run) and a
`people` table (eid primary key, name) for who wrote it — the same eids on
both sides. Both are SQLite files in WAL mode with synchronous=NORMAL and the
same page cache (the store's `PAGE_CACHE_KIB`), read through the same sqlite3
module, and ANALYZEd after loading.

`--sizes` runs the whole section at each of those many runs, a fresh pair of
files each (`--entities` is one size), and ends with each figure's growth:
ours and the hand-written SQL at every size, to see that ours grows as that
SQL does.

Each query, timed on both sides:

- ours: `store.query(filter, caller)` — the compiled filter is cached, so
  this runs its SELECT over the entity–component tables, reads the names of
  the entities its rows refer to, and builds the store's rows:
  `{kind, entity: {eid}, <component>: {<column>: value}}`, a reference as
  `{eid, name}`, listed oldest first, a page of at most 1,000.
- hand-written SQL: one SELECT written by hand for the same question over
  `runs` (joined to `notes`, or to `people` for a name), and its rows turned
  into flat dicts an endpoint could hand out (`{eid, who, miles, at, ...}`)
  — the same rows, each with the same values, in the same order, laid out
  flat, the same page (checked before timing: the same eids in the same
  order; a search's ties in rank in either). A search for words alone
  answers whole rows (every component, the stamps and who made them), so its
  SQL reads the whole run and both names; a walk
  (`.note.target.jog.who=runner42`) is notes joined to the runs they name,
  each with the run's name (its title) and its jog; a reverse plural
  (`.jog!&.notes>=2`) is the runs two notes or more name
  (`eid IN (SELECT target … GROUP BY target HAVING count(*) >= 2)`).
- its SQL alone: the hand-written SELECT with its rows left as tuples,
  printed beside for reference (no endpoint could hand those out as JSON
  objects).

Writes: a batch is `store.apply` of 10,000 bundles in one call against one
`executemany` of the same rows (each with a fresh eid and its stamps) in one
transaction; one bundle a call is `store.apply` of one bundle against one
INSERT in its own BEGIN … COMMIT.

Every figure is the median of several runs, ours and the hand-written side
alternating: `--rounds` runs of each query (a run repeats the query for at
least 20 ms and takes the mean; many short runs in turn keep a burst of other
work on the machine from landing on one side only; `--clock cpu` times a query by
this thread's CPU time instead, on SQLite, where both sides run in this process:
steadier on a busy machine), `--batches` batches, and `--rounds` runs of
`--calls`/`--rounds` one-bundle calls. Printed as

    name: ours X ms, hand-written SQL Y ms, ratio Z×

Goals on a 2-core machine: every query at most 1.5×, a batch of 10,000 bundles
at most 2×, and at least 1,000 one-call applies a second.

## tables

A table declared as examples/todos/worker.py declares it (its `schema`, read from
that file) — `todos`: text, done (default False), owner (a person), and the index
`by_owner` on owner — holding `--rows` rows (1,000,000) spread at random over
`--owners` owners (1,000: about 1,000 each). Each owner's first todo is written
as them, so they are people of the app; the rest by one caller, 10,000 bundles an
`apply` (as an import would), a quarter of them done; then ANALYZE.

- reads: one owner's newest 50 by the index,
  `ctx.db.todos.with_index("by_owner", lambda q: q.eq("owner", X)).order("desc").take(50)`
  in process (`Database(StoreAsCaller(store, caller))`; a handler's rows,
  `{id, created_at, text, done, owner}`), and the filter line it runs
  (`.todos!&.todos.owner=X&.created?&sort=-todos.owner,-created.at&limit=50`)
  through `store.query` (the store's rows, the owner and creator with their
  names). Each against a SELECT written by hand on the same database file (the
  same schema on PostgreSQL) for the same columns — joined to `entity` for the
  names where the store's rows carry them — by the same index in the same order
  (`WHERE owner = ? ORDER BY owner DESC, _e DESC LIMIT 50`), its rows made flat
  dicts. Every plan is printed, saying whether it names the declared index.
  Goal: at most 1.5×.
- pages: the last page of all the rows newest first
  (`.todos!&sort=-created.at&limit=50&after=<cursor>`, the cursor found once by
  walking there 1,000 rows a page) against the first page of the same filter; an
  OFFSET to the same page in SQL is printed beside for reference. Goal: at most
  1.5× (a cursor seeks; an offset counts).
- mutations: a todo added through the worker, a `@mutation` doing
  `ctx.db.todos.insert` in the transaction the server begins around the call,
  against an `@action` doing the same row's `ctx.store.apply` (its own write, no
  transaction of the call's), both in one app deployed by the owner in their own
  space and called through `Service.call_handler`: `--mutation-calls` calls of
  each (2,000) over `--rounds` rounds, taking turns going first. The same apply in
  a mutation is printed beside, to tell the transaction's cost from ctx.db's.
  Goal: at least 0.8× the action's calls a second.

On PostgreSQL (`--postgres`) the same, the store in a schema of its own and the
hand-written SQL on a connection to that schema; mutations only with a throwaway
server (a Service makes the platform's tables in the database it is given).
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pasture.caller import Caller
from pasture.store import SqliteStore, new_eid, open_store
from pasture.store.pages import MAX_ROWS
from pasture.store.sqlite import PAGE_CACHE_KIB

VOCAB = {
    "$defs": {
        "jog": {
            "properties": {
                "who": {"type": "string"},
                "miles": {"type": "number"},
                "at": {"type": "string", "format": "date-time"},
            }
        },
        "note": {
            "properties": {
                "target": {"type": "string", "format": "reference"},
                "text": {"type": "string"},
            }
        },
    }
}
NOTES = 5  # a note for every this many runs, each on a run picked at random
ADA = Caller("a1a1a1a1a1a1a1a1", "Ada")
WORDS = [f"w{i}" for i in range(3000)]

# The hand-written table's indexes, the same on both backends: one per column, as the store keeps.
INDEXED = ("who", "miles", "at", "title", "created_at", "created_by", "updated_at", "updated_by")
NOTE_INDEXED = ("target", "text", "created_at", "created_by", "updated_at", "updated_by")
BASELINE = [
    """CREATE TABLE runs (id INTEGER PRIMARY KEY, eid TEXT NOT NULL UNIQUE, who TEXT,
       miles NUMERIC, at TEXT, title TEXT, body TEXT, created_at TEXT, created_by TEXT,
       updated_at TEXT, updated_by TEXT)""",
    *(f"CREATE INDEX runs_{c} ON runs({c})" for c in INDEXED),
    "CREATE TABLE people (eid TEXT PRIMARY KEY, name TEXT)",
    """CREATE TABLE notes (id INTEGER PRIMARY KEY, eid TEXT NOT NULL UNIQUE, target TEXT,
       text TEXT, created_at TEXT, created_by TEXT, updated_at TEXT, updated_by TEXT)""",
    *(f"CREATE INDEX notes_{c} ON notes({c})" for c in NOTE_INDEXED),
    """CREATE VIRTUAL TABLE runs_fts USING fts5(title, body, content='runs',
       content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER runs_ai AFTER INSERT ON runs BEGIN
       INSERT INTO runs_fts(rowid, title, body) VALUES (new.id, new.title, new.body); END""",
]
INSERT = (
    "INSERT INTO runs(eid, who, miles, at, title, body, created_at, created_by, updated_at, "
    "updated_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
INSERT_NOTE = (
    "INSERT INTO notes(eid, target, text, created_at, created_by, updated_at, updated_by) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
STAMP = "2026-11-30T04:00:00.000000Z"


def fake(rng: random.Random, i: int) -> dict[str, Any]:
    who = f"runner{rng.randrange(1000)}"
    return {
        "who": who,
        "miles": round(rng.uniform(0, 30), 1),
        "at": f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
        "title": f"Run {i} by {who}",
        "body": " ".join(rng.choice(WORDS) for _ in range(12)),
    }


def bundle(run: dict[str, Any]) -> dict[str, Any]:
    return {
        "jog": {"who": run["who"], "miles": run["miles"], "at": run["at"]},
        "doc": {"title": run["title"], "body": run["body"]},
    }


def baseline_row(run: dict[str, Any], eid: str | None = None) -> tuple[Any, ...]:
    stamp = STAMP
    return (
        eid or new_eid(),
        run["who"],
        run["miles"],
        run["at"] + "T00:00:00Z",
        run["title"],
        run["body"],
        stamp,
        ADA.eid,
        stamp,
        ADA.eid,
    )


def open_baseline(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, cached_statements=1024)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")  # as much memory for pages as ours
    for statement in BASELINE:
        db.execute(statement)
    db.execute("INSERT INTO people VALUES (?, ?)", (ADA.eid, ADA.name))
    return db


# What a query is timed by: the time that passed, or with `--clock cpu` this thread's CPU time
# (SQLite's work is done in this thread on both sides: a busy machine's other work is not in it).
CLOCK: list[Callable[[], float]] = [time.perf_counter]


def timed(fn: Callable[[], object], at_least: float = 0.02) -> float:
    """Seconds per call of `fn`, repeated until `at_least` seconds have passed."""
    clock = CLOCK[0]
    calls = 0
    start = clock()
    while True:
        fn()
        calls += 1
        spent = clock() - start
        if spent >= at_least:
            return spent / calls


Shape = Callable[[list[Any]], list[dict[str, Any]]]


def side_by_side(
    name: str,
    ours: Callable[[], object],
    theirs: Callable[[], object],
    rounds: int,
    bare: Callable[[], object],
    goal: float | None = 1.5,
) -> float:
    """Ours against the hand-written SQL that returns the same rows; and its SQL alone."""
    ours_t: list[float] = []
    theirs_t: list[float] = []
    bare_t: list[float] = []
    ours()
    theirs()  # warm: compiled filters and prepared statements, pages in cache
    for _ in range(rounds):
        ours_t.append(timed(ours))
        theirs_t.append(timed(theirs))
        bare_t.append(timed(bare))
    sql_alone = statistics.median(bare_t)
    mine = statistics.median(ours_t)
    return report(
        name,
        mine,
        statistics.median(theirs_t),
        f" (its SQL alone, rows left as tuples: {sql_alone * 1000:.3f} ms, "
        f"ratio {mine / sql_alone:.2f}×)",
        goal=goal,
    )


def report(
    name: str,
    ours: float,
    theirs: float,
    more: str = "",
    *,
    goal: float | None = None,
    against: str = "hand-written SQL",
) -> float:
    """Print seconds `ours` against `theirs` and their ratio; kept for the summary, whose goal
    is at most `goal`×."""
    ratio = ours / theirs
    print(
        f"{name}: ours {ours * 1000:.3f} ms, {against} {theirs * 1000:.3f} ms, "
        f"ratio {ratio:.2f}×{more}",
        flush=True,
    )
    FIGURES.append(Figure(name, ours * 1000, theirs * 1000, "ms", ratio, goal, at_most=True))
    return ratio


class Figure:
    """One line of the summary: a figure, its baseline in the same run, their ratio, the goal
    (at most that ratio, or with `at_most` False at least)."""

    def __init__(
        self,
        name: str,
        value: float,
        baseline: float,
        unit: str,
        ratio: float,
        goal: float | None,
        *,
        at_most: bool,
    ) -> None:
        self.name, self.value, self.baseline, self.unit = name, value, baseline, unit
        self.ratio, self.goal, self.at_most = ratio, goal, at_most

    def line(self, width: int) -> str:
        goal = ""
        if self.goal is not None:
            met = self.ratio <= self.goal if self.at_most else self.ratio >= self.goal
            goal = (
                f"  (goal {'≤' if self.at_most else '≥'}{self.goal:g}×: "
                f"{'met' if met else 'MISSED'})"
            )
        figure = (
            f"{self.value:,.3f} {self.unit}"
            if self.unit == "ms"
            else f"{self.value:,.0f} {self.unit}"
        )
        base = (
            f"{self.baseline:,.3f} {self.unit}"
            if self.unit == "ms"
            else f"{self.baseline:,.0f} {self.unit}"
        )
        return f"  {self.name:<{width}}  {figure:>14}  {base:>14}  {self.ratio:6.2f}×{goal}"


FIGURES: list[Figure] = []


def growth(sizes: Sequence[int]) -> None:
    """Each query's time at every size, ours and the hand-written SQL's: whether ours grows
    as that SQL does."""
    if len(sizes) < 2:
        return
    print(f"\ngrowth, {' → '.join(f'{n:,}' for n in sizes)} runs:", flush=True)
    done: set[str] = set()
    for f in FIGURES:
        name = f.name.rsplit(" (", 1)[0]
        if name in done or not f.name.endswith(f"({sizes[0]:,} runs)") or f.unit != "ms":
            continue
        done.add(name)
        at = [g for n in sizes for g in FIGURES if g.name == f"{name} ({n:,} runs)"]
        if len(at) != len(sizes):
            continue
        ours = " → ".join(f"{g.value:,.3f}" for g in at)
        theirs = " → ".join(f"{g.baseline:,.3f}" for g in at)
        ratios = " → ".join(f"{g.ratio:.2f}×" for g in at)
        print(f"  {name}: ours {ours} ms; hand-written SQL {theirs} ms; {ratios}", flush=True)


def summary() -> None:
    """Every figure of the run in one line each: `name  value  baseline  ratio (goal …)`."""
    if not FIGURES:
        return
    width = max(len(f.name) for f in FIGURES)
    print("\nsummary: name, value, baseline, ratio (goal)", flush=True)
    for f in FIGURES:
        print(f.line(width), flush=True)


Query = tuple[str, str, str, tuple[Any, ...], Shape]
# A whole run, as a search for words answers it, and the names of who made and changed it.
WHOLE_RUN = (
    "r.eid, r.who, r.miles, r.at, r.title, r.body, r.created_at, r.created_by, p.name, "
    "r.updated_at, r.updated_by, u.name"
)
# An answer holds a page of rows at most, and one more is read to know whether more follow.
PAGED = f"LIMIT {MAX_ROWS + 1}"
BYLINES = "LEFT JOIN people p ON p.eid = r.created_by LEFT JOIN people u ON u.eid = r.updated_by"


def query_table(mark: str, word: str, full_text: tuple[str, tuple[Any, ...]]) -> list[Query]:
    """Each query: its name, its filter, the hand-written SQL (with the backend's parameter
    `mark`; its full-text search is the backend's own, `full_text`), that SQL's parameters,
    and how a hand-written endpoint turns its rows into JSON-able rows (flat dicts) — the
    same answer: the same rows, each with the same values. A search for words alone
    answers whole rows (every component the entity has, its stamps and who made them), so
    the full-text SQL reads all of a run and the names of who wrote it."""
    return [
        (
            ".jog.miles>=29.5&.doc?&limit=20",
            ".jog.miles>=29.5&.doc?&limit=20",
            f"SELECT eid, who, miles, at, title, body FROM runs WHERE miles >= {mark} "
            "ORDER BY id DESC LIMIT 20",
            (29.5,),
            lambda rows: [
                {
                    "eid": r[0],
                    "who": r[1],
                    "miles": r[2],
                    "at": r[3],
                    "title": r[4],
                    "body": r[5],
                }
                for r in reversed(rows)
            ],
        ),
        (
            ".jog.who=runner42",
            ".jog.who=runner42",
            f"SELECT eid, who, miles, at FROM runs WHERE who = {mark} ORDER BY id {PAGED}",
            ("runner42",),
            lambda rows: [{"eid": r[0], "who": r[1], "miles": r[2], "at": r[3]} for r in rows],
        ),
        (
            f"full text: {word}",
            word,
            *full_text,
            lambda rows: [
                {
                    "eid": r[0],
                    "who": r[1],
                    "miles": r[2],
                    "at": r[3],
                    "title": r[4],
                    "body": r[5],
                    "created_at": r[6],
                    "created_by": r[7],
                    "created_by_name": r[8],
                    "updated_at": r[9],
                    "updated_by": r[10],
                    "updated_by_name": r[11],
                }
                for r in rows
            ],
        ),
        (
            "walk: .note.target.jog.who=runner42",
            ".note.target.jog.who=runner42",
            "SELECT n.eid, n.target, r.title, r.who, r.miles, r.at, n.text "
            f"FROM runs r JOIN notes n ON n.target = r.eid WHERE r.who = {mark} ORDER BY n.id "
            + PAGED,
            ("runner42",),
            lambda rows: [
                {
                    "eid": r[0],
                    "target": r[1],
                    "target_name": r[2],
                    "who": r[3],
                    "miles": r[4],
                    "at": r[5],
                    "text": r[6],
                }
                for r in rows
            ],
        ),
        (
            "reverse plural: .jog!&.notes>=2",
            ".jog!&.notes>=2",
            "SELECT eid, who, miles, at FROM runs WHERE eid IN "
            f"(SELECT target FROM notes GROUP BY target HAVING count(*) >= {mark}) ORDER BY id "
            + PAGED,
            (2,),
            lambda rows: [{"eid": r[0], "who": r[1], "miles": r[2], "at": r[3]} for r in rows],
        ),
        (
            ".jog!&.created!&limit=50",
            ".jog!&.created!&limit=50",
            "SELECT r.eid, r.who, r.miles, r.at, r.created_at, r.created_by, p.name "
            "FROM runs r LEFT JOIN people p ON p.eid = r.created_by "
            "ORDER BY r.id DESC LIMIT 50",
            (),
            lambda rows: [
                {
                    "eid": r[0],
                    "who": r[1],
                    "miles": r[2],
                    "at": r[3],
                    "created_at": r[4],
                    "created_by": r[5],
                    "created_by_name": r[6],
                }
                for r in reversed(rows)
            ],
        ),
    ]


Rows = Callable[..., None]  # (rows, INSERT) -> None: rows written in one transaction


def load(store: Any, insert_many: Rows, rng: random.Random, entities: int) -> None:
    """`entities` runs on both sides, and a note on a run picked at random for every `NOTES`
    of them (the same eids on both sides): ours 10,000 bundles a call, the hand-written
    side in one transaction a table."""
    runs = [fake(rng, i) for i in range(entities)]
    notes = [
        (rng.randrange(entities), f"note {j}: {' '.join(rng.choices(WORDS, k=4))}")
        for j in range(entities // NOTES)
    ]
    start = time.perf_counter()
    eids: list[str] = []
    for i in range(0, len(runs), 10_000):
        eids.extend(store.apply([bundle(r) for r in runs[i : i + 10_000]], ADA).entities)
    noted: list[str] = []
    for i in range(0, len(notes), 10_000):
        part = notes[i : i + 10_000]
        written = store.apply([{"note": {"target": eids[t], "text": x}} for t, x in part], ADA)
        noted.extend(written.entities)
    loaded_ours = time.perf_counter() - start
    start = time.perf_counter()
    insert_many([baseline_row(r, eid) for r, eid in zip(runs, eids, strict=True)])
    insert_many(
        [
            (eid, eids[t], x, STAMP, ADA.eid, STAMP, ADA.eid)
            for (t, x), eid in zip(notes, noted, strict=True)
        ],
        INSERT_NOTE,
    )
    loaded_theirs = time.perf_counter() - start
    print(
        f"loaded {entities:,} runs and {len(notes):,} notes: ours {loaded_ours:.1f} s, "
        f"hand-written SQL {loaded_theirs:.1f} s",
        flush=True,
    )


def measure(
    store: Any,
    queries: list[Query],
    base: Any,
    insert_many: Rows,
    insert_one: Callable[[tuple[Any, ...]], None],
    rng: random.Random,
    args: argparse.Namespace,
    size: int,
) -> tuple[dict[str, float], float]:
    """Every figure, ours beside the hand-written side's (`base` its connection; `insert_many`
    writes rows in one transaction, `insert_one` one row in its own): each query's ratio
    and the batch's (`ratios["batch"]`), and the seconds one one-bundle apply takes."""
    ratios: dict[str, float] = {}
    for name, text, sql, params, shape in queries:
        found = [r["entity"]["eid"] for r in store.query(text, ADA)]
        answered = [d["eid"] for d in shape(base.execute(sql, params).fetchall())][:MAX_ROWS]
        # the same rows (a search's ties in rank may come in either order)
        searched = name.startswith("full text")
        assert found == answered or (searched and sorted(found) == sorted(answered)), name

        def ours(text: str = text) -> object:
            return store.query(text, ADA)

        def theirs(
            sql: str = sql, params: tuple[Any, ...] = params, shape: Shape = shape
        ) -> object:
            return shape(base.execute(sql, params).fetchall())

        def bare(sql: str = sql, params: tuple[Any, ...] = params) -> object:
            return base.execute(sql, params).fetchall()

        ratios[name] = side_by_side(f"{name} ({size:,} runs)", ours, theirs, args.rounds, bare)

    # A batch of bundles in one call, against one executemany in one transaction.
    batch_ours: list[float] = []
    batch_theirs: list[float] = []
    for r in range(args.batches):
        more = [fake(rng, size + r * args.batch + i) for i in range(args.batch)]
        start = time.perf_counter()
        store.apply([bundle(x) for x in more], ADA)
        batch_ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        insert_many([baseline_row(x) for x in more])
        batch_theirs.append(time.perf_counter() - start)
    ratios["batch"] = report(
        f"apply {args.batch} bundles in one call ({size:,} runs)",
        statistics.median(batch_ours),
        statistics.median(batch_theirs),
        goal=2.0,
    )

    # One bundle a call: each its own transaction on both sides, alternating rounds.
    one_ours: list[float] = []
    one_theirs: list[float] = []
    per_round = max(1, args.calls // args.rounds)
    for _ in range(args.rounds):
        calls = [fake(rng, i) for i in range(per_round)]
        start = time.perf_counter()
        for x in calls:
            store.apply(bundle(x), ADA)
        one_ours.append((time.perf_counter() - start) / per_round)
        start = time.perf_counter()
        for x in calls:
            insert_one(baseline_row(x))
        one_theirs.append((time.perf_counter() - start) / per_round)
    one = statistics.median(one_ours)
    report(f"apply one bundle a call ({size:,} runs)", one, statistics.median(one_theirs))
    return ratios, one


SECTIONS = ("graph", "reads", "pages", "mutations")
GROUPS = {"tables": ("reads", "pages", "mutations")}
QUICK = {  # --quick: every size small, for a look while working
    "entities": 10_000,
    "rounds": 5,
    "batches": 2,
    "calls": 500,
    "rows": 20_000,
    "mutation_calls": 300,
}
FULL = {
    "entities": 100_000,
    "rounds": 21,
    "batches": 5,
    "calls": 2_000,
    "rows": 1_000_000,
    "mutation_calls": 2_000,
}


def options() -> tuple[argparse.Namespace, list[str]]:
    """The options, and the sections to run in their order."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--only",
        action="append",
        choices=[*SECTIONS, *GROUPS],
        help="run only this section (again for more): graph, or tables (reads, pages, mutations)",
    )
    parser.add_argument("--quick", action="store_true", help="every size small, for a look")
    parser.add_argument("--entities", type=int, help="graph: runs (100,000)")
    parser.add_argument(
        "--sizes",
        type=lambda text: [int(n) for n in text.replace("_", "").split(",")],
        help="graph: the section at each of these many runs, like 10000,100000,1000000 "
        "(--entities alone)",
    )
    parser.add_argument("--rounds", type=int, help="runs of each figure, alternating (21)")
    parser.add_argument("--batches", type=int, help="graph: batches timed (5)")
    parser.add_argument("--batch", type=int, default=10_000, help="graph: bundles a batch")
    parser.add_argument("--calls", type=int, help="graph: one-bundle applies (2,000)")
    parser.add_argument("--rows", type=int, help="tables: rows of todos (1,000,000)")
    parser.add_argument("--owners", type=int, default=1_000, help="tables: owners (1,000)")
    parser.add_argument(
        "--mutation-calls", type=int, help="tables: calls of each handler, over the rounds (2,000)"
    )
    parser.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="what a query is timed by: the time that passes (wall), or this thread's CPU "
        "time (cpu; SQLite only, where both sides run in this process: steadier on a busy "
        "machine)",
    )
    parser.add_argument(
        "--postgres",
        nargs="?",
        const="",
        metavar="URL",
        help="the same figures on PostgreSQL (a throwaway server unless a URL is given)",
    )
    args = parser.parse_args()
    for key, value in (QUICK if args.quick else FULL).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.sizes is None:
        args.sizes = [args.entities]
    if args.clock == "cpu":
        if args.postgres is not None:
            parser.error("--clock cpu times SQLite only: PostgreSQL's work is in its server")
        CLOCK[0] = time.thread_time
    chosen = set()
    for name in args.only or [*SECTIONS]:
        chosen.update(GROUPS.get(name, (name,)))
    return args, [s for s in SECTIONS if s in chosen]


def main() -> int:
    args, sections = options()
    if args.postgres is not None:
        postgres(args, sections)
    else:
        if "graph" in sections:
            graph_sqlite(args)
        if set(sections) & {"reads", "pages"}:
            tables_sqlite(args, sections)
        if "mutations" in sections:
            mutations(args)
    summary()
    return 0


def graph_sqlite(args: argparse.Namespace) -> None:
    """The graph section on SQLite at each of `--sizes`: the run club's entities against a
    typed table."""
    for size in args.sizes:
        graph_sqlite_at(args, size)
    growth(args.sizes)


def graph_sqlite_at(args: argparse.Namespace, size: int) -> None:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        store: SqliteStore = open_store(Path(tmp) / "ours.db")
        store.declare(VOCAB)
        base = open_baseline(Path(tmp) / "theirs.db")

        def insert_many(rows: list[tuple[Any, ...]], into: str = INSERT) -> None:
            base.execute("BEGIN")
            base.executemany(into, rows)
            base.execute("COMMIT")

        def insert_one(row: tuple[Any, ...]) -> None:
            base.execute("BEGIN")
            base.execute(INSERT, row)
            base.execute("COMMIT")

        load(store, insert_many, rng, size)
        for db in (store._db, base):
            db.execute("ANALYZE")
        store._compiled.clear()

        word = WORDS[17]
        full_text = (
            f"SELECT {WHOLE_RUN} FROM runs_fts JOIN runs r ON r.id = runs_fts.rowid {BYLINES} "
            f"WHERE runs_fts MATCH ? ORDER BY runs_fts.rank {PAGED}",
            (f'"{word}"',),
        )

        queries = query_table("?", word, full_text)
        _, one = measure(store, queries, base, insert_many, insert_one, rng, args, size)
        per_second = 1 / one
        print(f"one-call applies: {per_second:,.0f} a second (goal: at least 1,000)")
        store.close()


# -- tables: examples/todos's table at a million rows ------------------------------------------

TODOS = Path(__file__).resolve().parents[1] / "examples" / "todos"
PAGE = ".todos!&sort=-created.at&limit=50"  # the pages' filter: newest first, 50 a page


def todos_vocab() -> dict[str, Any]:
    """examples/todos/worker.py's `schema`, as the vocabulary a deploy declares from it."""
    import importlib.util

    from pasture.commands.app_tables import schema_document

    spec = importlib.util.spec_from_file_location("todos_worker", TODOS / "worker.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    defs, problems = schema_document(module.schema)
    assert not problems, problems
    return {"$defs": defs}


def load_todos(store: Any, args: argparse.Namespace) -> list[Caller]:
    """`--rows` todos over `--owners` owners (see `tables_section`); the owners."""
    rng = random.Random(11)
    owners = [Caller(new_eid(), f"person{i}") for i in range(args.owners)]
    start = time.perf_counter()
    for who in owners:  # written as them: each owner becomes a person of the app
        store.apply({"todos": {"text": "my first todo", "owner": who.eid}}, who)
    left = args.rows - len(owners)
    for i in range(0, left, 10_000):
        store.apply(
            [
                {
                    "todos": {
                        "text": f"todo {i + j}: {' '.join(rng.choices(WORDS, k=4))}",
                        "done": rng.random() < 0.25,
                        "owner": rng.choice(owners).eid,
                    }
                }
                for j in range(min(10_000, left - i))
            ],
            ADA,
        )
    took = time.perf_counter() - start
    print(
        f"loaded {args.rows:,} todos over {args.owners:,} owners (about "
        f"{args.rows // args.owners:,} each, at random), 10,000 bundles an apply: "
        f"{took:.1f} s, {args.rows / took:,.0f} rows a second",
        flush=True,
    )
    return owners


Explain = Callable[[str, Sequence[Any]], list[str]]


def show_plans(name: str, index: str, plans: dict[str, list[str]]) -> None:
    """Print each side's plan, and say whether each names the declared `index`."""
    for side, plan in plans.items():
        uses = "uses" if any(index in step for step in plan) else "DOES NOT use"
        print(f"  plan of {name}, {side} ({uses} {index}):", flush=True)
        for step in plan:
            print(f"    {step}", flush=True)


def table_reads(
    store: Any, base: Any, mark: str, explain: Explain, index: str, owner: str, rounds: int
) -> None:
    """One owner's newest 50 by the index: through ctx.db and as a filter line, each against
    the hand-written SELECT (`base` a connection to the same data, `mark` its parameter)."""
    from pasture.commands.app_db import Database
    from pasture.commands.appstore import StoreAsCaller

    db = Database(StoreAsCaller(store, ADA))

    def via_db() -> list[dict[str, Any]]:
        by_owner = db.todos.with_index("by_owner", lambda q: q.eq("owner", owner))
        return by_owner.order("desc").take(50)

    line = db.todos.with_index("by_owner", lambda q: q.eq("owner", owner)).order("desc").line(50)

    def via_filter() -> object:
        return store.query(line, ADA)

    # the handler's rows: {id, created_at, text, done, owner}
    db_sql = (
        f'SELECT _eid, _created_at, "text", done, owner FROM c_todos WHERE owner = {mark} '
        "ORDER BY owner DESC, _e DESC LIMIT 50"
    )

    def db_rows(rows: list[Any]) -> list[dict[str, Any]]:
        return [
            {"id": r[0], "created_at": r[1], "text": r[2], "done": bool(r[3]), "owner": r[4]}
            for r in rows
        ]

    # the store's rows: its columns, the owner and the creator with their names, created.at
    line_sql = (
        'SELECT t._eid, t."text", t.done, t.owner, o.name, t._created_at, t._created_by, '
        "c.name FROM c_todos t LEFT JOIN entity o ON o.eid = t.owner "
        f"LEFT JOIN entity c ON c.eid = t._created_by WHERE t.owner = {mark} "
        "ORDER BY t.owner DESC, t._e DESC LIMIT 50"
    )

    def line_rows(rows: list[Any]) -> list[dict[str, Any]]:
        return [
            {
                "eid": r[0],
                "text": r[1],
                "done": bool(r[2]),
                "owner": r[3],
                "owner_name": r[4],
                "created_at": r[5],
                "created_by": r[6],
                "created_by_name": r[7],
            }
            for r in rows
        ]

    params = (owner,)
    hand = [r[0] for r in base.execute(db_sql, params).fetchall()]
    assert [r["id"] for r in via_db()] == hand, "ctx.db and the SQL answer other rows"
    assert [r["entity"]["eid"] for r in via_filter()] == hand, "the filter answers other rows"
    assert line_rows(base.execute(line_sql, params).fetchall())[0]["owner_name"]
    print(f"  {len(hand)} rows of one owner's {count_of(base, mark, owner):,}", flush=True)
    print(f"  ctx.db's filter line: {line}", flush=True)
    compiled = store._compile(line)
    show_plans(
        "the read by owner",
        index,
        {
            "ours": explain(compiled.sql, compiled.params),
            "ctx.db's SQL": explain(db_sql, params),
            "the filter's SQL": explain(line_sql, params),
        },
    )
    side_by_side(
        "by_owner newest 50 through ctx.db",
        via_db,
        lambda: db_rows(base.execute(db_sql, params).fetchall()),
        rounds,
        lambda: base.execute(db_sql, params).fetchall(),
    )
    side_by_side(
        "by_owner newest 50 as a filter",
        via_filter,
        lambda: line_rows(base.execute(line_sql, params).fetchall()),
        rounds,
        lambda: base.execute(line_sql, params).fetchall(),
    )
    through_db, as_filter = paired(via_db, via_filter, rounds)
    print(
        f"  ctx.db's read, {through_db * 1000:.3f} ms, against the store reading its line "
        f"alone, {as_filter * 1000:.3f} ms, in turns: {through_db / as_filter:.2f}×, the rest "
        "ctx.db's own (the table's schema, the line, each row made a handler's)",
        flush=True,
    )


def count_of(base: Any, mark: str, owner: str) -> int:
    return int(
        base.execute(f"SELECT count(*) FROM c_todos WHERE owner = {mark}", (owner,)).fetchone()[0]
    )


def table_pages(store: Any, base: Any, rows: int, rounds: int) -> None:
    """The last page by cursor against the first, of `PAGE` over all `rows` rows."""
    start = time.perf_counter()
    cursor: str | None = None
    seen = 0
    while seen < rows - 50:  # to just before the last 50 rows, 1,000 (or fewer) a page
        step = min(1000, rows - 50 - seen)
        line = f".todos!&sort=-created.at&limit={step}"
        page = store.query(line if cursor is None else f"{line}&after={cursor}", ADA)
        seen += len(page)
        cursor = page.cursor
        assert cursor is not None and len(page) == step
    print(
        f"  walked {seen:,} rows to the last page's cursor in {time.perf_counter() - start:.1f} s",
        flush=True,
    )
    last_line = f"{PAGE}&after={cursor}"
    first, last = store.query(PAGE, ADA), store.query(last_line, ADA)
    assert len(first) == 50 and first.more and first.cursor
    assert len(last) == 50 and not last.more, "the last page is the last 50 rows"
    oldest = base.execute("SELECT _eid FROM c_todos ORDER BY _e LIMIT 50").fetchall()
    assert [r["entity"]["eid"] for r in last] == [r[0] for r in reversed(oldest)]
    last_t, first_t = paired(
        lambda: store.query(last_line, ADA), lambda: store.query(PAGE, ADA), rounds
    )
    report(
        f"the last page of {rows:,} by cursor",
        last_t,
        first_t,
        goal=1.5,
        against="the first page",
    )
    offset = f"SELECT _eid FROM c_todos ORDER BY _e DESC LIMIT 50 OFFSET {rows - 50}"
    took = statistics.median(timed(lambda: base.execute(offset).fetchall()) for _ in range(3))
    print(
        f"  (for reference: the same page by an OFFSET of {rows - 50:,} in hand-written SQL, "
        f"its ids only: {took * 1000:.3f} ms)",
        flush=True,
    )


def paired(
    ours: Callable[[], object], theirs: Callable[[], object], rounds: int
) -> tuple[float, float]:
    """The median seconds a call of each, their runs taking turns."""
    ours()
    theirs()
    ours_t: list[float] = []
    theirs_t: list[float] = []
    for _ in range(rounds):
        ours_t.append(timed(ours))
        theirs_t.append(timed(theirs))
    return statistics.median(ours_t), statistics.median(theirs_t)


TODOS_WORKER = '''
"""examples/todos's table, a todo added two ways: by a mutation through ctx.db (the server
holds one transaction around the call), and by an action through ctx.store.apply (no
transaction of the call's own: the apply is a write of its own, as every write was before
mutations were transactions); and the apply in a mutation, to tell the two costs apart."""

from pasture import action, boolean, mutation, string, table, user_id

schema = {
    "todos": table(text=string(), done=boolean().default(False), owner=user_id()).index(
        "by_owner", ["owner"]
    ),
}


@mutation
def add_db(ctx, args):
    me = ctx.auth.require_identity()
    return ctx.db.todos.insert({"text": args["text"], "owner": me.user_id})


def _apply(ctx, args):
    me = ctx.auth.require_identity()
    todo = {"text": args["text"], "owner": me.user_id}
    return ctx.store.apply({"entity": {"eid": "$t"}, "todos": todo}).entities[0]


@action
def add_store(ctx, args):
    return _apply(ctx, args)


@mutation
def add_store_held(ctx, args):
    return _apply(ctx, args)
'''


def mutations(args: argparse.Namespace, url: str = "") -> None:
    """Mutations a second through the worker: `add_db` (a `@mutation` doing
    `ctx.db.todos.insert`, in the transaction the server begins around the call and commits
    when it answers) against `add_store` (an `@action` doing the same row's
    `ctx.store.apply`, its own write), both deployed in one app in the owner's own space
    (trusted to run code) and called through `Service.call_handler`, as a page's `call()`
    is; `--mutation-calls` calls of each over `--rounds` rounds, taking turns first. The
    same apply in a mutation (`add_store_held`) is printed beside: what the transaction
    costs, apart from ctx.db's."""
    import os
    import shutil

    from pasture.platform.service import Service

    os.environ["PASTURE_USER"] = "ada"
    home = Path(tempfile.mkdtemp(prefix="pasture-bench-todos-"))
    service = Service(home / "home", database_url=url)
    try:
        owner = service.local_owner()
        service.deploy(owner, {"worker.py": TODOS_WORKER.encode()}, app="todos")
        names = ("add_db", "add_store", "add_store_held")

        def calls(name: str, n: int) -> float:
            start = time.perf_counter()
            for i in range(n):
                service.call_handler(owner, "todos", name, {"text": f"todo {i}"})
            return n / (time.perf_counter() - start)

        for name in names:
            calls(name, 20)  # the worker started, ctx.db's schema asked for once, warm
        per_round = max(1, args.mutation_calls // args.rounds)
        rates: dict[str, list[float]] = {name: [] for name in names}
        for r in range(args.rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                rates[name].append(calls(name, per_round))
        db, store, held = (statistics.median(rates[n]) for n in names)
        backend = "PostgreSQL" if url else "SQLite"
        print(
            f"mutations through the worker on {backend}, {per_round} calls of each a round, "
            f"{args.rounds} rounds:",
            flush=True,
        )
        print(f"  a mutation, ctx.db.todos.insert:        {db:8,.0f} calls a second", flush=True)
        print(f"  an action, ctx.store.apply:             {store:8,.0f} calls a second", flush=True)
        print(
            f"  a mutation, ctx.store.apply:            {held:8,.0f} calls a second "
            f"({held / store:.2f}× the action: the transaction's cost)",
            flush=True,
        )
        count = service.graph.query(owner, "todos", ".todos!&.count!").data["count"]
        assert count == len(names) * (20 + per_round * args.rounds), count  # all kept
        ratio = db / store
        print(f"mutations a second: ratio {ratio:.2f}× (goal: at least 0.8×)", flush=True)
        FIGURES.append(
            Figure(
                "mutations a second (ctx.db in its transaction)",
                db,
                store,
                "/s",
                ratio,
                0.8,
                at_most=False,
            )
        )
    finally:
        service.close()
        shutil.rmtree(home, ignore_errors=True)


def tables_sqlite(args: argparse.Namespace, sections: list[str]) -> None:
    """reads and pages on SQLite: the hand-written SQL through a connection of its own to
    the store's file."""
    from pasture.store.dialect import SQLITE
    from pasture.store.tables import declared_index

    with tempfile.TemporaryDirectory() as tmp:
        store: SqliteStore = open_store(Path(tmp) / "todos.db")
        store.declare(todos_vocab())
        print(f"tables on SQLite: {args.rows:,} rows of todos", flush=True)
        owners = load_todos(store, args)
        store._db.execute("ANALYZE")
        store._compiled.clear()
        base = sqlite3.connect(store.path, isolation_level=None, cached_statements=1024)
        base.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")

        def explain(sql: str, params: Sequence[Any]) -> list[str]:
            return [r[3] for r in base.execute(f"EXPLAIN QUERY PLAN {sql}", tuple(params))]

        index = declared_index(SQLITE, "todos", "by_owner")
        if "reads" in sections:
            middle = owners[len(owners) // 2].eid
            table_reads(store, base, "?", explain, index, middle, args.rounds)
        if "pages" in sections:
            table_pages(store, base, args.rows, args.rounds)
        base.close()
        store.close()


# -- PostgreSQL -------------------------------------------------------------------------------

PG_BASELINE = [
    """CREATE TABLE runs (id BIGINT PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
       eid TEXT NOT NULL UNIQUE, who TEXT, miles DOUBLE PRECISION, at TEXT, title TEXT,
       body TEXT, created_at TEXT, created_by TEXT, updated_at TEXT, updated_by TEXT,
       fts tsvector GENERATED ALWAYS AS (to_tsvector('pasture_fts',
           coalesce(title, '') || ' ' || coalesce(body, ''))) STORED)""",
    *(f"CREATE INDEX runs_{c} ON runs({c})" for c in INDEXED),
    "CREATE INDEX runs_fts ON runs USING gin (fts)",
    "CREATE TABLE people (eid TEXT PRIMARY KEY, name TEXT)",
    """CREATE TABLE notes (id BIGINT PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
       eid TEXT NOT NULL UNIQUE, target TEXT, text TEXT, created_at TEXT, created_by TEXT,
       updated_at TEXT, updated_by TEXT)""",
    *(f"CREATE INDEX notes_{c} ON notes({c})" for c in NOTE_INDEXED),
]
PG_INSERT = INSERT.replace("?", "%s")


def postgres(args: argparse.Namespace, sections: list[str]) -> None:
    """The chosen sections on one PostgreSQL server: the one at `--postgres URL` (else
    `$PASTURE_DATABASE_URL`), or a throwaway server of this run's own."""
    import contextlib
    import os

    url = args.postgres or os.environ.get("PASTURE_DATABASE_URL", "")
    with contextlib.ExitStack() as stack:
        throwaway = not url
        if throwaway:
            sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
            from helpers import pg_server

            url = stack.enter_context(pg_server.server())
            print("a throwaway PostgreSQL server for this run", flush=True)
        if "graph" in sections:
            graph_postgres(url, args)
        if set(sections) & {"reads", "pages"}:
            tables_postgres(url, args, sections)
        if "mutations" in sections:
            if throwaway:
                mutations(args, url)
            else:  # a Service makes the platform's own tables in the database it is given
                print("mutations: on PostgreSQL with a throwaway server only", flush=True)


def graph_postgres(url: str, args: argparse.Namespace) -> None:
    """The graph section on PostgreSQL at each of `--sizes`."""
    for size in args.sizes:
        graph_postgres_at(url, args, size)
    growth(args.sizes)


def graph_postgres_at(url: str, args: argparse.Namespace, size: int) -> None:
    """The graph section with both sides on one PostgreSQL server, each in its own schema.

    Ours is `PostgresStore` in schema `bench_ours`; the hand-written side is a
    plain typed table `runs` in schema `bench_theirs` with the same indexes, a
    tsvector kept by a generated column over title and body (the same text
    search configuration) with a GIN index, and `people`; its writes are
    `executemany` of INSERTs in one transaction, and one INSERT in its own
    transaction a call.
    """
    import contextlib

    import psycopg

    from pasture.store.postgres import open_postgres_store

    with contextlib.ExitStack() as stack:
        admin = stack.enter_context(psycopg.connect(url, autocommit=True))
        for name in ("bench_ours", "bench_theirs"):
            admin.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        store = stack.enter_context(open_postgres_store(url, "bench_ours"))
        store.declare(VOCAB)
        base = stack.enter_context(psycopg.connect(url, autocommit=True))
        base.execute("CREATE SCHEMA bench_theirs")
        base.execute("SET search_path TO bench_theirs")
        # the same text search configuration as ours, made in the baseline's schema
        for statement in (
            "CREATE TEXT SEARCH DICTIONARY pasture_stem (TEMPLATE = snowball, LANGUAGE = english)",
            "CREATE TEXT SEARCH CONFIGURATION pasture_fts (COPY = english)",
            "ALTER TEXT SEARCH CONFIGURATION pasture_fts "
            "ALTER MAPPING REPLACE english_stem WITH pasture_stem",
            *PG_BASELINE,
        ):
            base.execute(statement)
        base.execute("INSERT INTO people VALUES (%s, %s)", (ADA.eid, ADA.name))

        def insert_many(rows: list[tuple[Any, ...]], into: str = INSERT) -> None:
            with base.transaction():
                base.cursor().executemany(into.replace("?", "%s"), rows)

        def insert_one(row: tuple[Any, ...]) -> None:
            with base.transaction():
                base.execute(PG_INSERT, row)

        rng = random.Random(7)
        load(store, insert_many, rng, size)
        admin.execute(
            "VACUUM ANALYZE bench_ours.entity, bench_ours.c_jog, bench_ours.c_doc, "
            "bench_ours.c_note"
        )
        admin.execute("VACUUM ANALYZE bench_theirs.runs, bench_theirs.people, bench_theirs.notes")

        word = WORDS[17]
        full_text = (
            f"SELECT {WHOLE_RUN} FROM runs r CROSS JOIN phraseto_tsquery('pasture_fts', %s) q "
            f"{BYLINES} WHERE r.fts @@ q ORDER BY ts_rank(r.fts, q) DESC, r.id {PAGED}",
            (word,),
        )

        queries = query_table("%s", word, full_text)
        _, one = measure(store, queries, base, insert_many, insert_one, rng, args, size)
        print(f"one-call applies: {1 / one:,.0f} a second", flush=True)
        for name in ("bench_ours", "bench_theirs"):
            admin.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def tables_postgres(url: str, args: argparse.Namespace, sections: list[str]) -> None:
    """reads and pages on PostgreSQL: the store in schema `bench_todos`, the hand-written SQL
    through a connection of its own to the same schema."""
    import contextlib

    import psycopg

    from pasture.store.dialect import POSTGRES
    from pasture.store.postgres import open_postgres_store
    from pasture.store.tables import declared_index

    with contextlib.ExitStack() as stack:
        admin = stack.enter_context(psycopg.connect(url, autocommit=True))
        admin.execute("DROP SCHEMA IF EXISTS bench_todos CASCADE")
        stack.callback(admin.execute, "DROP SCHEMA IF EXISTS bench_todos CASCADE")
        store = stack.enter_context(open_postgres_store(url, "bench_todos"))
        store.declare(todos_vocab())
        print(f"tables on PostgreSQL: {args.rows:,} rows of todos", flush=True)
        owners = load_todos(store, args)
        admin.execute("VACUUM ANALYZE bench_todos.entity, bench_todos.c_todos")
        store._compiled.clear()
        base = stack.enter_context(psycopg.connect(url, autocommit=True))
        base.execute("SET search_path TO bench_todos")

        def explain(sql: str, params: Sequence[Any]) -> list[str]:
            return [r[0] for r in base.execute(f"EXPLAIN {sql}", tuple(params))]

        index = declared_index(POSTGRES, "todos", "by_owner")
        if "reads" in sections:
            middle = owners[len(owners) // 2].eid
            table_reads(store, base, "%s", explain, index, middle, args.rounds)
        if "pages" in sections:
            table_pages(store, base, args.rows, args.rounds)


if __name__ == "__main__":
    sys.exit(main())
