"""The MCP door's calls in the audit: its door, the token or OAuth client, how each went.

In process over the SDK's in-memory client, then over streamable HTTP to a real
`pasture serve`, called with an OAuth access token (the grant made through the
platform's own provider, as the consent page makes it): the server writes its
records off the calls' path and, at the latest, as it stops.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AuthorizationParams
from mcp.shared.auth import OAuthClientInformationFull
from mcp_talk import Club, in_memory, refused
from pydantic import AnyUrl

from helpers.mcp_answers import ok
from helpers.processes import running_server
from mcp import Client
from pasture.caller import Caller
from pasture.platform.nouns import VIEWER_WRITES
from pasture.platform.service import Service

RUN = {"who": "Ada", "miles": 5, "at": "2026-09-01"}
CALLBACK = "http://127.0.0.1:9/callback"


def records(service: Service, caller: Caller, app: str = "ada/runs") -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = service.audit(caller, app).data["records"]
    return found


def test_tool_calls_are_recorded_as_mcp_with_their_token(club: Club) -> None:
    service = club.service
    token = service.new_token(club.ada, "agent")
    ada = service.caller_for_token(token)
    bo = service.caller_for_token(service.new_token(club.bo, "bo's"))

    async def talk(client: Client) -> list[Any]:
        return [
            await client.call_tool("command", {"name": "log_run", "args": RUN, "app": "ada/runs"}),
            await client.call_tool(
                "graph_apply",
                {"app": "ada/runs", "bundles": {"entity": {"eid": "$j"}, "jog": {"who": "Ada"}}},
            ),
            await client.call_tool(
                "app_deploy", {"app": "ada/page", "files": {"index.html": "<title>A page</title>"}}
            ),
        ]

    logged, applied, deployed = in_memory(service, ada, "auto", talk)
    for answer in (logged, applied, deployed):
        ok(answer)
    said = in_memory(
        service,
        bo,
        "auto",
        lambda c: c.call_tool("command", {"name": "log_run", "args": RUN, "app": "ada/runs"}),
    )
    assert refused(said) == VIEWER_WRITES
    via = f"token {hashlib.sha256(token.encode()).hexdigest()[:12]}"
    seen = [
        (r["name"], r["door"], r["via"], r["action"], r["command"], r["outcome"])
        for r in records(service, club.ada)[1:]
    ]
    assert seen == [
        ("ada", "mcp", via, "command", "log_run", "ok"),
        ("ada", "mcp", via, "apply", None, "ok"),
        ("bo", "mcp", seen[2][2], "command", "log_run", VIEWER_WRITES),
    ]
    assert seen[2][2].startswith("token ") and seen[2][2] != via
    (page,) = records(service, club.ada, "ada/page")
    assert (page["door"], page["via"], page["action"], page["args"]) == (
        "mcp",
        via,
        "deploy",
        "1 file, 21 bytes",
    )


async def oauth_access_token(service: Service, caller: Caller, name: str) -> tuple[str, str]:
    """A client registered, asking, approved by `caller` and handed its tokens — through the
    provider's own steps, as the SDK's routes and the consent page take them. The access
    token and the grant's id."""
    provider = service.oauth
    client = OAuthClientInformationFull(
        client_id=f"test-{time.monotonic_ns()}",
        client_name=name,
        redirect_uris=[AnyUrl(CALLBACK)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    await provider.register_client(client)
    consent = await provider.authorize(
        client,
        AuthorizationParams(
            state="s",
            scopes=["read", "write"],
            code_challenge="x" * 43,
            redirect_uri=AnyUrl(CALLBACK),
            redirect_uri_provided_explicitly=True,
            resource=None,
        ),
    )
    request = parse_qs(urlsplit(consent).query)["request"][0]
    sent = service.oauth_decide(caller, request, approve=True, writes=True, spaces=None)
    code = await provider.load_authorization_code(client, parse_qs(urlsplit(sent).query)["code"][0])
    assert code is not None
    tokens = await provider.exchange_authorization_code(client, code)
    grant = service.tokens(caller).data["tokens"][-1]["id"]
    return tokens.access_token, grant


@pytest.mark.processes
def test_an_oauth_clients_calls_over_http_name_the_client(tmp_path: Path, club: Club) -> None:
    service = club.service
    token, grant = anyio.run(oauth_access_token, service, club.ada, "Test agent")
    # The server writes what it has not written yet as it stops, at the block's end; it
    # answers as the server the grant was made for (a token is bound to that one's /mcp).
    with running_server(service.home, "--public-url", service.base_url) as url:

        async def call() -> Any:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
            async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
                return await client.call_tool(
                    "command", {"name": "log_run", "args": RUN, "app": "ada/runs"}
                )

        ok(anyio.run(call))
    record = records(service, club.ada)[-1]
    assert {k: record[k] for k in ("name", "door", "via", "command", "outcome")} == {
        "name": "ada",
        "door": "mcp",
        "via": f"client Test agent ({grant[:12]})",
        "command": "log_run",
        "outcome": "ok",
    }
