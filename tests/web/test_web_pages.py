"""The web door in-process: sign-in, the dashboard, and an app's pages."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from web_site import BASE, PASSWORD, Site

from pasture.web.app import SESSION_COOKIE, inject_base

# -- signing in ---------------------------------------------------------------


def test_signed_out_the_dashboard_is_a_link_to_sign_in(site: Site) -> None:
    answer = site.client().get("/")
    assert answer.status_code == 200
    assert 'href="/signin"' in answer.text
    assert "signed in as" not in answer.text


def test_the_sign_in_page_is_a_form_with_name_and_password(site: Site) -> None:
    answer = site.client().get("/signin")
    assert answer.status_code == 200
    assert '<form method="post" action="/signin">' in answer.text
    assert 'name="name"' in answer.text
    assert 'type="password" name="password"' in answer.text


def test_signing_in_sets_an_http_only_lax_cookie_and_goes_to_the_dashboard(site: Site) -> None:
    client = site.client()
    answer = client.post("/signin", data={"name": "ada", "password": PASSWORD})
    assert answer.status_code == 303
    assert answer.headers["location"] == "/"
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}=")
    assert "HttpOnly" in cookie
    assert "SameSite=lax" in cookie or "SameSite=Lax" in cookie
    assert "Path=/" in cookie
    home = client.get("/")
    assert "signed in as ada" in home.text


def test_a_wrong_password_is_refused_with_the_sentence_and_no_cookie(site: Site) -> None:
    answer = site.client().post("/signin", data={"name": "ada", "password": "wrong"})
    assert answer.status_code == 401
    assert "that name and password do not match" in answer.text
    assert "set-cookie" not in answer.headers
    assert 'value="ada"' in answer.text  # the name is kept in the form


def test_signing_in_without_a_password_says_what_is_missing(site: Site) -> None:
    answer = site.client().post("/signin", data={"name": "ada"})
    assert answer.status_code == 400
    assert "give your name and your password" in answer.text


@pytest.mark.parametrize("which", ["bob's own", "not one of this server's"])
def test_a_token_does_not_sign_a_browser_in(site: Site, which: str) -> None:
    """A token is a program's, with the scope it was made with; a session made from one
    would hold all of its person's rights, and outlive it."""
    token = site.bob_token if which == "bob's own" else "pst_nonsense"
    answer = site.client().get(f"/signin?token={token}")
    assert answer.status_code == 400
    assert (
        "a token does not sign a browser in — sign in with your name and password, or with a "
        "link from pasture signin"
    ) in answer.text.replace("&#39;", "'")
    assert "set-cookie" not in answer.headers


def test_signing_out_ends_the_session(site: Site) -> None:
    client = site.signed_in("ada")
    session = client.cookies[SESSION_COOKIE]
    answer = client.post("/signout")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/"
    assert 'href="/signin"' in client.get("/").text
    # The old cookie no longer signs anyone in.
    stale = site.client()
    stale.cookies.set(SESSION_COOKIE, session)
    assert stale.get("/ada/runs/api/me").json() == {"eid": None}


def test_an_unknown_session_cookie_is_nobody(site: Site) -> None:
    client = site.client()
    client.cookies.set(SESSION_COOKIE, "pss_forgotten")
    assert 'href="/signin"' in client.get("/").text


# -- the dashboard --------------------------------------------------------------


def test_the_dashboard_lists_spaces_apps_and_commands_with_forms(site: Site) -> None:
    page = site.signed_in("ada").get("/").text
    assert "<h2>ada</h2>" in page
    assert '<a href="/ada/runs/">Run club</a>' in page
    assert 'data-app="ada/secret"' in page
    assert 'data-command="log_run"' in page
    assert "Log a run for the club leaderboard" in page
    form = _form(page, "ada/runs", "log_run")
    assert 'data-api="/ada/runs/api/command"' in form
    assert re.search(r'<input type="text" name="who" data-arg="who" required>', form)
    assert re.search(r'<input type="number" step="any" name="miles" data-arg="miles"', form)


