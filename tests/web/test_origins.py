"""A page of one app cannot act with its visitor's sign-in on another app, the dashboard or /mcp.

In Chromium, against a real server, both ways a server may keep pages apart:
sandboxed (no apps domain: pages in opaque origins, fetching with a pass for
their own app only) and an origin of each app's own (`--apps-domain
localhost`). Ada is signed in, and has been on her private app; then she opens
a public page of Bob's, whose script tries everything it can against her app,
its API (on either origin), the dashboard and /mcp. It reads and writes nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_web_browser import PASSWORD, Served, serve

from helpers import needs
from helpers.browser import CHROMIUM, LAUNCH_ARGS, in_chromium
from helpers.databases import IN_A_BROWSER, sqlite_only

MARKER = "TOP-SECRET-NOTE-4f3c"
PAGE_MARKER = "hush-page-9a1b"

LURE = """<!doctype html>
<html><head><title>Lure</title></head>
<body><pre id="out">working</pre>
<script type="module">
const out = {};
async function attempt(name, url, init = {}) {
  try {
    const r = await fetch(url, { credentials: "include", ...init });
    out[name] = { status: r.status, text: (await r.text()).slice(0, 3000) };
  } catch (e) {
    out[name] = { error: String(e) };
  }
}
const json = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
const write = JSON.stringify({ entity: { eid: "$x" }, note: { text: "written by the lure" } });
await attempt("her page", SECRET);
await attempt("her page's api", SECRET + "api/query?filter=.note!");
await attempt("her api on the main origin", MAIN + "/ada/secret/api/query?filter=.note!");
await attempt("a write", SECRET + "api/apply", { method: "POST", headers: json, body: write });
await attempt("a write on the main origin", MAIN + "/ada/secret/api/apply",
              { method: "POST", headers: json, body: write });
await attempt("a plain write", MAIN + "/ada/secret/api/apply",
              { method: "POST", mode: "no-cors", headers: { "Content-Type": "text/plain" },
                body: write });
await attempt("her me", SECRET + "api/me");
await attempt("the dashboard", MAIN + "/");
await attempt("mcp", MAIN + "/mcp", { method: "POST", headers: json, body: JSON.stringify({
  jsonrpc: "2.0", id: 1, method: "tools/call",
  params: { name: "graph_query", arguments: { app: "ada/secret", filter: ".note!" } } }) });
