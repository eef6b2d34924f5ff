"""A limit's buckets, shared by every process on the same data: tokens leased, calls taken at once.

The bucket of each limit and key is kept in the shared counts (`pasture.platform.db.counts`:
`limits.db` in the data directory, or the PostgreSQL database). A process takes a call
from the tokens it holds of that key, in memory — a dictionary look-up, nothing written —
and asks the bucket only

- when it holds none (its first call of the key, or what it held is spent): it gives
  back what it held and is lent half of what the bucket has (at most what the rate
  fills in a lease's time: a slow rate's calls are lent one at a time), or told how long until
  there is one (then it does not ask again for that key for a second at most);
- every `LOOK` (a fifth of a second), for the keys another process found empty
  (`Counts.wanted`): what it holds of them it gives back, for whoever needs it;
- for a key it has not been asked for in `IDLE` seconds: it gives back what it holds; and
  it renews a lease half spent of its time (`LEASE_SECONDS`), which it never spends past.

A token is in the bucket or held by one process, never both: however many processes and
servers count, a key's calls come out of the one bucket, and no more get through than it
lets. The slack is the other way: tokens one process holds are not another's until it
gives them back, so a key of a fast rate called through several processes at once may
be refused a moment early — for a fifth of a second, then the bucket has them again (the refused
are told to try again in a second at most).

When the shared counts cannot be reached (a fault of the file or of the database), no
call waits on them and none is refused for it: each process counts alone, as one of the
processes seen lately (a bucket of 1/N of the size that fills at 1/N of the rate, at least
one call), so that N processes together still let the rate through, not N times it. That is
logged once; the counts are tried again each second, and what was let through meanwhile
is taken from the buckets when they answer again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Protocol

from pasture.platform.db.counts import LEASE_SECONDS, Ask, Counts, Lent

log = logging.getLogger("pasture.limits")

Clock = Callable[[], float]

LOOK = 0.2  # how often a process looks for keys another one found empty
IDLE = 10.0  # what a process holds of a key not called that long is given back
ASK_AGAIN = 1.0  # a key found empty is not asked about again sooner by this process
ALIVE_EVERY = 2.0  # how often a process says it is there (how many count: N)
ALIVE_WITHIN = 10.0  # ... and those that said so within this are counted
TIDY_EVERY = 60.0  # how often full buckets and old failures are forgotten
RETRY = 1.0  # the counts unreachable: tried again this often
KEYS = 50_000  # keys a limit remembers at most (`pasture.platform.access.limits._KEYS`)


class Takes(Protocol):
    """A limit counted in this process alone: 0.0 for a call let through, else the wait."""

    def take(self, key: Hashable) -> float: ...


@dataclass(slots=True)
class _Held:
    """What this process holds of one key's bucket."""

    left: float = 0.0  # tokens it may still spend; below 0, calls let through alone (owed)
    until: float = 0.0  # when its lease runs out
    holds: bool = False  # the bucket counts a hold of this process's
    used: float = 0.0  # when it was last asked for
    ask_at: float = 0.0  # found empty: not asked again before
    free_at: float = 0.0  # ... and the callers told to wait until
    answered: float = 0.0  # the last time another found it empty that was answered


def key_text(key: Hashable) -> str:
    """A key as every process writes it: a text as it is, a tuple's parts joined."""
    if isinstance(key, str):
        return key
    if isinstance(key, tuple):
        return "\x1f".join(str(part) for part in key)
    return str(key)