def test_the_dashboard_says_which_apps_run_code(site: Site) -> None:
    page = site.signed_in("ada").get("/").text
    runs = page[page.index('data-app="ada/runs"') :]
    runs = runs[: runs.index("</h3>")]
    assert "runs code</span>" in runs  # its worker.py
    secret = page[page.index('data-app="ada/secret"') :]
    assert "runs code" not in secret[: secret.index("</h3>")]


def test_a_form_has_a_checkbox_for_a_bool_and_a_hint_for_a_time(site: Site) -> None:
    page = site.signed_in("ada").get("/").text
    form = _form(page, "ada/runs", "plan_run")
    assert '<input type="checkbox" name="race" data-arg="race">' in form
    assert 'placeholder="2026-09-01 or 2026-09-01T10:00:00Z"' in form
    assert '<input type="url" name="route"' in form


def test_the_dashboard_script_runs_only_with_its_nonce(site: Site) -> None:
    answer = site.signed_in("ada").get("/")
    nonce = re.search(r'<script nonce="([^"]+)">', answer.text)
    assert nonce is not None
    assert f"'nonce-{nonce.group(1)}'" in answer.headers["content-security-policy"]
    assert answer.headers["x-frame-options"] == "DENY"


def test_the_dashboard_shows_only_the_callers_spaces(site: Site) -> None:
    page = site.signed_in("bob").get("/").text
    assert "signed in as bob" in page
    assert "ada/runs" not in page
    assert "No apps yet" in page


def test_the_dashboard_escapes_what_apps_say(site: Site) -> None:
    evil = {"index.html": "<html><head><title>x</title></head></html>"}
    site.service.deploy(site.ada, evil, space="ada", app="evil", title="<b>Evil</b> & co")
    page = site.signed_in("ada").get("/").text
    assert "&lt;b&gt;Evil&lt;/b&gt; &amp; co" in page
    assert "<b>Evil</b>" not in page


def _form(page: str, at: str, command: str) -> str:
    app = page.split(f'data-app="{at}"', 1)[1].split("</section>", 1)[0]
    return app.split(f'data-command="{command}"', 1)[1].split("</details>", 1)[0]


# -- an app's pages -------------------------------------------------------------


def test_an_app_without_its_trailing_slash_redirects_to_it(site: Site) -> None:
    answer = site.client().get("/ada/runs")
    assert answer.status_code == 307
    assert answer.headers["location"] == "/ada/runs/"


def test_the_app_folder_serves_index_html_with_a_base_after_head(site: Site) -> None:
    answer = site.client().get("/ada/runs/")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/html")
    assert (
        f'<html><head><base href="{BASE}/ada/runs/">'
        '<script type="module" src="./api/webmcp.js"></script><meta charset="utf-8">'
    ) in answer.text
    assert answer.text.count("<base") == 1


def test_a_sub_folder_serves_its_index_with_the_apps_base(site: Site) -> None:
    answer = site.client().get("/ada/runs/sub/")
    assert answer.status_code == 200
    assert f'<head><base href="{BASE}/ada/runs/">' in answer.text
    assert "sub" in answer.text


def test_a_page_with_its_own_base_keeps_it(site: Site) -> None:
    answer = site.client().get("/ada/runs/own.html")
    assert answer.status_code == 200
    assert answer.text.count("<base") == 1
    assert '<base href="https://elsewhere.example/">' in answer.text


def test_a_page_without_a_head_still_gets_a_base(site: Site) -> None:
    answer = site.client().get("/ada/runs/nohead.html")
    assert answer.status_code == 200
    assert f'<base href="{BASE}/ada/runs/">' in answer.text
    assert answer.text.lower().startswith("<!doctype html>")  # no quirks mode


def test_a_stylesheet_is_served_as_it_is(site: Site) -> None:
    answer = site.client().get("/ada/runs/style.css")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/css")
    assert answer.text == "h1 { color: green; }\n"


