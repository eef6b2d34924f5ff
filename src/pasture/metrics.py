"""What pasture counts for `/metrics`, in Prometheus' text format (`prometheus_client`).

Nothing is counted until a server that serves `/metrics` says so (`start`, which
`create_app(metrics=True)` — `pasture serve --metrics` — calls): until then every count
below does nothing and prometheus_client is not even imported, so the command line, a
worker process and a server without `--metrics` pay nothing for it.

The platform's counts are this module's functions, each called where the thing happens:

    pasture_calls_total{app, action, outcome}   each call the audit records (`action`:
                                                command, handler, apply, deploy, rollback;
                                                `outcome`: ok, refused, fault; `app`:
                                                space/slug, "" when refused before one
                                                was found) — `call_ended`
    pasture_worker_starts_total{app}            worker processes started — `worker_started`
    pasture_worker_crashes_total{app}           ended by themselves, mid-call or while
                                                setting up — `worker_crashed`
    pasture_worker_limits_total{app, limit}     processes stopped past a limit: time, cpu,
                                                memory, processes, size (of what it sent),
                                                setup (worker.py's) — `worker_limit`
    pasture_database_seconds{db, op}            time in the database: `db` platform or app,
                                                `op` read or write — `database`

The web door adds its own to the same registry (`pasture.web.metrics`); so does the
process itself (its CPU, memory and open files).

`pasture serve --workers N` serves from N processes: each counts into files in one
folder (`share_between_processes`, prometheus_client's multiprocess mode), and the
process a scrape reaches answers for all of them.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
import threading
import time
from typing import Any

from pasture.errors import Refused

SHARED = "PROMETHEUS_MULTIPROC_DIR"  # prometheus_client's own name for the shared folder
# The text format every Prometheus reads (what `generate_latest` writes, names unescaped).
TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8"

# Seconds: a read of an indexed row is well under a millisecond; a write that waits for
# another holds its transaction for up to the busy timeout (10 s).
DATABASE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10)

_lock = threading.Lock()
_registry: Any = None  # prometheus_client.CollectorRegistry, once one is asked for
_meters: _Platform | None = None
_NOTHING = contextlib.nullcontext()


class _Platform:
    """The platform's meters, made in `registry`."""

    def __init__(self, registry: Any) -> None:
        from prometheus_client import Counter, Histogram

        self.calls = Counter(
            "pasture_calls",
            "Calls the audit records, by app, action and outcome",
            ["app", "action", "outcome"],
            registry=registry,
        )
        self.starts = Counter(
            "pasture_worker_starts",
            "Worker processes started for apps' code",
            ["app"],
            registry=registry,
        )
        self.crashes = Counter(
            "pasture_worker_crashes",
            "Worker processes that ended by themselves, in a call or while setting up",
            ["app"],
            registry=registry,
        )
        self.limits = Counter(
            "pasture_worker_limits",
            "Worker processes stopped past a limit (time, cpu, memory, processes, size, setup)",
            ["app", "limit"],
            registry=registry,
        )
        self.database = Histogram(
            "pasture_database_seconds",
            "Time spent in the database: the platform's or an app's store, reading or writing",
            ["db", "op"],
            buckets=DATABASE_BUCKETS,
            registry=registry,
        )


def registry() -> Any:
    """The registry every meter of this process is made in (a `CollectorRegistry`)."""
    global _registry
    with _lock:
        if _registry is None:
            from prometheus_client import CollectorRegistry, PlatformCollector, ProcessCollector

            _registry = CollectorRegistry()
            if not os.environ.get(SHARED):  # shared between processes: those are per process
                ProcessCollector(registry=_registry)
                PlatformCollector(registry=_registry)
        return _registry


def start() -> None:
    """Count from now on, in this process; again does nothing."""
    global _meters
    made = registry()
    with _lock:
        if _meters is None:
            _meters = _Platform(made)


def counting() -> bool:
    """Whether this process counts (`start` was called)."""
    return _meters is not None


def exposition() -> tuple[bytes, str]:
    """What `/metrics` answers: the text and its content type; with several processes
    serving (`share_between_processes`), every one's counts added up."""
    from prometheus_client import CollectorRegistry, generate_latest

    shared = os.environ.get(SHARED)
    if shared:
        from prometheus_client.multiprocess import MultiProcessCollector

        every = CollectorRegistry()
        MultiProcessCollector(every, path=shared)  # type: ignore[no-untyped-call]
        return generate_latest(every), TEXT_FORMAT
    return generate_latest(registry()), TEXT_FORMAT


def share_between_processes() -> str:
    """Before the processes of `serve --workers N` start: a fresh folder they all count
    into (named by `$PROMETHEUS_MULTIPROC_DIR`, which they inherit), removed when this
    process ends. Its path."""
    folder = tempfile.mkdtemp(prefix="pasture-metrics-")
    os.environ[SHARED] = folder
    atexit.register(shutil.rmtree, folder, True)
    return folder


# -- the platform's counts ---------------------------------------------------------------------
def call_ended(action: str, app: str | None, error: BaseException | None) -> None:
    """A call the audit records ended: well, refused (its sentence said why), or a fault."""
    meters = _meters
    if meters is None:
        return
    if error is None:
        outcome = "ok"
    elif isinstance(error, Refused):
        outcome = "refused"
    else:
        outcome = "fault"
    meters.calls.labels((app or "").strip("/"), action, outcome).inc()


def worker_started(app: str) -> None:
    """A worker process was started for `app` (space/slug)."""
    if _meters is not None:
        _meters.starts.labels(app).inc()


def worker_crashed(app: str) -> None:
    """A worker process of `app` ended by itself."""
    if _meters is not None:
        _meters.crashes.labels(app).inc()


def worker_limit(app: str, limit: str) -> None:
    """A worker process of `app` was stopped past `limit`: time, cpu, memory, processes,
    size or setup."""
    if _meters is not None:
        _meters.limits.labels(app, limit).inc()


class _Timed:
    """Time in the database, observed when the block ends (however it ends)."""

    __slots__ = ("began", "db", "histogram", "op")

    def __init__(self, histogram: Any, db: str, op: str) -> None:
        self.histogram, self.db, self.op = histogram, db, op
        self.began = 0.0

    def __enter__(self) -> None:
        self.began = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.histogram.labels(self.db, self.op).observe(time.perf_counter() - self.began)


def database(db: str, op: str) -> contextlib.AbstractContextManager[None]:
    """`with metrics.database("platform", "read"):` around time spent in a database; a
    block that costs nothing while nothing is counted."""
    meters = _meters
    if meters is None:
        return _NOTHING
    return _Timed(meters.database, db, op)


__all__ = [
    "DATABASE_BUCKETS",
    "SHARED",
    "TEXT_FORMAT",
    "call_ended",
    "counting",
    "database",
    "exposition",
    "registry",
    "share_between_processes",
    "start",
    "worker_crashed",
    "worker_limit",
    "worker_started",
]
