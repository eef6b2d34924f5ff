"""An MCP client nobody here wrote signs in to pasture with OAuth 2.1, end to end.

The SDK's own `OAuthClientProvider` connects to a real `pasture serve` over
streamable HTTP: it is told 401, finds the protected resource metadata and
the authorization server's, registers itself, and sends the person to the
consent page — which Chromium fills in (sign in, choose, approve). Its
callback reads the code from where the browser was sent. Then the client
lists tools and runs commands; a refresh gives new tokens and ends the old
refresh token; a revoked grant signs nobody in; and a grant approved to read
only writes nothing through any tool, declared or code commands alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import mcp_types as types
import pytest
from doc_server import Documents, serving
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
from mcp import Client
from pasture.platform.nouns import READ_ONLY_GRANT

pytestmark = in_chromium

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


def test_a_read_only_grant_writes_nothing_through_any_tool(served: Served) -> None:
    _, seen = asyncio.run(connect(served, "read", ["ada"]))
    assert seen["log"].is_error and text(seen["log"]) == READ_ONLY_GRANT
    assert seen["cart"].is_error and text(seen["cart"]) == READ_ONLY_GRANT
    assert not seen["status"].is_error and text(seen["status"]) == "the cart is empty"
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
