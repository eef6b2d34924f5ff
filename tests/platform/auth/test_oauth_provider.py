"""The OAuth provider's own rules, in-process (the whole sign-in through a real client
and Chromium is tests/web/test_oauth.py)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from mcp.server.auth.provider import TokenError
from pydantic import AnyUrl

from helpers.oauth_flow import MAY_BE, MAY_NOT_BE, approved, client, code_for
from pasture.caller import Caller
from pasture.platform.auth.client_documents import DocumentRefused, client_of
from pasture.platform.auth.oauth import CODE_USED_AGAIN, OAuth
from pasture.platform.service import Service


def test_a_refresh_token_is_spent_once_even_by_two_exchanges_at_once(
    service: Service, ada: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokens = approved(service, ada, "agent-r", writes=True)
    assert tokens.refresh_token is not None
    oauth = service.oauth
    agent = client("agent-r")

    async def load() -> Any:
        return await oauth.load_refresh_token(agent, tokens.refresh_token or "")

    refresh = anyio.run(load)
    assert refresh is not None
    # The second exchange read the token before the first spent it: it sees it still there.
    stale = oauth._token(refresh.token, "refresh")
    monkeypatch.setattr(OAuth, "_token", lambda self, token, kind: stale)

    async def exchange() -> Any:
        return await oauth.exchange_refresh_token(agent, refresh, [])

    first = anyio.run(exchange)
    assert first.access_token
    with pytest.raises(TokenError) as refused:
        anyio.run(exchange)
    assert refused.value.error == "invalid_grant"


def test_a_code_exchanged_twice_at_once_is_spent_once_and_both_exchanges_tokens_end(
    service: Service, ada: Caller
) -> None:
    """Two exchanges that each loaded the code before either spent it: one gets tokens, the
    other is refused, and the grant ends — with the tokens the first was given."""
    code = code_for(service, ada, "agent-twice")
    oauth = service.oauth
    agent = client("agent-twice")

    async def load() -> Any:
        return await oauth.load_authorization_code(agent, code)

    first, second = anyio.run(load), anyio.run(load)
    assert first is not None and second is not None

    async def exchange(loaded: Any) -> Any:
        return await oauth.exchange_authorization_code(agent, loaded)

    tokens = anyio.run(exchange, first)
    assert oauth.caller_for(tokens.access_token) is not None
    with pytest.raises(TokenError) as refused:
        anyio.run(exchange, second)
    assert (refused.value.error, refused.value.error_description) == (
        "invalid_grant",
        CODE_USED_AGAIN,
    )
    assert oauth.caller_for(tokens.access_token) is None
    assert oauth._token(tokens.refresh_token or "", "refresh") is None


DOCUMENT = "https://agent.example/client.json"


@settings(max_examples=200, deadline=None)
@given(bad=MAY_NOT_BE, good=MAY_BE)
def test_a_metadata_document_is_held_to_the_same_redirect_uris_as_a_registration(
    bad: str, good: str
) -> None:
    def document(uris: list[str]) -> bytes:
        return json.dumps({"client_id": DOCUMENT, "redirect_uris": uris}).encode()

    assert [str(u) for u in client_of(DOCUMENT, document([good])).redirect_uris or []] == [
        str(AnyUrl(good))
    ]
    for uris in ([bad], [good, bad]):
        with pytest.raises(DocumentRefused) as refused:
            client_of(DOCUMENT, document(uris))
        said = refused.value.sentence
        assert said.startswith(f"the client {DOCUMENT} cannot be used: its "), said
        assert "redirect" in said, said
