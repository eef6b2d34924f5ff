"""A worker's scratch folder is bounded, whatever its code writes there, and nothing else
it sees can be written at all.

Each case runs a real worker, confined by bubblewrap and (where the case is about the
folder, not the sandbox) unconfined too (`PASTURE_CONFINEMENT=none`). Its scratch — `/tmp`
and `/dev/shm` confined, `$TMPDIR` unconfined — holds at most `Limits.scratch` megabytes
and `SCRATCH_FILES` files together, across calls: a write past the size fails inside the
worker, and a call that leaves more, however it was written (files deep in folders,
deleted and kept open, space reserved with no byte written, thousands of empty files), is
stopped with one sentence. Between calls its process does not run at all.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import needs
from helpers.code_apps import code_app, deploy
from pasture.errors import Fault
from pasture.platform.service import Limits, Service
from pasture.platform.workers import sandbox
from pasture.platform.workers.sandbox import SCRATCH_FILES

SCRATCH_MB = 16
# Minutes for whatever is to finish, however busy the machine; one process, so each call
# after the first finds the one the last left.
LIMITS = Limits(time=120, cpu=60, memory=300, processes=1, setup=120, scratch=SCRATCH_MB)

WORKER = """
import ctypes, json, os, shutil, threading

KEPT = []  # files deleted and kept open by the last call
QUARTER = b"x" * (256 * 1024)


def places(shm):
    return [os.environ["TMPDIR"], "/dev/shm"] if shm else [os.environ["TMPDIR"]]


def clear(where):
    # What the last call left: its own names only (a sandbox may have folders of its own there).
    for kept in KEPT:
        kept.close()
    KEPT.clear()
    for place in where:
        for name in os.listdir(place):
            if name.startswith("x-"):
                path = os.path.join(place, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)


def writes(args, ctx):
    plan = json.loads(args["plan"])
    where = places(plan["shm"])
    clear(where)
    for n, op in enumerate(plan["ops"]):
        place = where[op["place"] % len(where)]
        if op["op"] == "write":
            folder = place
            for d in range(op["depth"]):
                folder = os.path.join(folder, f"x-d{n}-{d}")
            os.makedirs(folder, exist_ok=True)
            f = open(os.path.join(folder, f"x-w{n}"), "wb")
            for _ in range(op["quarters"]):
                f.write(QUARTER)
            f.flush()
            if op["hide"]:  # gone from every folder, still taking its space
                os.unlink(f.name)
                KEPT.append(f)
            else:
                f.close()
        elif op["op"] == "files":
            folder = os.path.join(place, f"x-many{n}")
            os.makedirs(folder)
            for i in range(op["count"]):
                open(os.path.join(folder, str(i)), "w").close()
        elif op["op"] == "reserve":  # space taken with no byte written
            fd = os.open(os.path.join(place, f"x-r{n}"), os.O_CREAT | os.O_WRONLY)
            try:
                os.posix_fallocate(fd, 0, max(1, op["quarters"]) * len(QUARTER))
            finally:
                os.close(fd)
    return {"text": "wrote", "data": {}}


def writable(args, ctx):
    # Every folder it can see, tried: can a file be made there?
    found = []
    for top, folders, _ in os.walk("/"):
        if top in ("/proc", "/sys"):
            folders[:] = []
            continue
        folders[:] = [d for d in folders if not os.path.islink(os.path.join(top, d))]
        probe = os.path.join(top, ".pasture-probe")
        try:
            fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except OSError:
            continue
        os.close(fd)
        os.unlink(probe)
        found.append(top)
    # And a namespace of its own, where it could mount a filesystem of any size.
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x10000000 | 0x00020000) == 0:  # CLONE_NEWUSER | CLONE_NEWNS
        mounted = libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0
        found.append("a filesystem of its own" if mounted else "a namespace of its own")
    return {"text": "looked", "data": {"writable": found}}


def busy(args, ctx):
    # A thread that goes on writing once the call has answered.
    def loop():
        n = 0
        while True:
            n += 1
            with open(os.path.join(os.environ["TMPDIR"], f"x-busy-{n % 50}"), "w") as f:
                f.write(str(n))

    threading.Thread(target=loop, daemon=True).start()
    return {"text": "busy", "data": {}}


def setup(app):
    register_notes(app)
    plan = {"type": "object", "properties": {"plan": {"type": "string"}}}
    app.register("box writes", description="Write", annotations={}, input=plan, run=writes)
    app.register("box writable", description="Look", annotations={"readOnly": True},
                 run=writable)
    app.register("box busy", description="Busy", annotations={}, run=busy)
