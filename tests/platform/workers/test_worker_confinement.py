"""A deployed worker tries to reach beyond its own files, and cannot.

The worker below is handed a plan of everything outside it worth reaching —
another app's store and files, the platform's database (its file, or its
PostgreSQL server's port), the server's environment through /proc, the data
directory, a port the server listens on — and tries each from inside its
worker process. With bubblewrap (what `pasture` uses wherever it works, and
what the tests install) every one is refused; its own files, read-only, and a
scratch folder are all it has. Without a sandbox (`PASTURE_CONFINEMENT=none`)
what still holds is tested too: a process of its own, an empty environment.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from helpers import needs
from helpers.club import RUNS
from helpers.code_apps import code_app, deploy
from pasture.caller import Caller
from pasture.platform.service import Limits, Service
from pasture.platform.workers import sandbox

TRIES = """
import json, os, socket


def attempt(action):
    try:
        action()
    except BaseException as e:
        return type(e).__name__
    return "done"


def read(path):
    with open(path, "rb") as f:
        f.read(1)


def write(path):
    with open(path, "w") as f:
        f.write("planted by a worker")


def connect(port):
    socket.create_connection(("127.0.0.1", port), timeout=3).close()


def tries(args, ctx):
    plan = json.loads(args["plan"])
    found = {}
    for name, path in plan["read"].items():
        found[name] = attempt(lambda: read(path))
    for name, path in plan["write"].items():
        found[name] = attempt(lambda: write(path))
    for name, port in plan["connect"].items():
        found[name] = attempt(lambda: connect(port))
    found["list the data directory"] = attempt(lambda: os.listdir(plan["home"]))
    if "pid" in plan:
        found["stop the server"] = attempt(lambda: os.kill(plan["pid"], 9))
    seen = {"found": found, "env": dict(os.environ), "pid": os.getpid(), "cwd": os.getcwd()}
    return {"text": "tried", "data": seen}


def setup(app):
    app.register(
        "box tries",
        description="Try to reach outside",
        input={"type": "object", "properties": {"plan": {"type": "string"}}, "required": ["plan"]},
        annotations={"readOnly": True},
        run=tries,
    )
"""

SERVER_SECRET = "the-server-s-own-secret-4f3c"
SANDBOX_ENV = {"HOME", "TMPDIR", "PATH", "LANG", "LC_ALL", "MALLOC_ARENA_MAX", "PWD"}


@pytest.fixture
def listening() -> Iterator[int]:
    """A port the server's machine listens on, as the server itself or its database would."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield int(server.getsockname()[1])


def boxed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, confinement: str) -> Service:
    monkeypatch.setenv("PASTURE_USER", "ada")
    monkeypatch.setenv("PASTURE_SERVER_SECRET", SERVER_SECRET)
    monkeypatch.setenv("PASTURE_CONFINEMENT", confinement)
    sandbox.confinement.cache_clear()
    return Service(tmp_path / "home", limits=Limits(time=20))


def plan(service: Service, database: str, port: int) -> dict[str, Any]:
    home = service.home
    runs = home / "apps" / "ada" / "runs"
    box = home / "apps" / "ada" / "box"
    connect = {"a port the server listens on": port}
    if database:
        address = urlsplit(database)
        connect["the platform's PostgreSQL server"] = address.port or 5432
    return {
        "read": {
            "another app's store": str(runs / "store.db"),
            "another app's files": str(runs / "v1" / "tools.json"),
            "the platform database": str(home / "platform.db"),
            "its own version folder by its real path": str(box / "v1" / "worker.py"),
            "the server's environment": f"/proc/{os.getpid()}/environ",
            "the server's command line": f"/proc/{os.getpid()}/cmdline",
            "the machine's accounts": "/etc/passwd",
            "the test's own source": __file__,
        },
        "write": {
            "the data directory": str(home / "planted"),
            "another app's folder": str(runs / "planted"),
            "its own files": "planted",
        },
        "connect": connect,
        "home": str(home),
        "pid": os.getpid(),
    }


