"""A deploy anywhere, told to this process's MCP clients.

The platform's bus (`pasture.platform.db.bus`) hears every deploy and rollback made
through any server sharing the database. For each, the connector announces:

- on the newest protocol's `subscriptions/listen` streams (over HTTP and stdio):
  `ResourcesListChanged` and `PromptsListChanged` (each app is a prompt), and
  `ResourceUpdated` for each of the app's views — a stream hears only the kinds and
  addresses it asked for, and of a view only if its caller may read it (`Scoped`);
- on a connection of the handshake generation that lives on (stdio, in memory):
  `notifications/resources/list_changed` and `notifications/prompts/list_changed`,
  and `notifications/resources/updated`
  for each view it subscribed to with `resources/subscribe` and still reads;
- on stateless HTTP of the handshake generation, whose connections end with each
  request: `notifications/resources/list_changed` and
  `notifications/prompts/list_changed` on the GET streams its clients
  hold open, which hear the same events the listen streams do (`listeners`, served
  by `pasture.web.mcp_events`). No connection lives on there to follow a view, so
  it offers no `resources/subscribe`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    SubscriptionBus,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from pasture.caller import Caller
from pasture.client_asks import Level
from pasture.errors import Refused
from pasture.platform import Change, Service
from pasture.threads import in_thread

logger = logging.getLogger("pasture.mcp")


class Connection:
    """A connection of the handshake generation that lives on: who it is, a way to send on
    its own channel, and the views it follows."""

    def __init__(self, caller: Caller, session: ServerSession, hello: object) -> None:
        self.caller = caller
        self.session = session  # one request's; its channel apart from replies is the connection's
        self.hello = hello  # the connection's `initialize`, kept so its id names it alone
        self.followed: set[str] = set()
        self.level: Level | None = None  # logging/setLevel's: the least level it is told


class Relay:
    """Deploys heard on the platform's bus, announced to this server's clients."""

    def __init__(self, service: Service, listeners: SubscriptionBus, *, living: bool) -> None:
        """`living`: the transport's connections live on (stdio, in memory), so the
        handshake generation's are kept to be told; stateless HTTP's end with each call."""
        self.service = service
        self.listeners = listeners  # the SDK's bus, which feeds the listen streams
        self.living = living
        # A connection is known by its `initialize` (one per connection): the SDK hands a
        # handler a session made for that request, not the connection.
        self.connections: dict[int, Connection] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: Callable[[], None] | None = None
        self._telling: set[asyncio.Future[None]] = set()
        # Each open listen stream's caller and the SDK's delivery to it: a view's change is
        # told to those who may read the view, and no one else (`Scoped`).
        self.streams: dict[int, Scoped] = {}

    def scoped(self, caller: Caller, uris: Iterable[str]) -> Scoped:
        """The bus as a listen stream of `caller`, following views `uris`, is to see it."""
        return Scoped(self, caller, frozenset(uris))

    def seen(self, ctx: ServerRequestContext[Any], caller: Caller) -> Connection | None:
        """Every request passes here: the first starts hearing the bus on this loop, and a
        connection of the handshake generation is kept (while it lives) to be told."""
        if self._stop is None:
            self._listen()
        hello = ctx.session.client_params
        if not self.living or hello is None or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return None
        connection = self.connections.get(id(hello))
        if connection is None:
            connection = self.connections[id(hello)] = Connection(caller, ctx.session, hello)
        return connection

    async def start(self) -> None:
        """Hear the bus on the running loop, once it hears (waited for off the loop)."""
        if self._stop is None:
            self._listen()
        await in_thread(self.service.bus.ready)

    def _listen(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = self.service.bus.listen(self._heard, wait=False)

    async def settled(self) -> None:
        """Until what was heard so far has been told (a deploying call's reply waits, so
        its own connection hears of the deploy before the reply)."""
        await asyncio.sleep(0)  # a change handed over by a thread runs first
        while self._telling:
            await asyncio.gather(*list(self._telling), return_exceptions=True)

    def _heard(self, change: Change) -> None:
        """On the bus's thread, or the deploying one."""
        if change.kind not in ("deploy", "lost"):
            return
        loop = self._loop
        if loop is None or loop.is_closed():
            if self._stop is not None:
                self._stop()  # the loop it served has ended
            return
        loop.call_soon_threadsafe(self._begin, change)

    def _begin(self, change: Change) -> None:
        told = asyncio.ensure_future(self._tell(change))
        self._telling.add(told)
        told.add_done_callback(self._telling.discard)

    async def _tell(self, change: Change) -> None:
        try:
            await self.listeners.publish(ResourcesListChanged())
            await self.listeners.publish(PromptsListChanged())
            views: list[str] = []
            if change.space is not None and change.slug is not None:
                space, slug = change.space, change.slug
                views = await in_thread(lambda: self.service.view_uris(space, slug))
                await self._tell_streams(views)
            for key, connection in list(self.connections.items()):
                if not await self._tell_connection(connection, change):
                    del self.connections[key]  # closed
        except Exception:
            logger.exception("a deploy could not be announced")

    async def _tell_streams(self, views: list[str]) -> None:
        """`ResourceUpdated` for each view, on the listen streams whose caller reads it: a
        stream that names a view it may not read learns nothing of it, not even that it is."""
        reads: dict[tuple[object, str], bool] = {}
        for deliver_to, stream in list(self.streams.items()):
            for uri in views:
                if uri not in stream.uris:
                    continue  # not one it follows: nothing to ask, nothing to send
                key = ((stream.caller.eid, stream.caller.spaces), uri)
                if key not in reads:
                    reads[key] = await self._reads(stream.caller, uri)
                if reads[key] and deliver_to in self.streams and stream.listener is not None:
                    stream.listener(ResourceUpdated(uri=uri))

    async def _tell_connection(self, connection: Connection, change: Change) -> bool:
        """Whether the connection is still there to be told."""
        session = connection.session
        try:
            await session.send_resource_list_changed()
            await session.send_prompt_list_changed()
        except Exception:
            logger.debug("resources/list_changed had no channel to go out on")
            return False
        under = "ui://" if change.space is None else f"ui://{change.space}/"
        if change.space is not None and change.slug is not None:
            under += f"{change.slug}/"
        for uri in sorted(connection.followed):
            if not uri.startswith(under):
                continue
            if not await self._reads(connection.caller, uri):
                continue
            try:
                await session.send_resource_updated(uri)
            except Exception:
                logger.debug("resources/updated had no channel to go out on")
                return False
        return True

    async def _reads(self, caller: Caller, uri: str) -> bool:
        """Whether `caller` may still read the view: only then is it said to have changed."""
        try:
            await in_thread(lambda: self.service.pages.view(caller, uri))
        except Refused:
            return False
        return True

    # -- resources/subscribe and resources/unsubscribe (the handshake generation) ----------
    def follow(self, ctx: ServerRequestContext[Any], caller: Caller, uri: str) -> None:
        connection = self.seen(ctx, caller)
        if connection is not None:
            connection.followed.add(uri)

    def unfollow(self, ctx: ServerRequestContext[Any], uri: str) -> None:
        hello = ctx.session.client_params
        connection = None if hello is None else self.connections.get(id(hello))
        if connection is not None:
            connection.followed.discard(uri)


class Scoped:
    """The SDK's bus as one listen stream's caller sees it (a `SubscriptionBus` for the
    SDK's `ListenHandler`): every event the bus carries but a view's change, which the
    relay tells each stream only if its caller reads the view."""

    def __init__(self, relay: Relay, caller: Caller, uris: frozenset[str]) -> None:
        self.relay = relay
        self.caller = caller
        self.uris = uris  # the views the stream follows
        self.listener: Callable[[ServerEvent], None] | None = None

    async def publish(self, event: ServerEvent) -> None:
        await self.relay.listeners.publish(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        def unscoped(event: ServerEvent) -> None:
            if not isinstance(event, ResourceUpdated):
                listener(event)

        stop = self.relay.listeners.subscribe(unscoped)
        self.listener = listener
        key = id(self)
        self.relay.streams[key] = self

        def unsubscribe() -> None:
            self.relay.streams.pop(key, None)
            stop()

        return unsubscribe


EMPTY = types.EmptyResult()

__all__ = ["EMPTY", "Connection", "Relay", "Scoped"]
