"""Client ID Metadata Documents: an OAuth client named by the address of its own description.

A client that has not registered may give, as its `client_id`, an `https://`
address whose document describes it (`client_name`, `redirect_uris`, …): the
authorization server fetches it, and the address is the client's identity
(the MCP authorization specification, after the IETF draft
*OAuth Client ID Metadata Document*). The consent page shows that address, so
a person sees where a client really comes from, whatever name it gives itself.

Fetching an address a stranger chose is the server reaching out on their
behalf, so it is held to what a document needs and no more:

- the address is `https://`, with a path, no user, password or fragment;
- it is fetched from a public address only: every address its name resolves to
  is checked, and the connection is made to a checked one, so a name that
  resolves differently a moment later (DNS rebinding) reaches nothing else —
  loopback is allowed only when this server's own address is loopback (trying
  pasture out on one machine); private, link-local and reserved networks never;
- no redirect is followed, the answer must be 200 and at most 16 KiB of JSON,
  and the whole fetch takes at most 5 seconds;
- the document names itself (`client_id` is exactly its address), lists its
  `redirect_uris` — each one a registered client may have (`redirect_refusal`) —
  and carries no secret: such a client is public (`token_endpoint_auth_method`
  `none`) and proves itself with PKCE.

A fetched document is kept in memory for as long as its `Cache-Control:
max-age` says, between a minute and a day (ten minutes if it says nothing).
The platform database keeps the last one seen beside registered clients, so
the consent page and the grants find it, and so a refresh still works while
the document's server is briefly away.

Where a client may send a person's browser back with a code (OAuth 2.1, and
RFC 8252 for native apps), whether it registered or named a document:

- `https://` to any host, with no user or password;
- plain `http://` only to this machine's loopback — `127.0.0.0/8`, `[::1]` or
  `localhost` — where a native app listens on a port of its own;
- a native app's private-use scheme, named after a domain it owns, reversed, so
  it has a dot (`com.example.agent:/callback`, RFC 8252 §7.1);
- never with a `#fragment`. Any other scheme — `javascript:`, `data:`, `file:`,
  `blob:`, `vbscript:`, … — is refused, because it is no place to return to.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpcore
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import ValidationError

from pasture.errors import DocumentRefused, echo

MAX_BYTES = 16 * 1024
TIMEOUT = 5.0
KEEP = 600.0  # seconds a document is kept when it says nothing
KEEP_AT_LEAST, KEEP_AT_MOST = 60.0, 86400.0
_MAX_AGE = re.compile(r"max-age\s*=\s*(\d+)", re.IGNORECASE)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*$")


def redirect_refusal(uri: str) -> str | None:
    """Why a client may not be sent back to `uri` with a code, or None when it may."""
    try:
        parts = urlsplit(uri)
        host = parts.hostname
        parts.port  # noqa: B018 — a port that is not a number is not an address
    except ValueError:
        return "it is not an address"
    scheme = parts.scheme.lower()
    if "#" in uri:
        return "a redirect URI has no #fragment"
    if scheme in ("https", "http"):
        if not host:
            return "it names no host"
        if parts.username is not None or parts.password is not None:
            return "a redirect URI carries no user or password"
        if scheme == "http" and not _loopback_host(host):
            return (
                "plain http:// is only for this machine's loopback (127.0.0.1, [::1] or "
                "localhost, for a native app) — anywhere else a redirect URI is https://"
            )
        return None
    if "." in scheme and _SCHEME.match(scheme):
        return None  # a native app's private-use scheme (RFC 8252 §7.1)
    return (
        f"a redirect URI is https://, http:// to loopback, or a native app's private-use "
        "scheme named after a domain it owns, reversed (com.example.agent:/callback, as "
        f"RFC 8252 says) — not {echo(scheme, 40) + ':' if scheme else 'one without a scheme'}"
    )


def _loopback_host(host: str) -> bool:
    """An IP address of loopback written out, or `localhost` itself (RFC 8252 §7.3, §8.3)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_document_id(client_id: str) -> bool:
    """Whether a `client_id` names a metadata document rather than a registered client."""
    return client_id.startswith("https://")


def _refused(client_id: str, why: str) -> DocumentRefused:
    return DocumentRefused(f"the client {echo(client_id, 200)} cannot be used: {why}")


def check_address(client_id: str) -> tuple[str, int]:
    """The host and port of a document's address, or DocumentRefused saying what is wrong."""
    try:
        parts = urlsplit(client_id)
        port = parts.port or 443
    except ValueError:
        raise _refused(client_id, "its client_id is not an address") from None
    if parts.scheme != "https" or not parts.hostname:
        raise _refused(client_id, "a client_id address must be https://")
    if parts.username is not None or parts.password is not None:
        raise _refused(client_id, "a client_id address carries no user or password")
    if parts.fragment or "#" in client_id:
        raise _refused(client_id, "a client_id address has no #fragment")
    if parts.path in ("", "/"):
        raise _refused(client_id, "a client_id address has a path, not only a host")
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        raise _refused(client_id, "a client_id address has no . or .. in its path")
    return parts.hostname, port


# Beyond what `ipaddress` calls not global: protocol assignments, and IPv6 prefixes that
# carry an IPv4 address (NAT64, 6to4), through which a private one could be reached.
_NEVER = [
    ipaddress.ip_network(n)
    for n in ("192.0.0.0/24", "64:ff9b::/96", "64:ff9b:1::/48", "2002::/16", "2001::/32")
]


