"""OAuth 2.1 for `/mcp`: the authorization server inside `pasture serve`.

The MCP SDK serves the protocol — metadata (RFC 8414), dynamic client
registration (RFC 7591), `/authorize` with PKCE (S256), `/token` with refresh
tokens, `/revoke` (`mcp.server.auth.routes`); this is the provider it asks,
keeping everything in the platform database:

- a client registers, and is kept (`oauth_clients`); or it names itself by
  the `https://` address of its metadata document, which is fetched, checked
  and kept beside the registered ones (`pasture.platform.auth.client_documents`).
  Its redirect URIs are https://, http:// to loopback, or a native app's
  private-use scheme, never with a fragment (`redirect_refusal`: a client kept
  from before keeps only those). One address registers at most 20 clients an
  hour (the web door asks `Limiter.registration`); a client never approved is
  forgotten a week after it was registered or its document last fetched;
- `/authorize` parks the request (`oauth_requests`, ten minutes) and sends the
  person to pasture's own consent page (`/oauth/consent`), where they sign in,
  see which client asks and for what, and choose: read only, or read and
  write, and which of their spaces. Approving makes a **grant** (`oauth_grants`)
  and a one-time code (a minute); denying sends the client `access_denied`;
- the code becomes an access token (an hour) and a refresh token (30 days),
  once: a code used again ends its grant, and with it every token first issued
  from it (RFC 6749 §4.1.2). A refresh gives a new pair and the old refresh
  token ends (rotation);
- a grant's tokens are for one resource, this server's own `/mcp` (RFC 8707):
  `/authorize` and `/token` refuse any other with `invalid_target`, and a token
  recorded for another is refused here. A grant made before grants recorded
  their resource is this server's own;
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
from collections.abc import Callable
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
    RegistrationError,
    TokenError,
    construct_redirect_uri,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken
from pydantic import AnyHttpUrl, ValidationError

from pasture.caller import Caller
from pasture.errors import DocumentRefused, NotFound, Unauthorized, UsageError, echo
from pasture.platform.auth import hashing as _id
from pasture.platform.auth.caller_cache import Remembered
from pasture.platform.auth.client_documents import (
    ClientDocuments,
    is_document_id,
    redirect_refusal,
)
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
# A client never approved is forgotten a week after it registered, or after its document
# was last fetched: a document is kept in memory a day at most (`KEEP_AT_MOST`), so its
# row outlives what memory keeps of it.
UNUSED_CLIENT_LIFE = 7 * 24 * 3600
CODE_USED_AGAIN = (
    "that code was used already — a code is good once, so every token issued from it is "
    "revoked now (RFC 6749 §4.1.2); sign the agent in again"
)
CODE_GONE = (
    "that code is no longer good (it was used, or its grant ended) — sign the agent in again"
)


class _Code(AuthorizationCode):
    """A code as `load_authorization_code` found it, for the exchange the SDK then asks for."""

    used_again: bool = False


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


def _canonical(resource: str) -> str | None:
    """A resource indicator as it compares (RFC 8707 §2: an absolute URI, no fragment):
    case and a default port aside, and a trailing slash; None when it is not one."""
    try:
        parsed = AnyHttpUrl(resource)
    except ValidationError:
        return None
    if parsed.fragment is not None or "#" in resource:
        return None
    return str(parsed).removesuffix("/")


def _allowed(client: OAuthClientInformationFull) -> OAuthClientInformationFull:
    """A kept client with only the redirect URIs the rule allows (one registered before
    the rule may have others): an /authorize naming another is refused, not followed."""
    uris = client.redirect_uris or []
    kept = [u for u in uris if redirect_refusal(str(u)) is None]
    return client if len(kept) == len(uris) else client.model_copy(update={"redirect_uris": kept})


class OAuth:
    """The provider the SDK's routes call (`OAuthAuthorizationServerProvider`), and the
    consent page's two questions. `base_url` is this server's main origin."""

    def __init__(self, db: PlatformDB, base_url: str) -> None:
        self.db = db
        self.base_url = base_url
        self.clock: Callable[[], float] = time.time  # what expiries are read by (tests set it)
        self._known: Remembered[tuple[Caller, int]] = Remembered(db)  # with when it expires
        host = urlsplit(base_url).hostname or ""
        self.documents = ClientDocuments(loopback=_is_loopback(host))
        self.resource = f"{base_url.rstrip('/')}/mcp"  # what every token here is for
        self._resource = _canonical(self.resource)

    def serves(self, resource: str) -> bool:
        """Whether a resource indicator (RFC 8707) names this server's `/mcp`."""
        found = _canonical(resource)
        return found is not None and found == self._resource

    def target_refusal(self, resources: list[str]) -> str | None:
        """Why a request naming these resources gets no token here, or None when it may."""
        other = [r for r in resources if not self.serves(r)]
        if not other:
            return None
        return (
            f"pasture gives tokens for its own MCP server, {self.resource}, and not for "
            f"{echo(other[0], 200)} (RFC 8707) — ask with resource={self.resource}, or none"
        )

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
        row = await self._run(self._kept_client, client_id)
        if row is None:
            return None
        return _allowed(OAuthClientInformationFull.model_validate_json(row["info"]))

    def _kept_client(self, client_id: str) -> Any:
        return self.db.one(
            "SELECT info FROM oauth_clients WHERE client_id = ? AND "
            "(expires IS NULL OR expires >= ?)",
            client_id,
            int(self.clock()),
        )

    def client_document(self, client_id: str) -> OAuthClientInformationFull:
        """The client a metadata document describes, fetched now unless kept lately, and
        kept in the database; DocumentRefused saying what is wrong with it."""
        fresh = self.documents.kept(client_id)
        if fresh is not None:
            return fresh
        client = self.documents.fetch(client_id)
        moment = int(self.clock())
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM oauth_clients WHERE expires < ?", (moment,))
            # never approved: kept a week from this fetch; approved: kept
            conn.execute(
                "INSERT INTO oauth_clients (client_id, info, created, expires) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (client_id) DO UPDATE SET info = excluded.info, "
                "expires = CASE WHEN oauth_clients.expires IS NULL THEN NULL "
                "ELSE excluded.expires END",
                (client_id, client.model_dump_json(), now("seconds"), moment + UNUSED_CLIENT_LIFE),
            )
        return _allowed(client)

    def _document_client(self, client_id: str) -> OAuthClientInformationFull | None:
        """A document's client for the SDK's routes: the last one kept when it cannot be
        fetched now (its server briefly away), else none."""
        try:
            return self.client_document(client_id)
        except DocumentRefused as e:
            row = self._kept_client(client_id)
            if row is None:
                log.warning("%s", e.sentence)
                return None
            return _allowed(OAuthClientInformationFull.model_validate_json(row["info"]))

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        """Keep a client the SDK's `/register` checked; RegistrationError (the SDK's 400,
        with the sentence) for a redirect URI that may not be one. Kept a week unless a
        person approves it."""
        for uri in client_info.redirect_uris or []:
            why = redirect_refusal(str(uri))
            if why is not None:
                raise RegistrationError(
                    "invalid_redirect_uri",
                    f"the redirect URI {echo(str(uri), 200)} cannot be used: {why}",
                )

        def save() -> None:
            moment = int(self.clock())
            with self.db.transaction() as conn:
                conn.execute("DELETE FROM oauth_clients WHERE expires < ?", (moment,))
                conn.execute(
                    "INSERT INTO oauth_clients (client_id, info, created, expires) "
                    "VALUES (?, ?, ?, ?)",
                    (
                        client_info.client_id,
                        client_info.model_dump_json(),
                        now("seconds"),
                        moment + UNUSED_CLIENT_LIFE,
                    ),
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
        refused = None if params.resource is None else self.target_refusal([params.resource])
        if refused is not None:
            raise AuthorizeError("invalid_target", refused)
        request = secrets.token_urlsafe(24)
        kept = params.model_dump(mode="json")

        def park() -> None:
            with self.db.transaction() as conn:
                conn.execute("DELETE FROM oauth_requests WHERE expires < ?", (int(self.clock()),))
                conn.execute(
                    "INSERT INTO oauth_requests (id, client_id, params, expires) "
                    "VALUES (?, ?, ?, ?)",
                    (
                        _id.secret_hash(request),
                        client.client_id,
                        json.dumps(kept),
                        int(self.clock()) + REQUEST_LIFE,
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
            int(self.clock()),
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
        asked = params.get("resource")
        # what its tokens are for: here, unless a request parked before /authorize checked
        # asked for elsewhere (its tokens are then refused here)
        resource = self.resource if asked is None or self.serves(str(asked)) else str(asked)
        grant = secrets.token_hex(8)
        code = _id.new_secret("pso")
        with self.db.transaction() as conn:
            approved = conn.execute(  # approved once, a client is kept
                "UPDATE oauth_clients SET expires = NULL WHERE client_id = ?",
                (asking.client_id,),
            ).rowcount
            if approved != 1:
                raise NotFound(
                    "this client is no longer registered (one never approved is forgotten "
                    "after a week) — start connecting the agent again"
                )
            conn.execute(
                'INSERT INTO oauth_grants (id, client_id, "user", writes, spaces, created, '
                "resource) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    grant,
                    asking.client_id,
                    caller.eid,
                    int(writes),
                    None if spaces is None else json.dumps(chosen),
                    now("seconds"),
                    resource,
                ),
            )
            conn.execute(
                "INSERT INTO oauth_codes (hash, grant_id, params, expires) VALUES (?, ?, ?, ?)",
                (_id.secret_hash(code), grant, json.dumps(params), int(self.clock()) + CODE_LIFE),
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
                "SELECT oauth_codes.params, oauth_codes.expires, oauth_codes.spent, "
                "oauth_codes.grant_id, oauth_grants.client_id, oauth_grants.writes, "
                'oauth_grants."user", oauth_grants.resource FROM oauth_codes JOIN oauth_grants '
                "ON oauth_grants.id = oauth_codes.grant_id WHERE oauth_codes.hash = ?",
                _id.secret_hash(authorization_code),
            )
            if row is None or row["client_id"] != client.client_id:
                return None
            used_again = row["spent"] is not None
            if used_again:  # a second use: what the first gave ends now, however it goes on
                log.warning("an OAuth code was used again: its grant ends")
                self.end_grant(str(row["grant_id"]))
            params = json.loads(row["params"])
            return _Code(
                used_again=used_again,
                code=authorization_code,
                scopes=_scopes(bool(row["writes"])),
                expires_at=float(row["expires"]),
                client_id=str(row["client_id"]),
                code_challenge=params["code_challenge"],
                redirect_uri=params["redirect_uri"],
                redirect_uri_provided_explicitly=params["redirect_uri_provided_explicitly"],
                resource=row["resource"] or self.resource,
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
                if row is None:
                    raise TokenError("invalid_grant", CODE_GONE)
                # spent once, and kept so a second use is known (the grant's end removes it)
                spent = conn.execute(
                    "UPDATE oauth_codes SET spent = ? WHERE hash = ? AND spent IS NULL",
                    (int(self.clock()), digest),
                ).rowcount
                if spent == 1:  # the tokens are made with the code spent: all or nothing
                    return self._pair(conn, str(row["grant_id"]), authorization_code.scopes)
            self.end_grant(str(row["grant_id"]))  # another exchange of it got there first
            raise TokenError("invalid_grant", CODE_USED_AGAIN)

        if isinstance(authorization_code, _Code) and authorization_code.used_again:
            raise TokenError("invalid_grant", CODE_USED_AGAIN)  # its grant ended as it loaded

        token: OAuthToken = await self._run(exchange)
        return token

    def _pair(self, conn: Any, grant: str, scopes: list[str]) -> OAuthToken:
        """A new access token and refresh token of a grant, written in `conn`'s transaction."""
        access = _id.new_secret(OAUTH_ACCESS_PREFIX.rstrip("_"))
        refresh = _id.new_secret("psr")
        moment = int(self.clock())
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
            'oauth_grants.writes, oauth_grants.spaces, oauth_grants."user", '
            "oauth_grants.resource, users.name "
            "FROM oauth_tokens JOIN oauth_grants ON oauth_grants.id = oauth_tokens.grant_id "
            'JOIN users ON users.eid = oauth_grants."user" '
            "WHERE oauth_tokens.hash = ? AND oauth_tokens.kind = ? AND oauth_tokens.expires >= ?",
            _id.secret_hash(token),
            kind,
            int(self.clock()),
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
            resource=row["resource"] or self.resource,
            subject=str(row["user"]),
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        def exchange() -> OAuthToken:
            row = self._token(refresh_token.token, "refresh")
            if row is None:
                raise TokenError("invalid_grant", "that refresh token has ended")
            refused = self._elsewhere(row["resource"])
            if refused is not None:
                raise TokenError("invalid_target", refused)
            allowed = _scopes(bool(row["writes"]))
            wanted = scopes or allowed
            if any(s not in allowed for s in wanted):
                raise TokenError("invalid_scope", "a refresh asks for no more than the grant gave")
            with self.db.transaction() as conn:  # rotation: the old refresh token ends
                spent = conn.execute(
                    "DELETE FROM oauth_tokens WHERE hash = ? AND kind = 'refresh'",
                    (_id.secret_hash(refresh_token.token),),
                ).rowcount
                if spent == 1:
                    return self._pair(conn, str(row["grant_id"]), wanted)
            # another exchange of it got there first
            raise TokenError("invalid_grant", "that refresh token has ended")

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
            resource=row["resource"] or self.resource,
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
    def _elsewhere(self, resource: str | None) -> str | None:
        """Why a grant's tokens are not for this server, or None when they are (a grant
        that recorded no resource was made here, before grants recorded one)."""
        if resource is None or self.serves(str(resource)):
            return None
        return (
            f"this token was issued for {echo(str(resource), 200)}, not for this server's MCP "
            f"({self.resource}) — sign the agent in again at {self.resource}"
        )

    def caller_for(self, token: str) -> Caller | None:
        """The caller an access token names, with its grant's scope; None if it is not one,
        Unauthorized when it was issued for another resource than this server's `/mcp`.

        Kept in memory until the platform database changes (here or in another process:
        a revoked grant is seen at once) or the token expires, so a call reads nothing."""
        digest = _id.secret_hash(token)
        known = self._known.current()
        hit = known.get(digest)
        if hit is not None and hit[1] >= self.clock():
            return hit[0]
        row = self._token(token, "access")
        if row is None:
            return None
        elsewhere = self._elsewhere(row["resource"])
        if elsewhere is not None:
            raise Unauthorized(elsewhere)
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
        if hit is None or hit[1] < self.clock():
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
