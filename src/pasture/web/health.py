"""`/healthz` and `/readyz`: what a load balancer, an orchestrator or a monitor asks, cheaply.

    GET /healthz   200 {"status": "ok", "version": "0.1.0"}             the process answers
    GET /readyz    200 {"status": "ready", "database": "ok", "workers": "ok"}
                   503 {"status": "not ready", "database": "<why not>", "workers": "ok"}

`/readyz` asks the database for its change stamp — one small read — and whether a
worker process for apps' code can start (the server is not stopping, the Python it
runs them with is there): `Service.readiness`. A database that has not answered in
`READY_WAIT` seconds is not ready.

Both are answered before anything else a request passes (`pasture.web.traffic`): not
logged as traffic, not counted in /metrics, not held to the address's limit — a probe
every second neither fills the log nor uses up anyone's calls — and answered whatever
name the request was sent to, so a probe that reaches the server by its IP address is
answered too. Neither says anything but the above: no app, no person, no path.
"""

from __future__ import annotations

import anyio
import anyio.to_thread
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from pasture.platform import Service
from pasture.version import __version__

HEALTH = frozenset({"/healthz", "/readyz"})
READY_WAIT = 5.0  # seconds the database has to answer /readyz
_FRESH = {"Cache-Control": "no-store"}


async def healthy(service: Service, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer `/healthz` or `/readyz` (a path of `HEALTH`)."""
    if scope["method"] not in ("GET", "HEAD"):
        sentence = f"{scope['method']} is not how {scope['path']} is used — GET it"
        answer = JSONResponse({"error": sentence}, status_code=405, headers={"Allow": "GET, HEAD"})
    elif scope["path"] == "/healthz":
        answer = JSONResponse({"status": "ok", "version": __version__}, headers=_FRESH)
    else:
        said: dict[str, str] | None = None
        with anyio.move_on_after(READY_WAIT):
            said = await anyio.to_thread.run_sync(service.readiness, abandon_on_cancel=True)
        if said is None:
            said = {
                "database": f"it did not answer within {READY_WAIT:g} s",
                "workers": "not asked",
            }
        ready = all(value == "ok" for value in said.values())
        answer = JSONResponse(
            {"status": "ready" if ready else "not ready", **said},
            status_code=200 if ready else 503,
            headers=_FRESH,
        )
    await answer(scope, receive, send)


__all__ = ["HEALTH", "READY_WAIT", "healthy"]