document.getElementById("out").textContent = JSON.stringify(out);
document.title = "tried";
</script></body></html>
"""

SECRET_INDEX = f"""<!doctype html>
<html><head><title>Secret</title></head><body><p>{PAGE_MARKER}</p>
<script type="module">
import {{ query }} from './api/client.js'
const rows = (await query('.note!')).rows
document.body.insertAdjacentHTML('beforeend', '<p id="notes">' + rows.length + ' notes</p>')
</script></body></html>
"""

VOCAB = '{"$defs": {"note": {"properties": {"text": {"type": "string"}}}}}'


@pytest.fixture(params=["sandboxed", "own origins"])
def served(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str
) -> Iterator[Served]:
    domain = None if request.param == "sandboxed" else "localhost"
    yield from serve(tmp_path, monkeypatch, apps_domain=domain)


def _set_up(served: Served) -> None:
    service = served.service
    ada = service.local_owner()
    files = {"index.html": SECRET_INDEX, "vocab.json": VOCAB}
    service.deploy(ada, files, space="ada", app="secret", access="private")
    service.apply(ada, "ada/secret", {"entity": {"eid": "$n"}, "note": {"text": MARKER}})
    bob = service.people.new_user(ada, "bob", PASSWORD)
    where = (
        f"const SECRET = {json.dumps(served.app_url('ada', 'secret'))};\n"
        f"const MAIN = {json.dumps(served.url)};\n"
    )
    lure = LURE.replace("const out = {};", where + "const out = {};")
    service.deploy(bob, {"index.html": lure}, space="bob", app="lure", access="public")


@in_chromium
@sqlite_only(IN_A_BROWSER)
def test_another_apps_page_reads_and_writes_nothing_with_the_visitors_sign_in(
    served: Served,
) -> None:
    sync_api = needs.playwright()
    _set_up(served)
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            page = browser.new_context().new_page()
            page.set_default_timeout(30_000)
            page.on("pageerror", lambda e: errors.append(str(e)))
            # Ada signs in, and opens her private app from the dashboard: it works for her.
            page.goto(f"{served.url}/signin")
            page.get_by_label("Name").fill("ada")
            page.get_by_label("Password").fill(PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(f"{served.url}/")
            page.get_by_role("link", name="Secret").click()
            sync_api.expect(page.locator("#notes")).to_have_text("1 notes")
            assert PAGE_MARKER in page.content()
            # Then she opens Bob's public page.
            page.goto(served.app_url("bob", "lure"))
            page.wait_for_function("document.title === 'tried'")
            tried: dict[str, Any] = json.loads(page.locator("#out").text_content() or "{}")
        finally:
            browser.close()
    assert errors == []
    seen = json.dumps(tried)
    assert MARKER not in seen, tried
    assert PAGE_MARKER not in seen, tried
    assert "signed in as" not in seen, tried
    assert '"eid": "' not in tried.get("her me", {}).get("text", ""), tried
    assert set(tried) >= {"her page", "a write", "the dashboard", "mcp"}
    rows = served.service.graph.query(served.service.local_owner(), "ada/secret", ".note!").data[
        "rows"
    ]
    assert [r["note"]["text"] for r in rows] == [MARKER]


# -- an app's own origin, in process ---------------------------------------------------------
@pytest.fixture
def apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> Iterator[Any]:
    from starlette.testclient import TestClient

    from pasture.platform.service import Service
    from pasture.web import create_app

    monkeypatch.setenv("PASTURE_USER", "ada")
    service = Service(tmp_path / "home", base_url="http://testserver", apps_domain="apps.test")
    ada = service.local_owner()
    service.deploy(ada, {"index.html": SECRET_INDEX, "vocab.json": VOCAB}, app="secret",
                   access="private")  # fmt: skip
    client = TestClient(create_app(service), base_url="http://testserver", follow_redirects=False)
    yield service, ada, client
    service.close()


def test_on_an_apps_origin_there_is_only_the_app(apart: Any) -> None:
    service, ada, client = apart
    own = {"Host": "secret--ada.apps.test"}
    assert service.gate.app_info(ada, "secret").url == "http://secret--ada.apps.test/"
    # Signed out, a private app is not there; the page offers the way to sign in.
    missing = client.get("/", headers=own)
    assert missing.status_code == 404
    assert 'href="/.pasture/signin?next=%2F"' in missing.text
    # Nothing of the platform's is on it: /mcp, the dashboard, sign-in are the app's paths.
    for path in ("/mcp", "/signin", "/docs.md"):
        answer = client.get(path, headers=own)
        assert answer.status_code in (400, 404), path
        assert "pasture serving" not in answer.text
    assert client.post("/mcp", headers=own, json={}).status_code == 405
    # Another label under the domain is no app; another port is not this server.
    assert client.get("/", headers={"Host": "nothing--here.apps.test"}).status_code == 404
    assert client.get("/", headers={"Host": "secret--ada.apps.test:81"}).status_code == 421
    # On the main origin an app has no pages: they are at its own origin.
    moved = client.get("/ada/secret/index.html?x=1")
    assert moved.status_code == 307
    assert moved.headers["location"] == "http://secret--ada.apps.test/index.html?x=1"


def _state_of(answer: Any) -> str:
    """The secret an app origin's /.pasture/signin gives the browser (its cookie)."""
    found = re.search(r"pasture_state=([^;]+);", answer.headers["set-cookie"])
    assert found is not None and "Path=/;" in answer.headers["set-cookie"]
    return found.group(1)


