"""Messages between the server and a worker process: JSON objects over a socket.

Each message is a 4-byte big-endian length and that many bytes of UTF-8 JSON,
an object. Both ends use a `Channel`; the server's end reads with a deadline,
so a worker that stops talking never holds a request for longer than its limit.

Every message of a call carries the call's id (`"call"`), both ways: the server
takes a reply only from the call it sent, and ends a worker that answers for
another or speaks when no call is open.

What the worker sends is untrusted: a message that is not an object, is not
JSON (read strictly, see `pasture.jsontext`: no NaN, no lone surrogate, at most
64 levels deep), or is more than the server reads (`MAX_FROM_WORKER` bytes,
`MAX_CONTAINERS` objects and lists) ends the conversation (`WireError`).
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import time
from typing import Any

from pasture import jsontext
from pasture.errors import (
    Conflict,
    Forbidden,
    NotFound,
    PastureError,
    Refused,
    Unauthorized,
    UsageError,
)

MAX_SENTENCE = 4000  # a refusal is a sentence, not a document
MAX_MESSAGE = 64 * 1024 * 1024  # what the server sends a worker: a query's rows, at most
# What the server reads from a worker, whose code is another person's: parsed, 16 MB of
# `{},` would be five million dicts, gigabytes. Bytes and objects-and-lists both bound
# what one message can cost (a brace inside text counts too: the bound only errs low).
MAX_FROM_WORKER = 16 * 1024 * 1024
MAX_CONTAINERS = 250_000
_HEADER = 4


class WireError(Exception):
    """The other end broke the protocol (or went away mid-message)."""


class TooLarge(WireError):
    """A message past what its reader takes; says what it was over, in words."""


class Closed(WireError):
    """The other end closed the channel."""


def _size(count: int) -> str:
    megabytes, rest = divmod(count, 1024 * 1024)
    return f"{megabytes} MB" if megabytes and not rest else f"{count:,} bytes"


class Channel:
    """One end of a worker's socket."""

    def __init__(
        self,
        sock: socket.socket,
        *,
        most_bytes: int = MAX_MESSAGE,
        most_containers: int | None = None,
    ) -> None:
        """`most_bytes` and `most_containers` (objects and lists) bound each message read."""
        self.sock = sock
        self.most_bytes = most_bytes
        self.most_containers = most_containers
        self._buffer = bytearray()

    def send(self, message: dict[str, Any]) -> None:
        """Send one object; ValueError (from `json`) when it is not JSON, NaN included."""
        body = json.dumps(message, ensure_ascii=False, allow_nan=False).encode()
        if len(body) > MAX_MESSAGE:
            raise ValueError(f"a message of {len(body)} bytes is over {MAX_MESSAGE}")
        self.sock.sendall(len(body).to_bytes(_HEADER, "big") + body)

    def receive(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next object, or None when `timeout` seconds pass first (None: wait for ever).

        Closed when the other end has gone; WireError when what came is not a message.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            message = self._take()
            if message is not None:
                return message
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            poller = select.poll()  # not select(): a busy server's descriptors pass 1024
            poller.register(self.sock, select.POLLIN)
            if not poller.poll(None if left is None else max(0, int(left * 1000) + 1)):
                return None
            try:
                chunk = self.sock.recv(1 << 20)
            except (ConnectionError, OSError) as e:
                raise Closed(str(e)) from None
            if not chunk:
                raise Closed("the other end closed the channel")
            self._buffer += chunk

    def pending(self) -> bool:
        """Whether anything has come that nobody has read yet (or the other end has closed)."""
        if self._buffer:
            return True
        poller = select.poll()
        poller.register(self.sock, select.POLLIN)
        return bool(poller.poll(0))

    def _take(self) -> dict[str, Any] | None:
        if len(self._buffer) < _HEADER:
            return None
        size = int.from_bytes(self._buffer[:_HEADER], "big")
        if size > self.most_bytes:  # known from the header: nothing more is read
            raise TooLarge(f"more than {_size(self.most_bytes)} in one message")
        if len(self._buffer) < _HEADER + size:
            return None
        body = bytes(self._buffer[_HEADER : _HEADER + size])
        del self._buffer[: _HEADER + size]
        if self.most_containers is not None:
            containers = body.count(b"{") + body.count(b"[")
            if containers > self.most_containers:
                raise TooLarge(
                    f"more than {self.most_containers:,} objects and lists in one message"
                )
        try:
            # strictly: no NaN, no half characters, nothing nested past what a door sends on
            message = jsontext.loads(body, "a message", "an object")
        except Refused as e:
            raise WireError(e.sentence) from None
        if not isinstance(message, dict):
            raise WireError("a message that is not an object")
        return message

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


# -- refusals, as a message carries them -------------------------------------------------------
def refusal_message(refused: PastureError) -> dict[str, str]:
    """`{"sentence": …, "kind": "NotFound"}`: a refusal (or a fault) sent across."""
    return {"sentence": refused.sentence, "kind": type(refused).__name__}


def refusal_of(message: Any) -> PastureError:
    """The refusal (or fault) a message carries, of a kind pasture knows (else a plain
    `Refused`)."""
    from pasture.commands.registry import CommandFailed

    kinds: dict[str, type[PastureError]] = {
        "UsageError": UsageError,
        "Unauthorized": Unauthorized,
        "Forbidden": Forbidden,
        "NotFound": NotFound,
        "Conflict": Conflict,
        "CommandFailed": CommandFailed,
    }
    if not isinstance(message, dict) or not isinstance(message.get("sentence"), str):
        raise WireError("a refusal without a sentence")
    kind = kinds.get(str(message.get("kind")), Refused)
    return kind(message["sentence"][:MAX_SENTENCE])
