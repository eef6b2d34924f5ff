"""One worker process: an app version's code, started confined, spoken to over its channel.

`WorkerProcess` starts `pasture.platform.workers.worker_main` in the sandbox
(`pasture.platform.workers.sandbox`), says hello (its root, its app, its memory and
scratch limits — never a secret), waits for it to set up, and then carries calls: it
sends one, answers the store requests the call makes through that call's own
`ctx.store` (and nothing else: a request naming an ended call is refused), and returns
the reply that carries the call's id — or raises `Stopped` with the caller's sentence
when the call runs past its wall time, CPU time or scratch, the process dies, answers
for another call, or sends what is not the protocol. While it waits it passes the call's
progress reports to the call's `long_call` (checked, and held to its bound there), and
when the caller asks the call to stop it tells the worker (`{"cancel": true}`) and
ends the process if the call has not answered within the grace period (`Limits.grace`).

Between calls the process does not run: it is stopped (SIGSTOP) when a call ends and
continued when the next begins, so no thread of its code works, writes or prints out
of reach of a call's limits. What it prints goes to the server's log, bounded
(`_Output`). Which process serves which call is `pasture.platform.workers.dispatch`'.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import os
import secrets
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from pasture import metrics
from pasture.commands.model import Context
from pasture.errors import PastureError, Refused
from pasture.long_calls import progress_from
from pasture.platform.workers.protocol import (
    MAX_CONTAINERS,
    MAX_FROM_WORKER,
    Channel,
    Closed,
    TooLarge,
    WireError,
    refusal_message,
)
from pasture.platform.workers.sandbox import (
    SCRATCH,
    SCRATCH_FILES,
    SHM,
    Confinement,
    Limits,
    confinement,
    seconds,
    worker_env,
)
from pasture.store.pages import Rows

logger = logging.getLogger("pasture.platform")

_TICK = 0.25  # how often a long call's CPU time is looked at
# Processes a call may have running at once below its worker; what is left when it ends is
# ended (`end_leftovers`).
MOST_PROCESSES = 16
# What a worker prints that the server's log keeps: the first LOG_PER_CALL bytes of each
# call (and of setting up), and LOG_PER_WINDOW bytes of every LOG_WINDOW seconds of one
# process; the rest is counted, and said in one line.
LOG_PER_CALL = 64 * 1024
LOG_PER_WINDOW = 1024 * 1024
LOG_WINDOW = 600.0
_MB = 1024 * 1024

# Worker processes are started from one long-lived thread: a sandbox (and a worker
# without one) is told to die with the thread that started it, not with the process.
_spawner = ThreadPoolExecutor(1, thread_name_prefix="pasture-spawn")


class Stopped(Exception):
    """A call that ended its worker process; `sentence` says why, for the caller."""

    def __init__(self, sentence: str) -> None:
        super().__init__(sentence)
        self.sentence = sentence


class OutOfTurn(Stopped):
    """The first thing a process sent in a call was another call's answer: something a call
    before left to say, held back when the process was stopped at that call's end, and said
    once it went on. The call had not begun to reach its store (nothing it asked was
    answered), so another process may serve it; the process is ended."""


def over_scratch(name: str, limits: Limits) -> str:
    """The sentence of a call whose scratch folder went past its size."""
    return f"{name} wrote more than {limits.scratch} MB to its scratch folder and was stopped"


def too_many_files(name: str) -> str:
    """The sentence of a call whose scratch folder went past its number of files."""
    return f"{name} made more than {SCRATCH_FILES:,} files in its scratch folder and was stopped"


class WorkerProcess:
    """One running worker process of one app version."""

    def __init__(
        self,
        root: Path,
        at: str,
        limits: Limits,
        *,
        hide: list[Path],
        mode: str = "serve",
        confine: Confinement | None = None,
    ) -> None:
        self.at = at
        self.limits = limits
        self.mode = mode
        self.used = time.monotonic()
        confine = confine or confinement()
        parent, child = socket.socketpair()
        # What its code sends is another person's: bounded, so it cannot cost the server
        # gigabytes to read (`pasture.platform.workers.protocol`).
        self.channel = Channel(parent, most_bytes=MAX_FROM_WORKER, most_containers=MAX_CONTAINERS)
        self._scratch: str | None = None  # unconfined: its scratch folder
        self._mounts: list[int] = []  # confined: its /tmp and /dev/shm, held open
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
                root,
                program,
                network=limits.network,
                hide=hide,
                info_fd=info_w,
                scratch=limits.scratch,
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
        assert self.popen.stdout is not None
        self.output = _Output(at, self.popen.stdout)
        self.last_words = self.output.last_words
        self._log_thread = threading.Thread(
            target=self.output.run, daemon=True, name=f"pasture-log-{at}"
        )
        self._log_thread.start()
        hello = {
            "root": "/app" if confine.confined else str(root),
            "at": at,
            "memory": limits.memory,
            "scratch": limits.scratch,
            "sized": confine.confined,  # its scratch a filesystem of that size
            "mode": mode,
        }
        self.channel.send({"hello": hello})

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
            metrics.worker_crashed(self.at)
            raise Stopped(f"it ended while being set up{code}") from None
        if answer is None:
            self.kill()
            metrics.worker_limit(self.at, "setup")
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
        self._signal(signal.SIGSTOP)  # until its first call
        if self._scratch is None and self.mode == "serve":
            self._hold_scratch()
        return list(ready["commands"])

    def _hold_scratch(self) -> None:
        """Its scratch filesystems, held open from here: each look at them is one call, and
        nothing it does inside can put another in their place."""
        try:
            if self.pid == self.popen.pid:  # bubblewrap did not say which process is its own
                raise OSError("bubblewrap did not say the pid of the process it started")
            for inside in (SCRATCH, SHM):
                self._mounts.append(
                    os.open(f"/proc/{self.pid}/root{inside}", os.O_RDONLY | os.O_DIRECTORY)
                )
        except OSError as e:
            self.kill()
            logger.error("%s: its worker's scratch cannot be looked at: %s", self.at, e)
            raise Stopped(
                "pasture cannot look at its scratch folder from outside on this machine, so "
                "it cannot hold it to its limit — the server's log says why"
            ) from None

    # -- a call -----------------------------------------------------------------------------
    def spoke_out_of_turn(self) -> bool:
        """Whether it sent something while no call was open (or has ended): such a process
        is not given a call, as what it sent would be taken for that call's."""
        if not self.channel.pending():
            return False
        if self.alive:
            logger.warning(
                "%s: a worker process sent pasture a message while no call was open; it was ended",
                self.at,
            )
        return True

    def call(
        self,
        name: str,
        message: dict[str, Any],
        ctx: Context,
        *,
        deadline: float | None = None,
    ) -> dict[str, Any]:
        """Send one call and answer its store requests until its reply; _Stopped past a limit.

        `deadline` (monotonic): when the call's time is up, where it began on a process
        before this one (`OutOfTurn`); else its time limit from now."""
        self.used = time.monotonic()
        call = message["call"]
        self.output.begin(name)
        try:
            self.channel.send(message)
        except (OSError, ValueError):
            raise Stopped(self._died(name)) from None
        self._signal(signal.SIGCONT)  # after: it wakes once, to the call waiting for it
        began = time.monotonic()
        if deadline is None:
            deadline = began + self.limits.time
        # What it had used when the call began is read at the first look, which comes within
        # a tick, whether the call goes quiet or keeps asking its store: at that look the
        # process may have run all the time since the call began except while the server
        # answered its store (it waits then), and is charged no more than that.
        cpu_at_start: float | None = None
        looked = began  # when its CPU time and processes were last looked at
        answering = 0.0  # seconds spent answering its store so far
        watched = ctx.long_call
        asked_to_stop: float | None = None  # when the worker was told to stop
        heard = False  # whether anything of this call's has come from it yet
        while True:
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                metrics.worker_limit(self.at, "time")
                raise Stopped(
                    f"{name} took longer than {seconds(self.limits.time)} and was stopped"
                )
            watched.flush()  # a report held back, once its turn has come
            if watched.cancelled:
                if asked_to_stop is None:
                    asked_to_stop = now
                    try:
                        self.channel.send({"cancel": True, "call": call})
                    except (OSError, ValueError):
                        raise Stopped(self._died(name)) from None
                grace = asked_to_stop + self.limits.grace - now
                if grace <= 0 or watched.ending_now:
                    self.kill()
                    raise Stopped(
                        f"{name} was asked to stop and had not within "
                        f"{seconds(self.limits.grace)}, so its process was ended"
                    )
                left = min(left, grace)
            if now - looked >= _TICK:  # a call that talks to its store without end is looked at too
                looked = now
                if cpu_at_start is None:
                    used = self.cpu()
                    cpu_at_start = None if used is None else used - (now - began - answering)
                self._check_cpu(name, cpu_at_start)
                self._check_processes(name)
                self._check_scratch(name)
            try:
                answer = self.channel.receive(min(_TICK, left))
            except Closed:
                raise Stopped(self._died(name)) from None
            except TooLarge as e:
                self.kill()
                metrics.worker_limit(self.at, "size")
                raise Stopped(
                    f"{name} stopped: its worker process sent pasture {e} — answer with "
                    "less (a page of rows at a time); it is started again for the next call"
                ) from None
            except WireError:
                raise Stopped(self._garbled(name)) from None
            if answer is None:  # a quiet tick: looked at on the next turn
                continue
            ours = answer.get("call") == call
            if "progress" in answer and "store" not in answer:  # no reply: not the call's answer
                heard = heard or ours
                if ours and (told := progress_from(answer["progress"])):
                    watched.report(told)
                continue  # a report of another call (or not one at all) is dropped
            if "store" not in answer:
                if not ours:  # never another call's answer, for this caller
                    sentence = self._not_its(name)
                    raise Stopped(sentence) if heard else OutOfTurn(sentence)
                watched.flush(last=True)  # how far it came, told before its answer
                self.used = time.monotonic()
                self._ended_call(name)
                return answer
            heard = heard or ours
            asked = time.monotonic()
            said = _store_answer(answer, call, ctx)
            said["call"] = answer["call"] if isinstance(answer.get("call"), str) else None
            try:
                self.channel.send(said)
            except (OSError, ValueError):
                raise Stopped(self._died(name)) from None
            answering += time.monotonic() - asked

    def _check_cpu(self, name: str, at_start: float | None) -> None:
        used = self.cpu()
        if used is not None and at_start is not None and used - at_start > self.limits.cpu:
            metrics.worker_limit(self.at, "cpu")
            raise Stopped(
                f"{name} used more than {seconds(self.limits.cpu)} of CPU time and was stopped"
            )

    def _ended_call(self, name: str) -> None:
        """A call answered: its process stops until the next, what it started is ended, and
        its scratch is held to its limits; what it printed is in the log."""
        self._signal(signal.SIGSTOP)
        self.end_leftovers(name)
        self._check_scratch(name)
        self.output.end()

    def _check_scratch(self, name: str) -> None:
        used, files = self.scratch_use()
        if used > self.limits.scratch * _MB:
            raise Stopped(over_scratch(name, self.limits))
        if files > SCRATCH_FILES:
            raise Stopped(too_many_files(name))

    def scratch_use(self) -> tuple[int, int]:
        """Bytes and files (folders too) its scratch holds now. Confined, each of `/tmp` and
        `/dev/shm` is a filesystem of its own, which counts what it holds (files deleted but
        kept open too) at one look; unconfined, its folder is walked, and what its processes
        keep open of files deleted is counted too."""
        if self._scratch is None:
            used = files = 0
            for mount in self._mounts:
                try:
                    fs = os.fstatvfs(mount)
                except OSError:
                    continue
                used += (fs.f_blocks - fs.f_bfree) * fs.f_frsize
                files += max(0, fs.f_files - fs.f_ffree - 1)  # its own folder is not a file
            return used, files
        used, files = _measure(self._scratch, SCRATCH_FILES)
        return used + _deleted_open([self.pid, *_below(self.pid)]), files

    def suggest(self, command: str, argument: str, partial: str) -> list[Any]:
        asked = secrets.token_hex(8)
        self.output.begin(f"{command}'s suggestions")
        self.channel.send(
            {
                "suggest": {"command": command, "argument": argument, "partial": partial},
                "call": asked,
            }
        )
        self._signal(signal.SIGCONT)
        answer = self.channel.receive(self.limits.suggest)
        if answer is None:
            raise Stopped("its suggestions took too long")
        if answer.get("call") != asked:
            raise Stopped(self._not_its("its suggestions"))
        self._ended_call(f"{command}'s suggestions")
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
            metrics.worker_limit(self.at, "processes")
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

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.pid, sig)

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
        for mount in self._mounts:
            with contextlib.suppress(OSError):
                os.close(mount)
        self._mounts = []
        if self._scratch is not None:
            _remove(self._scratch)
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
        metrics.worker_crashed(self.at)
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

    def _not_its(self, name: str) -> str:
        self.kill()
        logger.warning("%s: a worker process answered %s with another call's id", self.at, name)
        return (
            f"{name} stopped: its worker process sent pasture an answer that was not this "
            "call's, and is started again for the next call"
        )


