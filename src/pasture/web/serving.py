"""uvicorn serving the web door, ending pages' subscriptions first when it stops.

uvicorn stops by waiting for every response under way to finish. A page's
subscription (`pasture.web.live`) never finishes by itself, nor does its WebMCP
module's stream of tools (`pasture.web.live_tools`), so before that wait those
streams are ended, as a restart ends them: the pages open them again on the next
server and are sent its newest answer.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any

import uvicorn
from starlette.applications import Starlette

# What a response still under way gets after the streams have ended.
GRACE_SECONDS = 5


class Server(uvicorn.Server):
    """A uvicorn server for `create_app`'s door.

    A request's address is the connection's own, whatever its headers say, unless it comes
    from one of `trust_proxy` (`pasture serve --trust-proxy ADDR`): from those alone
    `X-Forwarded-For` and `X-Forwarded-Proto` name the client and its scheme. (uvicorn by
    itself believes them from loopback, which let anyone on the machine be any address.)
    """

    def __init__(self, app: Starlette, *, trust_proxy: Sequence[str] = (), **config: Any) -> None:
        config.setdefault("log_level", "warning")
        config["proxy_headers"] = bool(trust_proxy)
        if trust_proxy:
            config["forwarded_allow_ips"] = list(trust_proxy)
        config.setdefault("timeout_graceful_shutdown", GRACE_SECONDS)
        super().__init__(uvicorn.Config(app, **config))
        self.door = app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for streams in ("live", "tool_streams"):
            live = getattr(self.door, streams, None)
            if live is not None:
                live.end()
        await super().shutdown(sockets)


__all__ = ["GRACE_SECONDS", "Server"]
