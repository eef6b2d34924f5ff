"""One worker process: an app version's code, started confined, spoken to over its channel.

`WorkerProcess` starts `pasture.platform.workers.worker_main` in the sandbox
(`pasture.platform.workers.sandbox`), says hello (its root, its app, its memory limit,
its secrets), waits for it to set up, and then carries calls: it sends one,
answers the store requests the call makes through that call's own `ctx.store`
(and nothing else: a request naming an ended call is refused), and returns the
reply — or raises `Stopped` with the caller's sentence when the call runs past
its wall time or CPU time, the process dies, or what it sends is not the
protocol. Which process serves which call is `pasture.platform.workers.dispatch`'.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pasture.commands.model import Context
from pasture.errors import PastureError, Refused
from pasture.platform.workers.protocol import (
    MAX_CONTAINERS,
    MAX_FROM_WORKER,
    Channel,
    Closed,
    TooLarge,
    WireError,
    refusal_message,
)
from pasture.platform.workers.sandbox import Confinement, Limits, confinement, seconds, worker_env

logger = logging.getLogger("pasture.platform")

SUGGEST_TIME = 2.0  # seconds Tab completion waits for a worker's suggestions
_TICK = 0.25  # how often a long call's CPU time is looked at
# Processes a call may have running at once below its worker; what is left when it ends is
# ended (`end_leftovers`).
MOST_PROCESSES = 16

# Worker processes are started from one long-lived thread: a sandbox (and a worker
# without one) is told to die with the thread that started it, not with the process.
_spawner = ThreadPoolExecutor(1, thread_name_prefix="pasture-spawn")


class Stopped(Exception):
    """A call that ended its worker process; `sentence` says why, for the caller."""

    def __init__(self, sentence: str) -> None:
        super().__init__(sentence)
        self.sentence = sentence


class WorkerProcess:
    """One running worker process of one app version."""

    def __init__(
        self,
        root: Path,
        at: str,
        limits: Limits,
        *,
        secrets: Mapping[str, str],
        hide: list[Path],
        mode: str = "serve",
        confine: Confinement | None = None,
    ) -> None:
        self.at = at
        self.limits = limits
        self.used = time.monotonic()
        confine = confine or confinement()
        parent, child = socket.socketpair()
        # What its code sends is another person's: bounded, so it cannot cost the server
        # gigabytes to read (`pasture.platform.workers.protocol`).
        self.channel = Channel(parent, most_bytes=MAX_FROM_WORKER, most_containers=MAX_CONTAINERS)
        self._scratch: str | None = None
        program = [
            os.path.abspath(sys.executable),  # no `..`: the sandbox has the folders, not the way
            "-I",
            "-m",
            "pasture.platform.workers.worker_main",
            str(child.fileno()),
        ]
        keep = [child.fileno()]
        info_r = info_w = -1
        if confine.confined:
            info_r, info_w = os.pipe()
            keep.append(info_w)
            command = confine.command(
                root, program, network=limits.network, hide=hide, info_fd=info_w
            )
            command[0] = shutil.which(command[0]) or command[0]
            env: dict[str, str] = {}
            cwd = "/"
        else:
            self._scratch = tempfile.mkdtemp(prefix="pasture-worker-")
            command, env, cwd = program, worker_env(self._scratch), str(root)
        try:
            self.popen = _spawner.submit(
                subprocess.Popen,
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=keep,
                env=env,
                cwd=cwd,
                start_new_session=True,
            ).result()
        finally:
            child.close()
            if info_w >= 0:
                os.close(info_w)
        self.pid = self.popen.pid
        if info_r >= 0:
            self.pid = _child_pid(info_r) or self.pid
        self.last_words: collections.deque[str] = collections.deque(maxlen=20)
        self._log_thread = threading.Thread(target=self._log, daemon=True, name=f"pasture-log-{at}")
        self._log_thread.start()
        root_seen = "/app" if confine.confined else str(root)
        hello = {"root": root_seen, "at": at, "memory": limits.memory, "secrets": dict(secrets)}
        self.channel.send({"hello": {**hello, "mode": mode}})

    # -- starting ---------------------------------------------------------------------------
    def ready(self) -> list[dict[str, Any]]:
        """Wait for the worker to set up: its manifest, or DeployRefused-style problems."""
        try:
            answer = self.channel.receive(self.limits.setup)
        except WireError:
            code = self._ended()
            self._log_thread.join(timeout=2)  # its last words, for the server's log
            logger.error(
                "%s: worker.py ended while being set up%s; it last said:\n%s",
                self.at,
                code,
                "\n".join(self.last_words) or "(nothing)",
            )
            raise Stopped(f"it ended while being set up{code}") from None
        if answer is None:
            self.kill()
            raise Stopped(
                f"importing and setting it up took longer than {seconds(self.limits.setup)} — "
                "do slow work inside commands"
            )
        problems = answer.get("problems")
        if isinstance(problems, list):
            self.kill()
            raise Problems([str(p)[:2000] for p in problems])
        ready = answer.get("ready")
        if not isinstance(ready, dict) or not isinstance(ready.get("commands"), list):
            self.kill()
            raise Stopped("it answered its setting up with something pasture does not understand")
        return list(ready["commands"])

    # -- a call -----------------------------------------------------------------------------
    def call(self, name: str, message: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """Send one call and answer its store requests until its reply; _Stopped past a limit."""
        self.used = time.monotonic()
        call = message["call"]
        try:
            self.channel.send(message)
        except (OSError, ValueError):
            raise Stopped(self._died(name)) from None
        began = time.monotonic()
        deadline = began + self.limits.time
        # What it had used when the call began is read at the first look, which comes within
        # a tick, whether the call goes quiet or keeps asking its store: at that look the
        # process may have run all the time since the call began except while the server
        # answered its store (it waits then), and is charged no more than that.
        cpu_at_start: float | None = None
        looked = began  # when its CPU time and processes were last looked at
        answering = 0.0  # seconds spent answering its store so far
        while True:
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                raise Stopped(
                    f"{name} took longer than {seconds(self.limits.time)} and was stopped"
                )
            if now - looked >= _TICK:  # a call that talks to its store without end is looked at too
                looked = now
                if cpu_at_start is None:
                    used = self.cpu()
                    cpu_at_start = None if used is None else used - (now - began - answering)
                self._check_cpu(name, cpu_at_start)
                self._check_processes(name)
            try:
                answer = self.channel.receive(min(_TICK, left))
            except Closed:
                raise Stopped(self._died(name)) from None
            except TooLarge as e:
                self.kill()
                raise Stopped(
                    f"{name} stopped: its worker process sent pasture {e} — answer with "
                    "less (a page of rows at a time); it is started again for the next call"
                ) from None
            except WireError:
                raise Stopped(self._garbled(name)) from None
            if answer is None:  # a quiet tick: looked at on the next turn
                continue
            if "store" not in answer:
                self.used = time.monotonic()
                self.end_leftovers(name)
                return answer
            asked = time.monotonic()
            try:
                self.channel.send(_store_answer(answer, call, ctx))
            except (OSError, ValueError):
                raise Stopped(self._died(name)) from None
            answering += time.monotonic() - asked

    def _check_cpu(self, name: str, at_start: float | None) -> None:
        used = self.cpu()
        if used is not None and at_start is not None and used - at_start > self.limits.cpu:
            raise Stopped(
                f"{name} used more than {seconds(self.limits.cpu)} of CPU time and was stopped"
            )

    def suggest(self, command: str, argument: str, partial: str) -> list[Any]:
        self.channel.send(
            {"suggest": {"command": command, "argument": argument, "partial": partial}}
        )
        answer = self.channel.receive(SUGGEST_TIME)
        if answer is None:
            raise Stopped("its suggestions took too long")
        values = answer.get("values")
        return list(values) if isinstance(values, list) else []

    # -- the process ------------------------------------------------------------------------
    def cpu(self) -> float | None:
        """Seconds of CPU the process and every process below it have used (None where
        /proc cannot tell)."""
        own = _cpu_of(self.pid)
        if own is None:
            return None
        return own + sum(_cpu_of(pid) or 0.0 for pid in _below(self.pid))

    def _check_processes(self, name: str) -> None:
        if len(_below(self.pid)) > MOST_PROCESSES:
            raise Stopped(
                f"{name} started more than {MOST_PROCESSES} processes at once and was stopped"
            )

    def end_leftovers(self, name: str) -> None:
        """End what a call started and left running: nothing it starts outlives it."""
        left = _below(self.pid)
        if not left:
            return
        for _ in range(5):  # one may start another while the last are ended
            _kill(left)
            left = _below(self.pid)
            if not left:
                break
        logger.warning("%s: %s left processes running; they were ended", self.at, name)

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        """Stop the process and everything it started (in a session of its own or not)."""
        _kill(_below(self.popen.pid))
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            logger.error("%s: a worker process did not stop", self.at)
        self.channel.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def _ended(self) -> str:
        """`(exit code 3)`: how the process ended, once it has (it is killed if it has not)."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=2)
        self.kill()
        code = self.popen.returncode
        if code is None:
            return ""
        if code < 0:
            try:
                return f" (killed by {signal.Signals(-code).name})"
            except ValueError:
                return f" (killed by signal {-code})"
        return f" (exit code {code})"

    def _died(self, name: str) -> str:
        return (
            f"{name} stopped: its worker process ended in the middle of the call"
            f"{self._ended()}, and is started again for the next one — the server's log "
            "has the details"
        )

    def _garbled(self, name: str) -> str:
        self.kill()
        return (
            f"{name} stopped: its worker process sent pasture something it does not "
            "understand, and is started again for the next call"
        )

    def _log(self) -> None:
        """What the worker prints, in the server's log under its app's name."""
        stream = self.popen.stdout
        if stream is None:
            return
        # Read what has come, not whole lines: the worker flushes after each call, and
        # what it printed without a newline is logged then rather than held back.
        while chunk := os.read(stream.fileno(), 65536):
            for line in chunk.decode("utf-8", "replace").splitlines():
                if line.strip():
                    self.last_words.append(line.rstrip()[:2000])
                    logger.info("%s: %s", self.at, line.rstrip()[:2000])
        stream.close()


