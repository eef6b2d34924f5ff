"""The dashboard's Spaces and People pages in Chromium: a space's owner adds a person,
changes their role and takes them out; the server's owner trusts a space, adds a person,
gives them a sign-in link that signs another browser in, and removes them after a second
click. Anyone else is refused each with the Service's sentence in the page, and nothing
changes; a form sent from another site changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_own_pages_browser import PASSWORD, Served, serve, signed_in

from helpers import needs
from helpers.browser import chromium, in_chromium
from helpers.databases import IN_A_BROWSER, sqlite_only
from pasture.web._who import SESSION_COOKIE

pytestmark = [in_chromium, sqlite_only(IN_A_BROWSER)]


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> Iterator[Served]:
    """ada the server's owner, with her space ada (ada/runs); cy a viewer of it; bo the
    owner of her own space only."""
    for served in serve(tmp_path, monkeypatch):
        service = served.service
        ada = service.local_owner()
        service.people.new_user(ada, "cy", PASSWORD)
        service.add_member(ada, "ada", "cy", "viewer")
        service.people.new_user(ada, "bo", PASSWORD)
        yield served


def members(served: Served, space: str = "ada") -> dict[str, str]:
    listed = served.service.spaces.members(served.service.local_owner(), space)
    return {m["user"]: m["role"] for m in listed.data["members"]}


def people(served: Served) -> list[str]:
    listed = served.service.people.listing(served.service.local_owner())
    return [p["name"] for p in listed.data["users"]]


def test_a_spaces_owner_adds_a_member_changes_their_role_and_takes_them_out(
    served: Served,
) -> None:
    expect = needs.playwright().expect
    with chromium() as browser:
        page = signed_in(browser, served)
        page.get_by_role("navigation").get_by_role("link", name="Spaces").click()
        section = page.get_by_role("region", name="The members of ada")
        expect(section.get_by_role("row")).to_have_count(3)  # the head, ada, cy
        expect(section).to_contain_text("cy")

        page.get_by_label("A person to add to ada").fill("bo")
        page.get_by_label("Their role").first.select_option("editor")
        page.get_by_role("button", name="Add to ada").click()
        expect(page.get_by_role("status")).to_have_text("bo is now an editor of ada")
        assert members(served) == {"ada": "owner", "bo": "editor", "cy": "viewer"}

        page.get_by_label("The role of cy in ada", exact=True).select_option("editor")
        page.get_by_role("button", name="Change the role of cy in ada").click()
        expect(page.get_by_role("status")).to_have_text("cy is now an editor of ada")
        assert members(served)["cy"] == "editor"

        page.get_by_role("button", name="Remove bo from ada").click()
        expect(page.get_by_role("status")).to_contain_text("bo is no longer a member of ada")
        assert "bo" not in members(served)

        # the only owner cannot leave: the Service's sentence, and nothing changed
        page.get_by_role("button", name="Remove ada from ada").click()
        expect(page.get_by_role("alert")).to_have_text(
            "ada is the only owner of ada — make another person its owner first "
            "(pasture member add SPACE USER owner)"
        )
        assert members(served)["ada"] == "owner"

        # a name nobody has
        page.get_by_label("A person to add to ada").fill("zed")
        page.get_by_role("button", name="Add to ada").click()
        expect(page.get_by_role("alert")).to_contain_text("no user zed")

        # a new space, and the server's owner trusts it
        page.get_by_label("Its name").fill("club")
        page.get_by_role("button", name="Make the space").click()
        expect(page.get_by_role("status")).to_contain_text("space club made, with you as its owner")
        page.get_by_role("button", name="Let club's apps run code").click()
        expect(page.get_by_role("button", name="Stop club's apps running code")).to_be_visible()
        assert served.service.catalog.trusted("club")


def test_a_viewer_sees_the_members_but_changes_nothing(served: Served) -> None:
    expect = needs.playwright().expect
    with chromium() as browser:
        page = signed_in(browser, served, "cy")
        page.goto(f"{served.url}/spaces")
        expect(page.get_by_role("region", name="The members of ada")).to_contain_text("ada")
        expect(page.get_by_role("button", name="Add to ada")).to_have_count(0)
        expect(page.get_by_role("button", name="Remove ada from ada")).to_have_count(0)
        expect(page.get_by_role("button", name="Let ada's apps run code")).to_have_count(0)
        # the owner's forms, sent by the viewer's own page anyway
        for fields, sentence in (
            (
                {"do": "add", "space": "ada", "user": "bo", "role": "owner"},
                "you are viewer of ada; only its owners add people to it",
            ),
            (
                {"do": "role", "space": "ada", "user": "cy", "role": "owner"},
                "you are viewer of ada; only its owners add people to it",
            ),
            (
                {"do": "remove", "space": "ada", "user": "ada"},
                "you are viewer of ada; only its owners take people out of it",
            ),
        ):
            post(page, "/spaces", fields)
            expect(page.get_by_role("alert")).to_have_text(sentence)
        post(page, "/spaces", {"do": "untrust", "space": "ada"})
        expect(page.get_by_role("alert")).to_contain_text("only the server's owner")
        page.goto(f"{served.url}/people")
        expect(page.get_by_role("alert")).to_contain_text(
            "only the server's owner (ada) lists the people on it"
        )
        expect(page.get_by_role("region", name="The people on this server")).to_have_count(0)
        post(page, "/people", {"do": "add", "name": "mallory", "password": PASSWORD})
        expect(page.get_by_role("alert")).to_contain_text("only the server's owner adds people")
        post(page, "/people", {"do": "link", "name": "ada"})
        expect(page.get_by_role("alert")).to_contain_text("only the server's owner")
        assert "signin?link=" not in page.content()
        post(page, "/people", {"do": "remove", "name": "bo", "sure": "yes"})
        expect(page.get_by_role("alert")).to_contain_text("only the server's owner removes people")
    assert members(served) == {"ada": "owner", "cy": "viewer"}
    assert people(served) == ["ada", "bo", "cy"]
    assert served.service.catalog.trusted("ada")  # the server's owner's own space, as it was


def post(page: Any, path: str, fields: dict[str, str]) -> None:
    """A form of the page's own origin, made and sent by script: what a person could send
    without the button the page does not show them."""
    page.evaluate(
        """([path, fields]) => {
            const form = document.createElement("form");
            form.method = "post"; form.action = path;
            for (const [k, v] of Object.entries(fields)) {
                const input = document.createElement("input");
                input.type = "hidden"; input.name = k; input.value = v;
                form.append(input);
            }
            document.body.append(form); form.submit();
        }""",
        [path, fields],
    )
    page.wait_for_load_state()


def test_the_servers_owner_adds_a_person_links_them_in_and_removes_them(served: Served) -> None:
    expect = needs.playwright().expect
    with chromium() as browser:
        page = signed_in(browser, served)
        page.get_by_role("navigation").get_by_role("link", name="People").click()
        listing = page.get_by_role("region", name="The people on this server")
        expect(listing.get_by_role("row")).to_have_count(4)  # the head, ada, bo, cy
        expect(listing).to_contain_text("the server's owner")

        page.get_by_label("Their name").fill("di")
        page.get_by_label("A password").fill("short")
        page.get_by_role("button", name="Add them").click()
        expect(page.get_by_role("alert")).to_have_text("a password is at least 8 characters long")
        assert "di" not in people(served)

        page.get_by_label("Their name").fill("di")
        page.get_by_role("button", name="Add them").click()
        expect(page.get_by_role("status")).to_have_text(
            "di is added, with a space of their own; give them a sign-in link to sign in the "
            "first time"
        )
        expect(listing).to_contain_text("no web password yet")

        page.get_by_role("button", name="A sign-in link for di").click()
        link = page.locator("p.answer code").inner_text()
        assert link.startswith(f"{served.url}/signin?link=")
        # the link signs another browser in, as di, once
        other = browser.new_context().new_page()
        other.goto(link)
        expect(other.get_by_text("signed in as di")).to_be_visible()
        again = browser.new_context().new_page()
        again.goto(link)
        expect(again.get_by_text("signed in as di")).to_have_count(0)

        page.get_by_role("button", name="Remove di…").click()
        expect(page.get_by_role("heading", name="Remove di?")).to_be_visible()
        page.get_by_role("link", name="No, keep them").click()
        assert "di" in people(served)
        page.get_by_role("button", name="Remove di…").click()
        page.get_by_role("button", name="Yes, remove di").click()
        expect(page.get_by_role("status")).to_contain_text("di is removed")
        assert "di" not in people(served)
        # di's session ended with them
        other.reload()
        expect(other.get_by_text("signed in as di")).to_have_count(0)
        # the owner is not offered to be removed
        expect(page.get_by_role("button", name="Remove ada…")).to_have_count(0)


def test_forms_sent_from_another_site_change_nothing(served: Served) -> None:
    session = served.service.new_session(served.service.local_owner())
    for path, body in (
        ("/spaces", "do=add&space=ada&user=bo&role=owner"),
        ("/spaces", "do=untrust&space=ada"),
        ("/people", "do=add&name=mallory"),
        ("/people", "do=remove&name=cy&sure=yes"),
        ("/people", "do=link&name=cy"),
    ):
        said = httpx.post(
            f"{served.url}{path}",
            content=body,
            headers={
                "Origin": "http://elsewhere.example",
                "Content-Type": "application/x-www-form-urlencoded",
            },
            cookies={SESSION_COOKIE: session},
            timeout=30,
        )
        assert said.status_code == 403, (path, body)
        assert "came from another site" in said.text
        assert "signin?link=" not in said.text
    assert members(served) == {"ada": "owner", "cy": "viewer"}
    assert people(served) == ["ada", "bo", "cy"]
    assert served.service.catalog.trusted("ada")


def test_signed_out_the_pages_send_to_sign_in(served: Served) -> None:
    for path in ("/spaces", "/people"):
        said = httpx.get(f"{served.url}{path}", timeout=30, follow_redirects=False)
        assert (said.status_code, said.headers["location"]) == (303, "/signin")
