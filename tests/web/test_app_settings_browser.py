"""An app's settings page in Chromium: its schema, versions and secrets' names for its owner;
a rollback and a removal to the trash from it; a viewer and another space's owner refused
both, with the sentence in the page and nothing changed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_own_pages_browser import PASSWORD, Served, serve, signed_in
from test_web_browser import EXAMPLES

from helpers import needs
from helpers.browser import chromium, in_chromium
from helpers.databases import IN_A_BROWSER, sqlite_only
from pasture.web._who import SESSION_COOKIE

pytestmark = [in_chromium, sqlite_only(IN_A_BROWSER)]

SECRET_VALUE = "sk_never_shown_4242"


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> Iterator[Served]:
    """ada/runs at v2 with a secret; cy a viewer of ada's space; bo the owner of her own."""
    for served in serve(tmp_path, monkeypatch):
        service = served.service
        ada = service.local_owner()
        service.deploy(ada, EXAMPLES / "runs", space="ada", app="runs")
        service.secrets.set(ada, "ada/runs", "STRIPE_KEY", SECRET_VALUE)
        service.people.new_user(ada, "cy", PASSWORD)
        service.add_member(ada, "ada", "cy", "viewer")
        service.people.new_user(ada, "bo", PASSWORD)
        yield served


def version_of(served: Served) -> int:
    return served.service.catalog.info("ada", "runs").version


def settings(page: Any, served: Served) -> None:
    page.goto(f"{served.url}/")
    page.get_by_role("link", name="its settings").first.click()
    page.wait_for_url(f"{served.url}/settings?app=ada/runs")


def test_the_owner_sees_the_app_rolls_it_back_and_removes_it(served: Served) -> None:
    expect = needs.playwright().expect
    with chromium() as browser:
        page = signed_in(browser, served)
        settings(page, served)
        expect(page.get_by_role("heading", name="Settings of Run club")).to_be_visible()
        schema = page.get_by_role("region", name="Its components")
        expect(schema.get_by_role("cell", name="jog", exact=True)).to_be_visible()
        expect(schema).to_contain_text("miles number")
        versions = page.get_by_role("region", name="Its versions")
        expect(versions.get_by_role("row")).to_have_count(3)  # the head, v2, v1
        expect(versions).to_contain_text("v2 current")
        expect(page.get_by_text("STRIPE_KEY")).to_be_visible()
        assert SECRET_VALUE not in page.content()
        expect(page.get_by_role("link", name="its audit")).to_have_attribute(
            "href", "/audit?app=ada/runs"
        )

        # by keyboard: to the button, and Enter
        button = page.get_by_role("button", name="Roll back to v1")
        for _ in range(40):
            page.keyboard.press("Tab")
            if button.evaluate("b => b === document.activeElement"):
                break
        else:
            raise AssertionError("Tab never reached Roll back to v1")
        page.keyboard.press("Enter")
        expect(page.get_by_role("status")).to_contain_text("ada/runs is back at v1")
        expect(versions).to_contain_text("v1 current")
        assert version_of(served) == 1

        page.get_by_role("button", name="Remove ada/runs…").click()
        expect(page.get_by_role("heading", name="Remove ada/runs?")).to_be_visible()
        page.get_by_role("link", name="No, keep it").click()
        expect(page.get_by_role("heading", name="Remove ada/runs?")).to_have_count(0)
        assert version_of(served) == 1  # asking removed nothing

        page.get_by_role("button", name="Remove ada/runs…").click()
        page.get_by_role("button", name="Yes, remove ada/runs").click()
        expect(page.get_by_role("heading", name="Removed")).to_be_visible()
        page.goto(f"{served.url}/")
        expect(page.locator("[data-app='ada/runs']")).to_have_count(0)
    trash = served.service.trash.listing(served.service.local_owner())
    assert "ada/runs" in trash.text


def test_the_owner_changes_the_title_and_access_from_the_page(served: Served) -> None:
    expect = needs.playwright().expect
    with chromium() as browser:
        page = signed_in(browser, served)
        settings(page, served)
        page.get_by_label("Title").fill("Tuesday runs")
        page.get_by_label("Access").select_option("private")
        page.get_by_role("button", name="Save the title and access").click()
        expect(page.get_by_role("status")).to_have_text(
            "ada/runs: its title is Tuesday runs and its access is private (only the members "
            "of its space see it)"
        )
        expect(page.get_by_role("heading", name="Settings of Tuesday runs")).to_be_visible()
        expect(page.get_by_label("Access")).to_have_value("private")
        info = served.service.catalog.info("ada", "runs")
        assert (info.title, info.access) == ("Tuesday runs", "private")
        # private now: a visitor who is signed out no longer reads its page
        assert httpx.get(f"{served.url}/ada/runs/", timeout=30).status_code == 404

        page.get_by_label("Title").fill("   ")
        page.get_by_role("button", name="Save the title and access").click()
        expect(page.get_by_role("alert")).to_contain_text(
            "the title is one line of text — say one, or leave it as it is"
        )
        assert served.service.catalog.info("ada", "runs").title == "Tuesday runs"


