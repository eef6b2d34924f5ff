"""`pasture --help` start-up against `python -c pass`, run alternately in one process.

Prints the median of each and the ratio (goal ≤ 3×). Both run with their
bytecode cached, as an installed pasture has it: in a cache folder of this run's
own (PYTHONPYCACHEPREFIX), filled by a first run of each that is not counted, so
neither $PYTHONDONTWRITEBYTECODE nor a source tree without `__pycache__` makes
either one compile its modules on every start. Run with `make bench` or
`.venv/bin/python benchmarks/startup.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GOAL = 3.0  # `pasture --help` takes at most this many times `python -c pass`


def _once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    cache = tempfile.mkdtemp(prefix="pasture-bench-pycache-")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    here = os.path.dirname(os.path.abspath(__file__))  # not this folder: its mcp.py is no SDK
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if os.path.abspath(p or ".") != here)
    baseline_argv = [sys.executable, "-c", "pass"]
    ours_argv = [sys.executable, "-m", "pasture", "--help"]
    try:
        _once(baseline_argv, env)
        _once(ours_argv, env)  # each one's modules compiled once, into the cache
        ours: list[float] = []
        baseline: list[float] = []
        for _ in range(runs):
            baseline.append(_once(baseline_argv, env))
            ours.append(_once(ours_argv, env))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    a, b = statistics.median(ours), statistics.median(baseline)
    paired = sorted(x / y for x, y in zip(ours, baseline, strict=True))
    print(
        f"start-up: pasture --help {a * 1000:.0f} ms, python -c pass {b * 1000:.0f} ms, "
        f"ratio {a / b:.1f}× (goal ≤ {GOAL:.0f}×; each run's, from least to most: "
        f"{paired[0]:.1f}× … {paired[-1]:.1f}×), median of {runs}"
    )


if __name__ == "__main__":
    main()
