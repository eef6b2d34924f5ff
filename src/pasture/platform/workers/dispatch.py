"""An app's `worker.py`, run apart from the platform: worker processes, their calls, their limits.

A worker is another person's code, so the server never imports it. Each app
version that has one gets worker processes of its own (`sandbox` confines them,
`process` starts and speaks to each, `worker_main` is what they run):

- started on first use, one call at a time each, up to `Limits.processes` of
  them for calls that come at once (more wait their turn), kept warm, and
  stopped when they sit idle for a while, when a deploy or rollback makes
  another version current, or when the app's secrets change;
- a call over its wall time, CPU time or scratch, or one that runs its
  process out of memory, is refused with a sentence (`cart add took longer
  than 10 s and was stopped`), and its process is killed and started again; so
  is one whose process dies, answers for another call, or sends what pasture
  does not understand — and a process that speaks while no call is open is
  ended before it is given one;
- the app's secrets go only to the call of an action, or of a command
  registered with `app.register` (code that has no kind may reach outside);
  a query, a mutation, a suggestion and setting up get none. Which call is
  which is the server's record of the app's commands (`kind`, from the
  manifest it keeps), not the worker process's word at the time;
- a call its caller stops (`ctx.long_call`, `pasture.long_calls`) is told so, and
  its process is ended if it has not answered within `Limits.grace`; either way
  the caller is answered `Cancelled`, and a mutation's writes are not kept;
- a call reads and writes the app's store only by asking the server
  (`{"store": …}`), which answers through the call's own `ctx.store` — the
  platform's `CheckedStore`, bound to the caller and the app when the call
  came in. The process cannot name anyone else, or another app.

At deploy, `check` sets the worker up once, confined the same way, in a
process that ends after: its problems, or the manifest of its commands, which
the platform keeps with the version (`commands_of` turns it back into
`Command`s whose `run` calls a worker).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets as _secrets
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pasture import metrics
from pasture.commands.model import Command, Context
from pasture.commands.registry import CommandFailed
from pasture.errors import Cancelled, Forbidden, PastureError, Refused
from pasture.platform.workers.process import (
    OutOfTurn,
    Problems,
    Stopped,
    WorkerProcess,
    over_scratch,
)
from pasture.platform.workers.protocol import WireError, refusal_of
from pasture.platform.workers.sandbox import Limits, seconds
from pasture.platform.workers.worker_main import WORKER, WorkerRegistry
from pasture.result import Result

logger = logging.getLogger("pasture.platform")

IDLE = 600.0  # seconds a warm worker process waits for a call before it is stopped
MAX_WAITING = 256  # calls of one app version waiting for a process; more are refused
# processes a call passes over because they spoke out of turn; past it, it meets what they say
_TURNED_AWAY = 3


def untrusted(space: str) -> str:
    return (
        f"{space} is not trusted to run code — only the server's owner can trust a space, "
        f"with pasture space trust {space}"
    )


@dataclass(frozen=True)
class CodeSettings:
    """What the platform says of one app's code: may it run, with which secrets."""

    trusted: bool
    secrets: Mapping[str, str]
    digest: str  # of the secrets: processes given others are replaced

    @classmethod
    def of(cls, trusted: bool, secrets: Mapping[str, str]) -> CodeSettings:
        digest = hashlib.sha256(json.dumps(dict(secrets), sort_keys=True).encode()).hexdigest()
        return cls(trusted, secrets, digest)


# -- the processes of one app version ------------------------------------------------------------
@dataclass(frozen=True)
class Version:
    """One version of one app that has code: where its files are."""

    space: str
    slug: str
    version: int
    root: Path

    @property
    def at(self) -> str:
        return f"{self.space}/{self.slug}"


