"""The web door in a real browser: Debian's Chromium driven by Playwright, against uvicorn.

A person signs in through the form, opens the run club, runs `log_run` from the
dashboard's form and sees the answer; then logs a run on the run club's own page
(examples/runs, which talks to ./api/client.js) and sees it on the board.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import needs
from helpers.browser import CHROMIUM, LAUNCH_ARGS, in_chromium, loopback, serving
from helpers.club import EXAMPLES
from helpers.databases import IN_A_BROWSER, sqlite_only
from pasture.platform.service import Service
from pasture.web import create_app

PASSWORD = "correct horse battery"

pytestmark = [in_chromium, sqlite_only(IN_A_BROWSER)]


@dataclass
class Served:
    url: str
    service: Service

    def app_url(self, space: str, slug: str) -> str:
        """An app's address: its own origin (with an apps domain), or its path here."""
        return self.service.origins.url(space, slug)


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> Iterator[Served]:
    """`pasture serve` as it runs: uvicorn on a free loopback port, a fresh PASTURE_HOME;
    no apps domain, so apps' pages are sandboxed."""
    yield from serve(tmp_path, monkeypatch)


@pytest.fixture
def served_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str
) -> Iterator[Served]:
    """The same with `--apps-domain localhost`: each app on an origin of its own."""
    yield from serve(tmp_path, monkeypatch, apps_domain="localhost")


def serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, apps_domain: str | None = None
) -> Iterator[Served]:
    monkeypatch.setenv("PASTURE_USER", "ada")
    sock, url = loopback()
    service = Service(tmp_path / "home", base_url=url, apps_domain=apps_domain)
    ada = service.local_owner()
    service.people.set_password(ada, PASSWORD)
    service.deploy(ada, EXAMPLES / "runs", space="ada", app="runs")
    try:
        with serving(create_app(service, bind_host="127.0.0.1"), sock, lifespan="on"):
            yield Served(url, service)
    finally:
        service.close()


def test_sign_in_open_the_run_club_and_log_runs(served: Served) -> None:
    sync_api = needs.playwright()
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            page = browser.new_context().new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.set_default_timeout(30_000)
            expect = sync_api.expect

            # Sign in through the form.
            page.goto(f"{served.url}/")
            page.get_by_role("link", name="Sign in").click()
            page.get_by_label("Name").fill("ada")
            page.get_by_label("Password").fill(PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(f"{served.url}/")
            expect(page.get_by_text("signed in as ada")).to_be_visible()

            # Open the run club from the dashboard: its page, its stylesheet through <base>.
            page.get_by_role("link", name="Run club").click()
            page.wait_for_url(f"{served.url}/ada/runs/")
            expect(page.get_by_role("heading", name="Run club", level=1)).to_be_visible()
            # Sandboxed (this server has no apps domain): what the page fetches carries a
            # pass for this app in its address, never the server's cookie.
            base = page.locator("base").get_attribute("href") or ""
            assert re.fullmatch(re.escape(f"{served.url}/ada/runs/~") + r"psp_[\w-]+/", base)
            sheets = page.evaluate("[...document.styleSheets].map(s => s.href)")
            assert f"{base}style.css" in sheets

            # Run log_run from the dashboard's form and see the answer.
            page.goto(f"{served.url}/")
            command = page.locator('section[data-app="ada/runs"] details[data-command="log_run"]')
            command.locator("summary").click()
            command.locator('input[data-arg="who"]').fill("Grace")
            command.locator('input[data-arg="miles"]').fill("4.5")
            command.locator('input[data-arg="at"]').fill("2026-09-01")
            command.get_by_role("button", name="Run log_run").click()
            answer = command.locator(".answer")
            expect(answer.locator("p")).to_contain_text("log_run: wrote 1 entity in ada/runs")
            expect(answer.locator("pre")).to_contain_text('"aliases"')

            # A refusal shows its sentence in the same place.
            command.locator('input[data-arg="miles"]').fill("")
            command.locator('input[data-arg="miles"]').evaluate(
                "e => e.removeAttribute('required')"
            )
            command.get_by_role("button", name="Run log_run").click()
            expect(answer.locator("p.refused")).to_contain_text("miles")

            # The run club's own page logs a run through ./api/client.js and shows it.
            page.goto(f"{served.url}/ada/runs/")
            expect(page.locator("#board")).to_contain_text("Grace — 4.5 miles")
            expect(page.locator("input[name=who]")).to_have_value("ada")  # me()
            page.locator("input[name=miles]").fill("3")
            page.get_by_role("button", name="Log the run").click()
            expect(page.locator("#said")).to_have_text("Logged 3 miles for ada.")
            expect(page.locator("#board")).to_contain_text("ada — 3 miles")
            expect(page.locator("#board")).to_contain_text("logged by ada")
            expect(page.locator("#totals")).to_contain_text("Grace — 4.5 miles")

            # client.js as a page's own code uses it: a filter with `>=` and quotes arrives
            # as written, and a refusal throws its sentence.
            who = page.evaluate(
                """async () => (await window.club.query('.jog.miles>=4&.jog.who="Grace"'))
                    .rows.map((r) => r.jog.who)"""
            )
            assert who == ["Grace"]
            refusal = page.evaluate(
                """async () => {
                    try { await window.club.command('add_run', {}) }
                    catch (e) { return [e.message, e.status] } }"""
            )
            assert "add_run" in refusal[0]
            assert refusal[1] in (400, 404)

            # Signed out, the public run club reads but does not write.
            stranger = browser.new_context().new_page()
            stranger.on("pageerror", lambda e: errors.append(str(e)))
            stranger.goto(f"{served.url}/ada/runs/")
            expect(stranger.locator("#board")).to_contain_text("Grace — 4.5 miles")
            stranger.locator("input[name=who]").fill("Mallory")
            stranger.locator("input[name=miles]").fill("9")
            stranger.get_by_role("button", name="Log the run").click()
            expect(stranger.locator("#said")).to_contain_text("sign in to change ada/runs")
        finally:
            browser.close()
    assert errors == []
    rows = served.service.graph.query(served.service.local_owner(), "ada/runs", ".jog!").data[
        "rows"
    ]
    assert sorted(r["jog"]["who"] for r in rows) == ["Grace", "ada"]
