"""What the change journal costs a write, and how long an undo takes.

    .venv/bin/python benchmarks/history.py [--quick] [--rounds N] [--calls N] [--rows N]
                                            [--postgres URL | --sqlite-only]

Two stores of the run club side by side, one keeping the journal (`pasture.store.journal`)
and one not (`PASTURE_HISTORY=off`'s store), each holding the same runs: one-bundle writes
timed on each in alternating rounds — a new run, and a change of a run there is (which
reads what it changes first) — and the ratio of their rates printed (goal: at least 0.8×).
Then one call writing `--rows` runs (1,000) is undone, and a store restored to a moment
before it, each timed (goal: an undo under a second). On SQLite by default; `--database`
and on PostgreSQL too: a throwaway server as the tests start one, or `--postgres URL` (a
schema of each store's own, dropped at the end); `--sqlite-only` leaves it out.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the tests' throwaway PostgreSQL
sys.path.insert(0, str(ROOT / "src"))

from helpers.club import RUNS_VOCAB  # noqa: E402
from helpers.databases import throwaway_postgres  # noqa: E402
from pasture import calls  # noqa: E402
from pasture.caller import Caller  # noqa: E402
from pasture.store import open_store  # noqa: E402

ADA = Caller("a1a1a1a1a1a1a1a1", "Ada")
VOCAB = RUNS_VOCAB


@contextlib.contextmanager
def as_call() -> Iterator[str]:
    call = calls.new_id()
    token = calls.mark(calls.CallMark(call, ADA.eid, "cli"))
    try:
        yield call
    finally:
        calls.unmark(token)


def run(i: int) -> dict[str, Any]:
    return {"jog": {"who": f"runner {i % 97}", "miles": i % 13, "at": "2026-09-01T07:00:00Z"}}


CLOCK = time.process_time  # see `bench`


def rate(write: Callable[[int], object], calls_: int, start: int) -> float:
    """Writes a second by `CLOCK`, over `calls_` one-bundle writes."""
    began = CLOCK()
    for i in range(start, start + calls_):
        write(i)
    return calls_ / (CLOCK() - began)


def side_by_side(
    name: str, on: Callable[[int], object], off: Callable[[int], object], args: argparse.Namespace
) -> float:
    ons: list[float] = []
    offs: list[float] = []
    for r in range(args.rounds):
        start = r * args.calls
        # alternate which goes first, so neither always meets a warmer machine
        if r % 2:
            offs.append(rate(off, args.calls, start))
            ons.append(rate(on, args.calls, start))
        else:
            ons.append(rate(on, args.calls, start))
            offs.append(rate(off, args.calls, start))
    ratio = statistics.median(a / b for a, b in zip(ons, offs, strict=True))
    lo, hi = (
        min(a / b for a, b in zip(ons, offs, strict=True)),
        max(a / b for a, b in zip(ons, offs, strict=True)),
    )
    print(
        f"  {name:<34} journal on {statistics.median(ons):8.0f}/s   off "
        f"{statistics.median(offs):8.0f}/s   on ÷ off {ratio:.2f}× ({lo:.2f}–{hi:.2f}; goal ≥ 0.8×)"
    )
    return ratio


def bench(kind: str, opener: Callable[[str], Any], args: argparse.Namespace) -> None:
    """On SQLite the store is in this process: its CPU time is a write's whole cost, and
    steadier than the clock on a busy machine. On PostgreSQL the server does much of the
    work: the clock."""
    global CLOCK
    CLOCK = time.process_time if kind == "SQLite" else time.perf_counter
    shown = "CPU time" if kind == "SQLite" else "the clock"
    print(f"{kind}: {args.rounds} rounds of {args.calls} one-bundle writes each, by {shown}")
    on, off = opener("on"), opener("off")
    off.history = None
    try:
        for store in (on, off):
            store.declare(VOCAB)
            store.apply([run(i) for i in range(args.seed)], ADA)
        every = [r["entity"]["eid"] for r in on.query(".jog!", ADA)]
        eids = every[: args.calls]
        eids_off = [r["entity"]["eid"] for r in off.query(".jog!", ADA)][: args.calls]

        def new_on(i: int) -> object:
            with as_call():
                return on.apply(run(i), ADA)

        # Both in a call, as the server's every write is (the audit marks it, journal or not).
        def new_off(i: int) -> object:
            with as_call():
                return off.apply(run(i), ADA)

        def change_on(i: int) -> object:
            with as_call():
                return on.apply({"entity": {"eid": eids[i % len(eids)]}, "jog": {"miles": i}}, ADA)

        def change_off(i: int) -> object:
            with as_call():
                return off.apply(
                    {"entity": {"eid": eids_off[i % len(eids_off)]}, "jog": {"miles": i}}, ADA
                )

        side_by_side("a new run", new_on, new_off, args)
        side_by_side("a change of a run there is", change_on, change_off, args)

        moment = datetime.now(UTC)
        time.sleep(0.01)
        with as_call() as big:
            on.apply([run(i) for i in range(args.rows)], ADA)
        with as_call():
            began = time.perf_counter()
            on.undo(big, ADA)
            took = time.perf_counter() - began
        print(
            f"  undo of a call of {args.rows:,} new runs   {took * 1000:8.1f} ms (goal < 1,000 ms)"
        )
        with as_call() as changing:
            on.apply([{"entity": {"eid": e}, "jog": {"miles": 99}} for e in eids[: args.rows]], ADA)
        with as_call():
            began = time.perf_counter()
            on.undo(changing, ADA)
            took = time.perf_counter() - began
        shown = f"{min(args.rows, len(every)):,}"
        print(f"  undo of a call changing {shown} runs   {took * 1000:8.1f} ms (goal < 1,000 ms)")
        with as_call():
            began = time.perf_counter()
            on.restore((moment - timedelta(seconds=0)).isoformat().replace("+00:00", "Z"), ADA)
            took = time.perf_counter() - began
        print(f"  restore to a moment before them all    {took * 1000:8.1f} ms")
    finally:
        on.close()
        off.close()


def on_postgres(url: str, args: argparse.Namespace) -> None:
    from pasture.store.postgres import open_postgres_store

    stamp = int(time.time())
    schemas = {name: f"bench_history_{name}_{stamp}" for name in ("on", "off")}
    try:
        bench("PostgreSQL", lambda name: open_postgres_store(url, schemas[name]), args)
    finally:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            for schema in schemas.values():
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small, for a look")
    parser.add_argument("--rounds", type=int, help="alternating rounds (11)")
    parser.add_argument("--calls", type=int, help="one-bundle writes a round (500)")
    parser.add_argument("--rows", type=int, default=1_000, help="runs of the call undone")
    parser.add_argument("--seed", type=int, help="runs each store holds first (10,000)")
    parser.add_argument(
        "--postgres", help="a PostgreSQL database to run it on too (else a throwaway server's)"
    )
    parser.add_argument("--sqlite-only", action="store_true", help="no PostgreSQL run")
    args = parser.parse_args()
    args.rounds = args.rounds or (3 if args.quick else 11)
    args.calls = args.calls or (200 if args.quick else 500)
    args.seed = args.seed or (1_000 if args.quick else 10_000)
    args.calls = min(args.calls, args.seed)
    with tempfile.TemporaryDirectory() as folder:
        bench("SQLite", lambda name: open_store(Path(folder) / f"{name}.db"), args)
    if not args.sqlite_only:
        with throwaway_postgres(args.postgres) as url:
            if url is not None:
                on_postgres(url, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
