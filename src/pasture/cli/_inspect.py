"""`pasture inspect --url`: the tools a running server offers, read from its `/api/tools`.

The URL is the server (`http://host:8000`, then `APP` narrows it to one app) or an app's
address on it (`…/space/app/`, that app's `./api/tools`). The token (`--token`, else
`$PASTURE_TOKEN`) says who is asking, as for any agent: without one, only what anybody
may see. The server's refusal comes back as its own sentence.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pasture.errors import Refused, Unauthorized, Unavailable


def tools_address(url: str, app: str | None) -> tuple[str, dict[str, str]]:
    """Where the list is, and the query it takes: an app's address reads its ./api/tools."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise Refused(
            f"--url is a server's address, like http://127.0.0.1:8000 — not {url.strip()!r}"
        )
    root = f"{parts.scheme}://{parts.netloc}"
    path = [p for p in parts.path.split("/") if p]
    if len(path) >= 2:  # an app's address: /space/app/…
        return f"{root}/{path[0]}/{path[1]}/api/tools", {}
    return f"{root}/api/tools", ({"app": app} if app else {})


def tools_at(url: str, app: str | None, token: str | None) -> list[dict[str, Any]]:
    """The `commands` entries the server at `url` lists for the token's person."""
    import httpx

    address, query = tools_address(url, app)
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        answer = httpx.get(address, params=query, headers=headers, timeout=30)
    except httpx.HTTPError:
        raise Unavailable(f"could not reach {address} — is pasture serve running there?") from None
    try:
        body = answer.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise Refused(f"{address} answered {answer.status_code} without a list of tools")
    if answer.status_code == 401:
        said = body.get("error") or "sign in first"
        raise Unauthorized(f"{said} — pass --token or set PASTURE_TOKEN")
    if answer.status_code != 200:
        raise Refused(str(body.get("error") or f"{address} answered {answer.status_code}"))
    commands = body.get("commands")
    if not isinstance(commands, list):
        raise Refused(f"{address} answered without a list of tools")
    return [c for c in commands if isinstance(c, dict)]
