"""`./api/subscribe?filter=…`: what `./api/query` answers, sent again whenever it changes.

A page's `subscribe(filter, callback)` (`./api/client.js`) opens one of these
streams of Server-Sent Events. Each event is the body `./api/query` would answer
now (`{"text", "data"}`), as the person who opened it: first at once, then after
every change that alters it. Its `id` is a digest of that body, so a stream
opened again with `Last-Event-ID` skips a first answer the page already has, and
never misses the last one (it is always sent when it differs).

A stream watches one page, as `./api/query` answers at most one: its filter's first
page (or, with `after=`, the page after that cursor), with `more` and the `cursor` of the
next when rows follow it. It is sent again when that page changes — its rows, or
whether more follow — and never for a change to rows past it; a page that shows the
newest rows watches `sort=-created.at`.

What moves a stream is the bus (`pasture.platform.db.bus`), so a write through any
server sharing the database reaches every server's streams:

- a write to an app runs each filter its pages watch once, as one of the
  people watching it, and sends the new body to all of them when it changed.
  An app's rows are the same for everyone who reaches the app, so one person's
  answer is every watcher's;
- a deploy, or a change of who may reach a space (a member taken out, a
  session or token ended), asks again for each watcher alone, as themselves:
  whoever no longer reaches the app gets `event: refused` with the sentence
  (`{"error": …}`) and the stream ends, before any later row could be sent.
  Nobody is sent the new answer until every watcher has been asked.

The bus may tell of a write before it tells of a change of reach made on another
server a moment earlier. So an answer is shared only if the database's count of
reach taken away (`Service.reach_version`), read just after the answer, is the
one every watcher was last asked as themselves at; if it moved, every watcher
is asked alone first.

While nothing changes, a comment every `KEEPALIVE` seconds keeps proxies from
closing the stream and tells a dead client apart; and each stream's sign-in is
read again then, as one may end with nothing on the bus (a session's or an
access token's time): a stream whose sign-in ended is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from pasture.caller import Caller
from pasture.errors import Refused, Unauthorized
from pasture.platform import Change, Service
from pasture.result import Result
from pasture.threads import in_thread

log = logging.getLogger("pasture.web")

KEEPALIVE = 15.0
SIGN_IN_ENDED = "your sign-in has ended — sign in again, and the page watches again"
# Rounds of asking again begin at most this often: a write after a quiet spell is sent at
# once, and a burst of writes is taken together, so a busy app costs its watchers' server
# a bounded amount of work however fast it is written to.
ROUND_SECONDS = 0.05
# And at most this share of the server's time goes to sending rounds: after a round that
# took t to send, the next waits until about 7t after it began (so a thousand pages of one
# busy app slow the rest of the server by a sixth or so) — but never longer than
# `LONGEST_WAIT`, so that one slow round (a pause of the whole process) delays no page long.
SENDING_SHARE = 0.15
LONGEST_WAIT = 0.3
# How often a round asks every watcher alone while reach keeps being taken away meanwhile,
# before it leaves the answers unsent until a later round (spaced as rounds are).
ASKED_ALONE_TRIES = 3
HEADERS = {
    "Cache-Control": "no-cache, no-store",
    "X-Accel-Buffering": "no",  # a proxy that buffers would hold each event back
}

Who = Callable[[], Awaitable[Caller]]


class EventStream(StreamingResponse):
    """A stream that ends as soon as its client goes, not at the next thing sent to it.

    A stream may send nothing for long (a comment every `KEEPALIVE` seconds), and
    until it ends it is asked again after every write and holds one of its person's
    places (`Limiter.streams`): a page closed or reloaded gives it back at once."""

    def __init__(self, events: AsyncIterator[bytes]) -> None:
        super().__init__(events, media_type="text/event-stream", headers=HEADERS)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with anyio.create_task_group() as group:

            async def streaming() -> None:
                with contextlib.suppress(OSError):  # the client went while it was sent to
                    await self.stream_response(send)
                group.cancel_scope.cancel()

            group.start_soon(streaming)
            await self.listen_for_disconnect(receive)
            group.cancel_scope.cancel()


@dataclass(eq=False)
class Watcher:
    """One open stream: who is watching, and what it has been told."""

    caller: Caller
    who: Who  # the person asked afresh, from the request's own credentials
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    refused: Refused | None = None
    ended: bool = False  # the server is stopping: the page opens it again elsewhere
    owed: bool = False  # woken with a new answer it has not sent yet
    idle: bool = False  # sent nothing since the last keep-alive round
    # gives back the caller's place among the streams they may hold (`Limiter.streams`)
    release: Callable[[], None] = lambda: None


@dataclass(frozen=True)
class Answer:
    """A filter's answer, the query it came from (`Watched.asked`) and `reach_version`
    read just after it."""

    result: Result
    ticket: int
    reach: int | None  # None: not read (the round reads it around all its answers)


@dataclass(eq=False)
class Watched:
    """One filter on one app, and everyone watching it."""

    space: str
    slug: str
    filter: str
    # in the order they began watching: a write's answer is asked as the longest watching
    watchers: dict[Watcher, None] = field(default_factory=dict)
    frame: bytes = b""
    digest: str = ""
    asked: int = 0  # queries begun on this filter
    shown: int = 0  # the latest begun whose answer is kept: an older one never replaces it

    @property
    def at(self) -> str:
        return f"{self.space}/{self.slug}"

    def told(self, result: Result, ticket: int) -> bool:
        """Keep `result` (of the query begun `ticket`th) as the frame to send, unless a
        later query's answer is kept already; whether the frame changed."""
        if ticket < self.shown:
            return False
        self.shown = ticket
        body = json.dumps({"text": result.text, "data": result.data}, separators=(",", ":"))
        digest = hashlib.sha256(body.encode()).hexdigest()[:24]
        if digest == self.digest:
            return False
        self.digest = digest
        self.frame = f"id: {digest}\nevent: answer\ndata: {body}\n\n".encode()
        return True


