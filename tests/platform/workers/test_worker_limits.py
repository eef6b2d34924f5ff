"""Whatever an app's code does, the caller gets one sentence and every other app keeps answering.

Each case runs for real: a deployed worker.py in its own worker process, with
small limits where the case is about that limit, so the test is quick, and every
other limit far above what a call that is to finish needs. After each, the run
club (another app) still answers, and the same app's ordinary command works again
on a worker process started afresh.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.club import RUNS
from helpers.code_apps import code_app, deploy
from pasture.caller import Caller
from pasture.errors import DeployRefused, Fault
from pasture.platform.service import Limits, Service
from pasture.platform.workers.process import LOG_PER_CALL, LOG_PER_WINDOW, LOG_WINDOW

# Minutes for whatever is to finish, however busy the machine; memory, scratch and
# processes are small, as what is stopped by them is stopped whatever the clock says.
LIMITS = Limits(time=120, cpu=60, memory=300, processes=2, setup=120, scratch=16)
# A stop the clock makes is tried where that one limit is small: CPU time far below wall
# time, so a busy loop meets its CPU limit first however busy the machine; a wall time a
# call asleep for ever meets, yet far above what the calls after it take; a setup a
# worker.py that never ends its import meets.
CPU_LIMITED = replace(LIMITS, cpu=2)
TIME_LIMITED = replace(LIMITS, time=10)
SETUP_LIMITED = replace(LIMITS, setup=4)

MISBEHAVING = """
import json, os, sys, time

FOR_EVER = 3600  # longer than any limit here: a call asleep is stopped, it never answers


def loops(args, ctx):
    while True:
        pass


def sleeps(args, ctx):
    time.sleep(FOR_EVER)


def exits(args, ctx):
    raise SystemExit(3)


def interrupts(args, ctx):
    raise KeyboardInterrupt


def raises_base(args, ctx):
    raise BaseException("the end")


def eats(args, ctx):
    hoard = [bytearray(50_000_000) for _ in range(40)]
    return {"text": f"ate {len(hoard)}", "data": {}}


def dies(args, ctx):
    os._exit(3)


def prints(args, ctx):
    for n in range(2000):
        print("chatter", n)
    sys.stdout.write("no newline at the end")
    return {"text": "said plenty", "data": {"lines": 2000}}


def sets(args, ctx):
    return {"text": "a set", "data": {"skus": {"A", "B"}}}


def numbers(args, ctx):
    return 42


def nan(args, ctx):
    return {"text": "not a number", "data": {"x": float("nan")}}


def half_batch(args, ctx):
    with ctx.store.batch():
        ctx.store.apply({"entity": {"eid": "$n"}, "note": {"text": "half"}})
        while True:
            pass


def committed_then_sleeps(args, ctx):
    ctx.store.apply({"entity": {"eid": "$n"}, "note": {"text": "committed"}})
    time.sleep(FOR_EVER)


def bloats(args, ctx):
    # 900 KB of JSON, 300,000 objects: read, gigabytes were it thirty times more.
    return {"text": "so many", "data": {"x": [{} for _ in range(300_000)]}}


def floods(args, ctx):
    # Past the worker host, straight onto its socket: a message that says it is 100 MB.
    os.write(int(sys.argv[1]), (100 * 1024 * 1024).to_bytes(4, "big") + b"{")
    time.sleep(FOR_EVER)


def _child(code, marker):
    import subprocess
    return subprocess.Popen(
        [sys.executable, "-c", code + "  # " + marker], start_new_session=True
    )


def leaves(args, ctx):
    # Children in sessions of their own, left sleeping when the call answers.
    for _ in range(3):
        _child("import time; time.sleep(120)", args.get("marker", "x"))
    return {"text": "left three", "data": {}}


def spawns_many(args, ctx):
    children = [_child("import time; time.sleep(120)", "many") for _ in range(40)]
    time.sleep(FOR_EVER)
    return {"text": f"{len(children)}", "data": {}}


def spins_below(args, ctx):
    _child("while True: pass", "spin")
    time.sleep(FOR_EVER)


def spins_asking(args, ctx):
    # Never quiet: a busy loop that asks its store something every 50 ms.
    asked = time.monotonic()
    while True:
        if time.monotonic() - asked > 0.05:
            ctx.store.query(".note!")
            asked = time.monotonic()


def fills(args, ctx):
    with open(os.path.join(os.environ["TMPDIR"], "big"), "wb") as f:
        while True:
            f.write(b"x" * 1024 * 1024)


