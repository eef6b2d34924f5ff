"""Every request through the web door: its id on the answer, its one line in the log, and
`/healthz` and `/readyz` answered apart from all of it.

Through Starlette's TestClient on the shared site (web_site.py). The log is read as an
operator's tools read `pasture serve --log-format json`: pasture's own logger with the
JSON formatter `server_log` puts on it, each line parsed.
"""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from web_site import BASE, PASSWORD, Site

from pasture.errors import Unavailable
from pasture.log_lines import formatter
from pasture.platform.access.limits import Rate, Rates
from pasture.platform.service import Service
from pasture.web import create_app
from pasture.web._failures import SERVER_FAULT

HEX_ID = re.compile(r"[0-9a-f]{8}")


class Log:
    """pasture's log as `--log-format json` writes it, read back a line at a time."""

    def __init__(self) -> None:
        self.out = io.StringIO()

    def text(self) -> str:
        return self.out.getvalue()

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.text().splitlines()]

    def requests(self) -> list[dict[str, Any]]:
        return [line for line in self.lines() if line["logger"] == "pasture.requests"]

    def clear(self) -> None:
        self.out.seek(0)
        self.out.truncate()


@pytest.fixture
def log() -> Iterator[Log]:
    """pasture's log at INFO, in JSON lines, for the length of the test."""
    read = Log()
    handler = logging.StreamHandler(read.out)
    handler.setFormatter(formatter("json"))
    logger = logging.getLogger("pasture")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield read
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


# -- the request's id --------------------------------------------------------------------------


def test_every_answer_carries_a_request_id_of_its_own(site: Site) -> None:
    client = site.client(site.ada_token)
    answers = [
        client.get("/"),
        client.get("/ada/runs/api/query?.jog!"),
        client.get("/nothing-here"),  # 404
        client.post("/ada/runs/api/command", json={"name": "no_such", "args": {}}),  # refused
        client.get("/ada/runs/index.html"),
        TestClient(create_app(site.service), base_url="http://elsewhere.example").get("/"),  # 421
    ]
    ids = [answer.headers["x-request-id"] for answer in answers]
    assert all(HEX_ID.fullmatch(i) for i in ids), ids
    assert len(set(ids)) == len(ids)
    assert [a.status_code for a in answers][-1] == 421


# -- one line a request ------------------------------------------------------------------------


def test_each_request_is_one_json_line_naming_its_id_route_status_time_and_person(
    site: Site, log: Log
) -> None:
    client = site.client(site.ada_token)
    answer = client.post(
        "/ada/runs/api/command", json={"name": "log_run", "args": {"who": "Ty", "miles": 3}}
    )
    page = site.client().get("/ada/runs/index.html")
    assert (answer.status_code, page.status_code) == (200, 200)
    command, visit = log.requests()
    assert command["request_id"] == answer.headers["x-request-id"]
    assert command["level"] == "info"
    assert {k: command[k] for k in ("method", "door", "route", "app", "status", "person")} == {
        "method": "POST",
        "door": "api",
        "route": "/{space}/{app}/api/command",
        "app": "ada/runs",
        "status": 200,
        "person": "ada",
    }
    assert command["message"] == f"POST /ada/runs/api/command 200 in {command['ms']} ms for ada"
    assert isinstance(command["ms"], float) and command["ms"] >= 0
    assert command["stream"] is False
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", command["time"])
    assert visit["request_id"] == page.headers["x-request-id"]
    assert (visit["door"], visit["route"], visit["person"]) == (
        "web",
        "/{space}/{app}/{path:path}",
        None,
    )


def test_what_the_door_refuses_is_logged_with_its_status(site: Site, log: Log) -> None:
    site.client(site.cy_token).post(  # cy is a viewer of ada/runs
        "/ada/runs/api/command", json={"name": "log_run", "args": {"who": "Cy", "miles": 1}}
    )
    site.client().get("/no/such/thing/at/all")
    viewer, missing = log.requests()
    assert (viewer["status"], viewer["person"], viewer["app"]) == (403, "cy", "ada/runs")
    assert (missing["status"], missing["app"]) == (404, "no/such")


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    # (no NUL: PostgreSQL keeps no text that holds one, and refuses it with its sentence)
    who=st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=40),
    miles=st.floats(allow_nan=False, allow_infinity=False, min_value=0, max_value=1e6),
)
def test_a_log_line_carries_no_token_password_or_argument_value(
    site: Site, log: Log, who: str, miles: float
) -> None:
    """Whatever the arguments, the filter, the token or the password, none is in the log:
    each value is marked, and neither the mark nor the value (as JSON writes it) is there."""
    log.clear()
    value = f"ARG-{who}-ARG"
    client = site.client(site.ada_token)
    run = {"name": "log_run", "args": {"who": value, "miles": miles}}
    ran = client.post("/ada/runs/api/command", json=run)
    assert ran.status_code == 200, ran.text
    found = client.get("/ada/runs/api/query", params={"filter": f'.jog.who="{value}"'})
    signing_in = site.client().post("/signin", data={"name": "ada", "password": PASSWORD})
    refused = site.client().post("/signin", data={"name": "ada", "password": value})
    answers = [ran, found, signing_in, refused]
    lines = log.requests()
    assert [line["request_id"] for line in lines] == [a.headers["x-request-id"] for a in answers]
    written = log.text()
    assert "ARG-" not in written and "-ARG" not in written
    assert json.dumps(value)[1:-1] not in written
    assert site.ada_token not in written and PASSWORD not in written
    assert "Bearer" not in written
    cookie = signing_in.cookies.get("pasture_session")
    assert cookie and cookie not in written
    assert all(set(line) <= FIELDS for line in lines)