def run_tries(service: Service, owner: Caller, the_plan: dict[str, Any]) -> dict[str, Any]:
    return service.run_command(owner, "box_tries", {"plan": json.dumps(the_plan)}).data


def test_a_confined_worker_reaches_nothing_but_its_own_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str, listening: int
) -> None:
    service = boxed(tmp_path, monkeypatch, "")
    if not sandbox.confinement().confined:
        service.close()
        needs.missing("this test needs bubblewrap, able to confine here", needs.apt("bubblewrap"))
    try:
        assert sandbox.confinement().name == "bubblewrap"
        owner = service.local_owner()
        deploy(service, owner, RUNS)
        deploy(service, owner, code_app(tmp_path, "box", TRIES, notes=False))
        the_plan = plan(service, database, listening)
        seen = run_tries(service, owner, the_plan)
        reached = {what: how for what, how in seen["found"].items() if how == "done"}
        assert reached == {}, f"the worker reached {sorted(reached)}"
        assert seen["found"]["another app's store"] == "FileNotFoundError"
        assert seen["found"]["its own files"] == "OSError"  # read-only
        assert seen["pid"] != os.getpid() and seen["cwd"] == "/app"
        assert set(seen["env"]) <= SANDBOX_ENV
        assert SERVER_SECRET not in json.dumps(seen)
        # Nothing it tried to plant is anywhere.
        assert not (service.home / "planted").exists()
        assert not (service.home / "apps" / "ada" / "runs" / "planted").exists()
        # And what it may do, it does: read its own files, write its scratch folder.
        own = code_app(
            tmp_path,
            "own",
            """
            def own(args, ctx):
                with open("worker.py") as f:
                    first = f.read().strip().splitlines()[0]
                with open("/tmp/scratch.txt", "w") as f:
                    f.write("kept for the call")
                with open("/tmp/scratch.txt") as f:
                    return {"text": "ok", "data": {"first": first, "scratch": f.read()}}

            def setup(app):
                app.register("own look", description="Look", annotations={}, run=own)
            """,
            notes=False,
        )
        deploy(service, owner, own)
        assert service.run_command(owner, "own_look", {}).data == {
            "first": "def own(args, ctx):",
            "scratch": "kept for the call",
        }
    finally:
        service.close()
        sandbox.confinement.cache_clear()


def test_without_a_sandbox_a_worker_still_runs_apart_with_an_empty_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listening: int
) -> None:
    monkeypatch.delenv("PASTURE_DATABASE_URL", raising=False)
    service = boxed(tmp_path, monkeypatch, "none")
    try:
        assert sandbox.confinement().name == "none"
        owner = service.local_owner()
        deploy(service, owner, RUNS)
        deploy(service, owner, code_app(tmp_path, "box", TRIES, notes=False))
        unconfined = plan(service, "", listening)
        del unconfined["pid"]  # unconfined, it could: only a sandbox stops that
        seen = run_tries(service, owner, unconfined)
        assert seen["pid"] != os.getpid()
        assert Path(seen["cwd"]).name == "v1"
        assert set(seen["env"]) <= SANDBOX_ENV and SERVER_SECRET not in json.dumps(seen)
        # What no longer holds is said where the server's owner trusts a space.
        trusted = service.trust_space(owner, "ada").text
        assert "not confined" in trusted and "install bubblewrap" in trusted
    finally:
        service.close()
        sandbox.confinement.cache_clear()


def test_with_the_network_allowed_a_worker_reaches_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listening: int
) -> None:
    monkeypatch.delenv("PASTURE_DATABASE_URL", raising=False)
    monkeypatch.setenv("PASTURE_USER", "ada")
    sandbox.confinement.cache_clear()
    service = Service(tmp_path / "home", limits=Limits(time=20, network=True))
    try:
        owner = service.local_owner()
        deploy(service, owner, code_app(tmp_path, "box", TRIES, notes=False))
        the_plan = plan(service, "", listening)
        del the_plan["pid"]
        seen = run_tries(service, owner, the_plan)
        assert seen["found"]["a port the server listens on"] == "done"
    finally:
        service.close()