def makes_files(args, ctx):
    for n in range(12_000):
        open(os.path.join(os.environ["TMPDIR"], f"empty-{n}"), "w").close()
    return {"text": "made them", "data": {}}


def shouts(args, ctx):
    # `lines` lines of `width` characters and a newline, then `tail` with none.
    line = "y" * args["width"] + "\\n"
    for _ in range(args["lines"]):
        sys.stdout.write(line)
    sys.stdout.write(args["tail"])
    return {"text": "shouted", "data": {}}


def rests_then_speaks_for_another(args, ctx):
    # Six seconds, then an answer under another call's id before anything of its own: a
    # process that speaks out of turn, passed over for another, which does the same.
    time.sleep(6)
    forged = json.dumps({"result": {"text": "forged", "data": {}}, "call": "0" * 16}).encode()
    os.write(int(sys.argv[1]), len(forged).to_bytes(4, "big") + forged)
    return {"text": "mine", "data": {}}


def asks_then_rests(args, ctx):
    # Four seconds, nearly all of it asleep: twenty questions a fifth of a second apart.
    for _ in range(20):
        time.sleep(0.2)
        ctx.store.query(".note!")
    time.sleep(1)
    return {"text": "rested", "data": {}}


def setup(app):
    register_notes(app)
    app.register(
        "box leaves",
        description="leaves",
        input={"type": "object", "properties": {"marker": {"type": "string"}}},
        annotations={},
        run=leaves,
    )
    app.register(
        "box shouts",
        description="shouts",
        input={
            "type": "object",
            "properties": {
                "lines": {"type": "integer"}, "width": {"type": "integer"},
                "tail": {"type": "string"},
            },
        },
        annotations={},
        run=shouts,
    )
    for name, run in [
        ("loops", loops), ("sleeps", sleeps), ("exits", exits), ("interrupts", interrupts),
        ("raises base", raises_base), ("eats", eats), ("dies", dies), ("prints", prints),
        ("sets", sets), ("numbers", numbers), ("nan", nan), ("half batch", half_batch),
        ("committed then sleeps", committed_then_sleeps), ("bloats", bloats),
        ("floods", floods), ("spawns many", spawns_many), ("spins below", spins_below),
        ("spins asking", spins_asking), ("asks then rests", asks_then_rests),
        ("rests then speaks for another", rests_then_speaks_for_another),
        ("fills", fills), ("makes files", makes_files),
    ]:
        app.register("box " + name, description=name, annotations={}, run=run)
"""

FAILED = (
    "nothing about the request was wrong as far as pasture can tell; the server's log has the "
    "details"
)

CASES = {
    "box_loops": "box loops used more than 2 s of CPU time and was stopped",
    "box_sleeps": "box sleeps took longer than 10 s and was stopped",
    # passed over to another process, which the same time limit stops: one limit a call
    "box_rests_then_speaks_for_another": (
        "box rests then speaks for another took longer than 10 s and was stopped"
    ),
    "box_exits": f"box exits failed in its own code (SystemExit) — {FAILED}",
    "box_interrupts": f"box interrupts failed in its own code (KeyboardInterrupt) — {FAILED}",
    "box_raises_base": f"box raises base failed in its own code (BaseException) — {FAILED}",
    "box_eats": "box eats used more than 300 MB of memory and was stopped",
    "box_dies": (
        "box dies stopped: its worker process ended in the middle of the call (exit code 3), "
        "and is started again for the next one — the server's log has the details"
    ),
    "box_sets": (
        "box sets answered with something that is not JSON (set) — its data is made of text, "
        "numbers, true/false, null, lists and objects"
    ),
    "box_numbers": (
        "box numbers answered with something other than text and data — its code returns a "
        "Result or {'text': …, 'data': {…}, 'content': [parts]?}; the server's log has what it "
        "returned"
    ),
    "box_bloats": (
        "box bloats stopped: its worker process sent pasture more than 250,000 objects and "
        "lists in one message — answer with less (a page of rows at a time); it is started "
        "again for the next call"
    ),
    "box_floods": (
        "box floods stopped: its worker process sent pasture more than 16 MB in one message "
        "— answer with less (a page of rows at a time); it is started again for the next call"
    ),
    "box_spawns_many": "box spawns many started more than 16 processes at once and was stopped",
    "box_spins_below": "box spins below used more than 2 s of CPU time and was stopped",
    "box_spins_asking": "box spins asking used more than 2 s of CPU time and was stopped",
    "box_nan": (
        "box nan answered with something that is not JSON (value) — its data is made of text, "
        "numbers, true/false, null, lists and objects"
    ),
    "box_fills": "box fills wrote more than 16 MB to its scratch folder and was stopped",
    "box_makes_files": (
        "box makes files made more than 10,000 files in its scratch folder and was stopped"
    ),
}
# The cases a clock stops, on a Service whose limit for that clock is small.
CLOCKED = {
    "box_loops": CPU_LIMITED,
    "box_spins_below": CPU_LIMITED,
    "box_spins_asking": CPU_LIMITED,
    "box_sleeps": TIME_LIMITED,
    "box_rests_then_speaks_for_another": TIME_LIMITED,
}


@pytest.fixture
def limits() -> Limits:
    """The limits of the test's Service (a test about a stop the clock makes says its own)."""
    return LIMITS


