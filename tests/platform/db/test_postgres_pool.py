"""One Service on PostgreSQL, called from many threads at once: the calls are served side by
side on the connections of one pool, no more of them than the pool holds, and every write
lands. Counted by the server itself (`pg_stat_activity`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from helpers.club import RUNS
from helpers.databases import fresh_database
from pasture.platform.service import Service

THREADS = 16
EACH = 8  # writes by each thread, each followed by reads
POOL = 4
_COUNTING = "counting connections"
APPS = ("ada/runs", "club/runs", "other/runs")


def _connections(url: str) -> int:
    """How many server connections are open to the database at `url`, besides the ones made
    here to count them (a closed one may linger in the view for a moment). Clients' only:
    the server's own workers (autovacuum's) visit a database when they will, and the slower
    the machine, the likelier one is there while the threads run."""
    with psycopg.connect(url, application_name=_COUNTING) as db:
        row = db.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name <> %s AND backend_type = 'client backend'",
            (_COUNTING,),
        ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture
def busy(pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    monkeypatch.setenv("PASTURE_USER", "ada")
    monkeypatch.setenv("PASTURE_RATE", "off")
    monkeypatch.setenv("PASTURE_DATABASE_CONNECTIONS", str(POOL))
    service = Service(tmp_path / "home", database_url=fresh_database(pg_url))
    yield service
    service.close()


def test_many_threads_share_one_bounded_pool_and_every_write_lands(busy: Service) -> None:
    service = busy
    url = service.database_url
    assert url
    ada = service.local_owner()
    for space in ("club", "other"):
        service.spaces.new_space(ada, space)
    for app in APPS:
        space, slug = app.split("/")
        service.deploy(ada, RUNS, space=space, app=slug)

    start = threading.Barrier(THREADS)
    failures: list[BaseException] = []
    seen: list[int] = []
    running = threading.Event()
    running.set()

    def call(n: int) -> None:
        try:
            start.wait()
            for i in range(EACH):
                app = APPS[(n + i) % len(APPS)]
                service.apply(ada, app, [{"jog": {"who": f"t{n}", "miles": i}}])
                service.graph.query(ada, app, f".jog.who=t{n}")
                service.gate.app_info(ada, app)  # the platform's tables, through the same pool
        except BaseException as e:
            failures.append(e)

    def watch() -> None:
        while running.is_set():
            seen.append(_connections(url))
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    threads = [threading.Thread(target=call, args=(n,)) for n in range(THREADS)]
    began = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - began
    running.clear()
    watcher.join()

    assert failures == []
    # every write landed, in the app it was sent to
    total = sum(len(service.graph.query(ada, app, ".jog!").data["rows"]) for app in APPS)
    assert total == THREADS * EACH
    for n in range(THREADS):
        mine = [len(service.graph.query(ada, app, f".jog.who=t{n}").data["rows"]) for app in APPS]
        assert sum(mine) == EACH
    # three apps and the platform, sixteen threads: never more connections than the pool's
    # bound, and more than one (the pool grows only when a call finds every one busy)
    assert max(seen) <= POOL, seen
    after = _connections(url)
    assert 1 < after <= POOL, (after, took)

    service.close()
    deadline = time.monotonic() + 60  # only so that a pool never closed fails the test
    while _connections(url) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _connections(url) == 0  # closing the Service closed the pool