def test_signing_in_to_an_apps_origin_goes_through_the_main_one(apart: Any) -> None:
    service, ada, client = apart
    own = {"Host": "secret--ada.apps.test"}
    hop = client.get("/.pasture/signin?next=/index.html", headers=own)
    assert hop.status_code == 303
    state = _state_of(hop)
    assert hop.headers["location"] == (
        f"http://testserver/signin/app?app=ada%2Fsecret&next=%2Findex.html&state={state}"
    )
    session = service.new_session(ada)
    coded = client.get(hop.headers["location"], cookies={"pasture_session": session})
    assert coded.status_code == 303
    target = coded.headers["location"]
    assert target.startswith("http://secret--ada.apps.test/.pasture/session?code=psc_")
    path = target.split("apps.test", 1)[1]
    landed = client.get(path, headers=own, cookies={"pasture_state": state})
    assert landed.status_code == 303 and landed.headers["location"] == "/index.html"
    pass_cookie = landed.cookies["pasture_pass"]
    # The pass reads the app on its origin, and is nobody anywhere else.
    mine = client.get(
        "/api/query?filter=.note!", headers=own, cookies={"pasture_pass": pass_cookie}
    )
    assert mine.status_code == 200
    spent = client.get(path, headers=own, cookies={"pasture_state": state})
    assert spent.status_code == 401  # a code is spent once
    client.cookies.clear()
    elsewhere = client.get(
        "/ada/secret/api/query?filter=.note!", cookies={"pasture_pass": pass_cookie}
    )
    # On the main origin a pass cookie is nobody's: the private app is not there for them.
    assert elsewhere.status_code == 404


def test_a_code_sent_in_a_link_signs_nobody_in_as_its_maker(apart: Any) -> None:
    """Login CSRF: Ada makes a code in her own browser and sends Bob the link; in Bob's
    browser (no secret, or his own) it is worth nothing, so he is not made to act as Ada."""
    service, ada, client = apart
    own = {"Host": "secret--ada.apps.test"}
    hop = client.get("/.pasture/signin?next=/", headers=own)
    coded = client.get(
        hop.headers["location"], cookies={"pasture_session": service.new_session(ada)}
    )
    link = coded.headers["location"].split("apps.test", 1)[1]
    bobs_own = _state_of(client.get("/.pasture/signin?next=/", headers=own))
    for held in ({}, {"pasture_state": bobs_own}):
        client.cookies.clear()
        answer = client.get(link, headers=own, cookies=held)
        assert answer.status_code == 401
        assert "pasture_pass" not in answer.headers.get("set-cookie", "")
        assert (
            "that sign-in link has been used, is over a minute old, or was not started in "
            "this browser — sign in again from the app&#39;s page"
        ) in answer.text
    # Started without the secret, the main origin first sends the browser to get one.
    plain = client.get(
        "/signin/app?app=ada/secret&next=/", cookies={"pasture_session": service.new_session(ada)}
    )
    assert plain.status_code == 303
    assert plain.headers["location"] == "http://secret--ada.apps.test/.pasture/signin?next=%2F"


def test_on_https_the_cookies_are_this_origins_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On HTTPS every cookie is `__Host-…`: a browser takes it only from the very origin
    that sets it, so a page of another app under the same apps domain cannot set one for
    the main origin or an app's (`Domain=`), and one it sets without the prefix is not read."""
    from starlette.testclient import TestClient

    from pasture.platform.service import Service
    from pasture.web import create_app

    monkeypatch.setenv("PASTURE_USER", "ada")
    service = Service(tmp_path / "home", base_url="https://testserver", apps_domain="apps.test")
    try:
        ada = service.local_owner()
        service.people.set_password(ada, "correct horse")
        service.deploy(ada, {"index.html": SECRET_INDEX, "vocab.json": VOCAB}, app="secret")
        client = TestClient(create_app(service), base_url="https://testserver")
        signed = client.post(
            "/signin", data={"name": "ada", "password": "correct horse"}, follow_redirects=False
        )
        made = signed.headers["set-cookie"]
        assert made.startswith("__Host-pasture_session=")
        assert "Secure" in made and "Path=/" in made and "Domain" not in made
        session = made.split(";")[0].split("=", 1)[1]
        fresh = TestClient(create_app(service), base_url="https://testserver")
        assert (
            "signed in as ada" in fresh.get("/", cookies={"__Host-pasture_session": session}).text
        )
        tossed = fresh.get("/", cookies={"pasture_session": session})  # set by a sibling
        assert "signed in as ada" not in tossed.text
        hop = fresh.get(
            "/.pasture/signin?next=/", headers={"Host": "secret--ada.apps.test"},
            follow_redirects=False,
        )  # fmt: skip
        state = hop.headers["set-cookie"]
        assert state.startswith("__Host-pasture_state=") and "Secure" in state
        assert "Path=/;" in state or state.endswith("Path=/")
    finally:
        service.close()