class _Pool:
    """The worker processes of one app version: one call at a time in each.

    Once a call registers or removes a command, the app's registry is state of that one
    process: the pool is `pinned` to it, every later call goes to it, and the others stop.
    If it stops, that state is gone; the next process starts from `setup()` again.
    """

    def __init__(self, workers: Workers, version: Version, digest: str) -> None:
        self.workers = workers
        self.version = version
        self.digest = digest  # of the secrets it was started with
        self.idle: list[WorkerProcess] = []
        self.count = 0  # processes running or starting, idle or not
        self.waiting = 0
        self.retired = False
        self.pinned: WorkerProcess | None = None
        self.cond = threading.Condition()

    def acquire(self, *, wait: bool = True) -> WorkerProcess | None:
        """An idle process, or a new one, or (`wait`) the first to come free; None if not `wait`."""
        limits = self.workers.limits
        with self.cond:
            while True:
                if self.retired:
                    raise _Retired()
                if self.pinned is not None:
                    if self.pinned in self.idle:
                        self.idle.remove(self.pinned)
                        return self.pinned
                elif self.idle:
                    return self.idle.pop()
                if self.pinned is None and self.count < max(1, limits.processes):
                    self.count += 1
                    break
                if not wait:
                    return None
                if self.waiting >= MAX_WAITING:
                    raise Refused(
                        f"{self.version.at} is busy: {self.waiting} calls are waiting for it — "
                        "try again in a moment"
                    )
                self.waiting += 1
                try:
                    self.cond.wait()
                finally:
                    self.waiting -= 1
        try:
            return self.start()
        except BaseException:
            with self.cond:
                self.count -= 1
                self.cond.notify()
            raise

    def start(self) -> WorkerProcess:
        v = self.version
        process = WorkerProcess(v.root, v.at, self.workers.limits, hide=self.workers.hide)
        metrics.worker_started(v.at)
        try:
            commands = process.ready()
        except Problems as e:
            raise Refused(
                f"{v.at}'s worker.py does not set up now: {e} — deploy it again once it does"
            ) from None
        except Stopped as e:
            raise Refused(f"{v.at}'s worker.py does not set up now: {e.sentence}") from None
        self.workers.heard(v, commands)
        return process

    def release(self, process: WorkerProcess, healthy: bool) -> None:
        with self.cond:
            ours = self.pinned is None or self.pinned is process
            keep = healthy and not self.retired and process.alive and ours
            if keep:
                self.idle.append(process)
            else:
                self.count -= 1
                if self.pinned is process:
                    self.pinned = None  # its registry's state went with it
            self.cond.notify_all()
        if not keep:
            process.kill()

    def pin(self, process: WorkerProcess) -> bool:
        """The registry of `process` moved during a call: the pool is its alone from now on
        (see the class). Whether it is the one pinned: another's state is not the app's."""
        with self.cond:
            if self.pinned is None:
                self.pinned = process
            others = [p for p in self.idle if p is not self.pinned]
            self.idle = [p for p in self.idle if p is self.pinned]
            self.count -= len(others)
            pinned = self.pinned is process
        for other in others:
            other.kill()
        return pinned

    def retire(self) -> None:
        with self.cond:
            self.retired = True
            idle, self.idle = self.idle, []
            self.count -= len(idle)
            self.cond.notify_all()
        for process in idle:
            process.kill()

    def reap(self, older_than: float) -> None:
        """Stop the processes that have waited for a call since before `older_than`."""
        with self.cond:
            stale = [p for p in self.idle if p.used < older_than]
            self.idle = [p for p in self.idle if p.used >= older_than]
            self.count -= len(stale)
            if self.pinned in stale:
                self.pinned = None  # its registry's state ends with it, as any process's
        for process in stale:
            process.kill()


class _Retired(Exception):
    """The pool a call waited on was replaced: the call goes to the current one."""


