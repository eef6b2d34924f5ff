"""A page's subscription read as a browser reads it: `./api/subscribe`'s event stream,
followed in a thread, each event handed over as it arrives."""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import threading
from dataclasses import dataclass
from typing import Any

import httpx

__all__ = ["Event", "Stream"]


@dataclass(frozen=True)
class Event:
    kind: str  # "answer" or "refused"
    id: str | None
    data: Any


class Stream:
    """`GET url` as an event stream, until `close()`; `status` and the refusal's body when
    it was not one."""

    def __init__(self, url: str, params: dict[str, str], headers: dict[str, str] | None = None):
        self.events: queue.Queue[Event | None] = queue.Queue()
        self.opened = threading.Event()
        self.status = 0
        self.refusal: Any = None
        self._stop = threading.Event()
        self._response: httpx.Response | None = None
        self._thread = threading.Thread(
            target=self._follow, args=(url, params, headers or {}), daemon=True
        )
        self._thread.start()
        assert self.opened.wait(30), "the stream did not open"

    def _follow(self, url: str, params: dict[str, str], headers: dict[str, str]) -> None:
        try:
            with (
                httpx.Client(timeout=httpx.Timeout(30, read=None)) as client,
                client.stream("GET", url, params=params, headers=headers) as response,
            ):
                self._response = response
                self.status = response.status_code
                if response.status_code != 200:
                    self.refusal = json.loads(response.read())
                    return
                self.opened.set()
                self._read(response)
        except httpx.HTTPError:
            pass  # closed, by us or the server
        finally:
            self.opened.set()
            self.events.put(None)

    def _read(self, response: httpx.Response) -> None:
        kind, id_, data = "message", None, []
        for line in response.iter_lines():
            if self._stop.is_set():
                return
            if line == "":
                if data:
                    self.events.put(Event(kind, id_, json.loads("\n".join(data))))
                kind, id_, data = "message", None, []
            elif line.startswith(":"):
                continue
            else:
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "event":
                    kind = value
                elif name == "id":
                    id_ = value
                elif name == "data":
                    data.append(value)

    def next(self, timeout: float = 60) -> Event | None:
        """The next event; None when the stream ended. Fails after `timeout` seconds (a
        deadline only, so that a stream that never says it fails)."""
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no event in {timeout} s") from None

    def quiet(self, wait: float = 0.5) -> bool:
        """Whether nothing arrives for `wait` seconds."""
        try:
            self.events.put(self.events.get(timeout=wait))
        except queue.Empty:
            return True
        return False

    def close(self) -> None:
        """Hang up, as a closed tab does: the server sees the connection end at once."""
        self._stop.set()
        if self._response is not None:
            # Closing the response alone leaves the socket to the thread blocked reading it.
            network = self._response.extensions.get("network_stream")
            sock = network.get_extra_info("socket") if network is not None else None
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(Exception):  # the read under way ends with it
                self._response.close()
