"""`pasture serve` run for others, for real: `--log-format json` on its stderr, `--metrics`
scraped as Prometheus scrapes it, `/healthz` and `/readyz`, `--workers 2` answering
/metrics for both processes; and `pasture --version`.

Each server is a `pasture serve` process of its own on a free loopback port; the log is
what it wrote to stderr, read after it stopped.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from helpers.club import RUNS, as_user
from helpers.command_line import pasture_main
from helpers.processes import PASTURE, free_port, server_env, wait_until_up
from helpers.streams import Stream
from pasture.platform.service import Service

MARK = "ARG-a value only the caller knows-ARG"


@dataclass
class Serving:
    process: subprocess.Popen[bytes]
    url: str
    token: str
    log: Path

    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def scrape(self) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
        with httpx.Client(timeout=30) as fresh:  # a connection of its own: any process answers
            answer = fresh.get(f"{self.url}/metrics", headers=self.auth())
        assert answer.status_code == 200, answer.text
        return {
            (s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(answer.text)
            for s in family.samples
        }

    def stop(self) -> list[str]:
        """Stop it as systemd does (SIGTERM); the lines it wrote to stderr."""
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)
        return self.log.read_text().splitlines()


def total(scraped: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str) -> float:
    return sum(v for (n, _), v in scraped.items() if n == name)


@pytest.fixture
def serving(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Serving]:
    """`pasture serve --log-format json --metrics` and the options the test names."""
    options: tuple[str, ...] = getattr(request, "param", ())
    home = tmp_path / "home"
    with as_user("ada"):
        service = Service(home)
        ada = service.local_owner()
        service.deploy(ada, RUNS, space="ada", app="runs", title="Run club")
        token = service.new_token(ada, writes=True)
        service.close()
    port = free_port()
    log = tmp_path / "serve.log"
    command = [*PASTURE, "serve", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as err:
        process = subprocess.Popen(
            [*command, "--log-format", "json", "--metrics", *options],
            env=server_env(home, PASTURE_USER="ada"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process, log.read_text)
        yield Serving(process, url, token, log)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=20)


def until(check: Any, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.mark.processes
def test_a_server_logs_each_request_as_one_json_line_and_never_a_value(
    serving: Serving,
) -> None:
    with httpx.Client(base_url=serving.url, headers=serving.auth(), timeout=60) as client:
        run = {"name": "log_run", "args": {"who": MARK, "miles": 5, "at": "2026-05-04"}}
        ran = client.post("/ada/runs/api/command", json=run)
        found = client.get("/ada/runs/api/query", params={"filter": f'.jog.who="{MARK}"'})
        assert (ran.status_code, found.status_code) == (200, 200), ran.text
        for _ in range(5):
            assert client.get("/healthz").json() == {"status": "ok", "version": "0.1.0"}
            assert client.get("/readyz").json()["status"] == "ready"
    lines = serving.stop()
    logged = [json.loads(line) for line in lines]  # every line of its log is JSON
    requests = [line for line in logged if line["logger"] == "pasture.requests"]
    mine = {line["request_id"]: line for line in requests}
    for answer, route in (
        (ran, "/{space}/{app}/api/command"),
        (found, "/{space}/{app}/api/query"),
    ):
        line = mine[answer.headers["x-request-id"]]
        assert (line["route"], line["app"], line["status"], line["person"]) == (
            route,
            "ada/runs",
            200,
            "ada",
        )
    assert not [line for line in requests if "health" in line["route"] or "ready" in line["route"]]
    written = "\n".join(lines)
    assert "ARG-" not in written and serving.token not in written


@pytest.mark.processes
def test_metrics_count_requests_and_open_streams_for_the_owner(serving: Serving) -> None:
    with httpx.Client(timeout=30) as anyone:
        refused = anyone.get(f"{serving.url}/metrics")
    assert refused.status_code == 401
    before = serving.scrape()
    with httpx.Client(base_url=serving.url, headers=serving.auth(), timeout=60) as client:
        for _ in range(3):
            assert client.get("/ada/runs/api/query?.jog!").status_code == 200
    stream = Stream(f"{serving.url}/ada/runs/api/subscribe", {"filter": ".jog!"}, serving.auth())
    try:
        assert stream.next() is not None  # its first answer: it is open
        scraped = serving.scrape()
        assert scraped[("pasture_live_streams", frozenset({("door", "api")}))] == 1
        api_200 = ("pasture_http_requests_total", frozenset({("door", "api"), ("status", "200")}))
        assert scraped[api_200] - before.get(api_200, 0) == 4  # three reads, and the stream
    finally:
        stream.close()
    streams = ("pasture_live_streams", frozenset({("door", "api")}))
    until(lambda: serving.scrape()[streams] == 0, "the stream was still counted as open")


@pytest.mark.processes
@pytest.mark.parametrize("serving", [("--workers", "2")], indirect=True)
def test_with_two_processes_metrics_says_what_both_counted(serving: Serving) -> None:
    asked = 40
    for _ in range(asked):
        with httpx.Client(timeout=30) as fresh:  # a new connection each: either process
            assert fresh.get(f"{serving.url}/ada/runs/api/query?.jog!").status_code == 200
    requests = "pasture_http_requests_total"
    seen = [total(serving.scrape(), requests) for _ in range(10)]
    assert seen == sorted(seen), seen  # never less than before, whichever process answers
    assert seen[0] >= asked, seen
    # both count into one folder, which is gone once the server is
    folders = {shared_folder(pid) for pid in children_of(serving.process.pid)}
    assert len(folders) == 1 and None not in folders, folders
    (folder,) = folders
    assert folder is not None and Path(folder).is_dir()
    lines = serving.stop()
    assert lines and all(json.loads(line) for line in lines)
    assert not Path(folder).exists()


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


def shared_folder(pid: int) -> str | None:
    """The folder a process's metrics are counted in, from its environment."""
    for pair in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
        name, _, value = pair.partition(b"=")
        if name == b"PROMETHEUS_MULTIPROC_DIR":
            return value.decode()
    return None


def test_pasture_says_its_version(tmp_path: Path) -> None:
    done = pasture_main(tmp_path, "--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, "pasture 0.1.0\n", "")