# -- every worker of one server --------------------------------------------------------------------
class Workers:
    """Every worker process of this server, by app version.

    `settings(space, slug)` says whether the app's space may run code and what
    its secrets are (`CodeSettings`); `heard(version, manifest)` is told what a
    worker process registered when it started or changed its commands.
    """

    def __init__(
        self,
        home: Path,
        limits: Limits,
        *,
        settings: Callable[[str, str], CodeSettings],
        heard: Callable[[Version, list[dict[str, Any]]], None],
    ) -> None:
        self.limits = limits
        self.hide = [home]
        self.settings = settings
        self._heard = heard
        self._pools: dict[tuple[str, str], _Pool] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._reaper: threading.Thread | None = None

    # -- deploy --------------------------------------------------------------------------------
    def check(
        self, files: Mapping[str, bytes], at: str, secrets: Mapping[str, str] | None = None
    ) -> tuple[list[str], list[dict[str, Any]]]:
        """Set worker.py up once, in a confined process of its own: (problems, manifest).

        `secrets` are not given to it: setting up never gets them (only calls that are due
        them do)."""
        source = files[WORKER]
        try:
            compile(source, WORKER, "exec")
        except SyntaxError as e:
            return [f"line {e.lineno}: {e.msg}"], []
        except ValueError as e:  # a null byte in the source
            return [str(e)], []
        with tempfile.TemporaryDirectory(prefix="pasture-check-") as tmp:
            root = Path(tmp)
            for path, body in files.items():
                target = root / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(body)
            process = WorkerProcess(root, at, self.limits, hide=self.hide, mode="check")
            try:
                return [], process.ready()
            except Problems as e:
                return e.problems, []
            except Stopped as e:
                return [e.sentence], []
            finally:
                process.kill()

    # -- calls ---------------------------------------------------------------------------------
    def run(
        self,
        version: Version,
        name: str,
        args: Mapping[str, Any],
        ctx: Context,
        *,
        kind: str | None = None,
    ) -> Result:
        """Run one command of an app version's worker as `ctx` says; the answer, or Refused.

        `kind` is the handler's (query, mutation, action) the command is, or None for one
        registered with `app.register`: an action's call and a registered one's get the
        app's secrets, no other."""
        return self._call(
            version, name, {"command": name}, args, ctx, kind in (None, "action"), kind
        )

    def run_handler(
        self,
        version: Version,
        name: str,
        args: Mapping[str, Any],
        ctx: Context,
        *,
        kind: str | None = None,
    ) -> Result:
        """Run one handler as the app's page calls it (its input unchecked); as `run`, the
        secrets only an action's."""
        return self._call(version, name, {"handler": name}, args, ctx, kind == "action", kind)

    def _call(
        self,
        version: Version,
        name: str,
        what: dict[str, str],
        args: Mapping[str, Any],
        ctx: Context,
        secrets: bool,
        kind: str | None,
    ) -> Result:
        settings = self.settings(version.space, version.slug)
        if not settings.trusted:
            raise Forbidden(f"{name} runs code, and {untrusted(version.space)}")
        message = {
            "call": _secrets.token_hex(8),
            **what,
            "args": dict(args),
            "caller": {"eid": ctx.caller.eid, "name": ctx.caller.name},
            "read_only": getattr(ctx.store, "read_only", None),
        }
        if secrets and settings.secrets:
            message["secrets"] = dict(settings.secrets)
        pool, process, turned_away = self._process_for(version, settings, 0)
        healthy = kept = False
        held = True  # whether `process` is this call's to release
        try:
            # A mutation's reads and writes are one transaction, kept only once it has
            # answered with JSON; a query's reads are one snapshot. (An action's are
            # neither: each mutation it runs is one of its own, begun by its code.)
            if kind in ("mutation", "query"):
                ctx.store.begin(read_only=kind == "query")
            if ctx.long_call.cancelled:  # stopped while it waited for a process
                healthy = True
                raise Cancelled(stopped_as_asked(name, kind))
            # One time limit for the call, whichever of its processes answers it.
            deadline = time.monotonic() + self.limits.time
            while True:
                try:
                    answer = process.call(name, message, ctx, deadline=deadline)
                    break
                except OutOfTurn:
                    # What a call before left to say came first: nothing of this call had
                    # reached its store, so another process serves it (a few times; then
                    # the call meets what it sends), within the same time limit.
                    turned_away += 1
                    if turned_away > _TURNED_AWAY:
                        raise
                    held = False
                    pool.release(process, False)
                    pool, process, turned_away = self._process_for(version, settings, turned_away)
                    held = True
            # It registered or removed commands while it ran: they are the app's now.
            if "commands" in answer and pool.pin(process):
                self.heard(version, answer["commands"])
            if ctx.long_call.cancelled:  # its caller asked it to stop: whatever it answered
                healthy = "limit" not in answer
                raise Cancelled(stopped_as_asked(name, kind))
            try:
                result = _answer(name, answer, self.limits)
            except PastureError:
                healthy = "limit" not in answer  # a process out of memory is not kept
                if not healthy:
                    metrics.worker_limit(version.at, "memory")
                raise
            healthy = kept = True
            ctx.store.end(keep=True)
            return result
        except Stopped as e:
            if ctx.long_call.cancelled:
                raise Cancelled(stopped_as_asked(name, kind, self.limits.grace)) from None
            raise CommandFailed(e.sentence) from None
        finally:
            if not kept:
                ctx.store.end(keep=False)  # whatever it began and did not end, kept by none
            if held:
                pool.release(process, healthy)
                if not healthy:
                    self._refill(pool)

    def _process_for(
        self, version: Version, settings: CodeSettings, turned_away: int
    ) -> tuple[_Pool, WorkerProcess, int]:
        """A process of the app's pool to give a call, that pool, and how many processes
        have been ended for speaking out of turn to this call (`turned_away` before)."""
        while True:
            pool = self._pool(version, settings)
            try:
                process = pool.acquire()
            except _Retired:
                continue
            assert process is not None
            # What it sent while no call was open would be taken for this one's: it is ended,
            # and another serves the call (a few times; then the call meets what it sends).
            if turned_away < _TURNED_AWAY and process.spoke_out_of_turn():
                turned_away += 1
                pool.release(process, False)
                continue
            return pool, process, turned_away

    def suggest(self, version: Version, name: str, argument: str, partial: str) -> list[Any]:
        """A command's Tab-completion values; nothing when its worker cannot say in time."""
        settings = self.settings(version.space, version.slug)
        if not settings.trusted:
            return []
        pool = self._pool(version, settings)
        try:
            process = pool.acquire(wait=False)  # Tab completion never waits behind calls
        except (_Retired, Refused):
            return []
        if process is None:
            return []
        if process.spoke_out_of_turn():
            pool.release(process, False)
            return []
        healthy = False
        try:
            values = process.suggest(name, argument, partial)
            healthy = True
            return values
        except (Stopped, WireError, OSError, ValueError):
            return []
        finally:
            pool.release(process, healthy)

    def _pool(self, version: Version, settings: CodeSettings) -> _Pool:
        digest = settings.digest
        key = (version.space, version.slug)
        with self._lock:
            if self._closed:
                raise Refused("this server is stopping — try again in a moment")
            pool = self._pools.get(key)
            if pool is not None and pool.version == version and pool.digest == digest:
                return pool
            fresh = self._pools[key] = _Pool(self, version, digest)
            if self._reaper is None:
                self._reaper = threading.Thread(target=self._reap, daemon=True)
                self._reaper.start()
        if pool is not None:  # another version, or the secrets changed
            pool.retire()
        return fresh

    def _refill(self, pool: _Pool) -> None:
        """After a process was stopped, start its replacement while nobody waits for it."""

        def start() -> None:
            with pool.cond:
                full = pool.count >= max(1, self.limits.processes)
                if pool.retired or pool.idle or full or pool.pinned is not None:
                    return
                pool.count += 1
            try:
                process = pool.start()
            except Exception:
                with pool.cond:
                    pool.count -= 1
                    pool.cond.notify()
                logger.exception("%s: a worker process could not be started again", pool.version.at)
                return
            pool.release(process, True)

        threading.Thread(target=start, daemon=True, name="pasture-refill").start()

    def heard(self, version: Version, manifest: list[dict[str, Any]]) -> None:
        self._heard(version, manifest)

    def retire(self, space: str, slug: str) -> None:
        """Stop an app's worker processes (a deploy or rollback made another version current)."""
        with self._lock:
            pool = self._pools.pop((space, slug), None)
        if pool is not None:
            pool.retire()

    def retire_space(self, space: str) -> None:
        """Stop the worker processes of every app of a space (it is no longer trusted)."""
        with self._lock:
            keys = [key for key in self._pools if key[0] == space]
        for key in keys:
            self.retire(*key)

    def _reap(self) -> None:
        while not self._closed:
            time.sleep(min(IDLE / 4, 60.0))
            with self._lock:
                pools = list(self._pools.values())
            for pool in pools:
                pool.reap(time.monotonic() - IDLE)

    def can_start(self) -> str | None:
        """Why no worker process could start now (the server is stopping, or the Python
        it runs them with is gone), or None: one can."""
        if self._closed:
            return "this server is stopping"
        if not os.access(sys.executable, os.X_OK):
            return f"the Python that runs apps' code ({sys.executable}) is not there any more"
        return None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.retire()


