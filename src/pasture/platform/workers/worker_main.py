"""The program a worker process runs: an app's `worker.py`, set up once, serving calls.

    python -I -m pasture.platform.workers.worker_main FD

It runs inside the sandbox (`pasture.platform.workers.sandbox`) and talks to the server
over the socket `FD` (`pasture.platform.workers.protocol`); what it prints goes to the
server's log. In order:

1. `{"hello": {root, at, memory, scratch, sized, mode}}` arrives. The memory limit,
   and the size no one file may pass (its scratch's), are set on this process
   before any of the app's code runs. No secret is in it: setting up gets none.
2. `worker.py` is imported from `root` (modules beside it can be imported
   too) and its `setup(app)` is called with a registry; every registration
   problem is noted. Its handlers (`@query`, `@mutation`, `@action`,
   `pasture.commands.handlers`) are checked, and each one tagged as a tool is
   registered as a command of its name. Its module-level `schema` (its tables,
   `pasture.commands.app_tables`) is read as a vocab.json document, the last entry
   of the manifest (`{"schema": {"$defs": …}}`). It answers
   `{"ready": {"commands": [...]}}` or
   `{"problems": [...]}`; at a deploy's check (`mode: "check"`) that is all.
3. Then one call at a time: `{"call": id, "command", "args", "caller",
   "read_only", "secrets"?}` runs the command with a `ctx` whose store asks the
   server for every read and write (`{"store": "query" | "apply" | "schema",
   "call": id}`), as the call's caller — the server decides who that is, not
   this process — and answers `{"result": {text, data}}`, `{"refused": {sentence,
   kind}}`, `{"failed": "SystemExit"}`, `{"limit": "memory" | "scratch"}` or
   `{"unjson": "set"}`, each with the call's `"call"`. A reply may carry
   `"commands"` when the registry changed during the call. `"secrets"` come
   only with the call of an action or of a registered command (the server
   decides which), are that call's `ctx.secrets`, and are dropped when it ends.
   While it runs, `ctx.progress(…)` sends `{"progress": {done, total?, message?},
   "call": id}` (no reply comes), and the server may send `{"cancel": true,
   "call": id}`: it is heard whenever the code reads `ctx.cancelled` or waits for
   its store, and `ctx.cancelled` is true from then on.
   `{"call": id, "handler", "args", "caller", "read_only"}` runs a handler as
   the app's page calls it, its input not checked against its tool's args.
4. `{"suggest": …, "call": id}` asks a command's Tab-completion hook (with no
   secrets); the channel closing ends the process.
"""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import logging
import os
import resource
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pasture.caller import Caller
from pasture.commands import handlers as _handlers
from pasture.commands.app_tables import schema_document
from pasture.commands.appstore import AppStore
from pasture.commands.model import Command, Context
from pasture.commands.registry import BadCommand, CheckedRun, CommandFailed, Registry
from pasture.errors import PastureError, Refused
from pasture.long_calls import MOST_PER_SECOND, LongCall, Progress
from pasture.platform.workers.protocol import Channel, Closed, refusal_message, refusal_of
from pasture.result import Result
from pasture.store.base import Answer, Applied, Bundle
from pasture.store.pages import Rows
from pasture.store.vocab import SCHEMA, read_app

logger = logging.getLogger("pasture.worker")

WORKER = "worker.py"
SETUP_RULE = "setup is a function setup(app) that registers the app's commands on app"


# -- setting up: the registry worker.py is handed ---------------------------------------------
class WorkerRegistry(Registry):
    """An app's registry while its worker sets up: a bad command is noted, the rest go on.

    So a deploy reports every bad registration at once, not only the first.
    """

    def __init__(self, at: str = "") -> None:
        super().__init__(at=at, log_warnings=False)  # said once, at the deploy
        self.problems: list[str] = []

    def register(self, name: str, **fields: Any) -> Callable[[], None]:
        try:
            return super().register(name, **fields)
        except BadCommand as bad:
            self.problems.append(str(bad))
            return _nothing
        except TypeError as e:  # a field missing or misspelt, e.g. no annotations=
            self.problems.append(f"{name}: {_missing(e)}")
            return _nothing


