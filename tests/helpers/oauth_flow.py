"""An agent's OAuth sign-in done in-process: through the provider's own steps, as the SDK's
routes would take them (`approved`), or over HTTP, through the SDK's routes and the consent
page of a whole web door (`door_at`, `Door`); and, generated, the redirect URIs a client
may have (`MAY_BE`) and those it may not (`MAY_NOT_BE`)."""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
from hypothesis import strategies as st
from mcp.server.auth.provider import AuthorizationParams
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl
from starlette.testclient import TestClient

from pasture.caller import Caller
from pasture.platform.access.limits import Rates
from pasture.platform.service import Service
from pasture.web import create_app

REDIRECT = "http://127.0.0.1:9/callback"


def client(client_id: str) -> OAuthClientInformationFull:
    return OAuthClientInformationFull(
        client_id=client_id, client_name="Agent X", redirect_uris=[AnyUrl(REDIRECT)]
    )


def code_for(service: Service, person: Caller, client_id: str, *, writes: bool = True) -> str:
    """The code a client is sent back with once `person` approves it."""
    oauth = service.oauth
    agent = client(client_id)

    async def flow() -> str:
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
        return parse_qs(urlsplit(back).query)["code"][0]

    return anyio.run(flow)


def approved(service: Service, person: Caller, client_id: str, *, writes: bool) -> OAuthToken:
    """The tokens a client gets once `person` approves it (to write, or only to read)."""
    oauth = service.oauth
    agent = client(client_id)
    code = code_for(service, person, client_id, writes=writes)

    async def exchange() -> OAuthToken:
        loaded = await oauth.load_authorization_code(agent, code)
        assert loaded is not None
        return await oauth.exchange_authorization_code(agent, loaded)

    return anyio.run(exchange)


# -- redirect URIs a client may have, and those it may not (OAuth 2.1, RFC 8252) -------------

LABEL = st.from_regex(r"\A[a-z][a-z0-9-]{0,9}\Z")
DOMAIN = st.builds(
    lambda labels, tld: ".".join([*labels, tld]),
    st.lists(LABEL, min_size=1, max_size=3),
    st.from_regex(r"\A[a-z]{2,6}\Z"),
).filter(lambda d: d != "localhost" and not d.endswith(".localhost"))
PATH = st.from_regex(r"\A(/[a-z0-9_~-]{1,8}){0,3}\Z")
PORT = st.integers(1, 65535)
LOOPBACK_V4 = st.integers(0, 2**24 - 1).map(lambda n: f"127.{n >> 16}.{(n >> 8) & 255}.{n & 255}")
PRIVATE_USE = st.builds(
    lambda labels: ".".join(labels), st.lists(LABEL, min_size=2, max_size=4)
)  # a domain, reversed: com.example.agent

MAY_BE = st.one_of(
    # (a path, if only /: the SDK's /authorize reads https://host as https://host/, which
    # then is not the one registered)
    st.builds(lambda d, p: f"https://{d}{p or '/'}", DOMAIN, PATH),
    st.builds(lambda h, port, p: f"http://{h}:{port}{p or '/'}", LOOPBACK_V4, PORT, PATH),
    st.builds(lambda port, p: f"http://[::1]:{port}{p or '/'}", PORT, PATH),
    st.builds(lambda port, p: f"http://localhost:{port}{p or '/'}", PORT, PATH),
    st.builds(lambda s, p: f"{s}:{p or '/callback'}", PRIVATE_USE, PATH),
)
NOT_LOOPBACK_IP = st.ip_addresses().filter(lambda ip: not ip.is_loopback)
PAYLOAD = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyz0123456789()/,;=%+.:", min_size=1, max_size=30
)
ONE_WORD_SCHEME = st.one_of(
    st.sampled_from(
        [
            "javascript",
            "data",
            "file",
            "vbscript",
            "blob",
            "about",
            "ftp",
            "ws",
            "wss",
            "mailto",
            "intent",
            "chrome",
            "view-source",
            "filesystem",
            "jar",
            "JavaScript",
        ]
    ),
    st.from_regex(r"\A[a-z][a-z0-9+-]{0,11}\Z").filter(lambda s: s not in ("http", "https")),
)
MAY_NOT_BE = st.one_of(
    # a scheme that is no native app's (RFC 8252 names them after a domain, with a dot)
    st.builds(lambda s, rest: f"{s}:{rest}", ONE_WORD_SCHEME, PAYLOAD),
    st.builds(lambda s, d, p: f"{s}://{d}{p}", ONE_WORD_SCHEME, DOMAIN, PATH),
    # plain http to anywhere but loopback, however the host is written
    st.builds(lambda d, p: f"http://{d}{p}", DOMAIN, PATH),
    st.builds(
        lambda ip, p: f"http://{ip}{p}" if ip.version == 4 else f"http://[{ip}]{p}",
        NOT_LOOPBACK_IP,
        PATH,
    ),
    st.builds(lambda h, d, p: f"http://{h}.{d}{p}", LOOPBACK_V4, DOMAIN, PATH),  # 127.0.0.1.evil
    st.builds(lambda d, p: f"http://localhost.{d}{p}", DOMAIN, PATH),
    # a user and password before the host
    st.builds(lambda u, d, p: f"https://{u}:pw@{d}{p}", LABEL, DOMAIN, PATH),
    # any of those that may be, with a fragment
    st.builds(lambda uri, f: f"{uri}#{f}", MAY_BE, st.from_regex(r"\A[a-z0-9]{0,8}\Z")),
)