def stopped_as_asked(name: str, kind: str | None, ended: float | None = None) -> str:
    """The sentence of a call its caller stopped; `ended`: the grace it did not stop within."""
    how = (
        ""
        if ended is None
        else f": it had not stopped within {seconds(ended)}, so its process was ended"
    )
    kept = {
        "mutation": " — nothing it wrote was kept",
        "query": "",
    }.get(str(kind), " — what it wrote before then stays written")
    return f"{name} was stopped, as asked{how}{kept}"


def _answer(name: str, answer: dict[str, Any], limits: Limits) -> Result:
    """A worker's reply as the caller gets it: a Result, or Refused with the caller's sentence.

    Stopped when the reply is not one the protocol has: the process is not to be kept.
    """
    if "result" in answer:
        result = answer["result"]
        if isinstance(result, dict):
            text, data = result.get("text"), result.get("data")
            if isinstance(text, str) and isinstance(data, dict):
                return Result(text, data)
    elif "refused" in answer:
        try:
            refused = refusal_of(answer["refused"])
        except WireError:
            pass
        else:
            raise refused
    elif "failed" in answer:
        kind = "".join(ch for ch in str(answer["failed"]) if ch.isalnum() or ch == "_")[:60]
        raise CommandFailed(
            f"{name} failed in its own code ({kind}) — nothing about the request was wrong as "
            "far as pasture can tell; the server's log has the details"
        )
    elif answer.get("limit") == "memory":
        raise CommandFailed(f"{name} used more than {limits.memory} MB of memory and was stopped")
    elif answer.get("limit") == "scratch":
        raise CommandFailed(over_scratch(name, limits))
    elif "unjson" in answer:
        what = "".join(ch for ch in str(answer["unjson"]) if ch.isalnum() or ch == "_")[:60]
        raise CommandFailed(
            f"{name} answered with something that is not JSON ({what}) — its data is made of "
            "text, numbers, true/false, null, lists and objects"
        )
    raise Stopped(
        f"{name} stopped: its worker process sent pasture something it does not understand, "
        "and is started again for the next call"
    )


