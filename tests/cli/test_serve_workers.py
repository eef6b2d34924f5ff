"""`pasture serve --workers 2`, for real, on each platform database: one port, two
processes, both answering, each seeing what the other wrote, and a SIGTERM ends them all.

Which process answered a connection is read from /proc, as `ss -tp` reads it: the
server's end of each connection is a socket in exactly one worker's open files.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.client import HTTPConnection
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from helpers.club import RUNS, as_user
from helpers.processes import PASTURE, free_port, pasture, server_env, wait_until_up
from pasture.platform.service import Service

PASSWORD = "correct horse battery"
FORM = "application/x-www-form-urlencoded"


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    port: int
    token: str
    log: Path

    def connection(self) -> HTTPConnection:
        """A keep-alive connection that has had one answer (so a worker has taken it)."""
        held = HTTPConnection("127.0.0.1", self.port, timeout=60)
        assert self.ask(held, "GET", "/ada/runs/api/me")["name"] == "ada"
        return held

    def ask(
        self, held: HTTPConnection, method: str, path: str, body: object = None
    ) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        held.request(method, path, body=json.dumps(body) if body else None, headers=headers)
        answer = held.getresponse()
        text = answer.read()
        assert answer.status == 200, text
        found: dict[str, Any] = json.loads(text)
        return found


@pytest.fixture
def served(tmp_path: Path, database: str) -> Iterator[Served]:
    home = tmp_path / "home"
    with as_user("ada"):
        service = Service(home)
        ada = service.local_owner()
        service.deploy(ada, RUNS, space="ada", app="runs", title="Run club")
        service.people.set_password(ada, PASSWORD)
        token = service.new_token(ada)
        service.close()
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*PASTURE, "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "2"],
            env=server_env(home, PASTURE_USER="ada"),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_up(f"http://127.0.0.1:{port}", process, log.read_text)
        yield Served(process, port, token, log)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=20)


def children_of(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text() if entry.name.isdigit() else ""
        except OSError:
            continue
        if stat and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(int(entry.name))
    return found


def _tcp() -> list[list[str]]:
    rows = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        rows += [line.split() for line in Path(table).read_text().splitlines()[1:]]
    return rows


def server_socket(port: int, client_port: int) -> str:
    """The inode of the server's end of the connection from `client_port`."""
    for row in _tcp():
        local, remote, inode = row[1], row[2], row[9]
        if int(local.split(":")[1], 16) == port and int(remote.split(":")[1], 16) == client_port:
            return inode
    raise AssertionError(f"no connection from port {client_port}")


def holder(inode: str, pids: set[int]) -> int:
    """Which of `pids` has the socket open."""
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if fd.readlink().name == f"socket:[{inode}]":
                    return pid
            except OSError:
                continue
    raise AssertionError(f"no worker holds socket {inode}")


def listening(port: int) -> bool:
    return any(int(r[1].split(":")[1], 16) == port and r[3] == "0A" for r in _tcp())


@pytest.mark.processes
def test_two_workers_answer_on_one_port_and_see_each_others_writes(served: Served) -> None:
    workers = children_of(served.process.pid)
    assert len(workers) == 2, served.log.read_text()

    # many connections at once, until each worker has taken some
    held: dict[int, list[HTTPConnection]] = {pid: [] for pid in workers}
    with ThreadPoolExecutor(16) as pool:
        for _ in range(20):
            for c in pool.map(lambda _: served.connection(), range(16)):
                assert c.sock is not None
                inode = server_socket(served.port, c.sock.getsockname()[1])
                held[holder(inode, workers)].append(c)
            if all(held.values()):
                break
    assert all(held.values()), {pid: len(cs) for pid, cs in held.items()}

    # a write through each is read through the other
    one, other = (held[pid][0] for pid in sorted(workers))
    for writer, reader, who in ((one, other, "Ada"), (other, one, "Bo")):
        run = {"who": who, "miles": 5, "at": "2026-09-01"}
        served.ask(writer, "POST", "/ada/runs/api/command", {"name": "log_run", "args": run})
        rows = served.ask(reader, "GET", "/ada/runs/api/query?.jog!")["data"]["rows"]
        assert who in [r["jog"]["who"] for r in rows]
    # so is a sign-in: the session one made is known to the other
    form = urlencode({"name": "ada", "password": PASSWORD})
    one.request("POST", "/signin", body=form, headers={"Content-Type": FORM})
    signed_in = one.getresponse()
    signed_in.read()
    assert signed_in.status == 303
    cookie = signed_in.getheader("Set-Cookie", "").split(";")[0]
    other.request("GET", "/ada/runs/api/me", headers={"Cookie": cookie})
    assert json.loads(other.getresponse().read())["name"] == "ada"
    for cs in held.values():
        for c in cs:
            c.close()

    # SIGTERM to the first process stops every worker, and nothing listens after
    served.process.send_signal(signal.SIGTERM)
    assert served.process.wait(timeout=60) == 0, served.log.read_text()
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers)
    assert not listening(served.port)
    said = served.log.read_text()
    assert "in 2 processes" in said and "Traceback" not in said, said


@pytest.mark.processes
def test_fewer_than_one_worker_is_refused(tmp_path: Path) -> None:
    done = pasture(tmp_path / "home", "serve", "--workers", "0")
    assert done.returncode == 2
    assert done.stderr == "--workers is how many processes serve: at least 1, not 0\n"
