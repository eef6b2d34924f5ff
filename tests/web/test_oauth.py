"""An MCP client nobody here wrote signs in to pasture with OAuth 2.1, end to end; and the
authorization server tried as an attacker would.

The SDK's own `OAuthClientProvider` connects to a real `pasture serve` over
streamable HTTP: it is told 401, finds the protected resource metadata and
the authorization server's, registers itself, and sends the person to the
consent page — which Chromium fills in (sign in, choose, approve). Its
callback reads the code from where the browser was sent. Then the client
lists tools and runs commands; a refresh gives new tokens and ends the old
refresh token; a revoked grant signs nobody in; and a grant approved to read
only writes nothing through any tool, declared or code commands alike.

Then each way in an attacker tried, over real HTTP through the SDK's routes and
the consent page (Starlette's TestClient, `helpers.oauth_flow.door_at`): a flood
of registrations from one address, clients registered and never used, redirect
URIs that are no place to send a browser back to, a code used twice, and a token
asked for, or recorded for, another resource than this server's `/mcp`.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import mcp_types as types
import pytest
from doc_server import Documents, serving
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl
from test_web_browser import PASSWORD, Served, serve

from helpers.browser import CHROMIUM, LAUNCH_ARGS, in_chromium
from helpers.club import EXAMPLES
from helpers.mcp_answers import sentence_and_data
from helpers.oauth_flow import (
    BASE,
    DOMAIN,
    MAY_BE,
    MAY_NOT_BE,
    MCP,
    PATH,
    REDIRECT,
    Agent,
    Door,
    approved,
    door_at,
)
from mcp import Client
from pasture.platform.access.limits import Rates
from pasture.platform.auth.oauth import CODE_USED_AGAIN, UNUSED_CLIENT_LIFE
from pasture.platform.nouns import READ_ONLY_GRANT

CALLBACK = "http://127.0.0.1:9/callback"  # nothing listens: the browser is stopped there
RUN = {"who": "Ada", "miles": 5, "at": "2026-09-01"}


class Memory:
    """The client's token storage (`TokenStorage`), in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Documents]:
    """Clients' metadata documents on an HTTPS server of their own, which the server trusts."""
    with serving(tmp_path) as running:
        monkeypatch.setenv("SSL_CERT_FILE", str(running.ca_file))
        yield running


@pytest.fixture
def served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, docs: Documents, database: str
) -> Iterator[Served]:
    for running in serve(tmp_path, monkeypatch):
        ada = running.service.local_owner()
        running.service.deploy(ada, EXAMPLES / "cart", space="ada", app="cart")
        running.service.spaces.new_space(ada, "club")
        yield running