# -- a version's commands, from the manifest its worker made ---------------------------------
def commands_of(
    manifest: Any, version: Version, workers: Workers, warnings: list[str] | None = None
) -> tuple[list[Command], list[str]]:
    """The `Command`s a manifest describes, each running in `version`'s worker; and problems.

    Every entry is registered again here, so what a worker process says about its
    commands is held to the same rules as at deploy. What registering warns of (input
    keywords not checked) is added to `warnings`, for the deploy to say; never logged.
    """
    registry = WorkerRegistry(version.at)
    if not isinstance(manifest, list):
        return [], ["the worker's commands are not a list"]
    for entry in manifest:
        if isinstance(entry, dict) and "schema" in entry and "name" not in entry:
            continue  # the app's tables (`tables_of`), no command
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            registry.problems.append("a command without a name")
            continue
        if entry.get("page"):  # a handler only the app's pages call: no command
            continue
        name = entry["name"]
        kind = entry.get("handler")
        registry.register(
            name,
            description=entry.get("description"),
            run=_WorkerRun(workers, version, name, kind if isinstance(kind, str) else None),
            input=entry.get("input"),
            annotations=entry.get("annotations"),
            provider=entry.get("provider"),
            title=entry.get("title"),
            positional=entry.get("positional") or (),
            output=entry.get("output"),
            examples=entry.get("examples") or (),
            see_also=entry.get("see_also") or (),
            suggest=_WorkerSuggest(workers, version, name) if entry.get("suggest") else None,
        )
    kinds = {e["name"]: e["handler"] for e in manifest if isinstance(e, dict) and e.get("handler")}
    commands = [
        replace(c, handler=str(kinds[c.name])) if c.name in kinds else c
        for c in registry.commands()
    ]
    if warnings is not None:
        warnings.extend(registry.warnings)
    return commands, registry.problems


