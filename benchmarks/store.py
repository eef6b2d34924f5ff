"""The store against the same work written by hand in SQL, side by side in one run.

    .venv/bin/python benchmarks/store.py [--entities 100000] [--rounds 21] [--batches 5]

Both sides hold the same data: ours through `apply` (a `jog` and a `doc` on
each entity, written by one caller), the hand-written side through plain
INSERTs into one typed table `runs` (a column per field, an index on each
column, the eid unique, the same FTS5 table over title and body kept by the
same triggers) and a `people` table (eid primary key, name) for who wrote it.
Both are SQLite files in WAL mode with synchronous=NORMAL, read through the
same sqlite3 module, and ANALYZEd after loading.

Each query, timed on both sides:

- ours: `store.query(filter, caller)` — the compiled filter is cached, so
  this runs its SELECT over the entity–component tables, reads the names of
  the entities its rows refer to, and builds the store's rows:
  `{kind, entity: {eid}, <component>: {<column>: value}}`, a reference as
  `{eid, name}`, listed oldest first.
- hand-written SQL: one SELECT written by hand for the same question over
  `runs` (joined to `people` for a name), and its rows turned into flat
  dicts an endpoint could hand out (`{eid, who, miles, at, ...}`) — the same
  values, in the same order, laid out flat.
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
work on the machine from landing on one side only), `--batches` batches, and
`--rounds` runs of `--calls`/`--rounds` one-bundle calls. Printed as

    name: ours X ms, hand-written SQL Y ms, ratio Z×

Goals on a 2-core machine: every query at most 1.5×, a batch of 10,000 bundles
at most 2×, and at least 1,000 one-call applies a second.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pasture.caller import Caller
from pasture.store import SqliteStore, new_eid, open_store

VOCAB = {
    "$defs": {
        "jog": {
            "properties": {
                "who": {"type": "string"},
                "miles": {"type": "number"},
                "at": {"type": "string", "format": "date-time"},
            }
        }
    }
}
ADA = Caller("a1a1a1a1a1a1a1a1", "Ada")
WORDS = [f"w{i}" for i in range(3000)]

# The hand-written table's indexes, the same on both backends: one per column, as the store keeps.
INDEXED = ("who", "miles", "at", "title", "created_at", "created_by", "updated_at", "updated_by")
BASELINE = [
    """CREATE TABLE runs (id INTEGER PRIMARY KEY, eid TEXT NOT NULL UNIQUE, who TEXT,
       miles NUMERIC, at TEXT, title TEXT, body TEXT, created_at TEXT, created_by TEXT,
       updated_at TEXT, updated_by TEXT)""",
    *(f"CREATE INDEX runs_{c} ON runs({c})" for c in INDEXED),
    "CREATE TABLE people (eid TEXT PRIMARY KEY, name TEXT)",
    """CREATE VIRTUAL TABLE runs_fts USING fts5(title, body, content='runs',
       content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER runs_ai AFTER INSERT ON runs BEGIN
       INSERT INTO runs_fts(rowid, title, body) VALUES (new.id, new.title, new.body); END""",
]
INSERT = (
    "INSERT INTO runs(eid, who, miles, at, title, body, created_at, created_by, updated_at, "
    "updated_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


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


def baseline_row(run: dict[str, Any]) -> tuple[Any, ...]:
    stamp = "2026-11-30T04:00:00.000000Z"
    return (
        new_eid(),
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
    for statement in BASELINE:
        db.execute(statement)
    db.execute("INSERT INTO people VALUES (?, ?)", (ADA.eid, ADA.name))
    return db


def timed(fn: Callable[[], object], at_least: float = 0.02) -> float:
    """Seconds per call of `fn`, repeated until `at_least` seconds have passed."""
    calls = 0
    start = time.perf_counter()
    while True:
        fn()
        calls += 1
        spent = time.perf_counter() - start
        if spent >= at_least:
            return spent / calls


Shape = Callable[[list[Any]], list[dict[str, Any]]]


def side_by_side(
    name: str,
    ours: Callable[[], object],
    theirs: Callable[[], object],
    rounds: int,
    bare: Callable[[], object],
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
    )


def report(name: str, ours: float, theirs: float, more: str = "") -> float:
    ratio = ours / theirs
    print(
        f"{name}: ours {ours * 1000:.3f} ms, hand-written SQL {theirs * 1000:.3f} ms, "
        f"ratio {ratio:.2f}×{more}",
        flush=True,
    )
    return ratio


Query = tuple[str, str, str, tuple[Any, ...], Shape]


def query_table(mark: str, word: str, full_text: tuple[str, tuple[Any, ...]]) -> list[Query]:
    """Each query: its name, its filter, the hand-written SQL (with the backend's parameter
    `mark`; its full-text search is the backend's own, `full_text`), that SQL's parameters,
    and how a hand-written endpoint turns its rows into JSON-able rows (flat dicts) — the
    same answer."""
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
            f"SELECT eid, who, miles, at FROM runs WHERE who = {mark} ORDER BY id",
            ("runner42",),
            lambda rows: [{"eid": r[0], "who": r[1], "miles": r[2], "at": r[3]} for r in rows],
        ),
        (
            f"full text: {word}",
            word,
            *full_text,
            lambda rows: [{"eid": r[0]} for r in rows],
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


Rows = Callable[[list[tuple[Any, ...]]], None]


def load(store: Any, insert_many: Rows, rng: random.Random, args: argparse.Namespace) -> None:
    """`--entities` runs on both sides: ours 10,000 bundles a call, the hand-written side in
    one transaction."""
    runs = [fake(rng, i) for i in range(args.entities)]
    start = time.perf_counter()
    for i in range(0, len(runs), 10_000):
        store.apply([bundle(r) for r in runs[i : i + 10_000]], ADA)
    loaded_ours = time.perf_counter() - start
    start = time.perf_counter()
    insert_many([baseline_row(r) for r in runs])
    loaded_theirs = time.perf_counter() - start
    print(
        f"loaded {args.entities} entities: ours {loaded_ours:.1f} s, "
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
) -> tuple[dict[str, float], float]:
    """Every figure, ours beside the hand-written side's (`base` its connection; `insert_many`
    writes rows in one transaction, `insert_one` one row in its own): each query's ratio
    and the batch's (`ratios["batch"]`), and the seconds one one-bundle apply takes."""
    ratios: dict[str, float] = {}
    for name, text, sql, params, shape in queries:
        assert len(store.query(text, ADA)) == len(base.execute(sql, params).fetchall())

        def ours(text: str = text) -> object:
            return store.query(text, ADA)

        def theirs(
            sql: str = sql, params: tuple[Any, ...] = params, shape: Shape = shape
        ) -> object:
            return shape(base.execute(sql, params).fetchall())

        def bare(sql: str = sql, params: tuple[Any, ...] = params) -> object:
            return base.execute(sql, params).fetchall()

        ratios[name] = side_by_side(name, ours, theirs, args.rounds, bare)

    # A batch of bundles in one call, against one executemany in one transaction.
    batch_ours: list[float] = []
    batch_theirs: list[float] = []
    for r in range(args.batches):
        more = [fake(rng, args.entities + r * args.batch + i) for i in range(args.batch)]
        start = time.perf_counter()
        store.apply([bundle(x) for x in more], ADA)
        batch_ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        insert_many([baseline_row(x) for x in more])
        batch_theirs.append(time.perf_counter() - start)
    ratios["batch"] = report(
        f"apply {args.batch} bundles in one call",
        statistics.median(batch_ours),
        statistics.median(batch_theirs),
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
    report("apply one bundle a call", one, statistics.median(one_theirs))
    return ratios, one


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=2_000)
    parser.add_argument(
        "--postgres",
        nargs="?",
        const="",
        metavar="URL",
        help="the same figures on PostgreSQL (a throwaway server unless a URL is given)",
    )
    args = parser.parse_args()
    if args.postgres is not None:
        return postgres(args)
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        store: SqliteStore = open_store(Path(tmp) / "ours.db")
        store.declare(VOCAB)
        base = open_baseline(Path(tmp) / "theirs.db")

        def insert_many(rows: list[tuple[Any, ...]]) -> None:
            base.execute("BEGIN")
            base.executemany(INSERT, rows)
            base.execute("COMMIT")

        def insert_one(row: tuple[Any, ...]) -> None:
            base.execute("BEGIN")
            base.execute(INSERT, row)
            base.execute("COMMIT")

        load(store, insert_many, rng, args)
        for db in (store._db, base):
            db.execute("ANALYZE")
        store._compiled.clear()

        word = WORDS[17]
        full_text = (
            "SELECT r.eid FROM runs_fts JOIN runs r ON r.id = runs_fts.rowid "
            "WHERE runs_fts MATCH ? ORDER BY runs_fts.rank",
            (f'"{word}"',),
        )

        ratios, one = measure(
            store, query_table("?", word, full_text), base, insert_many, insert_one, rng, args
        )
        per_second = 1 / one
        print(f"one-call applies: {per_second:,.0f} a second (goal: at least 1,000)")
        store.close()
        base.close()

    queries_ok = all(v <= 1.5 for k, v in ratios.items() if k != "batch")
    print(
        "goals: queries ≤1.5× "
        + ("met" if queries_ok else "MISSED")
        + ", batch ≤2× "
        + ("met" if ratios["batch"] <= 2 else "MISSED")
        + ", ≥1,000 applies/s "
        + ("met" if per_second >= 1000 else "MISSED")
    )
    return 0


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
]
PG_INSERT = INSERT.replace("?", "%s")