@pytest.mark.parametrize(
    ("app", "name"),
    [
        ("runs", "tools.json"),
        ("runs", "vocab.json"),
        ("runs", "worker.py"),
        ("runs", "keys.py"),
        ("runs", "lib/helper.py"),
        ("runs", "KEYS.PY"),
        ("runs", "TOOLS.JSON"),
        ("notes", "tools.yml"),
    ],
)
def test_source_files_are_a_404_like_any_missing_file(site: Site, app: str, name: str) -> None:
    for client in (site.client(), site.client(site.ada_token)):
        answer = client.get(f"/ada/{app}/{name}")
        missing = client.get(f"/ada/{app}/no-such-{name}")
        assert answer.status_code == missing.status_code == 404
        assert f"no page {name} in ada/{app}" in answer.text
        assert answer.text == missing.text.replace(f"no-such-{name}", name)
        for secret in ("SECRET_WORKER_MARKER", "log_run", "$defs", "add_note"):
            assert secret not in answer.text


def test_a_path_that_climbs_out_of_the_app_is_refused_with_its_sentence(site: Site) -> None:
    answer = site.client().get("/ada/runs/%2e%2e/secret/index.html")
    assert answer.status_code == 400
    assert "../secret/index.html is not a file of the app — a path never names . or .." in (
        answer.text
    )
    assert "hush" not in answer.text


def test_a_private_apps_pages_are_hidden_from_strangers(site: Site) -> None:
    for client in (site.client(), site.client(site.bob_token)):
        answer = client.get("/ada/secret/")
        assert answer.status_code == 404
        assert "hush" not in answer.text
        assert "no app ada/secret" in answer.text
        # The same answer as an app that does not exist at all.
        assert client.get("/ada/nothing/").status_code == 404


def test_a_private_app_is_served_to_its_members(site: Site) -> None:
    for client in (site.client(site.ada_token), site.client(site.cy_token), site.signed_in("cy")):
        answer = client.get("/ada/secret/")
        assert answer.status_code == 200
        assert "hush" in answer.text


def test_a_public_app_is_served_to_anyone(site: Site) -> None:
    for client in (site.client(), site.client(site.bob_token)):
        assert client.get("/ada/runs/").status_code == 200


def test_a_bad_token_on_a_page_is_a_401_with_the_sentence(site: Site) -> None:
    answer = site.client("pst_nonsense").get("/ada/runs/")
    assert answer.status_code == 401
    assert answer.json() == {
        "error": "that token is not one this server gave out — make one with pasture token new"
    }


def test_nothing_at_an_unknown_address_is_a_404_page(site: Site) -> None:
    answer = site.client().get("/favicon.ico")
    assert answer.status_code == 404
    assert "nothing is at /favicon.ico" in answer.text


def test_the_guide_is_served_when_there_is_one(site: Site) -> None:
    from pasture.web._page_endpoints import GUIDE

    answer = site.client().get("/docs.md")
    if GUIDE.is_file():
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/markdown")
    else:
        assert answer.status_code == 404


# -- the <base> tag on its own ------------------------------------------------------


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        (b"<html><head><title>t</title></head></html>", b'<html><head><base href="U">'),
        (b"<HTML><HEAD lang=en><TITLE>t</TITLE>", b'<HTML><HEAD lang=en><base href="U"><TITLE>'),
        (b"<html><header>x</header></html>", b'<html><base href="U"><header>'),
        (b"<!DOCTYPE html><p>x", b'<!DOCTYPE html><base href="U"><p>x'),
        (b"<p>x</p>", b'<base href="U"><p>x</p>'),
    ],
)
def test_inject_base_puts_the_tag_after_head(page: bytes, expected: bytes) -> None:
    assert inject_base(page, "U").startswith(expected)


def test_inject_base_keeps_a_pages_own_base() -> None:
    page = b'<html><head><BASE target="_top"></head></html>'
    assert inject_base(page, "U") == page


def test_inject_base_escapes_the_address() -> None:
    assert b'<base href="a&quot;b">' in inject_base(b"<head>", 'a"b')