def test_a_viewer_is_shown_no_form_and_a_change_sent_anyway_is_refused(served: Served) -> None:
    expect = needs.playwright().expect
    with chromium() as browser:
        page = signed_in(browser, served, "cy")
        settings(page, served)
        expect(page.get_by_text("Its space's owners and editors change the title")).to_be_visible()
        expect(page.get_by_role("button", name="Save the title and access")).to_have_count(0)
        # the form the owner is shown, sent by the viewer's own page
        page.evaluate(
            """() => {
                const form = document.createElement("form");
                form.method = "post"; form.action = "/settings";
                for (const [k, v] of [["app", "ada/runs"], ["do", "change"],
                                      ["title", "Mine"], ["access", "open"]]) {
                    const input = document.createElement("input");
                    input.type = "hidden"; input.name = k; input.value = v;
                    form.append(input);
                }
                document.body.append(form); form.submit();
            }"""
        )
        expect(page.get_by_role("alert")).to_contain_text(
            "you can use ada/runs but not change its settings — its space's owners can make "
            "you an editor of ada"
        )
    info = served.service.catalog.info("ada", "runs")
    assert (info.title, info.access) == ("Run club", "public")


# What the Service says to each, in the page as it says it at every door.
REFUSED = {
    "cy": (
        "you can read the apps of ada but not deploy to it — its owner can make you an editor",
        "you are viewer of ada; only its owners (ada) can remove ada/runs",
    ),
    # ada/runs is public: bo reads it on the web, and is not one who can change it
    "bo": ("no app ada/runs — you have no apps yet",) * 2,
}


@pytest.mark.parametrize("who", ["cy", "bo"])
def test_a_viewer_and_another_spaces_owner_are_refused(served: Served, who: str) -> None:
    expect = needs.playwright().expect
    with chromium() as browser:
        page = signed_in(browser, served, who)
        if who == "cy":
            settings(page, served)
        else:  # ada's public app, not on bo's dashboard: by its address
            page.goto(f"{served.url}/settings?app=ada/runs")
        expect(page.get_by_role("heading", name="Settings of Run club")).to_be_visible()
        assert "STRIPE_KEY" not in page.content()  # not even its name
        hidden = {
            "cy": "you can use ada/runs but not see or change its secrets",
            "bo": "only the owners and editors of ada see the names of its secrets",
        }
        expect(page.get_by_text(hidden[who])).to_be_visible()

        page.get_by_role("button", name="Roll back to v1").click()
        expect(page.get_by_role("alert")).to_contain_text(REFUSED[who][0])
        expect(page.get_by_role("region", name="Its versions")).to_contain_text("v2 current")
        assert version_of(served) == 2

        page.get_by_role("button", name="Remove ada/runs…").click()
        page.get_by_role("button", name="Yes, remove ada/runs").click()
        expect(page.get_by_role("alert")).to_contain_text(REFUSED[who][1])
        assert version_of(served) == 2
    ada = served.service.local_owner()
    assert [a.at for a in served.service.gate.list_apps(ada)] == ["ada/runs"]
    assert "ada/runs" not in served.service.trash.listing(ada).text


def test_a_form_sent_from_another_site_changes_nothing(served: Served) -> None:
    """The cookie comes with a form another site submits; its Origin is not this server's."""
    session = served.service.new_session(served.service.local_owner())
    for do in ("do=rollback&version=1", "do=remove&sure=yes", "do=change&title=X&access=open"):
        said = httpx.post(
            f"{served.url}/settings",
            content=f"app=ada/runs&{do}",
            headers={
                "Origin": "http://elsewhere.example",
                "Content-Type": "application/x-www-form-urlencoded",
            },
            cookies={SESSION_COOKIE: session},
            timeout=30,
        )
        assert said.status_code == 403
        assert "came from another site" in said.text
    assert version_of(served) == 2
    info = served.service.catalog.info("ada", "runs")
    assert (info.at, info.title, info.access) == ("ada/runs", "Run club", "public")