def postgres(args: argparse.Namespace) -> int:
    """The same figures with both sides on one PostgreSQL server, each in its own schema.

    Ours is `PostgresStore` in schema `bench_ours`; the hand-written side is a
    plain typed table `runs` in schema `bench_theirs` with the same indexes, a
    tsvector kept by a generated column over title and body (the same text
    search configuration) with a GIN index, and `people`; its writes are
    `executemany` of INSERTs in one transaction, and one INSERT in its own
    transaction a call.
    """
    import contextlib
    import os

    import psycopg

    from pasture.store.postgres import open_postgres_store

    url = args.postgres or os.environ.get("PASTURE_DATABASE_URL", "")
    with contextlib.ExitStack() as stack:
        if not url:
            sys.path.insert(0, str(Path(__file__).parent.parent / "tests" / "store"))
            import pg_server

            url = stack.enter_context(pg_server.server())
            print("a throwaway PostgreSQL server for this run", flush=True)
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

        def insert_many(rows: list[tuple[Any, ...]]) -> None:
            with base.transaction():
                base.cursor().executemany(PG_INSERT, rows)

        def insert_one(row: tuple[Any, ...]) -> None:
            with base.transaction():
                base.execute(PG_INSERT, row)

        rng = random.Random(7)
        load(store, insert_many, rng, args)
        admin.execute("VACUUM ANALYZE bench_ours.entity, bench_ours.c_jog, bench_ours.c_doc")
        admin.execute("VACUUM ANALYZE bench_theirs.runs, bench_theirs.people")

        word = WORDS[17]
        full_text = (
            "SELECT eid FROM runs, phraseto_tsquery('pasture_fts', %s) q "
            "WHERE fts @@ q ORDER BY ts_rank(fts, q) DESC, id",
            (word,),
        )

        _, one = measure(
            store, query_table("%s", word, full_text), base, insert_many, insert_one, rng, args
        )
        print(f"one-call applies: {1 / one:,.0f} a second", flush=True)
        for name in ("bench_ours", "bench_theirs"):
            admin.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
