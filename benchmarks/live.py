"""Live pages (`./api/subscribe`, pasture.web.live): how soon a write reaches an open page,
what open subscriptions cost a server, and what more servers give.

Every figure comes from real `pasture serve` processes on loopback, with the run
club deployed; a subscriber is what a page's `subscribe()` is — one event stream
of the board's filter — read here by a small asyncio client, many at once.

1. **Write to callback.** An agent's `log_run` over HTTP, then the time until
   each open subscription has the new answer: p50 and p95 over every
   subscriber and write, with 1, 100 and 1,000 subscriptions on one server
   (SQLite), and across two servers on one PostgreSQL (written through B,
   watched on A), the writes a quarter of a second apart. Goals: p95 ≤ 250 ms
   on one server with 1,000, ≤ 500 ms across two. Baseline, side by side: one
   `./api/query` round trip, the least a page that asked again instead would pay.
2. **What subscriptions cost.** `log_run` calls over HTTP, one after another,
   with 1,000 subscriptions open against none, rounds alternating in one run:
   the ratio of calls a second (goal ≥ 0.8×). The subscriptions are held open by
   a process of their own, as pages are by browsers. They watch the count
   of runs, which each call changes: the board would grow by a row a call, and
   after thousands of calls the size of its answer would be the whole cost.
3. **More servers.** Reads (`./api/query` of a page of the board, 20 runs) from
   16 clients at once for a few seconds, on a club of its own: `serve --workers 2`
   against `--workers 1`, and on PostgreSQL two servers (clients split between
   them) against one.

Run with `make bench` or `.venv/bin/python benchmarks/live.py [--quick]`. It
starts a throwaway PostgreSQL as the tests do (or takes `--postgres URL`);
without one, the PostgreSQL figures are left out and it says so.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import httpx

ROOT = Path(__file__).resolve().parents[1]
# Run as a script, this file's folder comes first on sys.path: the tests' helpers instead.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(ROOT / "tests"))

from helpers.databases import throwaway_postgres  # noqa: E402

BOARD = ".jog!&.created!"
# What the cost's subscriptions watch: every write changes it, and its answer stays small
# (the board's grows by a row a call: thousands of calls would make each answer the cost).
COUNTED = ".jog!&.count!"
# What the servers' figure reads: a page of the board, the same size however many runs.
PAGE = ".jog!&.created!&.limit=20"
RUNS = ROOT / "examples" / "runs"
GOAL_ONE, GOAL_TWO, GOAL_COST = 0.250, 0.500, 0.8
# Between the latency figure's writes: each write's time is its own, not the queue's behind
# the one before (what a stream of writes costs is the second figure's to say).
PAUSE = 0.25


def _more_files() -> None:
    """A thousand streams are a thousand sockets at each end: as many as may be open."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _env(home: Path, database: str | None) -> dict[str, str]:
    env = {
        "PASTURE_HOME": str(home),
        "PASTURE_USER": "ada",
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join(sys.path),
        "PASTURE_RATE": "off",  # the calls here are many and fast on purpose
        "PASTURE_RATE_ADDRESS": "off",
        "PASTURE_STREAMS": "off",  # a thousand pages, all of one person
    }
    if database:
        env["PASTURE_DATABASE_URL"] = database
    return env


def _pasture(home: Path, database: str | None, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pasture", *args],
        env=_env(home, database),
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=_more_files,
    )
    return done.stdout


@contextmanager
def _server(home: Path, database: str | None, *options: str) -> Iterator[str]:
    port = _free_port()
    # Its log (a line a request) goes to a file: a pipe nobody reads would fill and stop it.
    home.mkdir(parents=True, exist_ok=True)
    log = (home / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "pasture", "serve", "--port", str(port), *options],
        env=_env(home, database),
        stdout=subprocess.DEVNULL,
        stderr=log,
        preexec_fn=_more_files,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            with contextlib.suppress(httpx.TransportError):
                httpx.get(f"{url}/", timeout=1)
                break
            if process.poll() is not None:
                raise SystemExit((home / "serve.log").read_text())
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def _club(home: Path, database: str | None) -> str:
    """The run club deployed; a token of its owner's."""
    _pasture(home, database, "deploy", str(RUNS), "--app", "runs")
    return _pasture(home, database, "token", "new").split()[0]