class _Output:
    """What a worker process prints, in the server's log under its app's name, bounded.

    Each call (and setting up) has its first LOG_PER_CALL bytes logged, and the process
    LOG_PER_WINDOW bytes in LOG_WINDOW seconds (a bucket that fills again at that rate);
    the rest is read, counted, and said in one line when the call ends. What is printed
    once a call has answered counts toward that call (its process is stopped by then).
    """

    def __init__(self, at: str, stream: IO[bytes]) -> None:
        self.at = at
        self.stream = stream
        self.fd = stream.fileno()
        os.set_blocking(self.fd, False)
        self.lock = threading.Lock()
        self.last_words: collections.deque[str] = collections.deque(maxlen=20)
        self.what = "worker.py"  # whose output it is now: setting up, or a call's name
        self.left = LOG_PER_CALL
        self.bucket = float(LOG_PER_WINDOW)
        self.filled = time.monotonic()
        self.dropped = 0
        self.closed = False

    def run(self) -> None:
        """Read what comes until the process ends (the thread's loop)."""
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while not self.closed:
            poller.poll()  # an end read elsewhere stays one here too (POLLHUP)
            with self.lock:
                self._read(once=True)
        self.stream.close()

    def begin(self, what: str) -> None:
        """A call begins, with a call's budget (what the last printed was read as it ended)."""
        with self.lock:
            self._say()
            self.what, self.left = what, LOG_PER_CALL

    def end(self) -> None:
        """A call answered: all it printed before (the worker flushes first) is read now."""
        with self.lock:
            self._read()
            self._say()

    def _read(self, once: bool = False) -> None:
        # Read what has come, not whole lines: the worker flushes after each call, and
        # what it printed without a newline is logged then rather than held back.
        while not self.closed:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.closed = True
                self._say()
                return
            self._take(chunk)
            if once:
                return

    def _take(self, chunk: bytes) -> None:
        now = time.monotonic()
        self.bucket = min(
            float(LOG_PER_WINDOW),
            self.bucket + (now - self.filled) * LOG_PER_WINDOW / LOG_WINDOW,
        )
        self.filled = now
        keep = max(0, min(len(chunk), self.left, int(self.bucket)))
        self.left -= keep
        self.bucket -= keep
        self.dropped += len(chunk) - keep
        for line in chunk[:keep].decode("utf-8", "replace").splitlines():
            if line.strip():
                self.last_words.append(line.rstrip()[:2000])
                logger.info("%s: %s", self.at, line.rstrip()[:2000])

    def _say(self) -> None:
        if self.dropped:
            logger.warning(
                "%s: %s printed %s bytes more than the log keeps — it keeps the first %d KB "
                "of each call, and %d MB in %d minutes of a worker process",
                self.at,
                self.what,
                f"{self.dropped:,}",
                LOG_PER_CALL // 1024,
                LOG_PER_WINDOW // _MB,
                int(LOG_WINDOW // 60),
            )
            self.dropped = 0


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


def _measure(folder: str, most: int) -> tuple[int, int]:
    """Bytes (allocated or apparent, whichever is more) and entries under `folder`, links
    not followed; past `most` entries it stops counting. A folder it cannot read is made
    readable (its owner is the server's user) or counted as more than `most`."""
    used = files = 0
    folders = [folder]
    while folders:
        here = folders.pop()
        try:
            entries = list(os.scandir(here))
        except PermissionError:
            try:
                os.chmod(here, 0o700)
                entries = list(os.scandir(here))
            except OSError:
                return used, most + 1
        except OSError:
            return used, most + 1
        for entry in entries:
            files += 1
            if files > most:
                return used, files
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            used += max(st.st_size, st.st_blocks * 512)
            if stat.S_ISDIR(st.st_mode):
                folders.append(entry.path)
    return used, files


def _deleted_open(pids: list[int]) -> int:
    """Bytes of files deleted but kept open by these processes: gone from every folder,
    still on the disk."""
    seen: set[tuple[int, int]] = set()
    used = 0
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            known = (st.st_dev, st.st_ino)
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 0 and known not in seen:
                seen.add(known)
                used += max(st.st_size, st.st_blocks * 512)
    return used


def _remove(folder: str) -> None:
    """Remove a folder whatever its code made of it: folders it made unreadable, and
    folders so deep their paths are too long to name. Each folder below the first level is
    moved up to it before it is emptied, so no path is ever longer than two names."""
    mark = secrets.token_hex(4)
    moved = 0
    waiting = [folder]
    emptied: list[str] = []
    while waiting:
        here = waiting.pop()
        with contextlib.suppress(OSError):
            os.chmod(here, 0o700)
        try:
            entries = list(os.scandir(here))
        except OSError:
            entries = []
        for entry in entries:
            try:
                if not entry.is_dir(follow_symlinks=False):
                    os.unlink(entry.path)
                elif here == folder:
                    waiting.append(entry.path)
                else:
                    moved += 1
                    up = os.path.join(folder, f".pasture-{mark}-{moved}")
                    os.chmod(entry.path, 0o700)
                    os.rename(entry.path, up)
                    waiting.append(up)
            except OSError:
                continue
        emptied.append(here)
    for here in reversed(emptied):  # the first is emptied first, and removed last
        with contextlib.suppress(OSError):
            os.rmdir(here)


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
            table = asked.get("table")
            answer = ctx.store.query(filter, table=table if isinstance(table, str) else None)
            if isinstance(answer, Rows):  # a page: where the next begins goes with it
                return {"answer": answer, "more": answer.more, "cursor": answer.cursor}
            return {"answer": answer}
        if op == "apply":
            applied = ctx.store.apply(asked.get("bundles") or [])
            return {"entities": list(applied.entities), "aliases": dict(applied.aliases)}
        if op == "schema":
            return {"schema": ctx.store.schema()}
        if op == "begin":  # an action's ctx.run_mutation: its mutation's one transaction
            ctx.store.begin(by_code=True)
            return {"begun": True}
        if op == "end":
            ctx.store.end(keep=asked.get("keep") is True, by_code=True)
            return {"ended": True}
        raise Refused(
            "ctx.store reads (query), writes (apply, batch), describes (schema) and holds "
            "a mutation's transaction (begin, end)"
        )
    except PastureError as refused:
        return {"refused": refusal_message(refused)}
    except Exception:
        logger.exception("%s: a worker's store request failed", ctx.at)
        return {"refused": {"sentence": "the store could not do that — the server's log says why"}}
