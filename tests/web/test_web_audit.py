"""The web door's calls in the audit, and the audit on the dashboard.

`./api/` records its door (`web`, or `webmcp` when a page's WebMCP tool made
the call) and what the caller came with (a token's id, or their session); a
refused call keeps its sentence. An app's owner reads its audit at
`/audit?app=space/slug`, linked from the app on the dashboard; a viewer is
refused, and reads their own calls at `/audit`.
"""

from __future__ import annotations

import hashlib
from typing import Any

from web_site import Site

from pasture.platform.nouns import VIEWER_WRITES

RUN = {"who": "Ada", "miles": 5}


def last(site: Site, app: str = "ada/runs") -> dict[str, Any]:
    records: list[dict[str, Any]] = site.service.audit(site.ada, app).data["records"]
    return records[-1]


def token_id(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()[:12]


def test_the_api_records_its_door_and_what_the_caller_came_with(site: Site) -> None:
    agent = site.client(site.ada_token)
    answer = agent.post("/ada/runs/api/command", json={"name": "log_run", "args": RUN})
    assert answer.status_code == 200, answer.text
    record = last(site)
    assert {k: record[k] for k in ("name", "door", "via", "app", "action", "command")} == {
        "name": "ada",
        "door": "web",
        "via": f"token {token_id(site.ada_token)}",
        "app": "ada/runs",
        "action": "command",
        "command": "log_run",
    }
    assert (record["args"], record["outcome"]) == ("who text(3), miles number", "ok")

    browser = site.signed_in("ada")
    bundle = {"entity": {"eid": "$j"}, "jog": {"who": "Ada", "miles": 3}}
    assert browser.post("/ada/runs/api/apply", json=bundle).status_code == 200
    record = last(site)
    assert (record["door"], record["via"], record["action"]) == ("web", "session", "apply")

    tool = browser.post(
        "/ada/runs/api/command",
        json={"name": "log_run", "args": RUN},
        headers={"X-Pasture-Door": "webmcp"},
    )
    assert tool.status_code == 200, tool.text
    assert (last(site)["door"], last(site)["via"]) == ("webmcp", "session")


def test_a_refused_call_on_the_web_keeps_its_sentence(site: Site) -> None:
    viewer = site.client(site.cy_token)
    answer = viewer.post("/ada/runs/api/command", json={"name": "log_run", "args": RUN})
    assert answer.status_code == 403
    record = last(site)
    assert (record["name"], record["door"], record["outcome"]) == ("cy", "web", VIEWER_WRITES)


def test_an_apps_owner_reads_its_audit_on_the_dashboard(site: Site) -> None:
    site.client(site.ada_token).post("/ada/runs/api/command", json={"name": "log_run", "args": RUN})
    owner = site.signed_in("ada")
    dashboard = owner.get("/")
    assert 'href="/audit?app=ada/runs"' in dashboard.text
    page = owner.get("/audit?app=ada/runs")
    assert page.status_code == 200
    assert "<h2>Audit of ada/runs</h2>" in page.text
    assert "command log_run" in page.text and f"token {token_id(site.ada_token)}" in page.text
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert owner.get("/audit?app=ada/runs&since=2999-01-01").text.count("<tr>") == 0
    bad = owner.get("/audit?app=ada/runs&since=soon")
    assert bad.status_code == 400 and "--since is a moment" in bad.text

    viewer = site.signed_in("cy")
    assert 'href="/audit?app=ada/runs"' not in viewer.get("/").text
    refused = viewer.get("/audit?app=ada/runs")
    assert refused.status_code == 403
    assert "only the owners of ada read ada/runs&#x27;s audit" in refused.text
    own = viewer.get("/audit")
    assert own.status_code == 200 and "<h2>Your calls</h2>" in own.text
    assert site.client().get("/audit").headers["location"] == "/signin"