def tables_of(manifest: Any) -> Any:
    """The tables worker.py's `schema` declares, as vocab.json's `$defs`; None for none.
    What the worker process said is only read here: the deploy checks it as a vocabulary
    (`pasture.store.vocab.read_app`), whatever it is."""
    if not isinstance(manifest, list):
        return None
    for entry in manifest:
        if isinstance(entry, dict) and "schema" in entry and "name" not in entry:
            found = entry["schema"]
            return found.get("$defs") if isinstance(found, dict) else found
    return None


def handlers_of(manifest: Any) -> dict[str, str]:
    """The handlers a manifest names, tools or not, with their kinds: query, mutation, action."""
    if not isinstance(manifest, list):
        return {}
    return {
        str(entry["name"]): str(entry["handler"])
        for entry in manifest
        if isinstance(entry, dict)
        and isinstance(entry.get("name"), str)
        and entry.get("handler") in ("query", "mutation", "action")
    }


@dataclass(frozen=True)
class _WorkerRun:
    """A code command's `run` on the server: the call goes to the app version's worker.
    `kind` is the handler's it is (None: registered with `app.register`)."""

    workers: Workers
    version: Version
    name: str
    kind: str | None = None

    def __call__(self, args: dict[str, Any], ctx: Context) -> Result:
        return self.workers.run(self.version, self.name, args, ctx, kind=self.kind)


@dataclass(frozen=True)
class _WorkerSuggest:
    workers: Workers
    version: Version
    name: str

    def __call__(self, argument: str, partial: str) -> list[dict[str, str]]:
        values = self.workers.suggest(self.version, self.name, argument, partial)
        found: list[dict[str, str]] = []
        for value in values[:200]:
            if isinstance(value, dict) and isinstance(value.get("value"), str | int | float):
                found.append(
                    {
                        "value": str(value["value"]),
                        "description": str(value.get("description") or ""),
                    }
                )
            elif isinstance(value, str | int | float) and not isinstance(value, bool):
                found.append({"value": str(value)})
        return found


def clashes(code: list[str], declared: list[Command]) -> list[str]:
    """A code command named like a declared (or generated) one is refused."""
    taken = {c.agent_name for c in declared}
    return [
        f"{name} is a command of tools.json or vocab.json already — give one of them another name"
        for name in code
        if name in taken
    ]


__all__ = [
    "WORKER",
    "CodeSettings",
    "Version",
    "WorkerProcess",
    "Workers",
    "clashes",
    "commands_of",
    "tables_of",
    "untrusted",
]
