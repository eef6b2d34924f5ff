"""A backup of the whole server against each database's own tool on the same data.

    SQLite       `pasture backup` (the platform's `Backups.take`, in this process) of a data
                 directory whose one app holds N entities, against Debian's
                 `sqlite3 store.db ".backup OUT"` of that app's store file alone; without
                 the `sqlite3` command (scripts/system-deps.sh installs it), against
                 Python's `Connection.backup` in one step, and the output says so
    PostgreSQL   the same server on a throwaway PostgreSQL (or `--postgres URL`), against
                 `pg_dump` of the whole database to a file (its plain format)

Both sides read the same data, so the rate ratio is the baseline's seconds over ours (goal
≥ 0.5×: pasture takes at most twice the time of the database's own tool, though it writes
one archive of everything, seals the secrets and copies the versions' files too). Each
pair runs alternately, `--rounds` times, and the medians are compared. Run with
`make bench`, or `.venv/bin/python benchmarks/backup.py [--entities N] [--quick]`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pasture.caller import Caller
from pasture.platform.service import Service

GOAL = 0.5
APP = {
    "index.html": "<!doctype html><title>Runs</title>",
    "vocab.json": '{"$defs": {"jog": {"properties": {"who": {"type": "string"}, '
    '"miles": {"type": "number"}, "at": {"type": "string", "format": "date-time"}}}}, '
    '"tools": false}',
}
WORDS = [f"w{i}" for i in range(3000)]
BATCH = 10_000


def bundles(rng: random.Random, count: int) -> Iterator[list[dict[str, Any]]]:
    """Runs, one in ten with a note: `count` entities, a batch at a time."""
    made = 0
    while made < count:
        n = min(BATCH, count - made)
        batch: list[dict[str, Any]] = []
        for i in range(made, made + n):
            run: dict[str, Any] = {
                "jog": {
                    "who": f"runner{rng.randrange(1000)}",
                    "miles": round(rng.uniform(0, 30), 1),
                    "at": f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T07:00:00Z",
                }
            }
            if i % 10 == 0:
                run["doc"] = {"title": f"Run {i}", "body": " ".join(rng.choices(WORDS, k=12))}
            batch.append(run)
        made += n
        yield batch


def filled(home: Path, url: str | None, entities: int) -> Service:
    """A server whose app holds `entities`, written through its store in batches."""
    os.environ["PASTURE_USER"] = "ada"
    service = Service(home, database_url=url or "", audit=False)
    owner = service.local_owner()
    service.deploy(owner, APP, app="runs")
    store = service.db.app_store("ada", "runs", service.catalog.app_dir("ada", "runs"))
    ada = Caller(owner.eid, owner.name)
    started = time.perf_counter()
    for batch in bundles(random.Random(7), entities):
        store.apply(batch, ada)
    store.close()
    service.secrets.set(owner, "ada/runs", "API_KEY", "s3cret")
    print(
        f"  filled with {entities:,} entities in {time.perf_counter() - started:.0f} s", flush=True
    )
    return service


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def side_by_side(
    ours: Callable[[], object], theirs: Callable[[], object], rounds: int
) -> tuple[float, float]:
    a: list[float] = []
    b: list[float] = []
    for i in range(rounds):  # taking turns going first
        pair = [(a, ours), (b, theirs)] if i % 2 == 0 else [(b, theirs), (a, ours)]
        for times, fn in pair:
            times.append(timed(fn))
    return statistics.median(a), statistics.median(b)


def report(what: str, size: int, ours: float, theirs: float, baseline: str, rounds: int) -> None:
    mb = size / 1e6
    ratio = theirs / ours
    print(
        f"{what} ({mb:,.0f} MB): pasture backup {ours:.2f} s ({mb / ours:,.0f} MB/s), "
        f"{baseline} {theirs:.2f} s ({mb / theirs:,.0f} MB/s): rate ratio {ratio:.2f}× "
        f"(goal ≥ {GOAL}×), median of {rounds}",
        flush=True,
    )


def on_sqlite(entities: int, rounds: int, work: Path) -> None:
    service = filled(work / "home", None, entities)
    owner = service.local_owner()
    store = service.catalog.app_dir("ada", "runs") / "store.db"
    archive, copy = work / "all.tar", work / "copy.db"
    cli = shutil.which("sqlite3")

    def ours() -> object:
        return service.backups.take(owner, archive)

    def theirs() -> None:
        copy.unlink(missing_ok=True)
        if cli:
            subprocess.run([cli, str(store), f".backup {copy}"], check=True)
            return
        with sqlite3.connect(store) as src, sqlite3.connect(copy) as dst:
            src.backup(dst)

    baseline = 'sqlite3 ".backup"' if cli else "Python's Connection.backup in one step (no sqlite3)"
    try:
        a, b = side_by_side(ours, theirs, rounds)
        size = store.stat().st_size
        report(f"SQLite, {entities:,} entities", size, a, b, baseline, rounds)
    finally:
        service.close()


def on_postgres(entities: int, rounds: int, work: Path, url: str | None) -> None:
    with contextlib.ExitStack() as stack:
        if not url:
            sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
            try:
                from helpers import pg_server
                from helpers.databases import fresh_database

                url = fresh_database(stack.enter_context(pg_server.server()))
            except Exception as e:  # no PostgreSQL here: said, and its figures left out
                print(f"PostgreSQL: none here ({str(e).splitlines()[0] if str(e) else e!r})")
                return
        dump = shutil.which("pg_dump") or next(
            iter(sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_dump"))), None
        )
        if dump is None:
            print("PostgreSQL: no pg_dump here, so nothing to measure against")
            return
        service = filled(work / "pg-home", url, entities)
        owner = service.local_owner()
        archive, out = work / "pg.tar", work / "dump.sql"
        stack.callback(service.close)

        def ours() -> object:
            return service.backups.take(owner, archive)

        def theirs() -> None:
            subprocess.run([str(dump), "-d", url, "-f", str(out)], check=True)

        a, b = side_by_side(ours, theirs, rounds)
        import psycopg

        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        size = int(row[0]) if row else 0
        report(f"PostgreSQL, {entities:,} entities", size, a, b, "pg_dump", rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entities", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20,000 entities, 3 rounds")
    parser.add_argument("--postgres", metavar="URL", help="a database to fill (else a throwaway)")
    parser.add_argument("--sqlite-only", action="store_true")
    args = parser.parse_args()
    entities = 20_000 if args.quick else args.entities
    work = Path(tempfile.mkdtemp(prefix="pasture-bench-backup-"))
    try:
        print(f"backup of the whole server, {entities:,} entities", flush=True)
        on_sqlite(entities, args.rounds, work)
        if not args.sqlite_only:
            on_postgres(entities, args.rounds, work, args.postgres)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
