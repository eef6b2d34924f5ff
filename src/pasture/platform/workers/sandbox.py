"""Where an app's code runs: a process of its own, confined, with limits.

An app's `worker.py` is another person's code. It runs in a worker process
that sees only:

- its own version's files, read-only, at `/app` (its working folder);
- a scratch folder, `/tmp` (and `/dev/shm`), empty at the start, bounded
  (`Limits.scratch` megabytes and `SCRATCH_FILES` files, together) and gone
  with the process; nothing else it sees can be written;
- Python and the libraries pasture runs on, read-only;
- an empty environment (`HOME=/tmp`, a `PATH`, a locale);
- no network, unless the server is started with `--worker-network`;

and never the data directory, another app's files or store, the platform's
database, the server's environment or its other processes.

**bubblewrap** (`bwrap`, Debian's package `bubblewrap`, 0.8 or later) does the
confining, without root: new mount, PID, IPC, UTS, user and network namespaces
(and no more user namespaces inside, in which it could mount what it likes), the
process as PID 1 of its own namespace (so whatever it starts dies with it),
and `--die-with-parent`. It is used when it is installed and works here
(checked once per process); `PASTURE_CONFINEMENT=none` turns it off, for
machines where it cannot run.

Without it (`none`), the worker still runs in a process of its own, with an
empty environment, its version's folder as its working folder, a scratch
folder of its own and the same limits — but as the server's user, so it could
read whatever that user can. The guide says so, and `pasture space trust`
says which one is in use.

Limits (`Limits`), per call: wall time, CPU time (read from `/proc` by the
server), and memory (the process's address space, set inside it before any of
the app's code runs and impossible to raise from there). Scratch is bounded
across calls: confined, `/tmp` and `/dev/shm` are each a tmpfs of that size (a
write past it fails inside the worker), unconfined it is a folder of its own;
either way no one file may grow past it (`RLIMIT_FSIZE`, set as memory is), and
the server measures both what is stored and how many files at each look at a
call and after it (`pasture.platform.workers.process`).
"""

from __future__ import annotations

import functools
import os
import shutil
import site
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pasture.long_calls import GRACE

# Each sandbox sees these read-only when they are there (or their link, where they are one).
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Only with the network: what resolving names and checking certificates read.
_NETWORK_ETC = (
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
)
APP = "/app"  # where a worker sees its version's files
SCRATCH = "/tmp"
SHM = "/dev/shm"
# Files and folders a worker process's scratch may hold at once: each costs the kernel
# memory that no size of a filesystem counts.
SCRATCH_FILES = 10_000


def _env_number(name: str, default: float) -> float:
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        return default
    return value if value > 0 else default


@dataclass(frozen=True)
class Limits:
    """What one call of an app's code may use; every server may set its own.

    `time` and `cpu` are seconds per call, `memory` megabytes of the worker
    process's address space, `processes` how many calls of one app's version
    run at once (each in a process of its own; more wait their turn), `scratch`
    megabytes its scratch folder (`/tmp` and `/dev/shm` together) may hold, `grace` the
    seconds a call its caller stopped has to answer before its process is ended, `suggest`
    the seconds Tab completion waits for a code command's suggestions (past it, none).
    """

    time: float = 10.0
    cpu: float = 10.0
    memory: int = 512
    processes: int = 4
    network: bool = False
    setup: float = 60.0  # seconds worker.py may take to import and set up
    scratch: int = 64  # megabytes a worker process may write to its scratch folder
    grace: float = GRACE  # seconds a stopped call has to answer before it is ended
    suggest: float = 2.0  # seconds Tab completion waits for a worker's suggestions

    @classmethod
    def from_env(cls) -> Limits:
        """The defaults, or `$PASTURE_WORKER_TIME`, `_CPU`, `_MEMORY`, `_PROCESSES`, `_SCRATCH`,
        `_GRACE`, `_SUGGEST`, `_NETWORK`."""
        base = cls()
        return cls(
            time=_env_number("PASTURE_WORKER_TIME", base.time),
            cpu=_env_number("PASTURE_WORKER_CPU", base.cpu),
            memory=int(_env_number("PASTURE_WORKER_MEMORY", base.memory)),
            processes=int(_env_number("PASTURE_WORKER_PROCESSES", base.processes)),
            scratch=int(_env_number("PASTURE_WORKER_SCRATCH", base.scratch)),
            grace=_env_number("PASTURE_WORKER_GRACE", base.grace),
            suggest=_env_number("PASTURE_WORKER_SUGGEST", base.suggest),
            network=os.environ.get("PASTURE_WORKER_NETWORK", "") in ("1", "yes", "true"),
        )


