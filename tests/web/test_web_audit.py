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
    assert "only the owners of ada read ada/runs&#39;s audit" in refused.text
    own = viewer.get("/audit")
    assert own.status_code == 200 and "<h2>Your calls</h2>" in own.text
    assert site.client().get("/audit").headers["location"] == "/signin"


def test_the_audit_page_is_a_page_at_a_time_and_filtered(site: Site) -> None:
    """The SQL behind the audit's pages and filters, on each platform database."""
    for _ in range(3):
        site.client(site.ada_token).post(
            "/ada/runs/api/command", json={"name": "log_run", "args": RUN}
        )
    site.client(site.cy_token).post("/ada/runs/api/command", json={"name": "log_run", "args": RUN})
    whole = site.service.audit_page(site.ada, "ada/runs", limit=2)
    assert whole.data["whole"] and len(whole.data["records"]) == 2
    newest, cursor = whole.data["records"], whole.data["next"]
    assert newest[0]["name"] == "cy" and newest[0]["id"] > newest[1]["id"]
    older = site.service.audit_page(site.ada, "ada/runs", before=str(cursor), limit=2)
    assert older.data["records"][0]["id"] < newest[1]["id"]
    refused = site.service.audit_page(site.ada, "ada/runs", person="CY", outcome="refused")
    assert {r["name"] for r in refused.data["records"]} == {"cy"}
    assert (
        site.service.audit_page(site.ada, "ada/runs", person="cy", outcome="ok").data["records"]
        == []
    )
    on_web = site.service.audit_page(site.ada, "ada/runs", door="web", until="2999-01-01")
    assert {r["door"] for r in on_web.data["records"]} == {"web"}
    # a viewer asks for their own calls there, never the whole app's
    mine = site.service.audit_page(site.cy, "ada/runs", mine=True)
    assert not mine.data["whole"] and {r["name"] for r in mine.data["records"]} == {"cy"}
    page = site.signed_in("ada").get("/audit?app=ada/runs&door=web&outcome=ok")
    assert page.status_code == 200 and 'value="web" selected' in page.text
    bad = site.signed_in("ada").get("/audit?app=ada/runs&door=telegraph")
    assert bad.status_code == 400 and "door is one of web, webmcp, mcp, cli" in bad.text
