"""An app's store as JSON lines and back (`pasture app export` / `import`), against the same
work written by hand, side by side in one run.

    .venv/bin/python benchmarks/transfer.py [--quick] [--entities N] [--rounds N]
                                             [--database postgresql://…]

A store of the run club holding `--entities` runs (100,000; `--quick`: 5,000), each a
`jog` and a `doc`, every tenth with an edge to the one before. Then, timed in
alternating rounds (the median of `--rounds`, 3):

- dump: `pasture.store.dump.dump` into a file, against one SELECT written by hand that
  reads the same rows (entity joined to its jog and doc, its edges after) and writes each
  as a JSON line with `json.dumps` — the same lines' worth of work;
- load: `dump.load` of those lines into a fresh store, against the same rows inserted by
  hand with `executemany` into the same tables in one transaction.

Printed as `name: ours X s, hand-written Y s, ratio Z×` (goal: at most 2× each), with the
rate of each in entities a second. On SQLite files by default; `--database` runs it on a
PostgreSQL database too (schemas of its own, dropped at the end).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from pasture.caller import Caller
from pasture.store import open_store
from pasture.store.dump import dump, load

ADA = Caller("a1a1a1a1a1a1a1a1", "Ada")
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
GOAL = 2.0


def filled(store: Any, n: int) -> None:
    store.declare(VOCAB)
    batch: list[dict[str, Any]] = []
    for i in range(n):
        bundle: dict[str, Any] = {
            "entity": {"eid": f"$r{i % 1000}"},
            "jog": {"who": f"runner {i % 97}", "miles": i % 13, "at": "2026-09-01T07:00:00Z"},
            "doc": {"title": f"run {i}", "body": "easy miles by the river"},
        }
        if i % 10 and (i % 1000):
            bundle["edges"] = [{"type": "after", "child": f"$r{(i % 1000) - 1}"}]
        batch.append(bundle)
        if len(batch) == 1000:
            store.apply(batch, ADA)
            batch = []
    if batch:
        store.apply(batch, ADA)


def by_hand_dump(store: Any, out: Path) -> int:
    """The same rows read with SQL written by hand, each a JSON line."""
    d = store.dialect
    n = 0
    with store._reading() as conn, open(out, "w") as f:
        edges: dict[int, list[dict[str, str]]] = {}
        for parent, kind, child in conn.execute("SELECT parent, type, child FROM edge"):
            edges.setdefault(parent, []).append({"type": kind, "child": child})
        sql = (
            "SELECT e._e, e.eid, e.kind, e.name, e.created_at, e.created_by, e.updated_at, "
            'e.updated_by, j."who", j."miles", j."at", c."title", c."body" FROM entity e '
            "LEFT JOIN c_jog j ON j._e = e._e LEFT JOIN c_doc c ON c._e = e._e ORDER BY e._e"
        )
        for e, eid, kind, name, ca, cb, ua, ub, who, miles, at, title, body in conn.execute(
            d.placeholders(sql)
        ):
            line = {
                "eid": eid,
                "kind": kind,
                "name": name,
                "created": {"at": ca, "by": cb},
                "updated": {"at": ua, "by": ub},
                "components": {
                    "jog": {"who": who, "miles": miles, "at": at},
                    "doc": {"title": title, "body": body},
                },
            }
            if e in edges:
                line["edges"] = edges[e]
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
            n += 1
    return n


def by_hand_load(store: Any, lines: list[str]) -> None:
    """The same rows inserted by hand in one transaction."""
    m = store.dialect.placeholders
    entities, jogs, docs, edges = [], [], [], []
    for i, text in enumerate(lines, 1):
        r = json.loads(text)
        c, u = r["created"], r["updated"]
        entities.append((i, r["eid"], r["kind"], r["name"], c["at"], c["by"], u["at"], u["by"]))
        carried = (i, r["eid"], c["at"], c["by"])
        jog = r["components"].get("jog")
        if jog:
            jogs.append((*carried, jog.get("who"), jog.get("miles"), jog.get("at")))
        doc = r["components"].get("doc")
        if doc:
            kind = (r["kind"],) if store.writes.carries_kind("doc") else ()
            docs.append((*carried, *kind, doc.get("title"), doc.get("body")))
        edges.extend((i, e["type"], e["child"]) for e in r.get("edges", []))
    doc_cols = ", _kind" if store.writes.carries_kind("doc") else ""
    with store._lock, store._writing() as cur:
        cur.executemany(m(f"INSERT INTO entity VALUES ({', '.join('?' * 8)})"), entities)
        cur.executemany(
            m(
                'INSERT INTO c_jog(_e, _eid, _created_at, _created_by, "who", "miles", "at") '
                "VALUES (?, ?, ?, ?, ?, ?, ?)"
            ),
            jogs,
        )
        marks = ", ".join("?" * (7 if doc_cols else 6))
        cur.executemany(
            m(
                f'INSERT INTO c_doc(_e, _eid, _created_at, _created_by{doc_cols}, "title", "body") '
                f"VALUES ({marks})"
            ),
            docs,
        )
        cur.executemany(m("INSERT INTO edge(parent, type, child) VALUES (?, ?, ?)"), edges)
    store._forget()


def load_ours(store: Any, header: dict[str, Any], lines: list[str]) -> None:
    load(store, header, lines)


def load_by_hand(store: Any, header: dict[str, Any], lines: list[str]) -> None:
    by_hand_load(store, lines)


def timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def bench(kind: str, opener: Callable[[], Any], args: argparse.Namespace) -> list[str]:
    n = args.entities
    source = opener()
    filled(source, n)
    folder = Path(tempfile.mkdtemp(prefix="pasture-bench-"))
    ours_dump: list[float] = []
    hand_dump: list[float] = []
    ours_load: list[float] = []
    hand_load: list[float] = []
    header: dict[str, Any] = {}
    for _ in range(args.rounds):
        with open(folder / "ours.jsonl", "w") as f:
            start = time.perf_counter()
            header = dump(source, f.write)
            ours_dump.append(time.perf_counter() - start)
        hand_dump.append(timed(lambda: by_hand_dump(source, folder / "hand.jsonl")))
        lines = (folder / "ours.jsonl").read_text().splitlines(keepends=True)
        for side, run in ((ours_load, load_ours), (hand_load, load_by_hand)):
            target = opener()
            target.declare(header["vocabulary"])
            side.append(timed(lambda t=target, r=run, h=header, ls=lines: r(t, h, ls)))
            target.close()
    source.close()
    out = []
    for name, ours, hand in (
        ("dump", ours_dump, hand_dump),
        ("load", ours_load, hand_load),
    ):
        o, h = statistics.median(ours), statistics.median(hand)
        ratio = o / h
        print(
            f"{kind} {name} of {n:,} entities: ours {o:.2f} s ({n / o:,.0f}/s), "
            f"hand-written {h:.2f} s ({n / h:,.0f}/s), ratio {ratio:.2f}× (goal ≤ {GOAL}×)"
        )
        out.append(f"{kind} {name}  {o:.3f}s  {h:.3f}s  {ratio:.2f}×")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small, for a look")
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--database", metavar="URL", help="also on this PostgreSQL database")
    args = parser.parse_args()
    if args.quick:
        args.entities, args.rounds = 5_000, 1
    folder = Path(tempfile.mkdtemp(prefix="pasture-bench-"))
    count = iter(range(1_000_000))
    summary = bench("sqlite", lambda: open_store(folder / f"s{next(count)}.db"), args)
    if args.database:
        from pasture.store.postgres import open_postgres_store

        schemas: list[str] = []

        def pg() -> Any:
            schemas.append("bench_" + uuid.uuid4().hex[:12])
            return open_postgres_store(args.database, schemas[-1])

        try:
            summary += bench("postgres", pg, args)
        finally:
            import psycopg

            with psycopg.connect(args.database, autocommit=True) as conn:
                for schema in schemas:
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    print("\nname  ours  hand-written  ratio")
    for line in summary:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