def seconds(value: float) -> str:
    """`10 s`, `2.5 s`: a limit as a sentence says it."""
    return f"{value:g} s"


@dataclass(frozen=True)
class Confinement:
    """How worker processes are confined here: `bubblewrap`, or `none`."""

    name: str

    @property
    def confined(self) -> bool:
        return self.name == "bubblewrap"

    def describe(self) -> str:
        """A clause for people: what holds."""
        if self.confined:
            return "confined by bubblewrap to its own files, with no view of the server"
        return (
            "in a process of its own but not confined (bubblewrap is not installed or does "
            "not work here), so it can read what the server's user can — install bubblewrap"
        )

    def command(
        self,
        root: Path,
        program: list[str],
        *,
        network: bool,
        hide: list[Path],
        info_fd: int | None = None,
        scratch: int = Limits.scratch,
    ) -> list[str]:
        """The command line that runs `program` confined to `root` (seen at `/app`), its
        scratch (`/tmp`, `/dev/shm`) `scratch` megabytes each, and nothing else writable."""
        if not self.confined:
            return program
        size = str(max(1, scratch) * 1024 * 1024)
        # The scratch folder first: Python or pasture may live under /tmp too (a fresh
        # checkout often does), and what is bound after it stays visible over it.
        args = ["bwrap", "--size", size, "--tmpfs", SCRATCH]
        for path in _SYSTEM:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        for path in _python_paths():
            args += ["--ro-bind", path, path]
        if network:
            for path in _NETWORK_ETC:
                if os.path.exists(path):
                    args += ["--ro-bind", path, path]
        if os.path.exists("/etc/localtime"):
            args += ["--ro-bind", "/etc/localtime", "/etc/localtime"]
        # Anything of the server's that lies under a folder bound above is covered again.
        covered = [
            str(hidden)
            for hidden in hide
            if any(_under(hidden, Path(bound)) for bound in _python_paths())
        ]
        for hidden in covered:
            args += ["--tmpfs", hidden]
        args += [
            "--ro-bind", str(root), APP,
            "--proc", "/proc",
            "--dev", "/dev",
            "--size", size, "--tmpfs", SHM,
            # Every other place it could write is read-only: the root bubblewrap makes, the
            # folders made on it (/etc), /dev, and what covers the server's own folders.
            *[arg for hidden in covered for arg in ("--remount-ro", hidden)],
            "--remount-ro", "/dev",
            "--remount-ro", "/",
            "--unshare-all",
            # A namespace of its own inside would let it mount a filesystem no limit bounds.
            "--unshare-user", "--disable-userns",
            *(["--share-net"] if network else []),
            "--die-with-parent",
            "--as-pid-1",
            "--new-session",
            "--cap-drop", "ALL",
            "--clearenv",
            *_env_args(worker_env(SCRATCH)),
            "--chdir", APP,
        ]  # fmt: skip
        if info_fd is not None:
            args += ["--info-fd", str(info_fd)]
        return args + program


def worker_env(scratch: str) -> dict[str, str]:
    """All the environment a worker process gets."""
    return {
        "HOME": scratch,
        "TMPDIR": scratch,
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "MALLOC_ARENA_MAX": "2",  # threads' malloc arenas count against the memory limit
    }


def _env_args(env: Mapping[str, str]) -> list[str]:
    args: list[str] = []
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args


def _under(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


@functools.cache
def _python_paths() -> tuple[str, ...]:
    """The folders Python and pasture are read from: the environment, the base install,
    its site-packages, and pasture's own folder (an editable install lives apart)."""
    found: list[str] = []
    candidates = [
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        *site.getsitepackages(),
        str(Path(__file__).resolve().parents[2]),
        str(Path(sys.executable).resolve().parent.parent),
    ]
    # Each as it is named (a virtual environment is found by the way it is named) and
    # as it really is (where its links lead).
    for path in [way for c in candidates for way in (os.path.abspath(c), os.path.realpath(c))]:
        if not os.path.isdir(path) or path in ("/", "/usr") or path.startswith("/usr/"):
            continue
        if path in found:
            continue
        found.append(path)
    return tuple(found)


@functools.cache
def confinement() -> Confinement:
    """bubblewrap when it is installed and can make its namespaces here, else none."""
    wanted = os.environ.get("PASTURE_CONFINEMENT", "").strip().lower()
    if wanted == "none":
        return Confinement("none")
    if shutil.which("bwrap") is None:
        return Confinement("none")
    probe = Confinement("bubblewrap").command(
        Path("/"),
        ["/bin/true"] if os.path.exists("/bin/true") else ["true"],
        network=False,
        hide=[],
    )
    try:
        done = subprocess.run(probe, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return Confinement("none")
    return Confinement("bubblewrap" if done.returncode == 0 else "none")
