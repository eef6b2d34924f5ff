"""What the platform counts for /metrics as apps' code runs: worker processes started, crashed,
stopped past a limit, and each call's outcome by app (`pasture.metrics`).

A real worker.py in real worker processes, as in test_worker_limits.py; the counts are
read as Prometheus reads them, from what `/metrics` would answer. Counting is on for
the whole test process once started (a server with `--metrics` starts it), so each
test reads how much a count moved.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from helpers.code_apps import code_app, deploy
from pasture import metrics
from pasture.errors import Fault, NotFound
from pasture.platform.service import Limits, Service

# Minutes for whatever is to finish, however busy the machine; memory small, as what it
# stops is stopped whatever the clock says.
LIMITS = Limits(time=120, cpu=60, memory=300, processes=2, setup=120)

WORKER = """
import os


def setup(app):
    register_notes(app)
    app.register("box dies", description="dies", annotations={}, run=dies)
    app.register("box eats", description="eats", annotations={}, run=eats)
    app.register("box raises", description="raises", annotations={}, run=raises)


def dies(args, ctx):
    os._exit(3)


def eats(args, ctx):
    hoard = [bytearray(50_000_000) for _ in range(40)]
    return {"text": f"ate {len(hoard)}", "data": {}}


def raises(args, ctx):
    raise ValueError("its own bug")
"""

Counts = dict[tuple[str, frozenset[tuple[str, str]]], float]


def counts() -> Counts:
    text = metrics.exposition()[0].decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def moved(before: Counts, after: Counts, name: str, **labels: str) -> float:
    key = (name, frozenset(labels.items()))
    return after.get(key, 0.0) - before.get(key, 0.0)


@pytest.fixture
def boxed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Service, str]]:
    metrics.start()
    monkeypatch.setenv("PASTURE_USER", "ada")
    service = Service(tmp_path / "home", limits=LIMITS)
    at = deploy(service, service.local_owner(), code_app(tmp_path, "box", WORKER))
    yield service, at
    service.close()


def test_starts_crashes_limits_and_outcomes_are_counted_by_app(
    boxed: tuple[Service, str],
) -> None:
    service, at = boxed
    owner = service.local_owner()
    before = counts()
    assert service.run_command(owner, "note_add", {"text": "one"}).text == "noted"
    with pytest.raises(Fault):
        service.run_command(owner, "box_dies", {})
    with pytest.raises(Fault):
        service.run_command(owner, "box_eats", {})
    with pytest.raises(Fault):
        service.run_command(owner, "box_raises", {})
    with pytest.raises(NotFound):
        service.run_command(owner, "box_nothing", {}, app=at)
    assert service.run_command(owner, "note_count", {}).text == "counted"
    after = counts()
    assert moved(before, after, "pasture_worker_crashes_total", app=at) == 1
    assert moved(before, after, "pasture_worker_limits_total", app=at, limit="memory") == 1
    # the first process, and one after each that was not kept (crashed, out of memory)
    assert moved(before, after, "pasture_worker_starts_total", app=at) >= 3
    calls = "pasture_calls_total"
    assert moved(before, after, calls, app=at, action="command", outcome="ok") == 2
    assert moved(before, after, calls, app=at, action="command", outcome="fault") == 3
    assert moved(before, after, calls, app=at, action="command", outcome="refused") == 1