def _nothing() -> None:
    return None


def _missing(e: TypeError) -> str:
    text = str(e)
    if "annotations" in text:
        return (
            'annotations are required: {"readOnly": True} if it changes nothing, '
            '{"consequential": True} if it is hard to undo, {} for an ordinary change'
        )
    if "unexpected keyword argument" in text:
        word = text.rsplit("argument", 1)[-1].strip(" '")
        return (
            f"register() takes no {word} — it takes description, run, input, annotations, "
            "provider, title, positional, output, examples, see_also and suggest"
        )
    if "missing" in text:
        return f"register() {text.split('()', 1)[-1].strip()}"
    return "register() was called with the wrong fields"


def set_up(namespace: Mapping[str, Any], registry: WorkerRegistry, path: str) -> list[str]:
    """Call the worker's `setup(app)`; its problems (and the registry's) as deploy sentences."""
    setup = namespace.get("setup")
    if setup is None:
        return []
    if not callable(setup):
        return [SETUP_RULE]
    try:
        setup(registry)
    except BaseException as e:  # SystemExit and the like too: setup may not end the process
        return [*registry.problems, raised(e, path)]
    return list(registry.problems)


def raised(e: BaseException, path: str) -> str:
    """`line 12: ValueError: …`, the line being the worker's own deepest one."""
    line = ""
    for frame in traceback.extract_tb(e.__traceback__):
        if frame.filename == path:
            line = f"line {frame.lineno}: "
    text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    return f"{line}{text}"


def manifest(
    commands: list[Command], handlers: Mapping[str, _handlers.Handler] | None = None
) -> list[dict[str, Any]]:
    """What the server needs to list and check commands without their code, and to let the
    app's pages call its handlers: a tool's entry says its kind (`handler`), and a handler
    that is no tool is an entry of its own (`page`), which no listing shows."""
    handlers = handlers or {}
    listed = [
        {
            "name": c.name,
            "description": c.description,
            "input": c.input,
            "annotations": {"readOnly": c.read_only, "consequential": c.consequential},
            "provider": c.provider,
            "title": c.title,
            "positional": list(c.positional),
            "output": c.output,
            "examples": list(c.examples),
            "see_also": list(c.see_also),
            "suggest": c.suggest is not None,
            **({"handler": handlers[c.name].kind} if c.name in handlers else {}),
        }
        for c in commands
    ]
    tools = {c.name for c in commands}
    listed += [
        {"name": h.name, "handler": h.kind, "page": True}
        for h in handlers.values()
        if h.name not in tools
    ]
    return listed