class Live:
    """This server's open subscriptions, kept current by the bus."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.watched: dict[tuple[str, str], Watched] = {}
        self._pending: list[Change] = []
        self._refreshing: asyncio.Task[None] | None = None
        self._next_round = 0.0  # on the loop's clock: when the next round may begin
        self._owed = 0  # watchers woken with an answer, not yet sent
        self._all_sent = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: Callable[[], None] | None = None
        self._keeping: asyncio.Task[None] | None = None
        # `reach_version` when every watcher was last asked as themselves: an answer read
        # while it still says so may be shared (see the module).
        self._reach = 0

    async def start(self) -> None:
        """Hear the bus on the running loop (done by the first subscription)."""
        if self._stop is None:
            self._loop = asyncio.get_running_loop()
            self._reach = await in_thread(self.service.reach_version)  # nobody watches yet
            # One timer for every stream's keep-alive, not one per stream and wait.
            self._keeping = self._loop.create_task(self._keep_alive())
            self._stop = self.service.bus.listen(self._heard, wait=False)
            # Until the bus hears, off the loop: a write said meanwhile would be missed.
            await in_thread(self.service.bus.ready)

    def stop(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None
        if self._keeping is not None:
            self._keeping.cancel()
            self._keeping = None

    async def _keep_alive(self) -> None:
        """Every `KEEPALIVE` seconds, each stream's sign-in read again, and a comment on each
        stream that sent nothing since."""
        while True:
            await asyncio.sleep(KEEPALIVE)
            try:
                await self._still_signed_in()
            except Exception:
                log.exception("the streams' sign-ins could not be read again")
            for watched in list(self.watched.values()):
                for watcher in watched.watchers:
                    if watcher.idle:
                        watcher.wake.set()
                    watcher.idle = True

    async def _still_signed_in(self) -> None:
        """A sign-in ends by itself too — a session left idle or grown old, an agent's
        access token's hour, a page's pass — with nothing on the bus to say so: a stream
        whose credentials no longer name the person who opened it is refused, so it is sent
        nothing of theirs more than `KEEPALIVE` seconds after."""
        watchers = {w for watched in self.watched.values() for w in watched.watchers}
        for watcher in watchers:
            if watcher.refused is not None:
                continue
            try:
                now = await watcher.who()
            except Refused as e:
                self._refuse(watcher, e)
                continue
            if now.eid != watcher.caller.eid:
                self._refuse(watcher, Unauthorized(SIGN_IN_ENDED))
            else:
                watcher.caller = now  # as it stands now: its scope, read again

    def end(self) -> None:
        """End every stream now (the server is stopping); on the loop."""
        for watched in list(self.watched.values()):
            for watcher in list(watched.watchers):
                watcher.ended = True
                watcher.wake.set()

    async def open(
        self, caller: Caller, who: Who, at: str, filter: str, seen: str | None
    ) -> EventStream:
        """A stream of `filter`'s answers on the app `at` (`space/slug`), for `caller`; a
        refusal (no such app, a bad filter) is raised before anything is sent."""
        await self.start()
        release = self.service.limiter.streams.hold(caller)  # TooMany past the limit
        space, _, slug = at.partition("/")
        key = (at, filter)
        watched = self.watched.get(key)
        if watched is None:
            watched = self.watched[key] = Watched(space, slug, filter)
        # Watching before the first answer is asked: a write heard meanwhile asks again.
        watcher = Watcher(caller, who, release=release)
        watched.watchers[watcher] = None
        try:
            answer = await self._answer(caller, watched)
            if answer.reach == self._reach:
                self._show(watched, answer)
            else:
                await self._asked_alone([watched])
        except BaseException:
            self._forget(watched, watcher)
            raise
        return EventStream(self._events(watched, watcher, seen))

    async def _events(
        self, watched: Watched, watcher: Watcher, seen: str | None
    ) -> AsyncIterator[bytes]:
        sent = seen or ""
        try:
            while not watcher.ended:
                if watcher.refused is not None:
                    body = json.dumps(
                        {"error": watcher.refused.sentence, "status": watcher.refused.status}
                    )
                    yield f"event: refused\ndata: {body}\n\n".encode()
                    return
                if watched.digest != sent:
                    sent = watched.digest
                    watcher.idle = False
                    yield watched.frame
                elif watcher.idle:
                    watcher.idle = False
                    yield b": still here\n\n"
                self._paid(watcher)
                await watcher.wake.wait()
                watcher.wake.clear()
        finally:
            self._paid(watcher)
            self._forget(watched, watcher)

    def _forget(self, watched: Watched, watcher: Watcher) -> None:
        watcher.release()
        watched.watchers.pop(watcher, None)
        if not watched.watchers and self.watched.get((watched.at, watched.filter)) is watched:
            del self.watched[(watched.at, watched.filter)]

    # -- the bus --------------------------------------------------------------------------
    def _heard(self, change: Change) -> None:
        """On the bus's thread (or a writer's): hand the change to the loop."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._changed, change)

    def _changed(self, change: Change) -> None:
        self._pending.append(change)
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.get_running_loop().create_task(self._refresh())

    async def _refresh(self) -> None:
        # Changes that arrive while a round runs, or soon after one, are taken together.
        loop = asyncio.get_running_loop()
        while self._pending:
            wait = self._next_round - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            began = loop.time()
            changes, self._pending = self._pending, []
            shared: list[Watched] = []
            alone: list[Watched] = []
            for watched in list(self.watched.values()):
                # A worker's commands moving (`commands`) changes no row, nor who reaches it.
                touching = [
                    c
                    for c in changes
                    if c.kind != "commands" and c.touches(watched.space, watched.slug)
                ]
                if touching:
                    writes = all(c.kind == "write" for c in touching)
                    (shared if writes else alone).append(watched)
            try:
                held = await asyncio.gather(*(self._ask_once(w) for w in shared))
                if not all(held):
                    alone = list(self.watched.values())
                if alone:
                    await self._asked_alone(alone)
                if self._owed:  # until the streams have sent it (their own tasks do)
                    self._all_sent.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._all_sent.wait(), 1.0)
            except Exception:
                log.exception("a subscription could not be brought up to date")
            took = loop.time() - began
            self._next_round = began + min(max(ROUND_SECONDS, took / SENDING_SHARE), LONGEST_WAIT)

    async def _ask_once(self, watched: Watched) -> bool:
        """After a write: one answer for all, asked as one watcher who still reaches it, and
        shown to all; False (nothing shown) when reach was taken away since everyone was
        last asked alone."""
        for watcher in list(watched.watchers):
            if watcher.refused is not None:
                continue
            try:
                answer = await self._answer(watcher.caller, watched)
            except Refused as e:
                self._refuse(watcher, e)
                continue
            if answer.reach != self._reach:
                return False
            self._show(watched, answer)
            return True
        return True

    async def _asked_alone(self, targets: list[Watched]) -> None:
        """After a deploy or a change of who reaches what: each watcher of `targets` asked
        as themselves, so nobody is sent an answer they may no longer read, and the
        answers shown only once all are in. If reach was taken away since everyone was last
        asked so, every watcher of every filter is; and again while it moves meanwhile."""
        for _ in range(ASKED_ALONE_TRIES):
            start = await in_thread(self.service.reach_version)
            if start != self._reach:
                targets = list(self.watched.values())
            answers = await asyncio.gather(*(self._ask_each(w) for w in targets))
            if await in_thread(self.service.reach_version) == start:
                break
        else:  # reach keeps moving: show nothing now, and try again in a later round
            self._changed(Change("lost"))
            return
        self._reach = max(self._reach, start)
        for watched, answer in zip(targets, answers, strict=True):
            if answer is not None:
                self._show(watched, answer)

    async def _ask_each(self, watched: Watched) -> Answer | None:
        """Each watcher asked as themselves (credentials read again from their request);
        those refused are told so. The last answer, shown by the caller, or None."""
        last = None
        for watcher in list(watched.watchers):
            if watcher.refused is not None:
                continue
            try:
                watcher.caller = await watcher.who()
                # the round reads reach_version before and after all of them, not each
                last = await self._answer(watcher.caller, watched, reach=False)
            except Refused as e:
                self._refuse(watcher, e)
        return last

    async def _answer(self, caller: Caller, watched: Watched, *, reach: bool = True) -> Answer:
        """The filter's answer as `caller`, and (`reach`) `reach_version` read just after it."""
        watched.asked += 1
        ticket = watched.asked

        def read() -> Answer:
            result = self.service.graph.query(caller, watched.at, watched.filter, via_web=True)
            return Answer(result, ticket, self.service.reach_version() if reach else None)

        return await in_thread(read)

    def _show(self, watched: Watched, answer: Answer) -> None:
        """Keep `answer` as what the filter's streams send; each woken when it changed."""
        if watched.told(answer.result, answer.ticket):
            for each in watched.watchers:
                self._owe(each)

    def _owe(self, watcher: Watcher) -> None:
        if not watcher.owed:
            watcher.owed = True
            self._owed += 1
        watcher.wake.set()

    def _paid(self, watcher: Watcher) -> None:
        if watcher.owed:
            watcher.owed = False
            self._owed -= 1
            if not self._owed:
                self._all_sent.set()

    @staticmethod
    def _refuse(watcher: Watcher, refused: Refused) -> None:
        watcher.refused = refused
        watcher.wake.set()


__all__ = ["HEADERS", "KEEPALIVE", "ROUND_SECONDS", "Live", "Watched", "Watcher"]
