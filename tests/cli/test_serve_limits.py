"""`pasture serve`'s limits, for real, on each platform database: the address counted is the
connection's unless `--trust-proxy` names the proxy it came through, and `--workers 2`
lets one rate through, not two.

From this machine, every request comes from 127.0.0.1: rotating what the forwarding
headers say (`X-Forwarded-For`, `Forwarded`, `X-Real-IP`) must not make it another
address. The processes are told small limits; what each answer was is read from its status.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.client import HTTPConnection
from pathlib import Path

import pytest
from test_serve_workers import children_of, holder, server_socket

from helpers.club import RUNS, as_user
from helpers.processes import PASTURE, free_port, server_env
from pasture.platform.service import Service


@contextmanager
def serving(home: Path, log: Path, *options: str) -> Iterator[subprocess.Popen[bytes]]:
    """`pasture serve` with `options` until the block ends; its process (its port is
    `port_of`). The check that it is up is one request from 127.0.0.1."""
    port = free_port()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*PASTURE, "serve", "--host", "127.0.0.1", "--port", str(port), *options],
            env=server_env(home, PASTURE_USER="ada"),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    process.port = port  # type: ignore[attr-defined]
    try:
        up(port, process, log)
        yield process
    finally:
        process.terminate()
        process.wait(timeout=60)
        said = log.read_text()
        assert "Traceback" not in said, said


def up(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    """Until the server answers one request (`wait_until_up`'s tries may time out and be
    answered after, each counted: here none is made before the port is open, and the one
    made waits for its answer)."""
    deadline = time.monotonic() + 60
    while True:
        held = HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            held.request("GET", "/")
            held.getresponse().read()
            return
        except ConnectionRefusedError:
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        finally:
            held.close()


def port_of(process: subprocess.Popen[bytes]) -> int:
    port: int = process.port  # type: ignore[attr-defined]
    return port


def status(port: int, path: str, headers: dict[str, str]) -> int:
    """The status of one GET on a connection of its own."""
    held = HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        held.request("GET", path, headers=headers)
        answer = held.getresponse()
        answer.read()
        return answer.status
    finally:
        held.close()


def forwarded(n: int) -> dict[str, str]:
    """The nth of many forms a client may claim another address in."""
    address = f"203.0.113.{n % 250 + 1}"
    return [
        {"X-Forwarded-For": address},
        {"X-Forwarded-For": f"{address}, 198.51.100.{n % 250 + 1}"},
        {"Forwarded": f"for={address}"},
        {"Forwarded": f'for="[2001:db8:{n:x}::1]";proto=https'},
        {"X-Real-IP": address},
        {"X-Forwarded-For": f"2001:db8:{n:x}::1", "X-Real-IP": address, "Forwarded": "for=_x"},
    ][n % 6]


@pytest.mark.processes
@pytest.mark.parametrize("workers", ["1", "2"])
def test_forwarding_headers_from_loopback_are_not_believed(
    tmp_path: Path, database: str, workers: str
) -> None:
    with serving(tmp_path / "home", tmp_path / "serve.log", "--rate-address", "20/hour",
                 "--workers", workers) as served:  # fmt: skip
        statuses = [status(port_of(served), "/signin", forwarded(n)) for n in range(40)]
    # One address: 20 an hour, one of them the check that the server was up.
    assert statuses.count(429) == 40 - 19, statuses
    assert statuses[:19] == [200] * 19, statuses


@pytest.mark.processes
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_named_proxy_s_forwarded_address_is_the_one_counted(
    tmp_path: Path, database: str, workers: str
) -> None:
    with serving(tmp_path / "home", tmp_path / "serve.log", "--rate-address", "3/hour",
                 "--trust-proxy", "127.0.0.1", "--workers", workers) as served:  # fmt: skip
        port = port_of(served)
        # each address the proxy forwards for is counted as itself: none is near its limit
        many = [status(port, "/signin", {"X-Forwarded-For": f"203.0.113.{n}"}) for n in range(30)]
        assert many == [200] * 30
        # one of them, again and again: its own limit, whatever it claims before the proxy
        one = [
            status(port, "/signin", {"X-Forwarded-For": f"198.51.100.{n}, 203.0.113.200"})
            for n in range(6)
        ]
        assert one == [200] * 3 + [429] * 3
        # the other headers are still not believed: the proxy's own address, counted
        others = [{"Forwarded": "for=203.0.113.9"}, {"X-Real-IP": "203.0.113.9"}, {}]
        own = [status(port, "/signin", others[n % 3]) for n in range(8)]
        assert own == [200] * 2 + [429] * 6  # 3 an hour, one spent on the check it was up


@pytest.mark.processes
def test_two_worker_processes_let_one_rate_through(tmp_path: Path, database: str) -> None:
    home = tmp_path / "home"
    with as_user("ada"):
        service = Service(home)
        ada = service.local_owner()
        service.deploy(ada, RUNS, space="ada", app="runs", title="Run club")
        token = service.new_token(ada)
        service.close()
    headers = {"Authorization": f"Bearer {token}"}
    with serving(home, tmp_path / "serve.log", "--rate", "10/hour", "--workers", "2") as served:
        port = port_of(served)
        workers = children_of(served.pid)
        assert len(workers) == 2
        # a connection held by each worker, found as the kernel hands them out (nothing asked)
        held: dict[int, HTTPConnection] = {}
        deadline = time.monotonic() + 60
        while len(held) < 2:
            assert time.monotonic() < deadline, "one worker took every connection"
            connection = HTTPConnection("127.0.0.1", port, timeout=60)
            connection.connect()
            assert connection.sock is not None
            local = connection.sock.getsockname()[1]
            found = None
            while found is None and time.monotonic() < deadline:
                try:
                    found = holder(server_socket(port, local), workers)
                except AssertionError:
                    time.sleep(0.01)  # not accepted yet
            if found is None or found in held:
                connection.close()
            else:
                held[found] = connection
        answers: list[tuple[int, int, str]] = []
        for pid, connection in itertools.islice(itertools.cycle(held.items()), 40):
            connection.request("GET", "/ada/runs/api/me", headers=headers)
            answer = connection.getresponse()
            answers.append((pid, answer.status, answer.read().decode()))
        for connection in held.values():
            connection.close()
    through = [(pid, code) for pid, code, _ in answers if code == 200]
    assert len(through) == 10, answers  # the token's 10 an hour, not 10 for each process
    assert {pid for pid, _ in through} == set(held)  # each let some through
    refused = [body for _, code, body in answers if code == 429]
    assert len(refused) == 30
    assert all(
        json.loads(body)["error"].startswith(
            "too many calls from this token — 10 an hour at most; try again in "
        )
        for body in refused
    ), refused
