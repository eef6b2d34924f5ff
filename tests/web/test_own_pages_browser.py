"""The platform's own pages as a person sees them in Chromium: one navigation and the sign-out
on every page, the icon, the keyboard; the audit a page at a time, filtered, each call's
Undo; an OAuth grant's last use on the Tokens page; an app's address typed by hand."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_web_browser import PASSWORD, Served, serve

from helpers import needs
from helpers.browser import chromium, in_chromium
from helpers.databases import IN_A_BROWSER, sqlite_only
from helpers.oauth_flow import approved
from pasture.errors import PastureError

pytestmark = [in_chromium, sqlite_only(IN_A_BROWSER)]

RUN = {"who": "Ada", "miles": 3, "at": "2026-09-01"}
# Every page of the platform's own a signed-in person reaches, and the nav link it marks.
PAGES = {
    "/": "Apps",
    "/tools": "Tools",
    "/tools?app=ada/runs": "Tools",
    "/tokens": "Tokens",
    "/audit": "Audit",
    "/audit?app=ada/runs": "Audit",
    "/data": "Data",
    "/data?app=ada/runs": "Data",
    "/settings?app=ada/runs": "Apps",
    "/spaces": "Spaces",
    "/people": "People",
    "/tools?app=ada/nowhere": None,  # a refusal's page
}


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> Iterator[Served]:
    yield from serve(tmp_path, monkeypatch)


@pytest.fixture
def served_paged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str
) -> Iterator[Served]:
    """A server whose reads answer 5 rows a page."""
    monkeypatch.setenv("PASTURE_MAX_ROWS", "5")
    yield from serve(tmp_path, monkeypatch)


@pytest.fixture
def served_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str
) -> Iterator[Served]:
    yield from serve(tmp_path, monkeypatch, apps_domain="localhost")


def signed_in(browser: Any, served: Served, name: str = "ada", **context: Any) -> Any:
    """A tab of a new context, signed in through the form as `name`."""
    page = browser.new_context(**context).new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{served.url}/signin")
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{served.url}/")
    return page


def test_every_page_has_one_navigation_the_sign_out_and_the_icon(served: Served) -> None:
    expect = needs.playwright().expect
    problems: list[str] = []
    with chromium() as browser:
        page = signed_in(browser, served)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        for path, current in PAGES.items():
            page.goto(served.url + path)
            if current is None:  # the refusal's own 404, which the console notes
                problems[:] = [p for p in problems if "status of 404" not in p]
            navigation = page.get_by_role("navigation")
            expect(navigation).to_have_count(1)
            for label in ("Apps", "Tools", "Tokens", "Data", "Audit", "Spaces", "People"):
                expect(navigation.get_by_role("link", name=label, exact=True)).to_be_visible()
            marked = navigation.locator("[aria-current=page]")
            if current is None:
                expect(marked).to_have_count(0)
            else:
                expect(marked).to_have_text(current)
            expect(page.get_by_role("button", name="Sign out")).to_be_visible()
            assert page.locator("link[rel=icon]").get_attribute("href") == "/favicon.svg"
            # the icon drawn in the header: served, and allowed by the page's policy
            drawn = page.evaluate("document.querySelector('header img').naturalWidth")
            assert drawn > 0, path
        icon = httpx.get(f"{served.url}/favicon.svg", timeout=30)
        assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
        # signing out from any page of them ends the session
        page.goto(f"{served.url}/tokens")
        page.get_by_role("button", name="Sign out").click()
        expect(page.get_by_role("link", name="Sign in")).to_be_visible()
        expect(page.get_by_role("navigation")).to_have_count(0)
    assert problems == []


def focused(page: Any) -> str:
    return str(page.evaluate("document.activeElement.textContent.trim()"))


def test_the_dashboard_is_reached_by_keyboard(served: Served) -> None:
    expect = needs.playwright().expect
    with chromium() as browser:
        page = signed_in(browser, served)
        page.goto(served.url + "/")
        order = []
        for _ in range(10):
            page.keyboard.press("Tab")
            order.append(focused(page))
        assert order == [
            "Skip to the page",
            "pasture",
            "Apps",
            "Tools",
            "Tokens",
            "Data",
            "Audit",
            "Spaces",
            "People",
            "Sign out",
        ]
        # the skip link, shown once it has focus, goes past the navigation
        page.goto(served.url + "/")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.getBoundingClientRect().width") > 1
        page.keyboard.press("Enter")
        page.keyboard.press("Tab")
        assert focused(page) == "Run club"
        # a command opens and runs from the keyboard alone
        for _ in range(20):
            if focused(page).split(" ")[0] == "log_run":
                break
            page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        for value in ("Grace", "4", "2026-09-01"):
            page.keyboard.press("Tab")
            page.keyboard.type(value)
        page.keyboard.press("Enter")
        command = page.locator('details[data-command="log_run"]')
        expect(command.locator(".answer p")).to_contain_text("log_run: wrote 1 entity")


def rows(page: Any) -> list[list[str]]:
    """The audit's rows as their cells' text."""
    return [
        [c.strip() for c in r.locator("td").all_inner_texts()]
        for r in page.locator("table tbody tr").all()
    ]


def test_the_audit_is_paged_filtered_and_undoes_a_call(served: Served) -> None:
    service = served.service
    ada = service.local_owner()
    cy = service.people.new_user(ada, "cy", PASSWORD)
    service.add_member(ada, "ada", "cy", "viewer")
    at_cli = ada.at_door("cli", "command line")
    for miles in range(55):
        service.run_command(at_cli, "log_run", {**RUN, "miles": miles}, "ada/runs")
    with pytest.raises(PastureError):
        service.run_command(cy.at_door("cli", "command line"), "log_run", RUN, "ada/runs")
    token = service.new_token(ada)
    for _ in range(3):
        said = httpx.post(
            f"{served.url}/ada/runs/api/command",
            json={"name": "log_run", "args": RUN},
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        assert said.status_code == 200, said.text
    expect = needs.playwright().expect
    with chromium() as browser:
        page = signed_in(browser, served)
        page.goto(f"{served.url}/audit")
        page.get_by_label("App").select_option("ada/runs")
        page.get_by_role("button", name="Show").click()
        expect(page.get_by_role("heading", name="Audit of ada/runs")).to_be_visible()
        first = rows(page)
        assert len(first) == 50
        assert first[0][2] == "web" and first[-1][2] == "cli"  # newest first
        page.get_by_role("link", name="Older calls").click()
        older = rows(page)
        assert len(older) == 60 - 50  # the deploy, 55 at the command line, cy's, 3 on the web
        assert page.get_by_role("link", name="Older calls").count() == 0
        page.get_by_role("link", name="Newest calls").click()
        assert rows(page) == first

        page.get_by_label("Person").fill("cy")
        page.get_by_role("button", name="Show").click()
        only_cy = rows(page)
        assert [r[1] for r in only_cy] == ["cy"]
        assert "can read this app but not change it" in only_cy[0][6]
        page.get_by_label("Person").fill("")
        page.get_by_label("Outcome").select_option("refused")
        page.get_by_role("button", name="Show").click()
        assert [r[1] for r in rows(page)] == ["cy"]
        page.get_by_label("Outcome").select_option("")
        page.get_by_label("Door").select_option("web")
        page.get_by_role("button", name="Show").click()
        on_the_web = rows(page)
        assert len(on_the_web) == 3 and {r[2] for r in on_the_web} == {"web"}
        page.get_by_label("Since").fill("2999-01-01")
        page.get_by_role("button", name="Show").click()
        expect(page.get_by_text("No calls recorded in this while.")).to_be_visible()
        page.get_by_label("Since").fill("soon")
        page.get_by_role("button", name="Show").click()
        expect(page.get_by_text("--since is a moment")).to_be_visible()

        # Undo a call from its row, as the person signed in; a second time is refused.
        page.goto(f"{served.url}/audit?app=ada/runs&door=web")
        undo = page.get_by_role("button", name=re.compile("^Undo call")).first
        call = (undo.get_attribute("aria-label") or "").split()[-1]
        undo.click()
        expect(page.get_by_role("status")).to_contain_text(f"undid call {call} in ada/runs")
        undone = service.audit_log.read(app="ada/runs")[-1]
        assert (undone["action"], undone["name"], undone["command"]) == ("undo", "ada", call)
        page.get_by_role("button", name=f"Undo call {call}").click()
        expect(page.get_by_role("alert")).to_contain_text("was undone already")
        assert page.locator(".error").count() == 1

        # A viewer's own page: their calls alone, and no whole audit of the app to ask for.
        viewer = signed_in(browser, served, "cy")
        viewer.goto(f"{served.url}/audit")
        expect(viewer.get_by_role("heading", name="Your calls")).to_be_visible()
        assert [r[1] for r in rows(viewer)] == ["cy"]
        assert viewer.get_by_label("App").locator("option").all_inner_texts() == [
            "your calls, every app"
        ]


def test_an_oauth_grant_shows_its_last_use(served: Served) -> None:
    service = served.service
    ada = service.local_owner()
    token = approved(service, ada, "agent-x", writes=True)
    expect = needs.playwright().expect
    with chromium() as browser:
        page = signed_in(browser, served)
        page.goto(f"{served.url}/tokens")
        grant = page.get_by_role("row", name=re.compile("client Agent X"))
        expect(grant).to_contain_text("never")
        said = httpx.post(
            f"{served.url}/ada/runs/api/command",
            json={"name": "log_run", "args": RUN},
            headers={"Authorization": f"Bearer {token.access_token}"},
            timeout=30,
        )
        assert said.status_code == 200, said.text
        used = service.audit_log.read(app="ada/runs")[-1]["at"]
        page.reload()
        last_used = grant.locator("td").nth(4)
        expect(last_used).to_have_text(used)


def test_an_apps_address_typed_by_hand_signs_the_person_in_there(served_apart: Served) -> None:
    expect = needs.playwright().expect
    runs = served_apart.app_url("ada", "runs")
    with chromium() as browser:
        page = signed_in(browser, served_apart)
        for typed in ("/ada/runs", "/ada/runs/"):
            page.goto(served_apart.url + typed)
            page.wait_for_url(f"{runs}**")
            assert page.url.startswith(runs)
            # the run club fills its form with who is signed in
            expect(page.locator("input[name=who]")).to_have_value("ada")
        # signed out, the same address is the app's page, as a stranger sees it
        stranger = browser.new_context().new_page()
        stranger.goto(served_apart.url + "/ada/runs")
        stranger.wait_for_url(f"{runs}**")
        assert httpx.get(served_apart.url + "/ada/runs/", timeout=30).status_code == 307


def test_the_data_browser_reads_an_apps_rows_as_the_person(served_paged: Served) -> None:
    service, url = served_paged.service, served_paged.url
    ada = service.local_owner()
    for miles in range(7):
        service.run_command(ada, "log_run", {**RUN, "miles": miles}, "ada/runs")
    expect = needs.playwright().expect
    with chromium() as browser:
        page = signed_in(browser, served_paged)
        page.get_by_role("link", name="its data").click()
        expect(page.get_by_role("heading", name="jog in ada/runs")).to_be_visible()
        expect(page.get_by_role("link", name="doc", exact=True)).to_be_visible()
        headings = page.locator("table thead th")
        assert [t.split("(")[0].strip() for t in headings.all_inner_texts()] == [
            "entity",
            "who",
            "miles",
            "at",
        ]
        assert [r[2] for r in rows(page)] == ["0", "1", "2", "3", "4"]
        page.get_by_role("link", name="More rows").click()
        assert [r[2] for r in rows(page)] == ["5", "6"]
        assert page.get_by_role("link", name="More rows").count() == 0

        # a column's heading sorts by it, most first when clicked again; pages keep the order
        page.get_by_role("link", name=re.compile(r"^miles")).click()
        expect(page.locator("th[aria-sort=ascending]")).to_contain_text("miles")
        page.get_by_role("link", name=re.compile(r"^miles")).click()
        expect(page.locator("th[aria-sort=descending]")).to_contain_text("miles")
        assert [r[2] for r in rows(page)] == ["6", "5", "4", "3", "2"]
        page.get_by_role("link", name="More rows").click()
        assert [r[2] for r in rows(page)] == ["1", "0"]
        page.goto(f"{url}/data?app=ada/runs&kind=jog&sort=-nowhere")
        expect(page.get_by_role("alert")).to_have_text(
            "jog has no column nowhere to sort by — its columns: who, miles, at"
        )

        page.get_by_label("Filter").fill(".jog.miles>=5&sort=-jog.miles")
        page.get_by_role("button", name="Show").click()
        assert [r[2] for r in rows(page)] == ["6", "5"]
        page.get_by_label("Filter").fill("offset=3")
        page.get_by_role("button", name="Show").click()
        expect(page.get_by_role("alert")).to_contain_text("offset=")
        expect(page.get_by_label("Filter")).to_have_value("offset=3")

        page.get_by_label("Filter").fill(".jog.miles=6")
        page.get_by_role("button", name="Show").click()
        page.get_by_role("link", name=re.compile("the whole entity")).click()
        for name in ("jog", "doc", "created"):
            expect(page.get_by_role("heading", name=name, exact=True)).to_be_visible()
        expect(page.get_by_role("row", name="title Run by Ada")).to_be_visible()
        expect(page.get_by_role("row", name="by ada").first).to_be_visible()

        # what the person cannot read is refused in the page, with its sentence
        page.goto(f"{url}/data?app=ada/nowhere")
        expect(page.get_by_role("heading", name="Not here")).to_be_visible()
