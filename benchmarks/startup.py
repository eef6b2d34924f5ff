"""`pasture --help` start-up against `python -c pass`, run alternately in one process.

Prints the median of each and the ratio. Run with `make bench` or
`.venv/bin/python benchmarks/startup.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def _once(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    ours: list[float] = []
    baseline: list[float] = []
    for _ in range(runs):
        baseline.append(_once([sys.executable, "-c", "pass"]))
        ours.append(_once([sys.executable, "-m", "pasture", "--help"]))
    a, b = statistics.median(ours), statistics.median(baseline)
    print(
        f"start-up: pasture --help {a * 1000:.0f} ms, python -c pass {b * 1000:.0f} ms, "
        f"ratio {a / b:.1f}×"
    )


if __name__ == "__main__":
    main()