@pytest.fixture
def limited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str, limits: Limits
) -> Iterator[Service]:
    monkeypatch.setenv("PASTURE_USER", "ada")
    service = Service(tmp_path / "home", limits=limits)
    owner = service.local_owner()
    deploy(service, owner, RUNS)
    deploy(service, owner, code_app(tmp_path, "box", MISBEHAVING))
    yield service
    service.close()


def notes(service: Service, who: Caller) -> list[str]:
    rows = service.graph.query(who, "box", ".note!").data["rows"]
    return [r["note"]["text"] for r in rows]


def still_answering(service: Service, who: Caller) -> None:
    """The run club answers, and the box's own ordinary command works on a fresh process."""
    assert service.graph.query(who, "runs", ".jog!").text == "0 rows in ada/runs"
    assert service.run_command(who, "note_count", {}).text == "counted"


@pytest.mark.parametrize(
    ("command", "limits"), [(c, CLOCKED.get(c, LIMITS)) for c in CASES], ids=list(CASES)
)
def test_each_misbehaviour_is_one_sentence_and_the_rest_keeps_answering(
    limited: Service, command: str
) -> None:
    owner = limited.local_owner()
    with pytest.raises(Fault) as refused:  # the app's code failed: not the caller's mistake
        limited.run_command(owner, command, {})
    assert refused.value.sentence == CASES[command]
    still_answering(limited, owner)
    limited.run_command(owner, "note_add", {"text": "after"})
    assert notes(limited, owner) == ["after"]


@pytest.mark.parametrize("limits", [CPU_LIMITED])
def test_time_asleep_or_waiting_on_the_store_is_not_cpu_time(limited: Service) -> None:
    """A call that talks to its store for longer than its CPU limit, asleep in between,
    uses next to no CPU: it answers."""
    owner = limited.local_owner()
    assert limited.run_command(owner, "box_asks_then_rests", {}).text == "rested"


def test_printing_goes_to_the_log_and_the_answer_is_whole(
    limited: Service, caplog: pytest.LogCaptureFixture
) -> None:
    owner = limited.local_owner()
    with caplog.at_level("INFO", logger="pasture.platform"):
        said = limited.run_command(owner, "box_prints", {})
        assert (said.text, said.data) == ("said plenty", {"lines": 2000})
        # The log is read as the process writes it; wait for its last lines to arrive (a
        # deadline only so a log that never has them fails).
        deadline = time.monotonic() + 60
        while True:
            logged = [r.getMessage() for r in caplog.records if r.name == "pasture.platform"]
            if "ada/box: no newline at the end" in logged or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    assert "ada/box: chatter 1999" in logged
    assert "ada/box: no newline at the end" in logged


def _printed(lines: int, width: int, tail: str) -> int:
    return lines * (width + 1) + len(tail.encode())


COUNTED = re.compile(
    r"^ada/box: box shouts printed ([0-9,]+) bytes more than the log keeps — it keeps the "
    r"first 64 KB of each call, and 1 MB in 10 minutes of a worker process$"
)


def _shout(
    service: Service, caplog: pytest.LogCaptureFixture, lines: int, width: int, tail: str
) -> tuple[int, int]:
    """One call that prints: (characters of it the log kept, bytes it says it did not)."""
    begun = len(caplog.records)
    said = service.run_command(
        service.local_owner(), "box_shouts", {"lines": lines, "width": width, "tail": tail}
    )
    assert said.text == "shouted"
    # Its call ended once all it printed was read: what the log has of it is there now.
    kept = counted = 0
    for record in caplog.records[begun:]:
        message = record.getMessage()
        found = COUNTED.match(message)
        if found:
            counted += int(found.group(1).replace(",", ""))
        elif message.startswith("ada/box: "):
            kept += len(message) - len("ada/box: ")
    return kept, counted