# -- the same over HTTP, through the SDK's routes and the consent page -----------------------

BASE = "https://pasture.example"  # an issuer the SDK takes: https
MCP = f"{BASE}/mcp"  # the one resource its tokens are for
PASSWORD = "correct horse battery"
SESSION_COOKIE = "__Host-pasture_session"  # the session cookie's name on https


def pkce() -> tuple[str, str]:
    """A PKCE verifier and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).decode().rstrip("=")


@dataclass
class Agent:
    """A client registered over HTTP, with the PKCE verifier of its sign-in."""

    client_id: str
    verifier: str
    challenge: str
    redirect_uri: str = REDIRECT


@dataclass
class Door:
    """A Service at `BASE` (ada signed in: `session`) and its whole web door in this process,
    asked by Starlette's TestClient from `address`."""

    service: Service
    app: Any
    http: TestClient
    session: str

    def from_address(self, address: str) -> TestClient:
        """The same door, asked from another client address."""
        return TestClient(
            self.app,
            base_url=self.service.base_url,
            follow_redirects=False,
            client=(address, 50000),
        )

    def register(
        self, redirect_uris: list[str] | None = None, http: TestClient | None = None
    ) -> httpx.Response:
        """POST /register for a public client (no secret: PKCE proves it)."""
        return (http or self.http).post(
            "/register",
            json={
                "client_name": "Agent X",
                "redirect_uris": [REDIRECT] if redirect_uris is None else redirect_uris,
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            },
        )

    def registered(self, redirect_uri: str = REDIRECT) -> Agent:
        answer = self.register([redirect_uri])
        assert answer.status_code == 201, answer.text
        return Agent(answer.json()["client_id"], *pkce(), redirect_uri=redirect_uri)

    def authorize(self, agent: Agent, **extra: str | list[str]) -> httpx.Response:
        """GET /authorize as the client sends the person there."""
        params: dict[str, str | list[str]] = {
            "client_id": agent.client_id,
            "redirect_uri": agent.redirect_uri,
            "response_type": "code",
            "code_challenge": agent.challenge,
            "code_challenge_method": "S256",
            "state": "s",
            "scope": "read write",
            **extra,
        }
        return self.http.get("/authorize", params=params)

    def approve(self, authorized: httpx.Response) -> str:
        """ada approves on the consent page /authorize sent her to: the code the client gets."""
        assert authorized.status_code == 302, authorized.text
        consent = urlsplit(authorized.headers["location"])
        here = f"{consent.scheme}://{consent.netloc}{consent.path}"
        assert here == f"{self.service.base_url}/oauth/consent"
        request = parse_qs(consent.query)["request"][0]
        answer = self.http.post(
            "/oauth/consent",
            data={"request": request, "decision": "approve", "scope": "write", "spaces": "ada"},
            headers={"Cookie": f"{SESSION_COOKIE}={self.session}"},
        )
        assert answer.status_code == 303, answer.text
        return parse_qs(urlsplit(answer.headers["location"]).query)["code"][0]

    def exchange(self, agent: Agent, code: str, **extra: str) -> httpx.Response:
        """POST /token for a code."""
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": agent.redirect_uri,
            "client_id": agent.client_id,
            "code_verifier": agent.verifier,
            **extra,
        }
        return self.http.post("/token", data=form)

    def refresh(self, agent: Agent, refresh_token: str, **extra: str) -> httpx.Response:
        form = {
            "grant_type": "refresh_token",
            "refresh_token": refresh_token,
            "client_id": agent.client_id,
            **extra,
        }
        return self.http.post("/token", data=form)

    def signed_in(self, agent: Agent | None = None, **extra: str) -> tuple[Agent, dict[str, Any]]:
        """The whole sign-in, asking for this server's `/mcp`: the client and its tokens."""
        agent = agent or self.registered()
        mcp = f"{self.service.base_url}/mcp"
        code = self.approve(self.authorize(agent, resource=mcp, **extra))
        tokens = self.exchange(agent, code, resource=mcp)
        assert tokens.status_code == 200, tokens.text
        return agent, tokens.json()

    def mcp(self, token: str) -> httpx.Response:
        """tools/list on /mcp with a bearer token."""
        return self.http.post(
            "/mcp",
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-11-25",
            },
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        )


@contextmanager
def door_at(
    home: Path,
    rates: Rates | None = None,
    base_url: str = BASE,
    clock: Callable[[], float] | None = None,
) -> Iterator[Door]:
    """A Service in `home` at `base_url` (ada the owner, with a password) and its web door,
    running (the lifespan /mcp needs), until the block ends. `$PASTURE_USER` names ada.

    With `clock`, the limits count on it from the start: set later, a look of the limits'
    thread begun on the real clock could meet calls counted on the test's."""
    service = Service(home, base_url=base_url, rates=rates)
    if clock is not None:
        service.limiter.clock = clock
    try:
        ada = service.local_owner()
        service.people.set_password(ada, PASSWORD)
        app = create_app(service)
        http = TestClient(
            app, base_url=base_url, follow_redirects=False, client=("203.0.113.7", 50000)
        )
        with http:
            yield Door(service, app, http, service.sign_in("ada", PASSWORD))
    finally:
        service.close()
