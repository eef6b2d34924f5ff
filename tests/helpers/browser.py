"""Debian's Chromium, driven by Playwright, against a server on loopback.

A test that opens the browser is marked `in_chromium`: without Chromium or Playwright it
is skipped, or failed under CI (the rule of helpers.needs); `needs.playwright()` then
hands it Playwright's synchronous API.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from helpers import needs
from helpers.needs import CHROMIUM
from pasture.web.serving import Server

__all__ = [
    "CHROMIUM",
    "LAUNCH_ARGS",
    "board_drawn",
    "chromium",
    "in_chromium",
    "loopback",
    "serving",
]

LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

in_chromium = pytest.mark.usefixtures("needs_chromium")


@contextmanager
def chromium(*, webmcp: bool = False) -> Iterator[Any]:
    """Debian's Chromium, headless, until the block ends; with `webmcp`, its WebMCP on."""
    sync_api = needs.playwright()
    args = [*LAUNCH_ARGS, "--enable-features=WebMCP"] if webmcp else LAUNCH_ARGS
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=args)
        try:
            yield browser
        finally:
            browser.close()


def board_drawn(page: Any) -> None:
    """Until the run club's page has drawn its board from its subscription's first answer.

    The page keeps that subscription open, so the network is never idle: this is the
    moment its scripts have run and asked what they ask at first."""
    page.wait_for_selector('#board[aria-busy="false"]', state="attached")


def loopback() -> tuple[socket.socket, str]:
    """A socket bound to a free loopback port, and its address, for `serving`."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock, f"http://127.0.0.1:{sock.getsockname()[1]}"


@contextmanager
def serving(app: Any, sock: socket.socket, **config: Any) -> Iterator[None]:
    """uvicorn serving `app` on `sock` in a thread of this process, until the block ends
    (then the socket is closed)."""
    server = Server(app, **config)  # as `pasture serve` serves it
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(600):
            if server.started or not thread.is_alive():
                break
            threading.Event().wait(0.05)
        assert server.started, "the server did not start"
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
