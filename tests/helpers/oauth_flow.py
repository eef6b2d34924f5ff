"""An agent's OAuth sign-in done in-process, as the SDK's routes would: the client
registered, its request parked, the person's yes, the code exchanged for tokens."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import anyio
from mcp.server.auth.provider import AuthorizationParams
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl

from pasture.caller import Caller
from pasture.platform.service import Service

REDIRECT = "http://127.0.0.1:9/callback"


def client(client_id: str) -> OAuthClientInformationFull:
    return OAuthClientInformationFull(
        client_id=client_id, client_name="Agent X", redirect_uris=[AnyUrl(REDIRECT)]
    )


def approved(service: Service, person: Caller, client_id: str, *, writes: bool) -> OAuthToken:
    """The tokens a client gets once `person` approves it (to write, or only to read)."""
    oauth = service.oauth
    agent = client(client_id)

    async def flow() -> OAuthToken:
        await oauth.register_client(agent)
        params = AuthorizationParams(
            state="s",
            scopes=None,
            code_challenge="c" * 43,
            redirect_uri=AnyUrl(REDIRECT),
            redirect_uri_provided_explicitly=True,
        )
        consent = await oauth.authorize(agent, params)
        request = parse_qs(urlsplit(consent).query)["request"][0]
        back = service.oauth_decide(person, request, approve=True, writes=writes, spaces=None)
        code = parse_qs(urlsplit(back).query)["code"][0]
        loaded = await oauth.load_authorization_code(agent, code)
        assert loaded is not None
        return await oauth.exchange_authorization_code(agent, loaded)

    return anyio.run(flow)