class SharedBuckets:
    """One rate (`count` in `seconds`) for many keys, its buckets in the shared counts."""

    def __init__(
        self,
        shared: Shared,
        kind: str,
        count: int,
        seconds: float,
        alone: Callable[[float], Takes],
    ) -> None:
        self.shared = shared
        self.kind = kind
        self.count = count
        self.per_second = count / seconds
        self._alone_of = alone  # a share (1/N) -> buckets counted in this process alone
        self._alone: Takes | None = None
        self._lock = threading.Lock()  # what is held
        self._asking = threading.Lock()  # one question of the counts at a time
        self._held: dict[str, _Held] = {}

    def take_at_once(self, key: Hashable) -> float | None:
        """One call of `key` from what this process holds: 0.0, or the seconds to wait;
        None when only the shared bucket can tell (then `take`, in a thread)."""
        whose = key_text(key)
        now = self.shared.clock()
        with self._lock:
            held = self._held.get(whose)
            if held is not None:
                if held.left >= 1.0 and now < held.until:
                    held.left -= 1.0
                    held.used = now
                    return 0.0
                if now < held.ask_at:
                    return max(held.free_at - now, 1e-3)
        if self.shared.apart:
            return self._take_alone(whose, now)
        return None

    def take(self, key: Hashable) -> float:
        """One call of `key`: 0.0, or the seconds to wait; asks the shared bucket when it
        must (which may wait on the database: not on an event loop)."""
        wait = self.take_at_once(key)
        if wait is not None:
            return wait
        with self._asking:
            wait = self.take_at_once(key)  # asked meanwhile by another thread
            return self._ask(key_text(key)) if wait is None else wait

    def _ask(self, whose: str) -> float:
        now = self.shared.clock()
        with self._lock:
            held = self._held.get(whose)
            if held is None:
                if len(self._held) >= KEYS:
                    self._forget_resting(now)
                held = self._held[whose] = _Held()
            back = _back(held, now)
        try:
            lent = self.shared.lease([self._ask_of(whose, back, want=True)], now)[0]
        except Exception as e:
            with self._lock:
                held.left += back  # nothing was given back
            self.shared.fell(e)
            return self._take_alone(whose, now)
        with self._lock:
            _lent(held, lent, now)
            held.used = now
            if held.left >= 1.0:
                held.left -= 1.0
                return 0.0
            wait = max((1.0 - lent.level) / self.per_second, 1e-3)
            if lent.held >= 1.0:
                wait = min(wait, ASK_AGAIN)  # others hold some: given back within a look
            held.free_at = now + wait
            held.ask_at = now + min(wait, ASK_AGAIN)
            return wait

    def _ask_of(self, whose: str, back: float, *, want: bool) -> Ask:
        return Ask(self.kind, whose, float(self.count), self.per_second, back, want)

    def _take_alone(self, whose: str, now: float) -> float:
        """Counted here alone, as one of the processes (the shared counts are away); what
        is let through is owed to the bucket."""
        alone = self._alone
        if alone is None:
            alone = self._alone = self._alone_of(1.0 / max(1, self.shared.processes))
        wait = alone.take(whose)
        if not wait:
            with self._lock:
                held = self._held.get(whose)
                if held is None and len(self._held) < KEYS:
                    held = self._held[whose] = _Held()
                if held is not None:
                    if now >= held.until:
                        held.left = min(held.left, 0.0)
                    held.left -= 1.0
                    held.used = now
        return wait

    def together_again(self) -> None:
        """The shared counts answer again: counting alone ends."""
        self._alone = None

    def tend(self, now: float, wanted: Mapping[str, float], *, all_back: bool = False) -> None:
        """Give back what another process needs (`wanted`: when it found the bucket empty),
        what was not called for in `IDLE`, what is owed; renew leases half gone. With
        `all_back`, everything held is given back. Raises what the counts raise."""
        with self._asking:
            asks: list[tuple[_Held, float, Ask]] = []
            with self._lock:
                for whose, held in list(self._held.items()):
                    found = wanted.get(whose, 0.0)
                    idle = now - held.used >= IDLE
                    if not held.holds and held.left == 0:
                        if idle and now >= held.ask_at:
                            del self._held[whose]  # nothing to say of it
                        continue
                    if all_back or idle or held.left < 0 or found > held.answered:
                        want = False
                    elif now >= held.until or held.until - now < LEASE_SECONDS / 2:
                        want = held.left >= 1  # called lately: renewed (a lease spent: let go)
                    else:
                        continue
                    held.answered = max(held.answered, found)
                    back = _back(held, now)
                    asks.append((held, back, self._ask_of(whose, back, want=want)))
            if not asks:
                return
            try:
                answers = self.shared.lease([ask for _, _, ask in asks], now)
            except Exception:
                with self._lock:
                    for held, back, _ in asks:
                        held.left += back
                raise
            with self._lock:
                for (held, _, _), lent in zip(asks, answers, strict=True):
                    _lent(held, lent, now)

    def _forget_resting(self, now: float) -> None:
        """Room for another key: forget those with nothing to say; if that is not enough,
        give back what the longest idle hold (under the asking lock, with this lock)."""
        for whose in [w for w, h in self._held.items() if not h.holds and h.left == 0]:
            del self._held[whose]
        if len(self._held) < KEYS:
            return
        oldest = sorted(self._held, key=lambda w: self._held[w].used)[: len(self._held) // 2]
        asks = []
        for whose in oldest:
            held = self._held.pop(whose)
            back = _back(held, now)
            if back or held.holds:
                asks.append(self._ask_of(whose, back, want=False))
        if asks:
            try:
                self.shared.lease(asks, now)
            except Exception as e:  # what they owed is forgotten; what they held, kept by the
                self.shared.fell(e)  # bucket until their leases run out


def _back(held: _Held, now: float) -> float:
    """What `held` gives back, taken from it: its tokens (not those of a lease run out,
    which are not spent) and what it owes."""
    if now >= held.until:
        held.left = min(held.left, 0.0)
    back = held.left
    held.left = 0.0
    return back


def _lent(held: _Held, lent: Lent, now: float) -> None:
    held.left += lent.granted
    held.holds = lent.granted > 0
    held.until = now + LEASE_SECONDS if lent.granted else 0.0


class Shared:
    """The limits of one process counted in `counts`: their buckets, this process's look
    at the counts every `LOOK` (on a thread of its own, from the first time they are
    asked), and whether they can be reached."""

    def __init__(
        self, counts: Counts, clock: Clock, *, looking: bool = True, forget: float = 15 * 60.0
    ) -> None:
        self.counts = counts
        self.clock = clock
        self.looking = looking
        self.forget = forget  # failed sign-ins are forgotten after this
        self.processes = 1  # how many processes count (N), as last seen
        self._buckets: list[SharedBuckets] = []
        self._state = threading.Lock()
        self._apart_until: float | None = None  # unreachable: not tried again before (monotonic)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._used = False
        self._looked = self._alive_at = self._tidied_at = float("-inf")

    def buckets(
        self, kind: str, count: int, seconds: float, alone: Callable[[float], Takes]
    ) -> SharedBuckets:
        made = SharedBuckets(self, kind, count, seconds, alone)
        self._buckets.append(made)
        return made

    # -- reaching the counts -----------------------------------------------------------------
    def lease(self, asks: list[Ask], now: float) -> list[Lent]:
        """`Counts.lease`, once this process has said it is there (and looks from then on)."""
        self.used()
        if now - self._alive_at >= ALIVE_EVERY:
            self._alive(now)
        answers = self.counts.lease(asks, now)
        self.works()
        return answers

    def used(self) -> None:
        """The counts are used: this process looks at them from now on."""
        if self._used:
            return
        with self._state:
            if self._used:
                return
            self._used = True
            if self.looking and not self._stopping.is_set():
                thread = threading.Thread(target=self._run, name="pasture-limits", daemon=True)
                self._thread = thread
                thread.start()

    def _alive(self, now: float) -> None:
        self.processes = self.counts.alive(now, ALIVE_WITHIN)
        self._alive_at = now

    @property
    def apart(self) -> bool:
        """Whether the counts could not be reached a moment ago (so are not asked now)."""
        until = self._apart_until
        return until is not None and time.monotonic() < until

    def fell(self, error: BaseException) -> None:
        """The counts could not be reached: said once, then each process counts alone."""
        with self._state:
            first = self._apart_until is None
            self._apart_until = time.monotonic() + RETRY
        if first:
            log.warning(
                "the counts of calls every process shares cannot be reached (%s): each counts "
                "alone, as one of %d, until they can",
                _said(error),
                self.processes,
                exc_info=error,
            )

    def works(self) -> None:
        """The counts answered: if they had not, that ends."""
        if self._apart_until is None:
            return
        with self._state:
            was, self._apart_until = self._apart_until, None
        if was is not None:
            for buckets in self._buckets:
                buckets.together_again()
            log.warning("the counts of calls every process shares are reached again")

    # -- the look ----------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stopping.wait(LOOK):
            self.look()

    def look(self) -> None:
        """What the thread does each `LOOK`: give back what others need, and what is idle
        or owed; say this process is there; now and then forget what is full again."""
        if self.apart:
            return
        now = self.clock()
        try:
            if now - self._alive_at >= ALIVE_EVERY:
                self._alive(now)
            # a little back from the last look: clocks a little apart
            since = (now if self._looked == float("-inf") else min(self._looked, now)) - 2.0
            self._looked = now
            wanted: dict[str, dict[str, float]] = {}
            for kind, whose, when in self.counts.wanted(since):
                wanted.setdefault(kind, {})[whose] = when
            for buckets in self._buckets:
                buckets.tend(now, wanted.get(buckets.kind, {}))
            if now - self._tidied_at >= TIDY_EVERY:
                self.counts.tidy(now, now - self.forget)
                self._tidied_at = now
        except Exception as e:
            self.fell(e)
        else:
            self.works()

    def close(self) -> None:
        """Stop looking; give back everything held, and say this process counts no more."""
        self._stopping.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
        if self._used and not self.apart:
            try:
                now = self.clock()
                for buckets in self._buckets:
                    buckets.tend(now, {}, all_back=True)
                self.counts.leave()
            except Exception:
                log.info("what this process held of the shared counts is left to run out")
        self.counts.close()


def _said(error: BaseException) -> str:
    sentence = getattr(error, "sentence", None)
    return str(sentence) if sentence else f"{type(error).__name__}: {error}"


__all__ = ["IDLE", "LOOK", "Shared", "SharedBuckets", "Takes", "key_text"]