"""

OVER_SIZE = f"box writes wrote more than {SCRATCH_MB} MB to its scratch folder and was stopped"
OVER_FILES = (
    f"box writes made more than {SCRATCH_FILES:,} files in its scratch folder and was stopped"
)


def _service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, confinement: str) -> Service:
    monkeypatch.setenv("PASTURE_USER", "ada")
    monkeypatch.setenv("PASTURE_CONFINEMENT", confinement)
    sandbox.confinement.cache_clear()
    if confinement != "none" and not sandbox.confinement().confined:
        needs.missing("this test needs bubblewrap, able to confine here", needs.apt("bubblewrap"))
    service = Service(tmp_path / "home", limits=LIMITS)
    owner = service.local_owner()
    deploy(service, owner, code_app(tmp_path, "box", WORKER))
    return service


@pytest.fixture(params=["bubblewrap", "none"])
def boxed(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Service]:
    """A Service whose app `box` writes its scratch; confined, and not."""
    service = _service(tmp_path, monkeypatch, "" if request.param == "bubblewrap" else "none")
    yield service
    service.close()
    sandbox.confinement.cache_clear()


@pytest.fixture
def confined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    service = _service(tmp_path, monkeypatch, "")
    yield service
    service.close()
    sandbox.confinement.cache_clear()


def test_a_confined_worker_can_write_nowhere_but_its_scratch(confined: Service) -> None:
    owner = confined.local_owner()
    seen = confined.run_command(owner, "box_writable", {}).data["writable"]
    assert "/tmp" in seen and "/dev/shm" in seen
    elsewhere = [p for p in seen if p not in ("/tmp", "/dev/shm") and not p.startswith("/tmp/")]
    assert elsewhere == [], f"a confined worker can write in {elsewhere}"


# -- whatever is written, its scratch holds at most its limit -----------------------------------
PLACE = st.integers(0, 1)  # $TMPDIR, or (confined) /dev/shm
QUARTERS = st.integers(0, SCRATCH_MB * 4 + 8)  # a quarter of a megabyte each
OP = st.one_of(
    st.fixed_dictionaries(
        {
            "op": st.just("write"),
            "place": PLACE,
            "quarters": QUARTERS,
            "depth": st.integers(0, 3),
            "hide": st.booleans(),
        }
    ),
    st.fixed_dictionaries(
        {"op": st.just("files"), "place": PLACE, "count": st.sampled_from([1, 40, 3000, 6000])}
    ),
    st.fixed_dictionaries({"op": st.just("reserve"), "place": PLACE, "quarters": QUARTERS}),
)


def _expected(ops: list[dict[str, Any]]) -> tuple[float, int]:
    """Megabytes and files (folders too) the plan leaves, if nothing stops it."""
    megabytes = sum(op["quarters"] / 4 for op in ops if op["op"] in ("write", "reserve"))
    files = sum(op["count"] + 1 if op["op"] == "files" else 1 + op.get("depth", 0) for op in ops)
    return megabytes, files


@settings(
    max_examples=25,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(OP, max_size=4))
def test_whatever_a_call_writes_its_scratch_holds_at_most_its_limit(
    boxed: Service, ops: list[dict[str, Any]]
) -> None:
    owner = boxed.local_owner()
    shm = sandbox.confinement().confined  # unconfined, /dev/shm is the machine's own
    plan = json.dumps({"shm": shm, "ops": ops})
    megabytes, files = _expected(ops)
    try:
        said = boxed.run_command(owner, "box_writes", {"plan": plan}).text
    except Fault as refused:
        said = refused.sentence
    size_over, files_over = megabytes >= SCRATCH_MB + 2, files >= SCRATCH_FILES + 200
    if size_over and files_over:
        assert said in (OVER_SIZE, OVER_FILES)
    elif size_over:
        assert said == OVER_SIZE
    elif files_over:
        # each file takes a block of the filesystem's too: that many may cross the size first
        with_blocks = megabytes + files * 4096 / 2**20
        assert said == OVER_FILES or (said == OVER_SIZE and with_blocks >= SCRATCH_MB)
    elif megabytes <= SCRATCH_MB / 2 and files <= SCRATCH_FILES / 2:
        assert said == "wrote"
    else:  # near a limit, where what the filesystem itself takes decides
        assert said in ("wrote", OVER_SIZE, OVER_FILES)
    # Stopped or not, the app answers its next call.
    assert boxed.run_command(owner, "note_count", {}).text == "counted"


def _states(pid: int) -> list[bytes]:
    """The state of each thread of a process (`T` when it is stopped)."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/stat", "rb") as f:
            found.append(f.read().rsplit(b")", 1)[1].split()[0])
    return found


def test_between_calls_a_worker_process_does_not_run(boxed: Service) -> None:
    """A thread left writing once its call answered is stopped with its process until the
    next call: nothing of an app's code runs out of reach of a call's limits."""
    owner = boxed.local_owner()
    assert boxed.run_command(owner, "box_busy", {}).text == "busy"
    (pool,) = boxed.catalog.workers._pools.values()
    (process,) = pool.idle
    # Stopping takes effect a moment after it is asked for: waited for, with a deadline
    # only so a process that is never stopped fails.
    deadline = time.monotonic() + 60
    while set(_states(process.pid)) - {b"T", b"t"} and time.monotonic() < deadline:
        time.sleep(0.05)
    assert set(_states(process.pid)) <= {b"T", b"t"}
    assert len(_states(process.pid)) == 2  # its own thread and the busy one, both stopped
    assert boxed.run_command(owner, "note_count", {}).text == "counted"
