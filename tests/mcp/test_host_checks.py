"""Host and Origin checks follow where the server is reached, not the SDK's localhost default."""

from __future__ import annotations

import anyio
from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.requests import Request

from pasture.web.mcp_http import security_settings


def _status(public_url: str, bind_host: str, host: str, origin: str | None = None) -> int:
    headers = [(b"host", host.encode()), (b"content-type", b"application/json")]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    request = Request({"type": "http", "method": "POST", "headers": headers, "path": "/mcp"})
    check = TransportSecurityMiddleware(security_settings(public_url, bind_host))
    refused = anyio.run(check.validate_request, request, True)
    return 200 if refused is None else refused.status_code


def test_a_public_deployment_answers_its_own_name_and_no_other() -> None:
    public = "https://pasture.example.org"
    assert _status(public, "0.0.0.0", "pasture.example.org") == 200
    assert _status(public, "0.0.0.0", "pasture.example.org:443") == 200
    assert _status(public, "0.0.0.0", "pasture.example.org", "https://pasture.example.org") == 200
    assert _status(public, "0.0.0.0", "rebound.example") == 421
    assert _status(public, "0.0.0.0", "pasture.example.org", "https://evil.example") == 403
    # Not bound to loopback: a loopback Host is somebody else's name for this machine.
    assert _status(public, "0.0.0.0", "127.0.0.1:8000") == 421


def test_a_public_url_with_a_port_is_matched_with_it() -> None:
    public = "http://pasture.lan:8080"
    assert _status(public, "0.0.0.0", "pasture.lan:8080", "http://pasture.lan:8080") == 200
    assert _status(public, "0.0.0.0", "pasture.lan:9090") == 421


def test_bound_to_loopback_any_loopback_port_is_allowed() -> None:
    public = "https://pasture.example.org"
    for host in ("127.0.0.1:8000", "localhost:3000", "127.0.0.1", "localhost"):
        assert _status(public, "127.0.0.1", host) == 200, host
    assert _status(public, "127.0.0.1", "localhost:3000", "http://localhost:6274") == 200
    assert _status(public, "127.0.0.1", "pasture.example.org", "https://pasture.example.org") == 200
    assert _status(public, "127.0.0.1", "evil.example:8000") == 421
    assert _status(public, "127.0.0.1", "127.0.0.1:8000", "http://evil.example") == 403
