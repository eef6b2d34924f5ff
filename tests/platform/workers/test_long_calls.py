"""Long calls through real worker processes: `ctx.progress` reaches the door's listener, and
a call its caller stops sees `ctx.cancelled`, answers `Cancelled`, and a mutation keeps
nothing it wrote — whether its code stops when asked or is ended after the grace period.

The door is played by a thread that waits for the first report and then stops the call, as
MCP's cancel, a request gone or Ctrl-C would.
"""

from __future__ import annotations

import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from helpers.code_apps import deploy
from pasture.caller import Caller
from pasture.errors import Cancelled, UsageError
from pasture.long_calls import MOST_PER_SECOND, LongCall, Progress, progress_from, progress_of
from pasture.platform.service import Limits, Service

# Minutes for anything that is to finish; a grace far below the time limit, so a call that
# will not stop is ended by the grace, never by the clock.
LIMITS = Limits(time=300, cpu=300, memory=300, processes=2, setup=120, grace=3)

WORKER = '''
import time

from pasture import mutation, query


@mutation
def write_then_wait(ctx, args):
    """Writes a note, then reports progress until it is asked to stop (or for ever)."""
    ctx.db.notes.insert({"text": "written before the stop"})
    n = 0
    while not (args.get("listens", True) and ctx.cancelled):
        n += 1
        ctx.progress(n, message=f"step {n}")
        time.sleep(0.01)
    ctx.db.notes.insert({"text": "written after the stop"})
    return {"steps": n, "saw": ctx.cancelled}


@mutation
def counts(ctx, args):
    """Reports 1..n of n as fast as it can, then answers."""
    for n in range(1, args["n"] + 1):
        ctx.progress(n, total=args["n"])
    return n


@mutation
def reports(ctx, args):
    ctx.progress(*args["given"])
    return "reported"


@query
def notes(ctx):
    return [row["text"] for row in ctx.db.notes.query().collect()]


def setup(app):
    def sleeper(args, ctx):
        n = 0
        while not ctx.cancelled:
            n += 1
            ctx.progress(n)
            time.sleep(0.01)
        return {"text": "stopped", "data": {"steps": n}}

    app.register("long wait", description="Waits until stopped", annotations={"readOnly": True},
                 run=sleeper)
'''

SCHEMA = """
from pasture import string, table

schema = {"notes": table(text=string())}
"""


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> Iterator[Service]:
    monkeypatch.setenv("PASTURE_USER", "ada")
    service = Service(tmp_path / "home", limits=LIMITS)
    folder = tmp_path / "apps" / "long"
    folder.mkdir(parents=True)
    (folder / "worker.py").write_text(textwrap.dedent(SCHEMA) + textwrap.dedent(WORKER))
    deploy(service, service.local_owner(), folder)
    yield service
    service.close()


def _notes(service: Service, ada: Caller) -> list[str]:
    return list(service.call_handler(ada, "long", "notes", {}).data["result"])


def _stopped_at_first_report(service: Service, run: Any) -> tuple[Any, list[Progress]]:
    """Run `run(long_call)` in a thread; stop the call once its first report arrives. What it
    answered (or raised), and every report told."""
    told: list[Progress] = []
    first = threading.Event()

    def heard(progress: Progress) -> None:
        told.append(progress)
        first.set()

    long_call = LongCall(heard)
    out: dict[str, Any] = {}

    def call() -> None:
        try:
            out["answer"] = run(long_call)
        except Exception as e:
            out["answer"] = e

    thread = threading.Thread(target=call)
    thread.start()
    assert first.wait(120), "no progress was reported"
    long_call.cancel()
    thread.join(120)
    assert not thread.is_alive()
    return out["answer"], told


@pytest.mark.parametrize("listens", [True, False])
def test_a_mutation_stopped_keeps_nothing_it_wrote(app: Service, listens: bool) -> None:
    """Code that looks at ctx.cancelled stops; code that does not is ended after the grace;
    either way the caller hears Cancelled, and neither note was kept."""
    ada = app.local_owner()
    answer, told = _stopped_at_first_report(
        app,
        lambda long_call: app.call_handler(
            ada, "long", "write_then_wait", {"listens": listens}, long_call=long_call
        ),
    )
    assert isinstance(answer, Cancelled), answer
    if listens:
        assert (
            answer.sentence == "write_then_wait was stopped, as asked — nothing it wrote was kept"
        )
    else:
        assert answer.sentence == (
            "write_then_wait was stopped, as asked: it had not stopped within 3 s, so its "
            "process was ended — nothing it wrote was kept"
        )
    assert told[0] == Progress(1, None, "step 1")
    assert [p.done for p in told] == sorted({p.done for p in told})  # each further on
    assert _notes(app, ada) == []
    # The app answers again at once, its process kept (or started afresh).
    assert app.call_handler(ada, "long", "counts", {"n": 3}).data["result"] == 3


