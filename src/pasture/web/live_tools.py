"""`./api/tools/follow`: what `./api/tools` answers, sent again whenever it changes.

A page's WebMCP module (`./api/webmcp.js`) opens this stream of Server-Sent Events
so that the tools an open tab offers a browser's agent follow the app: each event
is `./api/tools`' body as the person whose tab it is, first at once, then again
whenever the app's commands change for them —

    id: 3f0c…            a digest of the body: a stream opened again with
    event: tools         `Last-Event-ID` skips a first answer the page has
    data: {"commands": [{"at": "ada/runs", "name": "log_run", …}, …]}

What moves it is the bus (`pasture.platform.db.bus`): a deploy or a rollback of the
app (`deploy`), a worker that registered or removed a command (`commands`), a change
of who may reach it (`access`), and anything the bus may have missed (`lost`). A
write to the app's rows changes no command, and moves nothing here. After each, every
stream of the app asks again as its own person, with their credentials read again
from their request; whoever no longer reaches the app is sent `event: refused`
(`{"error": …, "status": …}`) and the stream ends. Every `KEEPALIVE` seconds a
stream that sent nothing says `: still here`, and asks again too: a sign-in that
ended by itself (a session's time) ends the stream the same way.

Each stream holds one of its person's places among the live streams
(`Limiter.streams`), as `./api/subscribe`'s do, given back when the tab goes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

from pasture.caller import Caller
from pasture.errors import Refused, Unauthorized
from pasture.platform import Change, Service
from pasture.threads import in_thread
from pasture.web.live import EventStream

log = logging.getLogger("pasture.web")

# How often a quiet stream says it is still there, and asks again (a sign-in may end).
KEEPALIVE = 15.0
# The kinds of change that may change an app's commands, or who reaches them.
MOVES = frozenset({"deploy", "commands", "access", "lost"})
SIGN_IN_ENDED = "your sign-in has ended — sign in again, and the page offers its tools again"

Who = Callable[[], Awaitable[Caller]]


@dataclass(eq=False)
class Follower:
    """One open stream: the app it follows, and a way to wake it."""

    space: str
    slug: str
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    ended: bool = False  # the server is stopping: the page opens it again elsewhere


class ToolStreams:
    """This server's open `./api/tools/follow` streams, woken by the bus."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.followers: set[Follower] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: Callable[[], None] | None = None

    async def start(self) -> None:
        """Hear the bus on the running loop (done by the first stream)."""
        if self._stop is None:
            self._loop = asyncio.get_running_loop()
            self._stop = self.service.bus.listen(self._heard, wait=False)
            await in_thread(self.service.bus.ready)  # a deploy said meanwhile is not missed

    def stop(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None

    def end(self) -> None:
        """End every stream now (the server is stopping); on the loop."""
        for follower in list(self.followers):
            follower.ended = True
            follower.wake.set()

    def _heard(self, change: Change) -> None:
        """On the bus's thread (or a publisher's): hand the change to the loop."""
        loop = self._loop
        if change.kind in MOVES and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._changed, change)

    def _changed(self, change: Change) -> None:
        for follower in self.followers:
            if change.touches(follower.space, follower.slug):
                follower.wake.set()

    async def open(self, caller: Caller, who: Who, at: str, seen: str | None) -> EventStream:
        """A stream of the commands of the app `at` (`space/slug`) as `caller` sees them; a
        refusal (no such app, too many streams) is raised before anything is sent."""
        await self.start()
        release = self.service.limiter.streams.hold(caller)  # TooMany past the limit
        space, _, slug = at.partition("/")
        follower = Follower(space, slug)
        self.followers.add(follower)  # before the first answer: a deploy meanwhile asks again
        try:
            first = await self._listing(caller, at)
        except BaseException:
            self.followers.discard(follower)
            release()
            raise
        return EventStream(self._events(follower, caller, who, at, first, seen, release))

    async def _listing(self, caller: Caller, at: str) -> bytes:
        listing = await in_thread(
            lambda: self.service.listing.list_commands(caller, at, via_web=True)
        )
        body = json.dumps({"commands": listing.data.get("commands", [])}, separators=(",", ":"))
        return body.encode()

    async def _events(
        self,
        follower: Follower,
        caller: Caller,
        who: Who,
        at: str,
        body: bytes,
        seen: str | None,
        release: Callable[[], None],
    ) -> AsyncIterator[bytes]:
        sent = seen or ""
        try:
            while True:
                digest = hashlib.sha256(body).hexdigest()[:24]
                if digest != sent:
                    sent = digest
                    yield f"id: {digest}\nevent: tools\ndata: ".encode() + body + b"\n\n"
                quiet = False
                try:
                    await asyncio.wait_for(follower.wake.wait(), KEEPALIVE)
                except TimeoutError:
                    quiet = True
                follower.wake.clear()
                if follower.ended:
                    return
                if quiet:
                    yield b": still here\n\n"
                try:
                    now = await who()
                    if now.eid != caller.eid:
                        raise Unauthorized(SIGN_IN_ENDED)
                    caller = now  # as it stands now: its scope, read again
                    body = await self._listing(caller, at)
                except Refused as e:
                    said = json.dumps({"error": e.sentence, "status": e.status})
                    yield f"event: refused\ndata: {said}\n\n".encode()
                    return
                except Exception:
                    log.exception("the tools of %s could not be listed again", at)
        finally:
            self.followers.discard(follower)
            release()


__all__ = ["KEEPALIVE", "MOVES", "ToolStreams"]