# -- subscribers --------------------------------------------------------------------------
class Subscribers:
    """`n` open event streams of a filter (the board's) on one server; when each saw each
    new answer."""

    def __init__(self, url: str, token: str, n: int, filter: str = BOARD) -> None:
        self.url, self.token, self.n, self.filter = url, token, n, filter
        self.seen: dict[str, list[float]] = {}  # answer id → when each stream had it
        self.tasks: list[asyncio.Task[None]] = []
        self.transports: list[asyncio.BaseTransport] = []
        self.opened = 0
        self.all_open = asyncio.Event()

    async def open(self) -> None:
        for _ in range(self.n):
            self.tasks.append(asyncio.create_task(self._follow()))
            await asyncio.sleep(0)
        await asyncio.wait_for(self.all_open.wait(), 120)

    async def _follow(self) -> None:
        host, port = self.url.removeprefix("http://").split(":")
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_connection(lambda: _Stream(self), host, int(port))
        self.transports.append(transport)
        path = "/ada/runs/api/subscribe?filter=" + quote(self.filter, safe="")
        transport.write(
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Authorization: Bearer {self.token}\r\nAccept: text/event-stream\r\n\r\n".encode()
        )

    def saw(self, key: str, when: float, stream: _Stream) -> None:
        if stream.first:
            stream.first = False
            self.opened += 1
            if self.opened == self.n:
                self.all_open.set()
            return
        self.seen.setdefault(key, []).append(when)

    async def close(self) -> None:
        await asyncio.gather(*self.tasks, return_exceptions=True)
        for transport in self.transports:
            transport.close()
        await asyncio.sleep(0.1)


class _Stream(asyncio.Protocol):
    """One subscription, read as cheaply as can be: only its answers' ids are looked at (a
    browser's parsing is the page's cost, not the server's)."""

    def __init__(self, owner: Subscribers) -> None:
        self.owner = owner
        self.first = True
        self.tail = b""

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        chunk = self.tail + data
        done = 0
        while (at := chunk.find(b"id: ", done)) >= 0 and (end := chunk.find(b"\n", at)) >= 0:
            self.owner.saw(chunk[at + 4 : end].strip().decode(), now, self)
            done = end
        self.tail = chunk[max(done, len(chunk) - 64) :]  # an id line cut in two


async def _latencies(
    watched: str, written: str, token: str, n: int, writes: int
) -> tuple[list[float], float]:
    """Per subscriber and write, seconds from the write's start to the new answer; and the
    median of a `./api/query` round trip, measured between the writes."""
    subscribers = Subscribers(watched, token, n)
    await subscribers.open()
    auth = {"Authorization": f"Bearer {token}"}
    found: list[float] = []
    queries: list[float] = []
    async with httpx.AsyncClient(headers=auth, timeout=60) as client:
        for i in range(writes):
            before = set(subscribers.seen)
            start = time.perf_counter()
            run = {"who": f"R{i}", "miles": 1 + i % 7, "at": "2026-09-01"}
            done = await client.post(
                f"{written}/ada/runs/api/command", json={"name": "log_run", "args": run}
            )
            done.raise_for_status()
            deadline = time.perf_counter() + 30
            while True:  # the answer with this run in it: the first id new since the write
                new = [k for k in subscribers.seen if k not in before]
                if new and len(subscribers.seen[new[0]]) >= n:
                    found.extend(t - start for t in subscribers.seen[new[0]])
                    break
                if time.perf_counter() > deadline:
                    raise SystemExit(f"{n} subscribers: a write was not seen in 30 s")
                await asyncio.sleep(0.001)
            asked = time.perf_counter()
            (await client.get(f"{watched}/ada/runs/api/query", params={"filter": BOARD})).json()
            queries.append(time.perf_counter() - asked)
            await asyncio.sleep(PAUSE)
    await subscribers.close()
    return found, statistics.median(queries)


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def _say_latency(label: str, found: list[float], query: float, goal: float | None) -> None:
    p50, p95 = _percentile(found, 50), _percentile(found, 95)
    goal_text = f"; goal p95 ≤ {goal * 1000:.0f} ms" if goal else ""
    print(
        f"  {label}: p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms"
        f" (a ./api/query round trip: {query * 1000:.1f} ms; p95 {p95 / query:.1f}× it"
        f"{goal_text})"
    )


