"""The data browser's writes in Chromium: a person adds a row, changes it and deletes it, and
the Undo after each puts it back, all as that person; a viewer and another space's owner are
refused, with the sentence shown and nothing written; what a column holds is shown escaped."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_own_pages_browser import PASSWORD, Served, serve, signed_in

from helpers import needs
from helpers.browser import chromium, in_chromium
from helpers.databases import IN_A_BROWSER, sqlite_only
from pasture.platform import Service

pytestmark = [in_chromium, sqlite_only(IN_A_BROWSER)]

READ_ONLY = "you can read this app but not change it — its owner can make you an editor"
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> Iterator[Served]:
    for served in serve(tmp_path, monkeypatch):
        service = served.service
        ada = service.local_owner()
        for name in ("cy", "bo"):
            made = service.people.new_user(ada, name)
            service.people.set_password(ada, PASSWORD, user=made.name)
        service.add_member(ada, "ada", "cy", "viewer")
        yield served


def jogs(service: Service) -> list[dict[str, Any]]:
    """The app's jogs as its owner reads them."""
    found = service.graph.query(service.local_owner(), "ada/runs", ".jog!")
    return [r["jog"] for r in found.data.get("rows") or []]


def test_a_person_adds_changes_and_deletes_a_row_and_undoes_each(served: Served) -> None:
    expect = needs.playwright().expect
    service, url = served.service, served.url
    with chromium() as browser:
        page = signed_in(browser, served)
        page.goto(f"{url}/data?app=ada/runs&kind=jog")
        form = page.get_by_role("form", name="Add a row")
        form.get_by_label("who").fill("Bo")
        form.get_by_label("miles").fill("4.5")
        form.get_by_label("at").fill("2026-09-02")
        form.get_by_role("button", name="Add the jog").click()
        expect(page.get_by_role("status")).to_contain_text("wrote 1 entity in ada/runs")
        expect(page.get_by_role("row", name="who Bo")).to_be_visible()
        assert [(j["who"], j["miles"]) for j in jogs(service)] == [("Bo", 4.5)]
        # the audit tells of it as of ./api/apply's: ada's apply, by the web, with her session
        made = service.audit_page(service.local_owner(), "ada/runs", limit=1).data["records"]
        assert [(r["action"], r["name"], r["door"], r["via"]) for r in made] == [
            ("apply", "ada", "web", "session")
        ]

        # its row changed from its own page, by keyboard
        edit = page.get_by_role("form", name="Change its jog")
        expect(edit.get_by_label("who")).to_have_value("Bo")
        edit.get_by_label("miles").fill("6")
        edit.get_by_label("miles").press("Enter")
        expect(page.get_by_role("status")).to_contain_text("wrote 1 entity")
        expect(page.get_by_role("row", name="miles 6")).to_be_visible()
        assert [j["miles"] for j in jogs(service)] == [6]
        page.get_by_role("button", name="Undo").click()
        expect(page.get_by_role("status")).to_contain_text("undid")
        assert [j["miles"] for j in jogs(service)] == [4.5]

        # a value the vocab refuses is said in the page, and writes nothing
        page.goto(f"{url}/data?app=ada/runs&kind=jog")
        form = page.get_by_role("form", name="Add a row")
        form.get_by_label("at").fill("not a time")
        form.get_by_role("button", name="Add the jog").click()
        expect(page.get_by_role("alert")).to_contain_text("jog.at")
        assert len(jogs(service)) == 1

        # deleted, gone from the table; Undo brings it back
        page.goto(f"{url}/data?app=ada/runs&kind=jog")
        page.get_by_role("link", name=re.compile("the whole entity")).click()
        page.get_by_role("button", name="Delete this entity").click()
        expect(page.get_by_role("status")).to_contain_text("wrote 1 entity")
        expect(page.get_by_text("No rows.")).to_be_visible()
        assert jogs(service) == []
        page.get_by_role("button", name="Undo").click()
        expect(page.get_by_role("status")).to_contain_text("undid")
        expect(page.locator("table tbody tr")).to_have_count(1)
        assert [(j["who"], j["miles"]) for j in jogs(service)] == [("Bo", 4.5)]


def test_a_viewer_and_another_spaces_owner_are_refused_and_nothing_is_written(
    served: Served,
) -> None:
    expect = needs.playwright().expect
    service, url = served.service, served.url
    ada = service.local_owner()
    service.run_command(ada, "log_run", {"who": "Ada", "miles": 3, "at": "2026-09-01"}, "ada/runs")
    call = service.audit_page(ada, "ada/runs", limit=1).data["records"][0]["call"]
    eid = service.graph.query(ada, "ada/runs", ".jog!").data["rows"][0]["entity"]["eid"]
    with chromium() as browser:
        # cy is a viewer of ada's space; bo owns a space of his own, and reads this public
        # app as anyone may
        for name in ("cy", "bo"):
            page = signed_in(browser, served, name)
            page.goto(f"{url}/data?app=ada/runs&kind=jog")
            form = page.get_by_role("form", name="Add a row")
            form.get_by_label("who").fill(name)
            form.get_by_role("button", name="Add the jog").click()
            expect(page.get_by_role("alert")).to_have_text(READ_ONLY)
            assert page.get_by_role("button", name="Undo").count() == 0
            page.goto(f"{url}/data?app=ada/runs&id={eid}")
            page.get_by_role("form", name="Change its jog").get_by_label("who").fill(name)
            page.get_by_role("button", name="Save jog").click()
            expect(page.get_by_role("alert")).to_have_text(READ_ONLY)
            page.get_by_role("button", name="Delete this entity").click()
            expect(page.get_by_role("alert")).to_have_text(READ_ONLY)
            assert page.get_by_role("button", name="Undo").count() == 0
            # nor can the Undo of ada's own write be made as them
            answer = page.request.post(
                f"{url}/data",
                form={"do": "undo", "app": "ada/runs", "call": call},
                headers={"Origin": url},
            )
            assert answer.status == 403, name
            assert "Traceback" not in answer.text()
        # from another site, the same form is refused before anything is read
        answer = page.request.post(
            f"{url}/data",
            form={"do": "delete", "app": "ada/runs", "id": eid},
            headers={"Origin": "http://evil.example"},
        )
        assert answer.status == 403
        assert "from another site" in answer.text()
    assert [(j["who"], j["miles"]) for j in jogs(service)] == [("Ada", 3)]


def test_hostile_values_come_back_escaped(served: Served) -> None:
    expect = needs.playwright().expect
    service, url = served.service, served.url
    alerts: list[str] = []
    with chromium() as browser:
        page = signed_in(browser, served)
        page.on("dialog", lambda d: (alerts.append(d.message), d.dismiss()))
        page.goto(f"{url}/data?app=ada/runs&kind=jog")
        form = page.get_by_role("form", name="Add a row")
        form.get_by_label("who").fill(HOSTILE)
        form.get_by_role("button", name="Add the jog").click()
        expect(page.get_by_role("row", name=re.compile("who <script>"))).to_be_visible()
        expect(page.get_by_role("form", name="Change its jog").get_by_label("who")).to_have_value(
            HOSTILE
        )
        page.goto(f"{url}/data?app=ada/runs&kind=jog")
        expect(page.locator("table tbody td[data-label=who]")).to_have_text(HOSTILE)
        assert page.locator("table img").count() == 0
        assert page.locator("main script").count() == 0
    assert alerts == []
    assert [j["who"] for j in jogs(service)] == [HOSTILE]