class Problems(Exception):
    """A worker that does not set up: every problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def _child_pid(fd: int) -> int | None:
    """The sandboxed process's own pid, from bubblewrap's `--info-fd`."""
    data = b""
    try:
        while chunk := os.read(fd, 4096):
            data += chunk
    finally:
        os.close(fd)
    try:
        pid = json.loads(data).get("child-pid")
    except (ValueError, AttributeError):
        return None
    return pid if isinstance(pid, int) else None


def _below(pid: int) -> list[int]:
    """Every live process below `pid` (its children, theirs, …), from /proc; a process
    that has ended and waits to be reaped is not counted."""
    found: list[int] = []
    parents = [pid]
    while parents:
        parent = parents.pop()
        try:
            threads = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for thread in threads:
            children = _read(f"/proc/{parent}/task/{thread}/children")
            if children:
                pids = [int(c) for c in children.split()]
                parents.extend(pids)
                found.extend(c for c in pids if _state(c) not in (b"Z", b"X", None))
    return found


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _read(path: str) -> bytes:
    """A small /proc file's bytes (b"" when it is gone): with no file object, as this is
    read after every call."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return b""
    try:
        return os.read(fd, 1 << 16)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _stat(pid: int) -> list[bytes] | None:
    parts = _read(f"/proc/{pid}/stat").rsplit(b")", 1)
    return parts[1].split() if len(parts) == 2 else None


