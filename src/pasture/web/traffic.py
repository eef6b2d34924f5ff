"""What every request to the web door passes first and last: its id, its line in the log, and
its count in /metrics — the one place for all three.

    X-Request-Id: 3f9a1c2e     on every answer (`pasture.request_ids`). A fault's sentence
                               names the same id ("… naming fault 3f9a1c2e"), and every
                               record logged while the request was served carries it.

One line a request on the logger `pasture.requests`, when its answer ends (an event
stream's when it closes), with `--log-format json` one object:

    {"time": "…", "level": "info", "logger": "pasture.requests",
     "message": "POST /ada/runs/api/command 200 in 4.2 ms for ada",
     "request_id": "3f9a1c2e", "method": "POST", "door": "api",
     "route": "/{space}/{app}/api/command", "app": "ada/runs", "status": 200,
     "ms": 4.2, "person": "ada", "stream": false}

Only these: the route as the door declares it, the app it names, the status, the time,
the person by name (`request_ids.named`, said by `pasture.web._who` and
`pasture.web.mcp_http`) — never the query string (a filter, `?token=`), a header, a
cookie, a body, a token, a password or an argument's value. A request no route
matched is logged by its path, cut at 200 characters. `door` is `mcp` for `/mcp`,
`api` for the JSON API (`/api/…`, an app's `./api/…`), `web` for the rest. A status of
499 is a client that went away before it was answered.

`/healthz` and `/readyz` are not traffic: answered before this (`pasture.web.health`),
neither logged, nor counted, nor held to the address's limit.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.types import Message, Receive, Scope, Send

from pasture import request_ids
from pasture.platform import Service
from pasture.web._failures import answers_json
from pasture.web.health import HEALTH, healthy
from pasture.web.scrape import DoorMeters, door_meters

log = logging.getLogger("pasture.requests")

GONE = 499  # no answer was started: the client went away first
_MOST_PATH = 200
_HEADER = b"x-request-id"

Inner = Callable[[Scope, Receive, Send], Awaitable[None]]


def door_of(path: str) -> str:
    """The door a path is of, as /metrics and the log say it: mcp, api or web."""
    if path == "/mcp" or path.startswith("/mcp/"):
        return "mcp"
    return "api" if answers_json(path) else "web"


def route_of(scope: Scope, door: str) -> str:
    """The route a request matched, as declared (`/{space}/{app}/api/query`); `/mcp`; or, when
    none matched, its path (no query string), cut short."""
    if door == "mcp":
        return "/mcp"
    route = getattr(scope.get("route"), "path", None)
    if isinstance(route, str):
        return route
    path: str = scope.get("path", "")
    return path[:_MOST_PATH]


def app_of(scope: Scope) -> str | None:
    """The app a matched route names, `space/slug`."""
    params = scope.get("path_params") or {}
    space, slug = params.get("space"), params.get("app")
    return f"{space}/{slug}" if isinstance(space, str) and isinstance(slug, str) else None


class Traffic:
    """Gives each request its id, logs its line and counts it, around the door (`inner`);
    answers `/healthz` and `/readyz` itself, before any of that."""

    def __init__(self, service: Service, inner: Inner, *, metrics: bool) -> None:
        self.service = service
        self.inner = inner
        self.meters: DoorMeters | None = door_meters() if metrics else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        if scope["path"] in HEALTH:
            await healthy(self.service, scope, receive, send)
            return
        served, token = request_ids.begin()
        try:
            await self._served(served, scope, receive, send)
        finally:
            request_ids.end(token)

    async def _served(
        self, served: request_ids.Served, scope: Scope, receive: Receive, send: Send
    ) -> None:
        began = time.perf_counter()
        door = door_of(scope["path"])
        meters = self.meters
        status: int | None = None
        stream = False
        header = (_HEADER, served.id.encode())

        async def sending(message: Message) -> None:
            nonlocal status, stream
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = [h for h in message.get("headers", []) if h[0].lower() != _HEADER]
                stream = _is_stream(headers)
                message = {**message, "headers": [*headers, header]}
                if meters is not None:
                    meters.requests.labels(door, str(status)).inc()
                    if stream:
                        meters.streams.labels(door).inc()
            await send(message)

        failed = False
        try:
            await self.inner(scope, receive, sending)
        except BaseException:
            failed = True
            raise
        finally:
            seconds = time.perf_counter() - began
            answered = status
            if answered is None:  # no answer began: a bug that raised, or a client gone
                answered = 500 if failed else GONE
                if meters is not None:
                    meters.requests.labels(door, str(answered)).inc()
            if meters is not None:
                if stream:
                    meters.streams.labels(door).dec()
                else:
                    meters.seconds.labels(door).observe(seconds)
            if log.isEnabledFor(logging.INFO):
                _log_line(served, scope, door, answered, seconds, stream)


def _is_stream(headers: list[Any]) -> bool:
    return any(
        k.lower() == b"content-type" and bytes(v).startswith(b"text/event-stream")
        for k, v in headers
    )


def _log_line(
    served: request_ids.Served,
    scope: Scope,
    door: str,
    status: int,
    seconds: float,
    stream: bool,
) -> None:
    route = route_of(scope, door)
    app = app_of(scope)
    method = str(scope.get("method", ""))
    ms = round(seconds * 1000, 1)
    where = route
    if app is not None:
        space, slug = app.split("/", 1)
        where = route.replace("{space}", space, 1).replace("{app}", slug, 1)
    said = f"{method} {where} {status} in {ms} ms"
    if served.person:
        said += f" for {served.person}"
    fields = {
        "method": method,
        "door": door,
        "route": route,
        "app": app,
        "status": status,
        "ms": ms,
        "person": served.person,
        "stream": stream,
    }
    log.info("%s", said, extra={"request_id": served.id, "fields": fields})


__all__ = ["GONE", "Traffic", "app_of", "door_of", "route_of"]
