"""`/metrics`, in Prometheus' text format, and the web door's own meters in it.

Off unless the server is started with `--metrics` (`create_app(metrics=True)`): a
server nobody scrapes counts nothing. On, it is answered to the server's owner alone —
the person `Service.local_owner()` is — by one of their tokens (a read-only one will
do: `pasture token new --read`, sent as `Authorization: Bearer …`) or their signed-in
session. It names every app on the server, how much each is called and refused, and
how its code fails: that is the owner's to know, not every visitor's, and not the
network's — a scraper on another machine sends the token, as Prometheus'
`authorization` setting does. Anyone else is refused in plain text, the scraper's log
saying why: 401 with nobody signed in, 403 for another person.

The door's own meters (`Traffic` observes each request, `pasture.web.traffic`):

    pasture_http_requests_total{door, status}   requests answered; `door`: web (pages,
                                                sign-in, OAuth), api (the JSON API: /api/,
                                                an app's ./api/), mcp (/mcp)
    pasture_http_request_seconds{door}         until an answer's last byte; event streams,
                                                which last as long as their page, are not in it
    pasture_live_streams{door}                 event streams open now: pages'
                                                subscriptions, MCP's listen streams

beside the platform's (`pasture.metrics`: calls and refusals by app, worker starts,
crashes and limits, database time) and the process's own. `/healthz` and `/readyz`
are not counted (`pasture.web.health`).
"""

from __future__ import annotations

import threading
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from pasture import metrics
from pasture.platform import Service
from pasture.threads import in_thread
from pasture.web.endpoints import Endpoints

# Seconds: a page from memory answers in a millisecond or two; a command that runs an
# app's code may take up to its time limit (10 s by default).
REQUEST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)

NOBODY_SIGNED_IN = (
    "/metrics is the server owner's to read — send one of their tokens "
    "(Authorization: Bearer …; pasture token new --read makes one)"
)

_FRESH = {"Cache-Control": "no-store"}
_lock = threading.Lock()
_meters: DoorMeters | None = None


class DoorMeters:
    """The web door's meters, made once a process in `pasture.metrics`' registry."""

    def __init__(self, registry: Any) -> None:
        from prometheus_client import Counter, Gauge, Histogram

        self.requests = Counter(
            "pasture_http_requests",
            "Requests answered, by door (web, api, mcp) and status",
            ["door", "status"],
            registry=registry,
        )
        self.seconds = Histogram(
            "pasture_http_request_seconds",
            "Time to answer a request, to its last byte, by door (event streams not counted)",
            ["door"],
            buckets=REQUEST_BUCKETS,
            registry=registry,
        )
        self.streams = Gauge(
            "pasture_live_streams",
            "Event streams open now: pages' subscriptions and MCP's listen streams, by door",
            ["door"],
            registry=registry,
            multiprocess_mode="livesum",
        )


def door_meters() -> DoorMeters:
    """The door's meters, counting from now on with the platform's (`metrics.start`)."""
    global _meters
    metrics.start()
    with _lock:
        if _meters is None:
            _meters = DoorMeters(metrics.registry())
        return _meters


class Scrape(Endpoints):
    """`GET /metrics`, for the server's owner."""

    def __init__(self, service: Service) -> None:
        super().__init__(service)
        door_meters()
        self._owner: str | None = None

    async def owner(self) -> str | None:
        """The owner's eid, asked once (the owner never changes)."""
        if self._owner is None:
            self._owner = (await in_thread(self.service.local_owner)).eid
        return self._owner

    async def metrics(self, request: Request) -> Response:
        caller = await self.who.of_page(request)
        if not caller.signed_in:
            return PlainTextResponse(
                NOBODY_SIGNED_IN,
                status_code=401,
                headers={"WWW-Authenticate": "Bearer", **_FRESH},
            )
        if caller.eid != await self.owner():
            sentence = (
                f"/metrics is the server owner's to read, and {caller.name} is not its owner "
                "— it names every app on the server and how each is used"
            )
            return PlainTextResponse(sentence, status_code=403, headers=_FRESH)
        # Several processes serving: the others' counts are read from their files.
        body, kind = await in_thread(metrics.exposition)
        return Response(body, headers={"Content-Type": kind, **_FRESH})


__all__ = ["NOBODY_SIGNED_IN", "REQUEST_BUCKETS", "DoorMeters", "Scrape", "door_meters"]
