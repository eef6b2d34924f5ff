"""Every route answers only for this server's own names: any other Host is a 421 that does nothing.

A page on a name its attacker controls, made to resolve to this server (DNS
rebinding), would otherwise be same-origin with it. The public URL here is
`http://testserver`, and the door is bound to loopback, so loopback names on
any port are this server's too.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from web_site import Site

from pasture.web.hosts import Hosts

ROUTES = [
    ("GET", "/"),
    ("GET", "/signin"),
    ("POST", "/signin"),
    ("GET", "/docs.md"),
    ("GET", "/ada/runs/"),
    ("GET", "/ada/runs/style.css"),
    ("GET", "/ada/runs/api/query?.jog!"),
    ("GET", "/ada/runs/api/me"),
    ("POST", "/ada/runs/api/apply"),
    ("POST", "/ada/runs/api/command"),
    ("POST", "/mcp"),
    ("GET", "/nothing/here"),
]
ELSEWHERE = ["evil.example", "testserver.evil.example", "evil.example:80", "TESTSERVER:81", ""]


def _ask(site: Site, method: str, path: str, host: str) -> tuple[int, str]:
    client = site.client(site.ada_token)
    body = {"entity": {"eid": "$j"}, "jog": {"who": "Rebound", "miles": 1}}
    if path.endswith("/command"):
        body = {"name": "log_run", "args": {"who": "Rebound", "miles": 1}}
    answer = client.request(
        method, path, headers={"Host": host}, json=body if method == "POST" else None
    )
    return answer.status_code, answer.text


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_another_host_is_misdirected_on_every_route(site: Site, method: str, path: str) -> None:
    for host in ELSEWHERE:
        status, text = _ask(site, method, path, host)
        assert status == 421, (host, text)
        assert "this server does not answer for" in text
    rows = site.service.graph.query(site.ada, "runs", ".jog.who=Rebound").data["rows"]
    assert rows == []


@pytest.mark.parametrize("host", ["testserver", "TestServer", "testserver:80", "127.0.0.1:8000"])
def test_its_own_names_are_answered(site: Site, host: str) -> None:
    status, _ = _ask(site, "GET", "/ada/runs/api/query?.jog!", host)
    assert status == 200


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=40))
def test_only_its_own_names_are_allowed(host: str) -> None:
    hosts = Hosts.of("https://pasture.example.org", "0.0.0.0")
    mine = {"pasture.example.org", "pasture.example.org:443"}
    assert hosts.allows(host) == (host.strip().lower() in mine)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789:ab.[]", max_size=12))
def test_on_loopback_any_port_but_nothing_else(port: str) -> None:
    hosts = Hosts.of("http://127.0.0.1:8000", "127.0.0.1")
    assert hosts.allows(f"localhost:{port}") == port.isdigit()