# -- one call's channel: its store's requests, its progress, a stop ------------------------------
class CallLine:
    """The channel as one call uses it. What the code sends (a store request, progress) goes
    out whole under one lock, whichever thread of the code sends it; a stop the server sends
    is heard while the code waits for its store, or when it looks (`ctx.cancelled`)."""

    def __init__(self, channel: Channel, call: str) -> None:
        self.channel = channel
        self.call = call
        self.lock = threading.RLock()
        self.stopped = False  # the server asked this call to stop
        self.ended = False

    def heard(self, message: dict[str, Any]) -> bool:
        """Whether `message` was a stop (this call's, or a late one of a call before)."""
        if "cancel" not in message:
            return False
        if message.get("call") == self.call:
            self.stopped = True
        return True

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a request and wait for its reply, hearing any stop that comes first."""
        with self.lock:
            self.channel.send({**message, "call": self.call})
            while True:
                try:
                    reply = self.channel.receive()
                except Closed:
                    os._exit(0)  # the server has gone: nobody is waiting for this call
                assert reply is not None
                if not self.heard(reply):
                    return reply

    def tell(self, message: dict[str, Any]) -> None:
        """Send what needs no reply."""
        with self.lock:
            self.channel.send({**message, "call": self.call})

    def look(self) -> bool:
        """Read a stop that has come, without waiting; whether the call was asked to stop."""
        if self.stopped or self.ended or not self.lock.acquire(blocking=False):
            return self.stopped  # a thread waiting for its store hears it instead
        try:
            while self.channel.pending():
                try:
                    message = self.channel.receive(1.0)
                except Closed:
                    os._exit(0)
                if message is None:
                    break
                self.heard(message)  # else an answer no one waited for: dropped
        finally:
            self.lock.release()
        return self.stopped


class RemoteCall(LongCall):
    """`ctx.progress` and `ctx.cancelled` in a worker: progress sent to the server (a few
    times a second at most; the server holds it to its own bound too), a stop heard from it."""

    def __init__(self, line: CallLine) -> None:
        super().__init__()
        self.line = line
        self._sent: Progress | None = None
        self._sent_at = -1.0e9

    def report(self, progress: Progress) -> None:
        if self.line.ended or (self._sent is not None and progress.done <= self._sent.done):
            return
        now = time.monotonic()
        last = progress.total is not None and progress.done >= progress.total
        if now - self._sent_at < 0.5 / MOST_PER_SECOND and not last:
            return
        self._sent, self._sent_at = progress, now
        self.line.tell({"progress": progress.as_data()})

    @property
    def cancelled(self) -> bool:
        return self.line.look()


# -- the store, back through the server --------------------------------------------------------
class RemoteStore(AppStore):
    """`ctx.store` in a worker: every read and write is the server's, as the call's caller."""

    def __init__(
        self,
        channel: Channel,
        call: str,
        *,
        read_only: str | None,
        described: dict[str, Any] | None = None,
        line: CallLine | None = None,
    ) -> None:
        super().__init__(read_only=read_only)
        self.channel = channel
        self.call = call
        self.line = line or CallLine(channel, call)
        self.ended = False
        # The app's schema, asked once a process: its version's, which no call changes.
        self.described = described if described is not None else {}

    def _ask(self, message: dict[str, Any]) -> dict[str, Any]:
        if self.ended:
            raise Refused(
                "this ctx.store belongs to a call that has ended — use the store of the call "
                "the code is running in"
            )
        try:
            reply = self.line.ask(message)
        except (TypeError, ValueError):
            raise Refused(
                "what was sent to the store is not JSON — bundles and filters are made of "
                "text, numbers, true/false, null, lists and objects"
            ) from None
        if "refused" in reply:
            raise refusal_of(reply["refused"])
        return reply

    def query(self, filter: str, *, table: str | None = None) -> Answer:
        asked: dict[str, Any] = {"store": "query", "filter": filter}
        if table is not None:
            asked["table"] = table
        reply = self._ask(asked)
        answer: Answer = reply["answer"]
        if "more" in reply and isinstance(answer, list):
            cursor = reply.get("cursor")
            return Rows(
                answer, cursor if isinstance(cursor, str) else None, more=bool(reply["more"])
            )
        return answer

    def schema(self) -> dict[str, Any]:
        if not self.described:
            self.described.update(self._ask({"store": "schema"})["schema"])
        return self.described

    def begin(self, *, read_only: bool = False, by_code: bool = False) -> None:
        self._ask({"store": "begin"})

    def end(self, *, keep: bool, by_code: bool = False) -> None:
        self._ask({"store": "end", "keep": keep})

    def _write(self, bundles: list[Bundle]) -> Applied:
        reply = self._ask({"store": "apply", "bundles": bundles})
        return Applied(list(reply["entities"]), dict(reply["aliases"]))


# -- the process ---------------------------------------------------------------------------------
class Host:
    """One app version's code, set up, answering the server's calls one at a time."""

    def __init__(self, channel: Channel, hello: dict[str, Any]) -> None:
        self.channel = channel
        self.root = Path(str(hello["root"]))
        self.at = str(hello.get("at", ""))
        # Confined, the scratch is a filesystem of its size: full, a write says ENOSPC.
        self.sized = bool(hello.get("sized"))
        self.current: Any = None  # the id of the call being answered
        self.described: dict[str, Any] = {}  # the app's schema, once a call has asked
        self.registry = WorkerRegistry(self.at)
        self.handlers: dict[str, _handlers.Handler] = {}
        self.schema: dict[str, Any] = {}  # worker.py's tables, as vocab.json's $defs
        self.changes = 0
        self.reported = 0

    def set_up(self) -> list[str]:
        path = self.root / WORKER
        sys.path.insert(0, str(self.root))  # worker.py may import modules beside it
        spec = importlib.util.spec_from_file_location("worker", path)
        if spec is None or spec.loader is None:
            return [f"{WORKER} cannot be loaded"]
        module = importlib.util.module_from_spec(spec)
        sys.modules["worker"] = module  # a dataclass in the worker looks its module up here
        try:
            spec.loader.exec_module(module)
        except BaseException as e:
            return [raised(e, str(path))]
        problems = set_up(vars(module), self.registry, str(path))
        problems += self.take_handlers()
        problems += self.take_schema(vars(module))
        self.registry.on_change(self._changed)
        return problems

    def take_handlers(self) -> list[str]:
        """The handlers worker.py made: checked, and each tool registered as a command."""
        found = _handlers.declared()
        problems = _handlers.check(found)
        for handler in found:
            self.handlers.setdefault(handler.name, handler)
        if problems:
            return problems
        for handler in self.handlers.values():
            if handler.tool is None:
                continue
            tool = handler.tool
            self.registry.register(
                handler.name,
                description=str(tool["description"]).strip(),
                run=_HandlerRun(handler, as_tool=True),
                input=_handlers.input_schema(handler.args),
                annotations=_handlers.annotations_of(handler),
                title=tool.get("title"),
            )
        return []

    def take_schema(self, namespace: Mapping[str, Any]) -> list[str]:
        """worker.py's `schema`, read as a vocab.json document for the manifest; what is
        wrong in it said all at once, the rules the server holds it to as well."""
        defs, problems = schema_document(namespace.get("schema"))
        if problems:
            _, found = read_app(None, defs)
            return [f"schema: {p}" for p in [*problems, *found[SCHEMA]]]
        self.schema = defs
        return []

    def manifest(self) -> list[dict[str, Any]]:
        listed = manifest(self.registry.commands(), self.handlers)
        if self.schema:  # its tables, as vocab.json would declare them
            listed.append({"schema": {"$defs": self.schema}})
        return listed

    def _changed(self) -> None:
        self.changes += 1

    def serve(self) -> None:
        while True:
            try:
                message = self.channel.receive()
            except Closed:
                return
            assert message is not None
            self.current = message.get("call")
            if "suggest" in message:
                self.reply(self.suggest(message["suggest"]))
            elif "command" in message or "handler" in message:
                self.reply(self.call(message))
            # else: an answer no ctx.store waited for (its code spoke out of turn): dropped

    def reply(self, answer: dict[str, Any]) -> None:
        """Send a call's answer, with the call's id: the server takes no other as its."""
        sys.stdout.flush()  # what the call printed reaches the server's log now
        sys.stderr.flush()
        if self.changes != self.reported:
            self.reported = self.changes
            answer["commands"] = self.manifest()
        try:
            self.channel.send({**answer, "call": self.current})
        except (TypeError, ValueError) as e:
            what = str(e).split("Object of type ", 1)[-1].split(" ", 1)[0]
            unjson = what[:60] if "Object of type" in str(e) else "value"
            self.channel.send({"unjson": unjson, "call": self.current})

    def call(self, message: dict[str, Any]) -> dict[str, Any]:
        if "handler" in message:
            handler = self.handlers.get(str(message["handler"]))
            if handler is None:
                return {"refused": {"sentence": f"no handler {message['handler']} in {self.at}"}}
            return self.run(message, handler.name, _HandlerRun(handler, as_tool=False))
        command = self.registry.get(str(message.get("command", "")))
        if command is None:
            return {"refused": {"sentence": f"no command {message.get('command')} in {self.at}"}}
        return self.run(message, command.name, command.run)

    def run(self, message: dict[str, Any], name: str, run: Any) -> dict[str, Any]:
        """One call of a command or a handler, with a ctx whose store asks the server."""
        _reap()
        caller = message.get("caller") or {}
        line = CallLine(self.channel, str(message["call"]))
        store = RemoteStore(
            self.channel,
            line.call,
            read_only=message.get("read_only") or None,
            described=self.described,
            line=line,
        )
        # This call's secrets alone (the server sends them only where they are due), emptied
        # when it ends: what the next call finds of them is what the code itself kept.
        given = message.pop("secrets", None)
        secrets = dict(given) if isinstance(given, dict) else {}
        if isinstance(given, dict):
            given.clear()
        ctx = Context(
            Caller(caller.get("eid"), caller.get("name")),
            store,
            self.at,
            secrets=MappingProxyType(secrets),
            long_call=RemoteCall(line),
        )
        args = message.get("args") or {}
        try:
            # The server checked and converted the arguments before it sent them.
            result = run.run_checked(args, ctx) if isinstance(run, CheckedRun) else run(args, ctx)
        except PastureError as refused:  # a refusal, or its code failing (CommandFailed)
            if isinstance(refused, CommandFailed) and self._scratch_full(refused):
                return {"limit": "scratch"}
            return {"refused": refusal_message(refused)}
        except MemoryError:
            return {"limit": "memory"}
        except BaseException as e:  # SystemExit, KeyboardInterrupt, …: the call fails, not this
            if self._scratch_full(e):
                return {"limit": "scratch"}
            logger.error("%s failed in its own code", name, exc_info=e)
            return {"failed": type(e).__name__}
        finally:
            store.ended = line.ended = True
            secrets.clear()
        return {"result": {"text": result.text, "data": result.data}}

    def _scratch_full(self, e: BaseException) -> bool:
        """Whether a write past the scratch's size is what failed the call, even where the
        code (or a library) raised something else because of it."""
        seen = 0
        at: BaseException | None = e
        while at is not None and seen < 8:
            if isinstance(at, OSError) and (
                at.errno == errno.EFBIG or (self.sized and at.errno == errno.ENOSPC)
            ):
                return True
            at = at.__cause__ or at.__context__
            seen += 1
        return False

    def suggest(self, asked: Any) -> dict[str, Any]:
        command = self.registry.get(str(asked.get("command", "")))
        if command is None or command.suggest is None:
            return {"values": []}
        try:
            values = command.suggest(str(asked.get("argument", "")), str(asked.get("partial", "")))
        except BaseException as e:
            logger.error("%s's suggest failed", command.name, exc_info=e)
            return {"values": []}
        return {"values": list(values or [])}


class _HandlerRun:
    """A handler as `run(args, ctx)`: as a tool (its `id()` arguments checked first), or as
    the app's page calls it (its input the page's to check)."""

    def __init__(self, handler: _handlers.Handler, *, as_tool: bool) -> None:
        self.handler = handler
        self.as_tool = as_tool

    def __call__(self, args: dict[str, Any], ctx: Context) -> Result:
        return _handlers.run(self.handler, args, ctx, as_tool=self.as_tool)


def _reap() -> None:
    """Reap what earlier calls left, which the server has ended: as their reaper (see
    `_die_with_the_server`), this process would keep them as zombies for ever."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _limit(memory: int, scratch: int) -> None:
    """The process's address space, and the size no one file it writes may pass (a write
    past it fails with EFBIG: Python ignores SIGXFSZ), both for good."""
    size = memory * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    most = scratch * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (most, most))


def _die_with_the_server() -> None:
    """Where no sandbox does it, end this process when the one that started it ends, and
    keep every process its commands start below it."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        # What its commands start and leave stays below it (in a sandbox it is the first
        # process of its own, already), so the server can count it and end it.
        libc.prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def main(argv: list[str]) -> int:
    _die_with_the_server()
    sys.dont_write_bytecode = True
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s"
    )
    channel = Channel(socket.socket(fileno=int(argv[1])))
    try:
        message = channel.receive()
    except Closed:
        return 0
    hello = (message or {}).get("hello")
    if not isinstance(hello, dict):
        return 2
    _limit(int(hello.get("memory") or 512), int(hello.get("scratch") or 64))
    host = Host(channel, hello)
    try:
        problems = host.set_up()
    except MemoryError:
        problems = ["setting it up used more memory than a worker may"]
    if problems:
        channel.send({"problems": problems})
        return 0
    channel.send({"ready": {"commands": host.manifest()}})
    if hello.get("mode") == "check":
        return 0
    try:
        host.serve()
    except MemoryError:
        channel.send({"limit": "memory", "call": host.current})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