def _state(pid: int) -> bytes | None:
    fields = _stat(pid)
    return fields[0] if fields else None


def _cpu_of(pid: int) -> float | None:
    """Seconds of CPU one process has used, with its children it has waited for."""
    fields = _stat(pid)
    if fields is None or len(fields) < 15:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / ticks  # utime stime cutime cstime


def _store_answer(asked: dict[str, Any], call: str, ctx: Context) -> dict[str, Any]:
    """What a worker's store request gets: the call's own `ctx.store` answers it."""
    if asked.get("call") != call:
        return {
            "refused": {
                "sentence": "this ctx.store belongs to a call that has ended — use the store "
                "of the call the code is running in"
            }
        }
    op = asked.get("store")
    try:
        if op == "query":
            filter = asked.get("filter")
            if not isinstance(filter, str):
                raise Refused("a filter is text, like .line.sku=V60-02")
            return {"answer": ctx.store.query(filter)}
        if op == "apply":
            applied = ctx.store.apply(asked.get("bundles") or [])
            return {"entities": list(applied.entities), "aliases": dict(applied.aliases)}
        if op == "schema":
            return {"schema": ctx.store.schema()}
        raise Refused("ctx.store reads (query), writes (apply, batch) and describes (schema)")
    except PastureError as refused:
        return {"refused": refusal_message(refused)}
    except Exception:
        logger.exception("%s: a worker's store request failed", ctx.at)
        return {"refused": {"sentence": "the store could not do that — the server's log says why"}}
