"""uvicorn serving the web door, ending pages' subscriptions first when it stops.

uvicorn stops by waiting for every response under way to finish. A page's
subscription (`pasture.web.live`) never finishes by itself, so before that wait
its streams are ended, as a restart ends them: the pages open them again on the
next server and are sent its newest answer.
"""

from __future__ import annotations

import socket
from typing import Any

import uvicorn
from starlette.applications import Starlette

# What a response still under way gets after the streams have ended.
GRACE_SECONDS = 5


class Server(uvicorn.Server):
    """A uvicorn server for `create_app`'s door."""

    def __init__(self, app: Starlette, **config: Any) -> None:
        config.setdefault("log_level", "warning")
        config.setdefault("timeout_graceful_shutdown", GRACE_SECONDS)
        super().__init__(uvicorn.Config(app, **config))
        self.door = app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        live = getattr(self.door, "live", None)
        if live is not None:
            live.end()
        await super().shutdown(sockets)


__all__ = ["GRACE_SECONDS", "Server"]
