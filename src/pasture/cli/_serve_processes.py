"""`pasture serve --workers N`: N processes on one machine behind one port, sharing the
data directory or the PostgreSQL database.

The first process binds the socket (SO_REUSEADDR) and starts N copies of this module
(`python -m pasture.cli._serve_processes FD`), each handed the listening socket and the serve
verb's options (on its stdin, not its command line: a database URL may carry a
password). Each opens a Service of its own and serves the socket with uvicorn; the
kernel hands each connection to one of them. The first process only waits: a SIGINT or
SIGTERM it gets is passed on to every worker once (they run in a process group of their
own, so a terminal's Ctrl-C reaches them once, through it, and each finishes gracefully),
none is started again, and it ends when they all have — with 1 if one of them failed.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import subprocess
import sys
from types import FrameType

__all__ = ["serve_in_workers"]

_STOPPING = (signal.SIGINT, signal.SIGTERM)


def serve_in_workers(args: argparse.Namespace, count: int) -> int:
    """Serve with `count` worker processes until they end; the exit code."""
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    listening = socket.create_server((args.host, args.port), family=family)  # SO_REUSEADDR
    options = json.dumps({k: v for k, v in vars(args).items() if k != "run"})
    sent: list[int] = []
    workers: list[subprocess.Popen[bytes]] = []

    def pass_on(sig: int, _: FrameType | None) -> None:
        sent.append(sig)
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(sig)

    before = {sig: signal.signal(sig, pass_on) for sig in _STOPPING}
    try:
        fd = listening.fileno()
        for _ in range(count):
            worker = subprocess.Popen(
                [sys.executable, "-m", "pasture.cli._serve_processes", str(fd)],
                stdin=subprocess.PIPE,
                pass_fds=[fd],
                process_group=0,
            )
            workers.append(worker)
            assert worker.stdin is not None
            worker.stdin.write(options.encode())
            worker.stdin.close()
            if sent:  # stopped while starting them
                worker.send_signal(sent[0])
        listening.close()  # the workers hold it now
        failed = [w for w in workers if not _ended_well(w.wait(), sent)]
    except BaseException:  # a worker that would not start, say: none is left behind
        for worker in workers:
            if worker.poll() is None:
                worker.terminate()
                worker.wait()
        raise
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    for worker in failed:
        print(
            f"pasture: worker process {worker.pid} ended with exit code {worker.returncode}",
            file=sys.stderr,
        )
    return 1 if failed else 0


def _ended_well(code: int, sent: list[int]) -> bool:
    """Ended with 0, or as a signal passed on to it asked: uvicorn ends its process with
    that signal, and a SIGINT is then a KeyboardInterrupt (exit code 130)."""
    if code == 0:
        return True
    return any(code == -sig or (sig == signal.SIGINT and code == 130) for sig in sent)


def _serve_here(args: argparse.Namespace) -> int:
    """One worker: a Service of its own, serving the socket it was handed."""
    from pasture.cli._opening import open_service, server_log, web_server

    server_log(args.log_format)
    listening = socket.socket(fileno=args.socket)
    service = open_service(args, args.public_url or f"http://{args.host}:{args.port}")
    server = web_server(service, args)  # as one process serves: pages' streams ended first
    server.run(sockets=[listening])
    return 0 if server.started else 3  # 3: uvicorn's own code for a failed start-up


def main() -> int:
    from pasture.cli._opening import run

    args = argparse.Namespace(**json.loads(sys.stdin.read()))
    args.socket = int(sys.argv[1])
    args.run = _serve_here
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
