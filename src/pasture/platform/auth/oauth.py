"""OAuth 2.1 for `/mcp`: the authorization server inside `pasture serve`.

The MCP SDK serves the protocol — metadata (RFC 8414), dynamic client
registration (RFC 7591), `/authorize` with PKCE (S256), `/token` with refresh
tokens, `/revoke` (`mcp.server.auth.routes`); this is the provider it asks,
keeping everything in the platform database:

- a client registers, and is kept (`oauth_clients`); or it names itself by
  the `https://` address of its metadata document, which is fetched, checked
  and kept beside the registered ones (`pasture.platform.auth.client_documents`);
- `/authorize` parks the request (`oauth_requests`, ten minutes) and sends the
  person to pasture's own consent page (`/oauth/consent`), where they sign in,
  see which client asks and for what, and choose: read only, or read and
  write, and which of their spaces. Approving makes a **grant** (`oauth_grants`)
  and a one-time code (a minute); denying sends the client `access_denied`;
- the code becomes an access token (an hour) and a refresh token (30 days);
  a refresh gives a new pair and the old refresh token ends (rotation);
- revoking either token, or the grant (`pasture token revoke`, the dashboard),
  ends the grant and every token of it at once.

Codes and tokens are kept only as their sha256. A token's caller carries the
grant's scope (`Caller.writes`, `Caller.spaces`), which every layer enforces.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio.to_thread
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    IdentityAssertionParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken

from pasture.caller import Caller
from pasture.errors import DocumentRefused, NotFound, UsageError
from pasture.platform.auth import hashing as _id
from pasture.platform.auth.caller_cache import Remembered
from pasture.platform.auth.client_documents import ClientDocuments, is_document_id
from pasture.platform.auth.tokens import ID, scope_words, spaces_of
from pasture.platform.db.platform_db import PlatformDB
from pasture.platform.db.platform_tables import REACH_MOVED
from pasture.platform.nouns import OAUTH_ACCESS_PREFIX
from pasture.values import now

log = logging.getLogger("pasture.oauth")

READ, WRITE = "read", "write"
SCOPES = [READ, WRITE]
REQUEST_LIFE = 600
CODE_LIFE = 60
ACCESS_LIFE = 3600
REFRESH_LIFE = 30 * 24 * 3600


@dataclass(frozen=True)
class Asking:
    """A parked authorization request, as the consent page shows it."""

    id: str
    client_id: str
    client_name: str
    client_uri: str | None
    redirect_uri: str
    writes: bool  # whether the client asked to write (the person decides)


def _is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.") or host.endswith(".localhost")


def _scopes(writes: bool) -> list[str]:
    return [READ, WRITE] if writes else [READ]


class OAuth:
    """The provider the SDK's routes call (`OAuthAuthorizationServerProvider`), and the
    consent page's two questions. `base_url` is this server's main origin."""

    def __init__(self, db: PlatformDB, base_url: str) -> None:
        self.db = db
        self.base_url = base_url
        self._known: Remembered[tuple[Caller, int]] = Remembered(db)  # with when it expires
        host = urlsplit(base_url).hostname or ""
        self.documents = ClientDocuments(loopback=_is_loopback(host))

    async def _run(self, fn: Any, *args: Any) -> Any:
        return await anyio.to_thread.run_sync(fn, *args)

    def metadata(self, issuer: str) -> OAuthMetadata:
        """What this server says of itself (RFC 8414): the SDK's description, with the
        metadata documents it also takes, and public clients (PKCE, no secret)."""
        from mcp.server.auth.routes import build_metadata
        from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
        from pydantic import AnyHttpUrl

        described = build_metadata(
            AnyHttpUrl(issuer),
            None,
            ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES, default_scopes=SCOPES),
            RevocationOptions(enabled=True),
        )
        methods = [*(described.token_endpoint_auth_methods_supported or []), "none"]
        return described.model_copy(
            update={
                "client_id_metadata_document_supported": True,
                "token_endpoint_auth_methods_supported": methods,
            }
        )

    # -- clients -------------------------------------------------------------------------------
    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if is_document_id(client_id):
            found: OAuthClientInformationFull | None = await self._run(
                self._document_client, client_id
            )
            return found
        row = await self._run(
            self.db.one, "SELECT info FROM oauth_clients WHERE client_id = ?", client_id
        )
        if row is None:
            return None
        return OAuthClientInformationFull.model_validate_json(row["info"])

    def client_document(self, client_id: str) -> OAuthClientInformationFull:
        """The client a metadata document describes, fetched now unless kept lately, and
        kept in the database; DocumentRefused saying what is wrong with it."""
        fresh = self.documents.kept(client_id)
        if fresh is not None:
            return fresh
        client = self.documents.fetch(client_id)
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO oauth_clients (client_id, info, created) VALUES (?, ?, ?) "
                "ON CONFLICT (client_id) DO UPDATE SET info = excluded.info",
                (client_id, client.model_dump_json(), now("seconds")),
            )
        return client

    def _document_client(self, client_id: str) -> OAuthClientInformationFull | None:
        """A document's client for the SDK's routes: the last one kept when it cannot be
        fetched now (its server briefly away), else none."""
        try:
            return self.client_document(client_id)
        except DocumentRefused as e:
            row = self.db.one("SELECT info FROM oauth_clients WHERE client_id = ?", client_id)
            if row is None:
                log.warning("%s", e.sentence)
                return None
            return OAuthClientInformationFull.model_validate_json(row["info"])

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        def save() -> None:
            with self.db.transaction() as conn:
                conn.execute(
                    "INSERT INTO oauth_clients (client_id, info, created) VALUES (?, ?, ?)",
                    (client_info.client_id, client_info.model_dump_json(), now("seconds")),
                )

        await self._run(save)

    # -- authorizing ---------------------------------------------------------------------------
    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        asked = params.scopes or SCOPES
        unknown = [s for s in asked if s not in SCOPES]
        if unknown:
            raise AuthorizeError(
                "invalid_scope", f"pasture's scopes are read and write, not {unknown}"
            )
        request = secrets.token_urlsafe(24)
        kept = params.model_dump(mode="json")

        def park() -> None:
            with self.db.transaction() as conn:
                conn.execute("DELETE FROM oauth_requests WHERE expires < ?", (int(time.time()),))
                conn.execute(
                    "INSERT INTO oauth_requests (id, client_id, params, expires) "
                    "VALUES (?, ?, ?, ?)",
                    (
                        _id.secret_hash(request),
                        client.client_id,
                        json.dumps(kept),
                        int(time.time()) + REQUEST_LIFE,
                    ),
                )

        await self._run(park)
        return f"{self.base_url}/oauth/consent?request={request}"

    def asking(self, request: str) -> Asking:
        """What a parked request asks, for the consent page; NotFound when it is over."""
        row = self.db.one(
            "SELECT oauth_requests.params, oauth_clients.info FROM oauth_requests JOIN "
            "oauth_clients ON oauth_clients.client_id = oauth_requests.client_id "
            "WHERE oauth_requests.id = ? AND oauth_requests.expires >= ?",
            _id.secret_hash(request),
            int(time.time()),
        )
        if row is None:
            raise NotFound(
                "this sign-in request is over (they last ten minutes) — start connecting the "
                "agent again"
            )
        params = json.loads(row["params"])
        client = OAuthClientInformationFull.model_validate_json(row["info"])
        site = None if client.client_uri is None else str(client.client_uri)
        return Asking(
            id=request,
            client_id=client.client_id,
            client_name=client.client_name or "an unnamed client",
            # a document's own address is where the client is known to come from
            client_uri=client.client_id if is_document_id(client.client_id or "") else site,
            redirect_uri=str(params["redirect_uri"]),
            writes=WRITE in (params.get("scopes") or SCOPES),
        )

    def decide(
        self,
        caller: Caller,
        request: str,
        *,
        approve: bool,
        writes: bool,
        spaces: list[str] | None,
        member_of: set[str],
    ) -> str:
        """The person's answer: the client's redirect, with a code or with `access_denied`."""
        asking = self.asking(request)
        digest = _id.secret_hash(request)
        row = self.db.one("SELECT params FROM oauth_requests WHERE id = ?", digest)
        assert row is not None
        params = json.loads(row["params"])
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM oauth_requests WHERE id = ?", (digest,))
        state = params.get("state")
        if not approve:
            return construct_redirect_uri(
                asking.redirect_uri,
                error="access_denied",
                error_description="the person declined",
                state=state,
            )
        chosen = sorted(set(spaces or ()))
        unknown = [s for s in chosen if s not in member_of]
        if unknown:
            raise UsageError(f"{', '.join(unknown)} is not one of your spaces")
        if not member_of or (spaces is not None and not chosen):
            raise UsageError("choose at least one of your spaces for the agent to reach")
        writes = writes and asking.writes and caller.writes
        grant = secrets.token_hex(8)
        code = _id.new_secret("pso")
        with self.db.transaction() as conn:
            conn.execute(
                'INSERT INTO oauth_grants (id, client_id, "user", writes, spaces, created) '
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    grant,
                    asking.client_id,
                    caller.eid,
                    int(writes),
                    None if spaces is None else json.dumps(chosen),
                    now("seconds"),
                ),
            )
            conn.execute(
                "INSERT INTO oauth_codes (hash, grant_id, params, expires) VALUES (?, ?, ?, ?)",
                (_id.secret_hash(code), grant, json.dumps(params), int(time.time()) + CODE_LIFE),
            )
        return construct_redirect_uri(asking.redirect_uri, code=code, state=state)

    # -- codes and tokens ----------------------------------------------------------------------
    def _grant(self, grant: str) -> Any:
        return self.db.one(
            "SELECT oauth_grants.*, users.name FROM oauth_grants JOIN users ON users.eid = "
            'oauth_grants."user" WHERE oauth_grants.id = ?',
            grant,
        )

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        def load() -> AuthorizationCode | None:
            row = self.db.one(
                "SELECT oauth_codes.params, oauth_codes.expires, oauth_grants.client_id, "
                'oauth_grants.writes, oauth_grants."user" FROM oauth_codes JOIN oauth_grants '
                "ON oauth_grants.id = oauth_codes.grant_id WHERE oauth_codes.hash = ?",
                _id.secret_hash(authorization_code),
            )
            if row is None or row["client_id"] != client.client_id:
                return None
            params = json.loads(row["params"])
            return AuthorizationCode(
                code=authorization_code,
                scopes=_scopes(bool(row["writes"])),
                expires_at=float(row["expires"]),
                client_id=str(row["client_id"]),
                code_challenge=params["code_challenge"],
                redirect_uri=params["redirect_uri"],
                redirect_uri_provided_explicitly=params["redirect_uri_provided_explicitly"],
                resource=params.get("resource"),
                subject=str(row["user"]),
            )

        found: AuthorizationCode | None = await self._run(load)
        return found

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        def exchange() -> OAuthToken:
            digest = _id.secret_hash(authorization_code.code)
            with self.db.transaction() as conn:
                row = conn.execute(
                    "SELECT grant_id FROM oauth_codes WHERE hash = ?", (digest,)
                ).fetchone()
                conn.execute("DELETE FROM oauth_codes WHERE hash = ?", (digest,))
            if row is None:
                raise TokenError("invalid_grant", "that code has been used")
            return self._pair(str(row["grant_id"]), authorization_code.scopes)

        token: OAuthToken = await self._run(exchange)
        return token

    def _pair(self, grant: str, scopes: list[str]) -> OAuthToken:
        access = _id.new_secret(OAUTH_ACCESS_PREFIX.rstrip("_"))
        refresh = _id.new_secret("psr")
        moment = int(time.time())
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM oauth_tokens WHERE expires < ?", (moment,))
            conn.execute(
                "INSERT INTO oauth_tokens (hash, grant_id, kind, expires) VALUES (?, ?, ?, ?)",
                (_id.secret_hash(access), grant, "access", moment + ACCESS_LIFE),
            )
            conn.execute(
                "INSERT INTO oauth_tokens (hash, grant_id, kind, expires) VALUES (?, ?, ?, ?)",
                (_id.secret_hash(refresh), grant, "refresh", moment + REFRESH_LIFE),
            )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=ACCESS_LIFE,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )

    def _token(self, token: str, kind: str) -> Any:
        return self.db.one(
            "SELECT oauth_tokens.grant_id, oauth_tokens.expires, oauth_grants.client_id, "
            'oauth_grants.writes, oauth_grants.spaces, oauth_grants."user", users.name '
            "FROM oauth_tokens JOIN oauth_grants ON oauth_grants.id = oauth_tokens.grant_id "
            'JOIN users ON users.eid = oauth_grants."user" '
            "WHERE oauth_tokens.hash = ? AND oauth_tokens.kind = ? AND oauth_tokens.expires >= ?",
            _id.secret_hash(token),
            kind,
            int(time.time()),
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        row = await self._run(self._token, refresh_token, "refresh")
        if row is None or row["client_id"] != client.client_id:
            return None
        return RefreshToken(
            token=refresh_token,
            client_id=str(row["client_id"]),
            scopes=_scopes(bool(row["writes"])),
            expires_at=int(row["expires"]),
            subject=str(row["user"]),
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        def exchange() -> OAuthToken:
            row = self._token(refresh_token.token, "refresh")
            if row is None:
                raise TokenError("invalid_grant", "that refresh token has ended")
            allowed = _scopes(bool(row["writes"]))
            wanted = scopes or allowed
            if any(s not in allowed for s in wanted):
                raise TokenError("invalid_scope", "a refresh asks for no more than the grant gave")
            with self.db.transaction() as conn:  # rotation: the old refresh token ends
                spent = conn.execute(
                    "DELETE FROM oauth_tokens WHERE hash = ? AND kind = 'refresh'",
                    (_id.secret_hash(refresh_token.token),),
                ).rowcount
            if spent != 1:  # another exchange of it got there first
                raise TokenError("invalid_grant", "that refresh token has ended")
            return self._pair(str(row["grant_id"]), wanted)

        token: OAuthToken = await self._run(exchange)
        return token

    async def load_access_token(self, token: str) -> AccessToken | None:
        row = await self._run(self._token, token, "access")
        if row is None:
            return None
        return AccessToken(
            token=token,
            client_id=str(row["client_id"]),
            scopes=_scopes(bool(row["writes"])),
            expires_at=int(row["expires"]),
            subject=str(row["user"]),
        )

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        """Enterprise identity assertions (SEP-990) are not a way in here."""
        raise TokenError("unsupported_grant_type", "pasture takes the authorization code grant")

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        def revoke() -> None:
            row = self._token(token.token, "access") or self._token(token.token, "refresh")
            if row is not None:
                self.end_grant(str(row["grant_id"]))

        await self._run(revoke)

    # -- for the platform ----------------------------------------------------------------------
    def caller_for(self, token: str) -> Caller | None:
        """The caller an access token names, with its grant's scope; None if it is not one.

        Kept in memory until the platform database changes (here or in another process:
        a revoked grant is seen at once) or the token expires, so a call reads nothing."""
        digest = _id.secret_hash(token)
        known = self._known.current()
        hit = known.get(digest)
        if hit is not None and hit[1] >= time.time():
            return hit[0]
        row = self._token(token, "access")
        if row is None:
            return None
        client = self.db.one("SELECT info FROM oauth_clients WHERE client_id = ?", row["client_id"])
        name = "a client"
        if client is not None:
            name = json.loads(client["info"]).get("client_name") or name
        caller = Caller(
            str(row["user"]),
            str(row["name"]),
            writes=bool(row["writes"]),
            spaces=spaces_of(row["spaces"]),
            via=f"client {name} ({str(row['grant_id'])[:ID]})",
            through="grant",
        )
        self._known.keep(known, digest, (caller, int(row["expires"])))
        return caller

    def caller_at_once(self, token: str) -> Caller | None:
        """`caller_for`'s answer when memory holds it still valid: never a wait. None when
        only `caller_for` can tell."""
        known = self._known.at_once()
        hit = None if known is None else known.get(_id.secret_hash(token))
        if hit is None or hit[1] < time.time():
            return None
        return hit[0]

    def grants(self, user: Caller) -> list[dict[str, Any]]:
        """A person's grants to OAuth clients, for their listing of tokens."""
        rows = self.db.all(
            "SELECT oauth_grants.id, oauth_grants.writes, oauth_grants.spaces, "
            "oauth_grants.created, oauth_clients.info FROM oauth_grants JOIN oauth_clients ON "
            'oauth_clients.client_id = oauth_grants.client_id WHERE oauth_grants."user" = ? '
            "ORDER BY oauth_grants.created",
            user.eid,
        )
        return [
            {
                "id": str(r["id"]),
                "label": f"client {json.loads(r['info']).get('client_name') or 'unnamed'}",
                "writes": bool(r["writes"]),
                "spaces": None if r["spaces"] is None else sorted(spaces_of(r["spaces"]) or ()),
                "scope": scope_words(bool(r["writes"]), spaces_of(r["spaces"])),
                "created": str(r["created"]),
                "last_used": None,
            }
            for r in rows
        ]

    def end_grant(self, grant: str, user: Caller | None = None) -> bool:
        """End a grant and every token of it; with `user`, only one of theirs. Whether it was."""
        with self.db.transaction() as conn:
            if user is not None:
                found = conn.execute(
                    'SELECT 1 FROM oauth_grants WHERE id = ? AND "user" = ?', (grant, user.eid)
                ).fetchone()
                if found is None:
                    return False
            conn.execute("DELETE FROM oauth_tokens WHERE grant_id = ?", (grant,))
            conn.execute("DELETE FROM oauth_codes WHERE grant_id = ?", (grant,))
            conn.execute("DELETE FROM oauth_grants WHERE id = ?", (grant,))
            conn.execute(REACH_MOVED)
        return True

    def end_all(self, user: Caller) -> None:
        """Every grant of a person ends (they were removed)."""
        for row in self.db.all('SELECT id FROM oauth_grants WHERE "user" = ?', user.eid):
            self.end_grant(str(row["id"]))
