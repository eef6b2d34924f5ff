"""A code command through its worker process, against the same command run in process.

examples/cart's `cart status` is deployed (SQLite, a temporary data directory) and
run through `Service.run_command`: the call crosses to the app's worker process
(confined where bubblewrap works), which runs it and answers over its socket; the
server then makes sure the call left nothing running below the worker
(`WorkerProcess.end_leftovers`). The baseline is the same registry's command run
in this process (`Registry.run`, on a SQLite store of the cart's vocabulary), as a
library user of the registry would. Rounds
alternate the two; printed: each one's median, their ratio, and what the walk for
leftovers takes of a worker call. Run with `make bench` or
`.venv/bin/python benchmarks/worker.py [--calls N] [--rounds N]`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CART = ROOT / "examples" / "cart"


def _timed(run: Any, calls: int) -> float:
    """The median of `calls` runs of `run()`, in µs."""
    took = []
    for _ in range(calls):
        start = time.perf_counter()
        run()
        took.append(time.perf_counter() - start)
    return statistics.median(took) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    os.environ["PASTURE_USER"] = "ada"
    from pasture import Registry
    from pasture.commands.appstore import StoreAsCaller
    from pasture.commands.model import Context
    from pasture.platform.service import Service
    from pasture.platform.workers import process as worker_process
    from pasture.store import open_store

    service = Service(Path(tempfile.mkdtemp(prefix="pasture-bench-worker-")) / "home")
    owner = service.local_owner()
    service.trust_space(owner, "ada")
    service.deploy(owner, CART, app="cart")
    spec = importlib.util.spec_from_file_location("cart_worker", CART / "worker.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    registry = Registry()
    module.setup(registry)
    # The same app's store, in process: a SQLite file with the cart's vocabulary.
    store = open_store(Path(tempfile.mkdtemp(prefix="pasture-bench-cart-")) / "store.db")
    store.declare(json.loads((CART / "vocab.json").read_text()))
    ctx = Context(owner, StoreAsCaller(store, owner), "ada/cart")

    walks: list[float] = []
    walk = worker_process.WorkerProcess.end_leftovers

    def timed_walk(self: Any, name: str) -> None:
        start = time.perf_counter()
        walk(self, name)
        walks.append(time.perf_counter() - start)

    worker_process.WorkerProcess.end_leftovers = timed_walk  # type: ignore[method-assign]

    def through_worker() -> None:
        service.run_command(owner, "cart_status", {})

    def in_process() -> None:
        registry.run("cart status", {}, ctx=ctx)

    for run in (through_worker, in_process):
        _timed(run, 30)  # started, and warm
    ours: list[float] = []
    baseline: list[float] = []
    try:
        for _ in range(options.rounds):
            baseline.append(_timed(in_process, options.calls))
            ours.append(_timed(through_worker, options.calls))
    finally:
        service.close()
        store.close()
    a, b = statistics.median(ours), statistics.median(baseline)
    w = statistics.median(walks) * 1e6
    print("a code command (cart status), median of each round's median:")
    print(f"  through its worker process  {a:8.1f} µs")
    print(f"  in process (Registry.run)   {b:8.1f} µs   ratio {a / b:.1f}x")
    print(f"  the walk for what a call left: {w:.1f} µs, {w / a:.1%} of a worker call")


if __name__ == "__main__":
    main()