# -- what subscriptions cost -----------------------------------------------------------------
async def _calls_a_second(url: str, token: str, seconds: float) -> float:
    auth = {"Authorization": f"Bearer {token}"}
    calls = 0
    async with httpx.AsyncClient(headers=auth, timeout=60) as client:
        end = time.perf_counter() + seconds
        start = time.perf_counter()
        while time.perf_counter() < end:
            run = {"who": "Load", "miles": 1, "at": "2026-09-01"}
            done = await client.post(
                f"{url}/ada/runs/api/command", json={"name": "log_run", "args": run}
            )
            done.raise_for_status()
            calls += 1
        return calls / (time.perf_counter() - start)


async def _hold(url: str, token: str, n: int, filter: str) -> None:
    """`--hold`: open `n` subscriptions, say so on stdout, keep them until stdin closes."""
    subscribers = Subscribers(url, token, n, filter)
    await subscribers.open()
    print("open", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await subscribers.close()


@contextmanager
def _held(url: str, token: str, n: int, filter: str) -> Iterator[None]:
    """`n` subscriptions held open by a process of their own, so that reading their events
    costs the calls' client nothing (as pages in browsers would)."""
    holder = subprocess.Popen(
        [sys.executable, __file__, "--hold", url, token, str(n), filter],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=_more_files,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        yield
    finally:
        if holder.stdin is not None:
            holder.stdin.close()
        holder.wait(timeout=60)


def _cost(url: str, token: str, rounds: int, seconds: float) -> None:
    bare: list[float] = []
    watched: list[float] = []
    for _ in range(rounds):
        bare.append(asyncio.run(_calls_a_second(url, token, seconds)))
        with _held(url, token, 1000, COUNTED):
            watched.append(asyncio.run(_calls_a_second(url, token, seconds)))
        time.sleep(0.5)
    a, b = statistics.median(watched), statistics.median(bare)
    print(
        f"  log_run over HTTP: {a:.0f} calls/s with 1,000 subscriptions of {COUNTED} open, "
        f"{b:.0f} with none: {a / b:.2f}× (goal ≥ {GOAL_COST}×; rounds: "
        + ", ".join(f"{x / y:.2f}" for x, y in zip(watched, bare, strict=True))
        + ")"
    )


# -- more servers ---------------------------------------------------------------------------
async def _reads_a_second(urls: list[str], token: str, seconds: float, clients: int = 16) -> float:
    auth = {"Authorization": f"Bearer {token}"}
    done = 0
    end = time.perf_counter() + seconds

    async def one(url: str) -> None:
        nonlocal done
        async with httpx.AsyncClient(headers=auth, timeout=60) as client:
            while time.perf_counter() < end:
                answer = await client.get(f"{url}/ada/runs/api/query", params={"filter": PAGE})
                answer.raise_for_status()
                done += 1

    start = time.perf_counter()
    await asyncio.gather(*(one(urls[i % len(urls)]) for i in range(clients)))
    return done / (time.perf_counter() - start)


def _has_workers() -> bool:
    said = subprocess.run(
        [sys.executable, "-m", "pasture", "serve", "--help"], capture_output=True, text=True
    ).stdout
    return "--workers" in said


def _servers(home: Path, database: str | None, token: str, seconds: float, rounds: int) -> None:
    if not _has_workers():
        print("  serve --workers: not in this pasture, left out")
    else:
        one: list[float] = []
        two: list[float] = []
        for _ in range(rounds):
            with _server(home, database, "--workers", "1") as url:
                one.append(asyncio.run(_reads_a_second([url], token, seconds)))
            with _server(home, database, "--workers", "2") as url:
                two.append(asyncio.run(_reads_a_second([url], token, seconds)))
        a, b = statistics.median(two), statistics.median(one)
        where = "PostgreSQL" if database else "SQLite"
        print(
            f"  reads, {where}: serve --workers 2 {a:.0f}/s, --workers 1 {b:.0f}/s: {a / b:.2f}× "
            f"(on {os.cpu_count()} cores, the clients on them too)"
        )


def _two_servers(home: Path, database: str, token: str, seconds: float, rounds: int) -> None:
    one: list[float] = []
    two: list[float] = []
    for _ in range(rounds):
        with _server(home, database) as a:
            one.append(asyncio.run(_reads_a_second([a], token, seconds)))
            with _server(home / "b", database) as b:
                two.append(asyncio.run(_reads_a_second([a, b], token, seconds)))
    x, y = statistics.median(two), statistics.median(one)
    print(f"  reads, PostgreSQL: two servers {x:.0f}/s, one server {y:.0f}/s: {x / y:.2f}×")


# -- the run ------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer writes and shorter rounds")
    parser.add_argument("--postgres", help="a PostgreSQL URL to use (else a throwaway one)")
    parser.add_argument(
        "--only", choices=["latency", "cost", "servers"], help="one of the figures alone"
    )
    parser.add_argument("--hold", nargs=4, help=argparse.SUPPRESS)  # URL TOKEN N FILTER
    args = parser.parse_args()
    if args.hold:
        url, token, n, filter = args.hold
        asyncio.run(_hold(url, token, int(n), filter))
        return
    wanted = {args.only} if args.only else {"latency", "cost", "servers"}
    _more_files()
    writes, seconds, rounds = (5, 1.0, 1) if args.quick else (20, 3.0, 3)
    work = Path(tempfile.mkdtemp(prefix="pasture-bench-live-"))

    print("live: one server, SQLite")
    home = work / "sqlite"
    token = _club(home, None)
    with _server(home, None) as url:
        for n in ((1, 1000) if args.quick else (1, 100, 1000)) if "latency" in wanted else ():
            found, query = asyncio.run(_latencies(url, url, token, n, writes))
            label = f"{n:>5} subscription{'s' if n > 1 else ' '}"
            _say_latency(label, found, query, GOAL_ONE if n == 1000 else None)
        if "cost" in wanted:
            _cost(url, token, rounds, seconds)
    if "servers" in wanted:
        _servers(
            work / "sqlite-servers", None, _club(work / "sqlite-servers", None), seconds, rounds
        )

    print("live: two servers, one PostgreSQL (written through B, watched on A)")
    with throwaway_postgres(args.postgres) as database:
        if database is not None and wanted != {"cost"}:
            home = work / "postgres"
            token = _club(home, database)
            with _server(home / "a", database) as a, _server(home / "b", database) as b:
                for n in (1, 1000) if "latency" in wanted else ():
                    found, query = asyncio.run(_latencies(a, b, token, n, writes))
                    label = f"{n:>5} subscription{'s' if n > 1 else ' '}"
                    _say_latency(label, found, query, GOAL_TWO if n == 1000 else None)
            if "servers" in wanted:
                if not args.quick:  # --quick: the workers' figure is SQLite's alone
                    _servers(home, database, token, seconds, rounds)
                _two_servers(home, database, token, seconds, rounds)


if __name__ == "__main__":
    main()