FIELDS = {
    "time",
    "level",
    "logger",
    "message",
    "request_id",
    "method",
    "door",
    "route",
    "app",
    "status",
    "ms",
    "person",
    "stream",
}


# -- a fault names the request ---------------------------------------------------------------


class _Broken(Service):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("the internals")

        self.graph.query = broken  # type: ignore[method-assign]


def test_a_fault_names_its_request_and_the_log_has_it_under_the_same_id(
    site: Site, log: Log
) -> None:
    broken = _Broken(site.home, base_url=BASE)
    try:
        answer = TestClient(create_app(broken), base_url=BASE).get("/ada/runs/api/query?.jog!")
    finally:
        broken.close()
    fault = answer.headers["x-request-id"]
    assert answer.status_code == 500
    assert answer.json() == {"error": f"{SERVER_FAULT}, naming fault {fault}"}
    # "it said fault 3f9a1c2e": the lines that carry that id are the fault and its request
    said = [line for line in log.lines() if line.get("request_id") == fault]
    assert [(line["logger"], line["level"]) for line in said] == [
        ("pasture.web", "error"),
        ("pasture.requests", "info"),
    ]
    assert f"(fault {fault})" in said[0]["message"]
    assert "RuntimeError: the internals" in said[0]["exception"]
    assert said[1]["status"] == 500


def test_a_tool_that_fails_over_mcp_names_the_request_it_came_in(site: Site, log: Log) -> None:
    broken = _Broken(site.home, base_url=BASE)
    token = broken.new_token(broken.local_owner())
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "graph_query", "arguments": {"app": "runs", "filter": ".jog!"}},
    }
    try:
        with TestClient(create_app(broken), base_url=BASE) as client:
            answer = client.post("/mcp", headers=headers, json=call)
    finally:
        broken.close()
    fault = answer.headers["x-request-id"]
    result = answer.json()["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        "graph_query failed on the server; nothing about it is your mistake — try again, and if "
        f"it keeps failing tell the person who runs this pasture, naming fault {fault}"
    )
    said = [line for line in log.lines() if line.get("request_id") == fault]
    assert [(line["logger"], line["level"]) for line in said] == [
        ("pasture.mcp", "error"),
        ("pasture.requests", "info"),
    ]
    assert said[1]["door"] == "mcp" and said[1]["route"] == "/mcp"
    assert said[1]["person"] == "ada"


def test_the_text_log_names_the_request_too(site: Site) -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter("text"))
    logger = logging.getLogger("pasture.requests")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        answer = site.client(site.ada_token).get("/ada/runs/api/query?.jog!")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
    (line,) = out.getvalue().splitlines()
    request = answer.headers["x-request-id"]
    assert re.fullmatch(
        rf"\S+ \S+ INFO pasture\.requests \[{request}\]: "
        r"GET /ada/runs/api/query 200 in \d+\.\d ms for ada",
        line,
    ), line


# -- /healthz and /readyz ----------------------------------------------------------------------


def test_healthz_says_the_process_answers_and_readyz_that_it_can_serve(
    site: Site, log: Log
) -> None:
    client = site.client()
    health = client.get("/healthz")
    ready = client.get("/readyz")
    assert (health.status_code, health.json()) == (200, {"status": "ok", "version": "0.1.0"})
    assert (ready.status_code, ready.json()) == (
        200,
        {"status": "ready", "database": "ok", "workers": "ok"},
    )
    for answer in (health, ready):
        assert answer.headers["cache-control"] == "no-store"
        assert "x-request-id" not in answer.headers  # not traffic
    assert client.head("/healthz").status_code == 200
    refused = client.post("/readyz")
    assert (refused.status_code, refused.json()) == (
        405,
        {"error": "POST is not how /readyz is used — GET it"},
    )
    assert log.requests() == []  # not logged
    assert "healthz" not in log.text() and "readyz" not in log.text()


def test_probes_are_answered_by_any_name_and_past_the_address_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    rates = Rates(caller=Rate(600), address=Rate(3), open_writes=Rate(3))
    service = Service(tmp_path / "home", base_url=BASE, rates=rates)
    try:
        client = TestClient(create_app(service), base_url=BASE, client=("203.0.113.9", 4000))
        for _ in range(20):
            assert client.get("/healthz").status_code == 200
            assert client.get("/readyz").status_code == 200
        assert [client.get("/").status_code for _ in range(4)] == [200, 200, 200, 429]
        assert client.get("/readyz").status_code == 200  # still, past the limit
        by_address = TestClient(create_app(service), base_url="http://10.1.2.3:8000")
        assert by_address.get("/").status_code == 421  # a name this server is not
        assert by_address.get("/healthz").status_code == 200  # a probe by address is answered
    finally:
        service.close()


def test_readyz_is_503_with_the_sentence_when_the_database_does_not_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    service = Service(tmp_path / "home", base_url=BASE)
    gone = "the database server does not answer — nothing was written"

    def unreachable() -> Any:
        raise Unavailable(gone)

    client = TestClient(create_app(service), base_url=BASE)
    with monkeypatch.context() as patched:
        patched.setattr(service.db, "stamp", unreachable)
        ready = client.get("/readyz")
    assert (ready.status_code, ready.json()) == (
        503,
        {"status": "not ready", "database": gone, "workers": "ok"},
    )
    assert client.get("/healthz").status_code == 200  # the process still answers
    service.close()
    stopping = client.get("/readyz")
    assert (stopping.status_code, stopping.json()) == (
        503,
        {
            "status": "not ready",
            "database": "this server is stopping",
            "workers": "this server is stopping",
        },
    )