def test_a_sign_in_link_opens_once(site: Site) -> None:
    link = site.service.sign_in_link(site.cy)
    client = site.client()
    answer = client.get(f"/signin?link={link}")
    assert answer.status_code == 303
    assert "signed in as cy" in client.get("/").text
    again = site.client().get(f"/signin?link={link}")
    assert again.status_code == 401
    assert "that sign-in link has been used" in again.text


def test_the_tokens_page_makes_lists_and_revokes(site: Site) -> None:
    client = site.signed_in("bob")
    assert 'href="/tokens"' in client.get("/").text
    made = client.post("/tokens", data={"label": "my script", "read": "1"})
    assert made.status_code == 200
    secret = re.search(r"<code>(pst_[\w-]+)</code>", made.text)
    assert secret is not None
    caller = site.service.caller_for_token(secret.group(1))
    assert (caller.eid, caller.writes) == (site.bob.eid, False)
    listed = client.get("/tokens").text
    assert "my script" in listed and "reads only, in all your spaces" in listed
    assert secret.group(1) not in listed
    token_id = re.search(r"<td><code>([0-9a-f]{12})</code></td><td>my script</td>", listed)
    assert token_id is not None
    gone = client.post("/tokens/revoke", data={"id": token_id.group(1)})
    assert gone.status_code == 303
    assert "my script" not in client.get("/tokens").text
    # Another site's form cannot make one with the visitor's cookie.
    forged = client.post(
        "/tokens", data={"label": "stolen"}, headers={"Origin": "https://evil.example"}
    )
    assert forged.status_code == 403
    assert "stolen" not in client.get("/tokens").text


# -- what a token's page visit may not make ------------------------------------


def test_a_page_fetched_with_a_token_carries_no_pass(site: Site) -> None:
    """A pass acts for its person on the app; made for a token, it would write when the
    token only reads, reach where it may not, and outlive the token's revoking."""
    with_session = site.signed_in("ada").get("/ada/runs/")
    assert with_session.status_code == 200
    assert re.search(r'<base href="[^"]*/ada/runs/~psp_', with_session.text)
    for token in (site.ada_token, site.bob_token):
        page = site.client(token).get("/ada/runs/")
        assert page.status_code == 200
        assert "~psp_" not in page.text


@pytest.mark.parametrize(
    "app", ["/evil.example", "//evil.example", "ada", "ada/", "/runs", "ada/runs/../x", ""]
)
def test_signing_in_to_an_app_goes_nowhere_but_an_app_of_this_server(site: Site, app: str) -> None:
    answer = site.signed_in("ada").get("/signin/app", params={"app": app, "next": "/"})
    assert answer.status_code == 400
    assert "location" not in answer.headers
    assert "is not an app's address — write space/app, like ada/runs" in html.unescape(answer.text)


# -- the data browser's order: whatever is asked for ----------------------------------


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    sort=st.one_of(
        st.sampled_from(["who", "-who", "miles", "-miles", "--miles", "-", "jog.miles"]),
        st.text(max_size=40),
    ),
    app=st.sampled_from(["ada/runs", "ada/secret"]),
)
def test_any_sort_the_data_browser_is_sent_is_a_column_or_a_sentence(
    site: Site, sort: str, app: str
) -> None:
    """A column of the kind sorts its rows; anything else is refused with the kind's columns
    in the page — never a fault, never read into the filter as more of the grammar; and an
    app the person cannot read stays unread whatever the order asked for."""
    bob = site.signed_in("bob")
    answer = bob.get("/data", params={"app": app, "kind": "jog", "sort": sort})
    assert "Traceback" not in answer.text and answer.status_code < 500, answer.text
    if app == "ada/secret":  # private, and bob is in none of ada's spaces
        assert answer.status_code == 404
        return
    column = sort.strip().removeprefix("-")
    if not sort.strip() or column in ("who", "miles"):  # none asked for, or a column: read
        assert answer.status_code == 200, answer.text
        assert 'role="alert"' not in answer.text
    else:
        assert answer.status_code == 400, answer.text
        said = html.unescape(answer.text)
        assert "to sort by — its columns: who, miles" in said
