"""How fast anyone may call, and how often a sign-in may fail: counted in memory, per process.

A person using an agent never meets these limits; a runaway loop does:

    calls    per token, OAuth grant or signed-in person   600 a minute    $PASTURE_RATE
             per client address (IPv6: per /64)          1,200 a minute   $PASTURE_RATE_ADDRESS
    writes   anonymous, to `open` apps, per address          60 a minute  $PASTURE_RATE_OPEN
    OAuth    client registrations (`/register`), per address 20 an hour   $PASTURE_RATE_REGISTER

    streams  live streams (`./api/subscribe`, MCP listen) held open,
             per signed-in person, or per address signed out   100   $PASTURE_STREAMS

(`pasture serve --rate`, `--rate-address`, `--rate-open`, `--streams` say the
same; `off` turns one off.) Each limit is a bucket per key that holds that many calls and
fills again evenly over its time: 600 a minute lets a burst of 600 through, then
10 a second. A call past it is `TooMany` (HTTP 429, `Retry-After`) with a
sentence that says what to do:

    too many calls from this token — 600 a minute at most; try again in 1 s

A stream is a connection the server keeps and answers again after every write,
so what one person may hold is counted as they open and close, over all their
tokens, sessions and pages: the next past it is refused until one closes.

Sign-in (a password; a token or a link on /signin) counts failures per name and
per address. From the 4th failure for a name (the 11th for an address) each try
waits a little first (¼ s, doubling, at most 2 s); after 10 for a name (30 for
an address) tries are refused for a minute with `too many tries — wait a
minute`, and each failure after that refuses them for another minute. A sign-in
that works starts its name's count again; failures are forgotten a quarter of
an hour after the last.

All of it is counted in memory by each server process: nothing is written and
nothing is asked of a database, so the cost is a dictionary look-up a call. A
restart forgets the counts, and N processes behind a load balancer each count
what reaches them.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import threading
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

from pasture.caller import Caller
from pasture.errors import TooMany, UsageError, echo
from pasture.platform.access.leases import Shared, SharedBuckets
from pasture.platform.db.counts import Counts, Failures

Clock = Callable[[], float]
Sleep = Callable[[float], None]
T = TypeVar("T")

TOO_MANY_TRIES = "too many tries — wait a minute"
_KEYS = 50_000  # keys one limit remembers at most; past it, those at rest are forgotten

_UNITS = {
    "s": 1.0,
    "sec": 1.0,
    "second": 1.0,
    "m": 60.0,
    "min": 60.0,
    "minute": 60.0,
    "h": 3600.0,
    "hour": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
}
_RATE = re.compile(r"^\s*(\d[\d_,]*)\s*(?:/\s*([a-z]+))?\s*$")
_OFF = ("off", "none", "no", "0")


@dataclass(frozen=True)
class Rate:
    """At most `count` calls in `seconds` (the bucket's size, and how long it takes to fill)."""

    count: int
    seconds: float = 60.0

    @classmethod
    def parse(cls, text: str, what: str = "a rate") -> Rate | None:
        """`600/minute`, `10/s`, `5000/hour` (a bare number is per minute); `off` is None."""
        cleaned = text.strip().lower()
        if cleaned in _OFF:
            return None
        found = _RATE.match(cleaned)
        word = (found.group(2) or "minute") if found else ""
        unit = _UNITS.get(word) or _UNITS.get(word.removesuffix("s") if len(word) > 2 else "")
        count = int(found.group(1).replace(",", "").replace("_", "")) if found else 0
        if found is None or unit is None or count < 1:
            raise UsageError(
                f"{what} is a number of calls and a time, like 600/minute or 20/second "
                f"(or off) — not {echo(text, 40)}"
            )
        return cls(count, unit)

    def __str__(self) -> str:
        per = {1.0: "a second", 60.0: "a minute", 3600.0: "an hour", 86400.0: "a day"}
        return f"{self.count:,} " + per.get(self.seconds, f"every {self.seconds:g} s")


@dataclass(frozen=True)
class Rates:
    """The limits one server keeps; None is no limit."""

    caller: Rate | None = Rate(600)  # per token, OAuth grant or signed-in person
    address: Rate | None = Rate(1200)  # per client address
    open_writes: Rate | None = Rate(60)  # anonymous writes to open apps, per address
    streams: int | None = 100  # live streams held open, per person (signed out: address)
    registrations: Rate | None = Rate(20, 3600.0)  # OAuth clients registered, per address

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Rates:
        """The defaults, or `$PASTURE_RATE`, `$PASTURE_RATE_ADDRESS`, `$PASTURE_RATE_OPEN`,
        `$PASTURE_STREAMS`, `$PASTURE_RATE_REGISTER`."""
        env = os.environ if environ is None else environ
        base = cls()

        def rate(name: str, default: Rate | None) -> Rate | None:
            text = env.get(name)
            return default if not text else Rate.parse(text, f"${name}")

        streams = env.get("PASTURE_STREAMS")
        return cls(
            caller=rate("PASTURE_RATE", base.caller),
            address=rate("PASTURE_RATE_ADDRESS", base.address),
            open_writes=rate("PASTURE_RATE_OPEN", base.open_writes),
            streams=most(streams, "$PASTURE_STREAMS") if streams else base.streams,
            registrations=rate("PASTURE_RATE_REGISTER", base.registrations),
        )


def most(text: str, what: str) -> int | None:
    """How many at most: `100`, `1,000`; `off` is None (no limit)."""
    cleaned = text.strip().lower().replace(",", "").replace("_", "")
    if cleaned in _OFF:
        return None
    if not cleaned.isascii() or not cleaned.isdigit():
        raise UsageError(f"{what} is how many at most, like 100 (or off) — not {echo(text, 40)}")
    return int(cleaned)


class Buckets:
    """One rate for many keys: a bucket each, that holds `rate.count` and fills evenly,
    counted in this process alone. With a `share` (1/N), a bucket of that part of the
    size (one call at least) that fills at that part of the rate."""

    def __init__(self, rate: Rate, clock: Clock = time.monotonic, *, share: float = 1.0) -> None:
        self.rate = rate
        self.clock = clock
        self._size = max(1.0, rate.count * share)
        self._per_second = rate.count * share / rate.seconds
        self._lock = threading.Lock()
        self._held: dict[Hashable, list[float]] = {}  # key -> [calls left, when counted]

    def take(self, key: Hashable) -> float:
        """Take one call for `key`: 0.0 if there was one, else the seconds until there is."""
        now = self.clock()
        with self._lock:
            held = self._held.get(key)
            if held is None:
                if len(self._held) >= _KEYS:
                    self._forget_resting(now)
                self._held[key] = [self._size - 1.0, now]
                return 0.0
            left = min(self._size, held[0] + (now - held[1]) * self._per_second)
            held[1] = now
            if left >= 1.0:
                held[0] = left - 1.0
                return 0.0
            held[0] = left  # a refused call takes nothing
            return (1.0 - left) / self._per_second

    def take_at_once(self, key: Hashable) -> float:
        """`take`: in memory, it never waits."""
        return self.take(key)

    def _forget_resting(self, now: float) -> None:
        """Forget the keys whose bucket is full again; if none is, the fuller half. Never
        all: one who sends from many addresses would otherwise free everyone being held."""
        resting = [k for k, (_, at) in self._held.items() if now - at >= self.rate.seconds]
        for key in resting:
            del self._held[key]
        if len(self._held) >= _KEYS:

            def left(key: Hashable) -> float:
                held = self._held[key]
                return held[0] + (now - held[1]) * self._per_second

            for key in sorted(self._held, key=left, reverse=True)[: len(self._held) // 2]:
                del self._held[key]


@lru_cache(maxsize=4096)
def address_key(address: str) -> str:
    """An address as it is counted: IPv4 as it is, IPv6 by its /64 (one home, one network)."""
    if ":" not in address:
        return address
    try:
        parsed = ipaddress.IPv6Address(address.split("%")[0])
    except ValueError:
        return address
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    return str(ipaddress.IPv6Network((parsed, 64), strict=False))


def _whose(caller: Caller) -> str:
    via = caller.via or ""
    if via.startswith("token"):
        return "this token"
    if via.startswith("client"):
        return "this client"
    return "your sign-in"


class Streams:
    """The live streams each person holds open on this server, at most `most` each.

    A signed-in person is counted over every token, session and page of theirs; a
    signed-out one by their address (IPv6: its /64)."""

    def __init__(self, most: int | None) -> None:
        self.most = most
        self._lock = threading.Lock()
        self._open: dict[str, int] = {}

    def hold(self, caller: Caller) -> Callable[[], None]:
        """Count one more stream of the caller's; TooMany past the limit. What it returns
        gives the place back when the stream ends (once, however often it is called)."""
        key = _stream_key(caller)
        if self.most is None or key is None:
            return _nothing
        whose = "one person" if caller.signed_in else "one address signed out"
        with self._lock:
            held = self._open.get(key, 0)
            if held >= self.most:
                raise TooMany(
                    f"too many live streams open — {self.most:,} at most for {whose} on this "
                    "server; end one (a page that watches, an agent that listens), then try again",
                    STREAM_WAIT,
                )
            self._open[key] = held + 1
        given_back = False

        def release() -> None:
            nonlocal given_back
            with self._lock:
                if given_back:
                    return
                given_back = True
                left = self._open[key] - 1
                if left:
                    self._open[key] = left
                else:
                    del self._open[key]

        return release

    def held(self, caller: Caller) -> int:
        """How many streams are counted against the caller now."""
        key = _stream_key(caller)
        with self._lock:
            return 0 if key is None else self._open.get(key, 0)


def _stream_key(caller: Caller) -> str | None:
    """Whose streams a caller's count: the person's, or signed out their address's."""
    if caller.signed_in:
        return f"person {caller.eid}"
    return f"address {address_key(caller.address)}" if caller.address else None


# What a refused stream is told to wait: a page that closes frees its place at once.
STREAM_WAIT = 5.0


def _nothing() -> None:
    return None


@dataclass(frozen=True, slots=True)
class _Limit:
    """One limit: its rate, and its buckets (this process's, or shared)."""

    rate: Rate
    buckets: Buckets | SharedBuckets

    def take(self, key: Hashable) -> float:
        return self.buckets.take(key)

    def take_at_once(self, key: Hashable) -> float | None:
        return self.buckets.take_at_once(key)


class Limiter:
    """Every limit of one server process; the doors and the gate ask it, and it refuses.

    With `counts` (`pasture.platform.db.counts`, what `Service` passes), every process on
    the same data shares the counts (see the module); without, this process counts alone.
    A door on an event loop asks `address_at_once` and `caller_at_once`, which never wait:
    when they cannot tell (False), it asks `address` or `caller` in a thread."""

    def __init__(
        self,
        rates: Rates | None = None,
        *,
        clock: Clock | None = None,
        sleep: Sleep = time.sleep,
        counts: Counts | None = None,
        looking: bool = True,
    ) -> None:
        self.rates = Rates() if rates is None else rates
        # What every count here reads the time from (tests set their own); shared counts
        # are compared across processes, so in seconds since 1970.
        self.clock: Clock = clock or (time.monotonic if counts is None else time.time)

        def now() -> float:
            return self.clock()

        self.shared = None if counts is None else Shared(counts, now, looking=looking)

        def buckets(rate: Rate | None, kind: str) -> _Limit | None:
            if rate is None:
                return None
            if self.shared is None:
                return _Limit(rate, Buckets(rate, now))

            def alone(share: float) -> Buckets:
                return Buckets(rate, now, share=share)

            return _Limit(rate, self.shared.buckets(kind, rate.count, rate.seconds, alone))

        self._callers = buckets(self.rates.caller, "caller")
        self._addresses = buckets(self.rates.address, "address")
        self._open_writes = buckets(self.rates.open_writes, "open")
        self._registrations = buckets(self.rates.registrations, "register")
        self.streams = Streams(self.rates.streams)
        self.sign_in = SignInTries(clock=now, sleep=sleep, shared=self.shared)

    def address(self, address: str | None) -> None:
        """One call from a client address; TooMany past its limit (None: not counted)."""
        if self._addresses is None or not address:
            return
        wait = self._addresses.take(address_key(address))
        if wait:
            raise _too_many("your address", self._addresses.rate, wait)

    def address_at_once(self, address: str | None) -> bool:
        """`address` without waiting on anything: True once counted (TooMany past its
        limit); False when only the shared counts can tell — then ask `address`, in a
        thread."""
        if self._addresses is None or not address:
            return True
        wait = self._addresses.take_at_once(address_key(address))
        if wait:
            raise _too_many("your address", self._addresses.rate, wait)
        return wait is not None

    def caller(self, caller: Caller) -> None:
        """One call by a signed-in person through one token, grant or sign-in."""
        if self._callers is None or not caller.signed_in:
            return
        wait = self._callers.take((caller.eid, caller.via))
        if wait:
            raise _too_many(_whose(caller), self._callers.rate, wait)

    def caller_at_once(self, caller: Caller) -> bool:
        """`caller` without waiting on anything, as `address_at_once` is `address`."""
        if self._callers is None or not caller.signed_in:
            return True
        wait = self._callers.take_at_once((caller.eid, caller.via))
        if wait:
            raise _too_many(_whose(caller), self._callers.rate, wait)
        return wait is not None

    def close(self) -> None:
        """Give back what this process holds of the shared counts, and stop looking at them."""
        if self.shared is not None:
            self.shared.close()

    def open_write(self, address: str | None) -> None:
        """One anonymous write to an open app from an address."""
        if self._open_writes is None or not address:
            return
        wait = self._open_writes.take(address_key(address))
        if wait:
            rate = self._open_writes.rate
            raise TooMany(
                f"too many changes from your address without signing in — {rate} at most; "
                f"sign in, or try again in {_seconds(wait)} s",
                wait,
            )

    def registration(self, address: str | None) -> None:
        """One OAuth client registered from an address (`/register`)."""
        if self._registrations is None or not address:
            return
        wait = self._registrations.take(address_key(address))
        if wait:
            rate = self._registrations.rate
            raise TooMany(
                f"too many OAuth clients registered from your address — {rate} at most; "
                f"an agent registers once and keeps its client, so try again in "
                f"{_seconds(wait)} s",
                wait,
            )


def _seconds(wait: float) -> int:
    return max(1, math.ceil(wait))


def _too_many(whose: str, rate: Rate, wait: float) -> TooMany:
    return TooMany(
        f"too many calls from {whose} — {rate} at most; try again in {_seconds(wait)} s", wait
    )


@dataclass
class _Failures:
    count: int = 0
    last: float = 0.0
    locked_until: float = 0.0


@dataclass(frozen=True)
class _Policy:
    slow_after: int  # failures before each try waits
    refuse_after: int  # failures before tries are refused for `lock` seconds


@dataclass
class SignInTries:
    """Failed sign-ins per name and per address: slowed, then refused for a while.

    A try is counted as a failure when it starts (so tries made at once are all
    counted) and taken back when it works. With `shared`, the failures are those every
    process on the same data counts (`pasture.platform.db.counts`); should those not
    answer, this process's own are counted meanwhile.
    """

    clock: Clock = time.monotonic
    sleep: Sleep = time.sleep
    name: _Policy = _Policy(slow_after=3, refuse_after=10)
    address: _Policy = _Policy(slow_after=10, refuse_after=30)
    lock: float = 60.0
    forget: float = 15 * 60.0
    first_wait: float = 0.25
    longest_wait: float = 2.0
    shared: Shared | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _failures: dict[tuple[str, str], _Failures] = field(default_factory=dict, repr=False)

    def _keys(self, name: str | None, address: str | None) -> list[tuple[tuple[str, str], _Policy]]:
        keys = []
        if name:
            keys.append((("name", name.strip().lower()), self.name))
        if address:
            keys.append((("address", address_key(address)), self.address))
        return keys

    def attempt(self, name: str | None, address: str | None) -> None:
        """Before a try: TooMany while its name or address is refused; else counted, and
        slowed when it has failed before."""
        keys = self._keys(name, address)

        def count(known: dict[tuple[str, str], _Failures]) -> float:
            now = self.clock()
            counts = []
            for key, _ in keys:
                failures = known.get(key)
                if failures is not None and now - failures.last > self.forget:
                    failures = None
                if failures is not None and failures.locked_until > now:
                    raise TooMany(TOO_MANY_TRIES, failures.locked_until - now)
                counts.append(failures or _Failures())
            wait = 0.0
            for (key, policy), failures in zip(keys, counts, strict=True):
                failures.count += 1
                failures.last = now
                known[key] = failures
                if failures.count >= policy.refuse_after:
                    failures.locked_until = now + self.lock
                if failures.count > policy.slow_after:
                    step = failures.count - policy.slow_after - 1
                    wait = max(wait, min(self.longest_wait, self.first_wait * 2.0 ** min(step, 30)))
            return wait

        wait = self._counted([key for key, _ in keys], count)
        if wait:
            self.sleep(wait)

    def succeeded(self, name: str | None, address: str | None) -> None:
        """The try worked: its name starts again, and its address has one failure fewer."""
        named = [("name", name.strip().lower())] if name else []
        at = self._keys(None, address)

        def count(known: dict[tuple[str, str], _Failures]) -> None:
            for key in named:
                known.pop(key, None)
            _take_back(known, at)

        self._counted(named + [key for key, _ in at], count)

    def not_counted(self, name: str | None, address: str | None) -> None:
        """The try neither worked nor failed (the server could not tell): it is not counted."""
        keys = self._keys(name, address)
        self._counted([key for key, _ in keys], lambda known: _take_back(known, keys))

    def _counted(
        self, keys: list[tuple[str, str]], count: Callable[[dict[tuple[str, str], _Failures]], T]
    ) -> T:
        """`count` on the failures of `keys`: those every process shares, or this one's."""
        shared = self.shared
        if shared is not None and not shared.apart:
            texts = {key: f"{key[0]} {key[1]}" for key in keys}

            def change(found: Failures) -> T:
                known = {k: _Failures(*found[t]) for k, t in texts.items() if t in found}
                answer = count(known)
                found.clear()
                for key, f in known.items():
                    found[texts[key]] = (f.count, f.last, f.locked_until)
                return answer

            try:
                answer = shared.counts.failures(list(texts.values()), change)
            except TooMany:
                raise
            except Exception as e:
                shared.fell(e)
            else:
                shared.works()
                shared.used()
                return answer
        with self._lock:
            if len(self._failures) >= _KEYS:
                self._forget_old(self.clock())
            return count(self._failures)

    def _forget_old(self, now: float) -> None:
        old = [
            key
            for key, f in self._failures.items()
            if now - f.last > self.forget and f.locked_until <= now
        ]
        for key in old:
            del self._failures[key]
        if len(self._failures) >= _KEYS:  # the half with fewest failures, none locked out
            fewest = sorted(
                self._failures,
                key=lambda k: (self._failures[k].locked_until > now, self._failures[k].count),
            )
            for key in fewest[: len(self._failures) // 2]:
                del self._failures[key]


def _take_back(
    known: dict[tuple[str, str], _Failures], keys: list[tuple[tuple[str, str], _Policy]]
) -> None:
    for key, policy in keys:
        failures = known.get(key)
        if failures is None:
            continue
        failures.count -= 1
        if failures.count <= 0:
            del known[key]
        elif failures.count < policy.refuse_after:
            failures.locked_until = 0.0


__all__ = [
    "TOO_MANY_TRIES",
    "Buckets",
    "Limiter",
    "Rate",
    "Rates",
    "SignInTries",
    "Streams",
    "address_key",
    "most",
]