async def connect(
    served: Served, scope: str, spaces: list[str], document: str | None = None
) -> tuple[Memory, Any]:
    """Go through the whole sign-in with a browser; the storage and what the client saw.
    With `document`, the client names itself by that metadata document's address instead
    of registering."""
    from playwright.async_api import async_playwright

    storage = Memory()
    sent_to: asyncio.Queue[str] = asyncio.Queue()
    codes: asyncio.Queue[AuthorizationCodeResult] = asyncio.Queue()

    async def redirect_handler(url: str) -> None:
        await sent_to.put(url)

    async def callback_handler() -> AuthorizationCodeResult:
        return await codes.get()

    provider = OAuthClientProvider(
        server_url=f"{served.url}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="Test agent",
            redirect_uris=[AnyUrl(CALLBACK)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=document,
    )

    async def browser_approves() -> None:
        url = await sent_to.get()
        arrived = asyncio.Event()
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
            page = await browser.new_page()

            async def stop_at_callback(route: Any) -> None:
                query = parse_qs(urlsplit(route.request.url).query)
                await codes.put(
                    AuthorizationCodeResult(
                        code=query["code"][0], state=(query.get("state") or [None])[0]
                    )
                )
                await route.fulfill(body="signed in", content_type="text/plain")
                arrived.set()

            await page.route(f"{CALLBACK}*", stop_at_callback)
            await page.goto(url)
            await page.get_by_label("Name").fill("ada")
            await page.get_by_label("Password").fill(PASSWORD)
            await page.get_by_role("button", name="Sign in").click()
            await page.get_by_text("Test agent asks to reach your apps as you").wait_for()
            if document is not None:  # where it comes from, whatever it calls itself
                assert await page.get_by_role("link", name=document).count() == 1
            await page.locator(f'input[name=scope][value="{scope}"]').check()
            for box in await page.locator("input[name=spaces]").all():
                if await box.get_attribute("value") not in spaces:
                    await box.uncheck()
            await page.get_by_role("button", name="Approve").click()
            await arrived.wait()  # the browser reached the callback, with the code
            await browser.close()

    seen: dict[str, Any] = {}

    async def client_calls() -> None:
        async with Client(
            streamable_http_client(
                f"{served.url}/mcp", http_client=httpx2.AsyncClient(auth=provider, timeout=60)
            ),
            mode="legacy",
        ) as client:
            seen["tools"] = [t.name for t in (await client.list_tools()).tools]
            seen["apps"] = await client.call_tool("app_list", {})
            seen["log"] = await client.call_tool(
                "command", {"name": "log_run", "args": RUN, "app": "ada/runs"}
            )
            seen["cart"] = await client.call_tool(
                "command", {"name": "cart_add", "args": {"sku": "A"}}
            )
            seen["status"] = await client.call_tool("command", {"name": "cart_status", "args": {}})

    # What goes wrong in the browser is said at once, not as a client waiting for its code.
    await asyncio.gather(browser_approves(), client_calls())
    return storage, seen


def text(result: types.CallToolResult) -> str:
    assert isinstance(result.content[0], types.TextContent)
    return result.content[0].text


@in_chromium
def test_a_client_signs_in_runs_commands_refreshes_and_is_revoked(served: Served) -> None:
    storage, seen = asyncio.run(connect(served, "write", ["ada", "club"]))
    assert "command" in seen["tools"]
    assert not seen["log"].is_error, text(seen["log"])
    assert text(seen["log"]).startswith("log_run: wrote 1 entity in ada/runs")
    assert not seen["cart"].is_error and text(seen["cart"]).startswith("Added 1 × A")
    rows = served.service.graph.query(served.service.local_owner(), "ada/runs", ".jog!&.created!")
    assert [r["created"]["by"]["name"] for r in rows.data["rows"]] == ["ada"]
    assert storage.tokens is not None and storage.client is not None
    token, client = storage.tokens, storage.client
    # The grant is the person's, listed with their tokens.
    listed = served.service.tokens(served.service.local_owner())
    [grant] = [t for t in listed.data["tokens"] if t["label"] == "client Test agent"]
    assert grant["scope"] == "reads and writes, in ada, club"

    # A refresh: new tokens, and the old refresh token has ended.
    form = {
        "grant_type": "refresh_token",
        "refresh_token": token.refresh_token or "",
        "client_id": client.client_id,
        **({"client_secret": client.client_secret} if client.client_secret else {}),
    }
    fresh = httpx.post(f"{served.url}/token", data=form, timeout=60)
    assert fresh.status_code == 200, fresh.text
    renewed = fresh.json()
    assert renewed["access_token"] != token.access_token
    again = httpx.post(f"{served.url}/token", data=form, timeout=60)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert mcp_status(served, renewed["access_token"]) == 200

    # Revoked: the grant and every token of it sign nobody in.
    served.service.revoke_token(served.service.local_owner(), grant["id"])
    assert mcp_status(served, renewed["access_token"]) == 401
    assert mcp_status(served, token.access_token) == 401


@in_chromium
def test_a_read_only_grant_writes_nothing_through_any_tool(served: Served) -> None:
    _, seen = asyncio.run(connect(served, "read", ["ada"]))
    assert seen["log"].is_error and text(seen["log"]) == READ_ONLY_GRANT
    assert seen["cart"].is_error and text(seen["cart"]) == READ_ONLY_GRANT
    assert not seen["status"].is_error
    assert sentence_and_data(seen["status"])[0] == "the cart is empty"
    owner = served.service.local_owner()
    assert served.service.graph.query(owner, "ada/runs", ".jog!").data["rows"] == []
    assert served.service.graph.query(owner, "ada/cart", ".line!").data["rows"] == []
    listed = text(seen["apps"])
    assert "ada/runs" in listed and "club/" not in listed


def mcp_status(served: Served, token: str) -> int:
    answer = httpx.post(
        f"{served.url}/mcp",
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        timeout=60,
    )
    return answer.status_code


@in_chromium
def test_a_client_named_by_its_metadata_document_signs_in(served: Served, docs: Documents) -> None:
    document = docs.document(
        "/agents/test.json",
        client_name="Test agent",
        redirect_uris=[CALLBACK],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    metadata = httpx.get(f"{served.url}/.well-known/oauth-authorization-server", timeout=60).json()
    assert metadata["client_id_metadata_document_supported"] is True
    storage, seen = asyncio.run(connect(served, "write", ["ada"], document))
    assert storage.client is not None and storage.client.client_id == document
    assert not seen["log"].is_error, text(seen["log"])
    assert "/agents/test.json" in docs.asked  # fetched by the server, not registered
    listed = served.service.tokens(served.service.local_owner()).data["tokens"]
    assert [t["scope"] for t in listed if t["label"] == "client Test agent"] == [
        "reads and writes, in ada"
    ]


def test_a_document_that_cannot_be_used_is_a_page_saying_why(
    served: Served, docs: Documents
) -> None:
    wrong = docs.url("/agents/wrong.json")
    docs.document("/agents/wrong.json", redirect_uris=[CALLBACK])
    docs.answers["/agents/wrong.json"].body = (
        b'{"client_id": "https://elsewhere.example/c.json", "redirect_uris": ["%s"]}'
        % CALLBACK.encode()
    )
    for client_id, says in (
        (wrong, "exactly the address it was fetched from"),
        (docs.url("/agents/none.json"), "answered 404"),
    ):
        answer = httpx.get(
            f"{served.url}/authorize",
            params={
                "client_id": client_id,
                "redirect_uri": CALLBACK,
                "response_type": "code",
                "code_challenge": "x" * 43,
                "code_challenge_method": "S256",
                "state": "s",
            },
            timeout=60,
        )
        assert answer.status_code == 400 and says in answer.text
    owner = served.service.local_owner()
    assert [t for t in served.service.tokens(owner).data["tokens"] if "client" in t["label"]] == []


# -- the authorization server, tried as an attacker would ------------------------------------

EXAMPLES_EACH = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def door(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> Iterator[Door]:
    """The web door at `BASE`, registering without a limit (the limit has a test of its own)."""
    monkeypatch.setenv("PASTURE_USER", "ada")
    with door_at(tmp_path / "home", Rates(registrations=None)) as opened:
        yield opened


def refused(answer: httpx.Response, status: int, error: str) -> str:
    """An OAuth error answer's sentence, once its status and code are the ones expected."""
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["error"] == error, body
    sentence: str = body["error_description"]
    assert sentence and "Traceback" not in sentence
    return sentence


def rows(door: Door, sql: str, *args: Any) -> int:
    found = door.service.db.one(sql, *args)
    assert found is not None
    return int(found[0])


# Registration: at most 20 an hour from one address.

REGISTER_LIMIT = (
    "too many OAuth clients registered from your address — 20 an hour at most; an agent "
    "registers once and keeps its client, so try again in 180 s"
)


@pytest.mark.parametrize(
    "addresses",
    [
        ["198.51.100.9"] * 21,
        # every address of one /64 counts as one: rotating the low bits gains nothing
        [f"2001:db8:5:7:{i:x}:{i * 7:x}::{i + 1:x}" for i in range(21)],
    ],
    ids=["one IPv4 address", "one IPv6 /64"],
)
def test_one_address_registers_at_most_20_clients_an_hour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str, addresses: list[str]
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    clock = Clock(1000.0)
    with door_at(tmp_path / "home", clock=clock) as door:  # the platform's limits as they ship
        *first, last = addresses
        for address in first:
            assert door.register(http=door.from_address(address)).status_code == 201
        answer = door.register(http=door.from_address(last))
        assert refused(answer, 429, "temporarily_unavailable") == REGISTER_LIMIT
        assert answer.headers["retry-after"] == "180"
        assert rows(door, "SELECT count(*) FROM oauth_clients") == 20
        # another address is its own; and an hour on, the first registers again
        assert door.register(http=door.from_address("203.0.113.200")).status_code == 201
        clock.now += 3600
        assert door.register(http=door.from_address(last)).status_code == 201


def test_a_client_never_approved_is_forgotten_after_a_week_and_an_approved_one_kept(
    door: Door,
) -> None:
    unused = [door.registered() for _ in range(5)]
    used, tokens = door.signed_in()
    clock = Clock(time.time() + UNUSED_CLIENT_LIFE + 60)
    door.service.oauth.clock = clock
    for agent in unused:
        answer = door.authorize(agent)
        assert refused(answer, 400, "invalid_request") == f"Client ID '{agent.client_id}' not found"
    door.approve(door.authorize(used))  # the approved one signs in again, and refreshes
    assert door.refresh(used, tokens["refresh_token"]).status_code == 200
    door.registered()  # a registration sweeps the forgotten ones away
    ids = [a.client_id for a in unused]
    assert rows(door, "SELECT count(*) FROM oauth_clients") == 2
    assert all(
        door.service.db.one("SELECT 1 FROM oauth_clients WHERE client_id = ?", i) is None
        for i in ids
    )


# Redirect URIs: https, http only to loopback, a private-use scheme (RFC 8252); no fragment.


@EXAMPLES_EACH
@given(bad=MAY_NOT_BE, good=MAY_BE)
def test_a_redirect_uri_that_is_no_place_to_return_to_is_refused_at_registration(
    door: Door, bad: str, good: str
) -> None:
    before = rows(door, "SELECT count(*) FROM oauth_clients")
    for uris in ([bad], [good, bad]):
        answer = door.register(uris)
        assert answer.status_code == 400, (bad, answer.text)
        error = answer.json()
        if error["error"] == "invalid_client_metadata":  # the SDK could not read it as a URL
            assert "redirect_uris" in error["error_description"]
            continue
        sentence = refused(answer, 400, "invalid_redirect_uri")
        assert sentence.startswith("the redirect URI ") and " cannot be used: " in sentence
    assert rows(door, "SELECT count(*) FROM oauth_clients") == before


@EXAMPLES_EACH
@given(good=MAY_BE)
def test_a_redirect_uri_a_client_may_have_is_registered_and_sent_back_to(
    door: Door, good: str
) -> None:
    agent = door.registered(good)
    answer = door.authorize(agent)
    assert answer.status_code == 302
    assert answer.headers["location"].startswith(f"{BASE}/oauth/consent?request=")


def test_the_audit_s_own_redirect_uris_are_refused_each_with_its_sentence(door: Door) -> None:
    said = {
        uri: refused(door.register([uri]), 400, "invalid_redirect_uri")
        for uri in (
            "javascript:alert(document.cookie)",
            "data:text/html,<script>alert(1)</script>",
            "file:///etc/passwd",
            "http://evil.example/callback",
            "https://agent.example/callback#frag",
        )
    }
    scheme = (
        "a redirect URI is https://, http:// to loopback, or a native app's private-use "
        "scheme named after a domain it owns, reversed (com.example.agent:/callback, as "
        "RFC 8252 says) — not {}:"
    )
    assert said == {
        "javascript:alert(document.cookie)": "the redirect URI javascript:alert(document.cookie) "
        "cannot be used: " + scheme.format("javascript"),
        "data:text/html,<script>alert(1)</script>": "the redirect URI "
        "data:text/html,<script>alert(1)</script> cannot be used: " + scheme.format("data"),
        "file:///etc/passwd": "the redirect URI file:///etc/passwd cannot be used: "
        + scheme.format("file"),
        "http://evil.example/callback": "the redirect URI http://evil.example/callback cannot "
        "be used: plain http:// is only for this machine's loopback (127.0.0.1, [::1] or "
        "localhost, for a native app) — anywhere else a redirect URI is https://",
        "https://agent.example/callback#frag": "the redirect URI "
        "https://agent.example/callback#frag cannot be used: a redirect URI has no #fragment",
    }


@pytest.mark.parametrize("kept", ["javascript:alert(1)", "http://evil.example/cb"])
def test_a_client_kept_from_before_is_never_sent_back_to_a_uri_the_rule_refuses(
    door: Door, kept: str
) -> None:
    """A client registered before the rule, as an older server kept it: /authorize answers
    the person itself, and sends the browser nowhere."""
    agent = door.registered()
    row = door.service.db.one("SELECT info FROM oauth_clients WHERE client_id = ?", agent.client_id)
    assert row is not None
    info = json.loads(row["info"])
    info["redirect_uris"] = [kept]
    with door.service.db.transaction() as conn:
        conn.execute(
            "UPDATE oauth_clients SET info = ? WHERE client_id = ?",
            (json.dumps(info), agent.client_id),
        )
    for answer in (
        door.authorize(agent, redirect_uri=kept),
        door.http.get(
            "/authorize",
            params={
                "client_id": agent.client_id,
                "response_type": "code",
                "code_challenge": "x" * 43,
            },
        ),
    ):
        assert answer.status_code == 400 and "location" not in answer.headers
        assert answer.json()["error"] == "invalid_request"


# A code used again: refused, and every token issued from it revoked (RFC 6749 §4.1.2).


@pytest.mark.parametrize(
    ("again", "error", "says"),
    [
        ({}, "invalid_grant", CODE_USED_AGAIN),  # the very same request
        ({"resource": MCP}, "invalid_grant", CODE_USED_AGAIN),
        # without the verifier, or sent elsewhere: the SDK's sentence, and revoked all the same
        ({"code_verifier": "w" * 50}, "invalid_grant", "incorrect code_verifier"),
        (
            {"redirect_uri": "http://127.0.0.1:9/elsewhere"},
            "invalid_request",
            "redirect_uri did not match the one used when creating auth code",
        ),
    ],
    ids=["the same", "naming the resource", "another verifier", "another redirect"],
)
def test_a_code_used_again_revokes_every_token_first_issued_from_it(
    door: Door, again: dict[str, str], error: str, says: str
) -> None:
    agent = door.registered()
    code = door.approve(door.authorize(agent, resource=MCP))
    first = door.exchange(agent, code)
    assert first.status_code == 200, first.text
    tokens = first.json()
    assert door.mcp(tokens["access_token"]).status_code == 200

    assert refused(door.exchange(agent, code, **again), 400, error) == says
    assert door.mcp(tokens["access_token"]).status_code == 401
    assert refused(door.refresh(agent, tokens["refresh_token"]), 400, "invalid_grant")
    assert [
        t
        for t in door.service.tokens(door.service.local_owner()).data["tokens"]
        if t["label"].startswith("client")
    ] == []


def test_a_code_presented_by_another_client_ends_nothing(door: Door) -> None:
    agent, other = door.registered(), door.registered()
    code = door.approve(door.authorize(agent))
    tokens = door.exchange(agent, code).json()
    stranger = Agent(other.client_id, agent.verifier, agent.challenge)
    assert refused(door.exchange(stranger, code), 400, "invalid_grant") == (
        "authorization code does not exist"
    )
    assert door.mcp(tokens["access_token"]).status_code == 200


# The resource (RFC 8707): tokens for this server's /mcp, and for nothing else.

OWN_SPELLINGS = [MCP, f"{MCP}/", "https://PASTURE.example/mcp", "https://pasture.example:443/mcp"]
ELSEWHERE = st.one_of(
    st.builds(lambda d, p: f"https://{d}{p}", DOMAIN, st.sampled_from(["/mcp", "/", "", "/x/mcp"])),
    st.builds(lambda p: f"{BASE}{p}", PATH.filter(lambda p: p not in ("/mcp", ""))),
    st.sampled_from(
        [
            "https://other.example/mcp",
            "https://pasture.example:8443/mcp",
            "http://pasture.example/mcp",
            f"{MCP}?tenant=other",
            f"{MCP}#frag",
            f"{MCP}2",
            "https://pasture.example.other.example/mcp",
            "https://other.example/mcp?u=https://pasture.example/mcp",
            "urn:pasture:mcp",
            "mcp",
            "",
        ]
    ),
)


def elsewhere_sentence(resource: str) -> str:
    return (
        f"pasture gives tokens for its own MCP server, {MCP}, and not for {resource} "
        f"(RFC 8707) — ask with resource={MCP}, or none"
    )


@EXAMPLES_EACH
@given(resource=ELSEWHERE)
def test_authorize_sends_a_client_asking_for_another_resource_back_with_invalid_target(
    door: Door, resource: str
) -> None:
    agent = door.registered()
    parked = rows(door, "SELECT count(*) FROM oauth_requests")
    answer = door.authorize(agent, resource=resource)
    assert answer.status_code == 302
    back = urlsplit(answer.headers["location"])
    assert f"{back.scheme}://{back.netloc}{back.path}" == REDIRECT
    said = parse_qs(back.query, keep_blank_values=True)
    assert said["error"] == ["invalid_target"] and said["state"] == ["s"]
    assert said["error_description"] == [elsewhere_sentence(resource)]
    # several, one of them elsewhere: refused too, whichever comes last, as a query or a form
    for several in ([MCP, resource], [resource, MCP]):
        assert refused(door.authorize(agent, resource=several), 400, "invalid_target") == (
            elsewhere_sentence(resource)
        )
        posted = door.http.post("/authorize", data={**asked(agent), "resource": several})
        assert refused(posted, 400, "invalid_target") == elsewhere_sentence(resource)
    assert rows(door, "SELECT count(*) FROM oauth_requests") == parked  # none asked the person
    # the form read to see its resources is the SDK's to read again
    posted = door.http.post("/authorize", data={**asked(agent), "resource": [MCP, MCP]})
    assert posted.status_code == 302, posted.text
    assert posted.headers["location"].startswith(f"{BASE}/oauth/consent?request=")


def asked(agent: Agent) -> dict[str, str]:
    """What a client sends /authorize, as a form."""
    return {
        "client_id": agent.client_id,
        "redirect_uri": agent.redirect_uri,
        "response_type": "code",
        "code_challenge": agent.challenge,
        "code_challenge_method": "S256",
        "state": "s",
    }


@EXAMPLES_EACH
@given(resource=ELSEWHERE)
def test_token_refuses_a_code_or_a_refresh_for_another_resource_with_invalid_target(
    door: Door, resource: str
) -> None:
    agent = door.registered()
    code = door.approve(door.authorize(agent))
    for form in ({"resource": resource}, {"resource": [MCP, resource]}):
        answer = door.exchange(agent, code, **form)  # type: ignore[arg-type]
        assert refused(answer, 400, "invalid_target") == elsewhere_sentence(resource)
    tokens = door.exchange(agent, code, resource=MCP).json()  # the code was not spent by it
    answer = door.refresh(agent, tokens["refresh_token"], resource=resource)
    assert refused(answer, 400, "invalid_target") == elsewhere_sentence(resource)
    assert door.refresh(agent, tokens["refresh_token"], resource=MCP).status_code == 200


@pytest.mark.parametrize("spelled", OWN_SPELLINGS)
def test_this_servers_own_mcp_however_spelled_gets_a_token_that_works_there(
    door: Door, spelled: str
) -> None:
    agent = door.registered()
    code = door.approve(door.authorize(agent, resource=spelled))
    answer = door.exchange(agent, code, resource=spelled)
    assert answer.status_code == 200, answer.text
    assert door.mcp(answer.json()["access_token"]).status_code == 200


def issued_elsewhere(door: Door, monkeypatch: pytest.MonkeyPatch, resource: str) -> dict[str, Any]:
    """Tokens of a grant recorded for `resource`, as a request parked before /authorize
    checked the resource made one."""
    agent = door.registered()
    with monkeypatch.context() as before_the_check:
        before_the_check.setattr(door.service.oauth, "target_refusal", lambda resources: None)
        authorized = door.authorize(agent, resource=resource)
    tokens = door.exchange(agent, door.approve(authorized))
    assert tokens.status_code == 200, tokens.text
    return {"agent": agent, **tokens.json()}


@pytest.mark.parametrize(
    "resource", ["https://other.example/mcp", f"{BASE}/elsewhere", "http://pasture.example/mcp"]
)
def test_a_token_recorded_for_another_resource_is_refused_at_mcp_and_everywhere(
    door: Door, monkeypatch: pytest.MonkeyPatch, resource: str
) -> None:
    tokens = issued_elsewhere(door, monkeypatch, resource)
    sentence = (
        f"this token was issued for {resource}, not for this server's MCP ({MCP}) — sign the "
        f"agent in again at {MCP}"
    )
    answer = door.mcp(tokens["access_token"])
    assert answer.status_code == 401
    assert answer.json()["error"]["message"] == sentence
    in_header = sentence.replace("—", "-")  # RFC 6750: printable ASCII in a header
    assert f'error_description="{in_header}"' in answer.headers["www-authenticate"]
    api = door.http.get("/api/tools", headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert api.status_code == 401 and api.json()["error"] == sentence
    answer = door.refresh(tokens["agent"], tokens["refresh_token"])
    assert refused(answer, 400, "invalid_target") == sentence


def test_a_token_issued_at_this_servers_old_address_is_refused_at_its_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    with door_at(tmp_path / "home", base_url="https://old.example") as old:
        _, tokens = old.signed_in()
        assert old.mcp(tokens["access_token"]).status_code == 200
    with door_at(tmp_path / "home") as moved:
        answer = moved.mcp(tokens["access_token"])
        assert answer.status_code == 401
        assert answer.json()["error"]["message"].startswith(
            "this token was issued for https://old.example/mcp, not for this server's MCP"
        )


def test_a_grant_made_before_grants_recorded_their_resource_is_this_servers_own(
    door: Door,
) -> None:
    agent, tokens = door.signed_in()
    with door.service.db.transaction() as conn:
        conn.execute("UPDATE oauth_grants SET resource = NULL")
    assert door.mcp(tokens["access_token"]).status_code == 200
    refreshed = door.refresh(agent, tokens["refresh_token"], resource=MCP)
    assert refreshed.status_code == 200, refreshed.text
    assert door.mcp(refreshed.json()["access_token"]).status_code == 200
    later = approved(door.service, door.service.local_owner(), "agent-old", writes=True)
    assert door.mcp(later.access_token).status_code == 200  # the provider's own steps too