def _public(address: str, loopback: bool) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return loopback
    if not ip.is_global or ip.is_multicast:
        return False
    return not any(ip.version == n.version and ip in n for n in _NEVER)


class _NotPublic(OSError):
    """A name that resolves to no address this server may fetch from."""


class _PublicOnly(httpcore.SyncBackend):
    """Connects only to an address the check allows, and to the one it checked."""

    def __init__(self, loopback: bool) -> None:
        self.loopback = loopback

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addresses = [str(info[4][0]) for info in found]
        if not addresses or not all(_public(a, self.loopback) for a in addresses):
            raise _NotPublic(host)
        return super().connect_tcp(addresses[0], port, timeout, local_address, socket_options)


@dataclass(frozen=True)
class _Kept:
    client: OAuthClientInformationFull
    until: float


class ClientDocuments:
    """Fetches, checks and keeps clients' metadata documents.

    `loopback` lets documents be fetched from this machine (the server's own address
    is loopback). The system's certificate authorities are trusted (and
    `$SSL_CERT_FILE`, as OpenSSL reads it)."""

    def __init__(self, *, loopback: bool = False) -> None:
        self.loopback = loopback
        self._kept: dict[str, _Kept] = {}
        self._lock = threading.Lock()
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl.create_default_context(),
            network_backend=_PublicOnly(loopback),
            max_connections=10,
        )

    def kept(self, client_id: str) -> OAuthClientInformationFull | None:
        """The document fetched lately, while it is fresh."""
        with self._lock:
            kept = self._kept.get(client_id)
        return kept.client if kept is not None and kept.until > time.monotonic() else None

    def fetch(self, client_id: str) -> OAuthClientInformationFull:
        """The client a document describes (kept, or fetched now); DocumentRefused saying
        what is wrong with it."""
        fresh = self.kept(client_id)
        if fresh is not None:
            return fresh
        host, _ = check_address(client_id)
        body, max_age = self._get(client_id, host)
        client = client_of(client_id, body)
        keep = KEEP if max_age is None else min(max(max_age, KEEP_AT_LEAST), KEEP_AT_MOST)
        with self._lock:
            if len(self._kept) > 10_000:  # many strangers' documents: start again
                self._kept.clear()
            self._kept[client_id] = _Kept(client, time.monotonic() + keep)
        return client

    def _get(self, client_id: str, host: str) -> tuple[bytes, float | None]:
        timeouts = {"connect": TIMEOUT, "read": TIMEOUT, "write": TIMEOUT, "pool": TIMEOUT}
        began = time.monotonic()
        try:
            with self._pool.stream(
                "GET",
                client_id,
                headers={"Accept": "application/json"},
                extensions={"timeout": timeouts},
            ) as response:
                if response.status != 200:
                    raise _refused(
                        client_id,
                        f"its document answered {response.status}, not 200 with the "
                        "client's JSON (no redirect is followed)",
                    )
                body = b""
                for chunk in response.iter_stream():
                    body += chunk
                    if len(body) > MAX_BYTES:
                        raise _refused(client_id, "its document is over 16 KiB")
                    if time.monotonic() - began > TIMEOUT:
                        raise _refused(client_id, "its document took over 5 seconds")
                cache = _header(response.headers, b"cache-control")
        except _NotPublic:
            raise _refused(
                client_id,
                f"{host} is not a public address, and pasture fetches client documents "
                "only from public addresses",
            ) from None
        except (OSError, httpcore.TimeoutException, httpcore.NetworkError):
            raise _refused(
                client_id,
                f"its document could not be fetched from {host} (is it up, with a "
                "valid certificate?)",
            ) from None
        except httpcore.ProtocolError:
            raise _refused(client_id, f"{host} did not answer as an HTTPS server does") from None
        found = _MAX_AGE.search(cache) if cache else None
        return body, None if found is None else float(found[1])

    def close(self) -> None:
        self._pool.close()


def _header(headers: Any, name: bytes) -> str:
    for key, value in headers:
        if bytes(key).lower() == name:
            return bytes(value).decode("latin-1")
    return ""


def client_of(client_id: str, body: bytes) -> OAuthClientInformationFull:
    """The client a document's bytes describe, checked; DocumentRefused saying what is wrong."""
    try:
        document = json.loads(body)
    except ValueError:
        raise _refused(client_id, "its document is not JSON") from None
    if not isinstance(document, dict):
        raise _refused(client_id, "its document is not a JSON object")
    if document.get("client_id") != client_id:
        raise _refused(
            client_id, "its document's client_id must be exactly the address it was fetched from"
        )
    if "client_secret" in document or "client_secret_expires_at" in document:
        raise _refused(client_id, "a client document carries no client_secret")
    method = document.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise _refused(
            client_id,
            f"pasture takes documents of public clients (token_endpoint_auth_method none), "
            f"not {echo(str(method), 40)}",
        )
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        raise _refused(client_id, "its document lists its redirect_uris")
    try:
        # A document that names no scope may ask for any of pasture's (the person decides).
        client = OAuthClientInformationFull.model_validate(
            {"scope": "read write", **document, "token_endpoint_auth_method": "none"}
        )
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "the document"
        raise _refused(client_id, f"its {where} is not valid ({first.get('msg', '')})") from None
    for uri in uris:
        why = redirect_refusal(uri)
        if why is not None:
            raise _refused(client_id, f"its redirect URI {echo(uri, 200)} cannot be used: {why}")
    return client


__all__ = [
    "ClientDocuments",
    "DocumentRefused",
    "check_address",
    "client_of",
    "is_document_id",
    "redirect_refusal",
]
