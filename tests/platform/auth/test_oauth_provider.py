"""The OAuth provider's own rules, in-process (the whole sign-in through a real client
and Chromium is tests/web/test_oauth.py)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.server.auth.provider import TokenError

from helpers.oauth_flow import approved, client
from pasture.caller import Caller
from pasture.platform.auth.oauth import OAuth
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