def test_a_registered_command_stopped_through_run_command(app: Service) -> None:
    ada = app.local_owner()
    answer, told = _stopped_at_first_report(
        app, lambda long_call: app.run_command(ada, "long_wait", {}, long_call=long_call)
    )
    assert isinstance(answer, Cancelled)
    assert (
        answer.sentence
        == "long wait was stopped, as asked — what it wrote before then stays written"
    )
    assert told


def test_progress_is_told_a_few_times_a_second_and_the_last_one_is_told(app: Service) -> None:
    """Twenty thousand reports as fast as the code can make them: the listener is told at
    most MOST_PER_SECOND a second (and the first), each further on than the last, and the
    last report, n of n, is among them."""
    ada = app.local_owner()
    told: list[tuple[float, Progress]] = []
    long_call = LongCall(lambda p: told.append((time.monotonic(), p)))
    began = time.monotonic()
    result = app.call_handler(ada, "long", "counts", {"n": 20_000}, long_call=long_call)
    took = time.monotonic() - began
    assert result.data["result"] == 20_000
    assert told[-1][1] == Progress(20_000, 20_000, None)
    assert len(told) <= 2 + took * MOST_PER_SECOND
    dones = [p.done for _, p in told]
    assert dones == sorted(set(dones))


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["3"], "done is a number, 0 or more"),
        ([True], "done is a number, 0 or more"),
        ([-1], "done is a number, 0 or more"),
        ([1, 0], "total is a number more than 0, or None"),
        ([1, "10"], "total is a number more than 0, or None"),
        ([1, 10, 7], "message is text, or None"),
    ],
)
def test_progress_the_code_gets_wrong_is_refused_with_the_rule(
    app: Service, given: list[Any], said: str
) -> None:
    ada = app.local_owner()
    with pytest.raises(UsageError) as refused:
        app.call_handler(ada, "long", "reports", {"given": given})
    assert refused.value.sentence == (
        "ctx.progress takes done, and optionally total and message: "
        f"ctx.progress(3, total=10, message='3 of 10 files read') — {said}"
    )


def test_what_a_worker_process_says_of_progress_is_checked() -> None:
    """What comes from another process is read strictly, and dropped when wrong."""
    assert progress_from({"done": 2, "total": 4, "message": "two\nof four"}) == Progress(
        2, 4, "two of four"
    )
    for wrong in [
        None,
        [],
        {"done": "2"},
        {"done": 1e300},
        {"done": 1, "total": -1},
        {"done": 1, "extra": 1},
        {"done": 1, "message": {"x": 1}},
    ]:
        assert progress_from(wrong) is None
    assert progress_of(1, message="x" * 1000).message == "x" * 200


def test_a_report_held_back_is_told_when_its_turn_comes() -> None:
    told: list[Progress] = []
    long_call = LongCall(told.append, most_per_second=0.001)  # one, then a long wait
    long_call.report(Progress(1))
    long_call.report(Progress(2))
    long_call.report(Progress(3))  # the newest replaces the one held
    long_call.report(Progress(3))
    long_call.flush()
    assert told == [Progress(1)]
    long_call.gap = 0
    long_call.flush()
    assert told == [Progress(1), Progress(3)]
    long_call.report(Progress(2))  # not further on: dropped
    assert told == [Progress(1), Progress(3)]


def test_asked_twice_it_ends_at_once() -> None:
    long_call = LongCall()
    assert not long_call.cancelled
    long_call.cancel()
    assert long_call.cancelled and not long_call.ending_now
    long_call.cancel()
    assert long_call.ending_now


def test_a_second_stop_ends_a_call_that_will_not_stop_without_the_grace(
    app: Service, tmp_path: Path
) -> None:
    """A grace of minutes, and code that never looks: asked a second time, it is ended."""
    ada = app.local_owner()
    patient = Service(tmp_path / "home", limits=replace(LIMITS, grace=600))
    try:

        def run(long_call: LongCall) -> Any:
            threading.Thread(target=lambda: (long_call.wait(), long_call.cancel())).start()
            return patient.call_handler(
                ada, "long", "write_then_wait", {"listens": False}, long_call=long_call
            )

        answer, _ = _stopped_at_first_report(patient, run)
        assert isinstance(answer, Cancelled)
        assert "had not stopped within 600 s, so its process was ended" in answer.sentence
        assert _notes(patient, ada) == []
    finally:
        patient.close()
