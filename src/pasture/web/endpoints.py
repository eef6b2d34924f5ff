"""What every endpoint of the web door has: the Service, who is asking, and calls made off the
event loop. The API's endpoints (`pasture.web._api`), the pages' (`pasture.web._page_endpoints`)
and the consent page's (`pasture.web.consent`) are made of it.

An endpoint finds its caller (`who.of_api` or `who.of_page`), calls the Service,
and renders what it answers; a refusal or a bug it only raises, and the door
answers it (`pasture.web._failures`). A command is called watched (`call_watched`):
its client going away stops it (`pasture.long_calls`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from starlette.requests import Request

from pasture.long_calls import LongCall
from pasture.platform import Service
from pasture.threads import in_command_thread, in_thread, in_watched_thread
from pasture.web._who import Who

P = ParamSpec("P")
T = TypeVar("T")


def public_url(service: Service) -> str:
    """The address the door is served at, without a trailing slash."""
    return str(getattr(service, "base_url", "http://127.0.0.1:8000")).rstrip("/")


class Endpoints:
    """The Service, who is asking, and calling the Service in a worker thread."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.base = public_url(service)
        self.who = Who(service, self.base)
        self.secure = self.who.secure
        self.session_cookie = self.who.session_cookie

    async def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        # The Service is synchronous (SQLite, files): keep it off the event loop.
        return await in_thread(functools.partial(fn, *args, **kwargs))

    async def call_command(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`call` for what may run an app's code, in the commands' own threads."""
        return await in_command_thread(functools.partial(fn, *args, **kwargs))

    async def call_watched(
        self, request: Request, fn: Callable[..., T], *args: Any, **kwargs: Any
    ) -> T:
        """`call_command` for a command or handler of an app's code, given `long_call=`: when
        the request's client goes away before the answer, the call is stopped."""

        async def gone() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass

        def run(long_call: LongCall) -> T:
            return fn(*args, **kwargs, long_call=long_call)

        return await in_watched_thread(run, gone=gone)


__all__ = ["Endpoints", "public_url"]
