"""`/metrics`: off unless the server says so, the owner's alone, and what it counts moves.

Through Starlette's TestClient on the shared site (web_site.py: ada owns the server and
the space `ada`; cy is a viewer of it; bob is in no space but his own). What `/metrics`
answers is read with prometheus_client's own parser, as Prometheus reads it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient
from web_site import BASE, PASSWORD, Site

from pasture.web import create_app
from pasture.web.scrape import NOBODY_SIGNED_IN

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
COMMAND = "/ada/runs/api/command"


def samples(text: str) -> Samples:
    """Every sample of a scrape, by its name and labels."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(scraped: Samples, name: str, **labels: str) -> float:
    return scraped.get((name, frozenset(labels.items())), 0.0)


def total(scraped: Samples, name: str) -> float:
    return sum(v for (n, _), v in scraped.items() if n == name)


@pytest.fixture(scope="module")
def door(site: Site) -> Iterator[TestClient]:
    """The door with /metrics on, as `pasture serve --metrics` makes it."""
    yield TestClient(create_app(site.service, metrics=True), base_url=BASE, follow_redirects=False)


def scrape(door: TestClient, site: Site) -> Samples:
    answer = door.get("/metrics", headers={"Authorization": f"Bearer {site.ada_token}"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert answer.headers["cache-control"] == "no-store"
    return samples(answer.text)


def test_metrics_is_not_there_unless_the_server_is_started_with_it(site: Site) -> None:
    answer = site.client(site.ada_token).get("/metrics")
    assert answer.status_code == 404


def test_metrics_is_refused_to_anyone_but_the_servers_owner(site: Site, door: TestClient) -> None:
    nobody = door.get("/metrics")
    assert (nobody.status_code, nobody.text) == (401, NOBODY_SIGNED_IN)
    assert nobody.headers["www-authenticate"] == "Bearer"
    assert nobody.headers["content-type"].startswith("text/plain")
    for name, token in (("bob", site.bob_token), ("cy", site.cy_token)):
        other = door.get("/metrics", headers={"Authorization": f"Bearer {token}"})
        assert (other.status_code, other.text) == (
            403,
            f"/metrics is the server owner's to read, and {name} is not its owner — it names "
            "every app on the server and how each is used",
        )
        assert "pasture_" not in other.text
    unknown = door.get("/metrics", headers={"Authorization": "Bearer not-a-token-of-anyones"})
    assert unknown.status_code == 401 and "pasture_" not in unknown.text


def test_the_owner_reads_it_with_a_read_only_token_or_signed_in(
    site: Site, door: TestClient
) -> None:
    read_only = site.service.new_token(site.ada, writes=False)
    answer = door.get("/metrics", headers={"Authorization": f"Bearer {read_only}"})
    assert answer.status_code == 200
    assert "# TYPE pasture_http_requests_total counter" in answer.text
    signed_in = door.post("/signin", data={"name": "ada", "password": PASSWORD})
    assert signed_in.status_code == 303
    try:
        by_session = door.get("/metrics")
        assert by_session.status_code == 200
        assert "# TYPE pasture_calls_total counter" in by_session.text
    finally:
        door.cookies.clear()


def test_requests_calls_refusals_and_database_time_are_counted(
    site: Site, door: TestClient
) -> None:
    before = scrape(door, site)
    ada = {"Authorization": f"Bearer {site.ada_token}"}
    cy = {"Authorization": f"Bearer {site.cy_token}"}
    run = {"name": "log_run", "args": {"who": "Ty", "miles": 3}}
    answers = [
        door.post(COMMAND, json=run, headers=ada),
        door.post(COMMAND, json=run, headers=ada),
        door.post(COMMAND, json=run, headers=cy),  # a viewer: refused
        door.get("/ada/runs/api/query?.jog!", headers=ada),
        door.get("/ada/runs/index.html"),
        door.get("/nothing/here/at/all"),
    ]
    assert [a.status_code for a in answers] == [200, 200, 403, 200, 200, 404]
    for _ in range(5):  # probes are not traffic
        assert door.get("/healthz").status_code == door.get("/readyz").status_code == 200
    after = scrape(door, site)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    requests = "pasture_http_requests_total"
    # the first scrape's own request is counted once it was answered: in the second
    assert total(after, requests) - total(before, requests) == len(answers) + 1
    assert moved(requests, door="api", status="200") == 3
    assert moved(requests, door="api", status="403") == 1
    assert moved(requests, door="web", status="200") == 2  # the page, the first scrape
    assert moved(requests, door="web", status="404") == 1
    assert moved("pasture_http_request_seconds_count", door="api") == 4
    calls = "pasture_calls_total"
    assert moved(calls, app="ada/runs", action="command", outcome="ok") == 2
    assert moved(calls, app="ada/runs", action="command", outcome="refused") == 1
    assert moved("pasture_database_seconds_count", db="app", op="write") >= 2
    assert moved("pasture_database_seconds_count", db="app", op="read") >= 1
    assert moved("pasture_database_seconds_count", db="platform", op="read") >= 1
    assert value(after, "pasture_database_seconds_sum", db="app", op="write") > 0
    assert value(after, "process_resident_memory_bytes") > 0  # the process's own


def test_a_refusal_before_the_command_is_found_still_counts_in_its_app(
    site: Site, door: TestClient
) -> None:
    before = scrape(door, site)
    ada = {"Authorization": f"Bearer {site.ada_token}"}
    answer = door.post(COMMAND, json={"name": "no_such_command", "args": {}}, headers=ada)
    assert answer.status_code == 404
    after = scrape(door, site)
    labels = {"app": "ada/runs", "action": "command", "outcome": "refused"}
    assert (
        value(after, "pasture_calls_total", **labels)
        - value(before, "pasture_calls_total", **labels)
        == 1
    )