def test_what_a_call_prints_is_kept_in_part_and_the_rest_counted(
    limited: Service, caplog: pytest.LogCaptureFixture
) -> None:
    """Five megabytes printed in one call: the log keeps its first 64 KB and says how many
    bytes more there were."""
    with caplog.at_level("INFO", logger="pasture.platform"):
        kept, counted = _shout(limited, caplog, 50_000, 99, "")
    assert counted == 5_000_000 - LOG_PER_CALL
    assert 0 < kept <= LOG_PER_CALL


SHOUT = st.tuples(st.integers(0, 3000), st.integers(0, 300), st.text(max_size=40))


@settings(
    max_examples=20,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(calls=st.lists(SHOUT, min_size=1, max_size=6))
def test_what_a_worker_prints_is_bounded_per_call_and_over_time(
    limited: Service,
    caplog: pytest.LogCaptureFixture,
    ledger: dict[str, float],
    calls: list[tuple[int, int, str]],
) -> None:
    """Whatever each call prints, the log keeps at most 64 KB of it and counts the rest
    exactly, and of one process it keeps at most 1 MB a ten minutes (and what that rate
    has added since the process began) — however many calls there are."""
    with caplog.at_level("INFO", logger="pasture.platform"):
        for lines, width, tail in calls:
            printed = _printed(lines, width, tail)
            kept, counted = _shout(limited, caplog, lines, width, tail)
            assert 0 <= counted <= printed
            assert kept <= printed - counted <= LOG_PER_CALL
            ledger["kept"] += printed - counted
    allowed = LOG_PER_WINDOW + (time.monotonic() - ledger["since"]) * LOG_PER_WINDOW / LOG_WINDOW
    assert ledger["kept"] <= allowed


@pytest.fixture
def ledger() -> dict[str, float]:
    """What a worker process's log kept across a test's examples, from before it began."""
    return {"kept": 0, "since": time.monotonic()}


@pytest.mark.parametrize(
    ("command", "limits", "stopped", "kept"),
    [
        ("box_half_batch", CPU_LIMITED, "box half batch used more than 2 s of CPU time", []),
        (
            "box_committed_then_sleeps",
            TIME_LIMITED,
            "box committed then sleeps took longer than 10 s",
            ["committed"],
        ),
    ],
    ids=["cpu", "time"],
)
def test_a_call_stopped_at_its_limit_leaves_nothing_it_had_not_committed(
    limited: Service, command: str, stopped: str, kept: list[str]
) -> None:
    owner = limited.local_owner()
    with pytest.raises(Fault, match=stopped):
        limited.run_command(owner, command, {})
    assert notes(limited, owner) == kept


def test_a_worker_that_will_not_set_up_in_time_is_refused_at_deploy(
    limited: Service, tmp_path: Path
) -> None:
    owner = limited.local_owner()
    slow = code_app(tmp_path, "slow", "while True:\n    pass\n", notes=False)
    # Deployed through a Service of its own on the same data, whose setup limit is small:
    # every worker.py that is to set up here (the box, greedy) has minutes to.
    hasty = Service(limited.home, limits=SETUP_LIMITED)
    try:
        with pytest.raises(DeployRefused) as refused:
            hasty.deploy(owner, slow)
    finally:
        hasty.close()
    assert refused.value.sentence == (
        "worker.py: importing and setting it up took longer than 4 s — do slow work inside commands"
    )
    greedy = code_app(tmp_path, "greedy", "HOARD = bytearray(2_000_000_000)\n", notes=False)
    with pytest.raises(DeployRefused) as refused:
        limited.deploy(owner, greedy)
    assert refused.value.sentence == "worker.py: line 1: MemoryError"
    still_answering(limited, owner)


def _running(marker: str) -> list[int]:
    """This machine's processes whose command line carries `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if marker.encode() in command and state != b"Z":
                found.append(int(entry.name))
    return found


def test_nothing_a_call_starts_outlives_it(limited: Service) -> None:
    """Processes a command starts and leaves running (in sessions of their own, so no
    process group holds them) are ended once it answers: an app cannot keep work running
    between calls, out of reach of every limit a call has."""
    owner = limited.local_owner()
    marker = f"left-behind-{time.time_ns()}"
    said = limited.run_command(owner, "box_leaves", {"marker": marker})
    assert said.text == "left three"
    deadline = time.monotonic() + 60  # only so that children left for good fail the test
    while _running(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _running(marker) == []
    still_answering(limited, owner)
