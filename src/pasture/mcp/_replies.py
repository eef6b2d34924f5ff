"""`commands` over HTTP, answered again as the SDK answered it, without making it again.

A person's listing changes only with a deploy, a rollback, a member added or
taken out (the platform database's stamp) or a worker describing its commands:
`Service.listing_version`.
Yet for every call the SDK checks the whole answer against the protocol, dumps it
and encodes it — with 200 apps, 300 KB and nearly all of a call's time. So the
HTTP door keeps the SDK's own reply to a `commands` call (status, headers, body) by
who asked, everything the request said but its id, and the listing's version taken
before the listing was made. The same request again, while the version holds, is
answered with those bytes and its own id. Anything else — another header, other
arguments, a progress token, a reply streamed as events, a refusal — goes to the
SDK as ever, and the first call after any change is the SDK's to answer.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from dataclasses import dataclass

import pydantic_core
from starlette.types import Message, Scope, Send

from pasture.caller import Caller

MOST = 64 * 1024 * 1024  # bytes of replies kept at most; past it they start again
ASKED_AT_MOST = 64 * 1024  # bytes of a request body read to see whether it asks for `commands`

_HEAD = b'{"jsonrpc":"2.0","id":'  # how the SDK begins every reply it writes
# The caller is in the key; the length follows; a session's name is a name only (it
# changes nothing of the answer: `pasture.web.mcp_events`).
_LEFT_OUT = (b"authorization", b"content-length", b"mcp-session-id")


@dataclass(frozen=True)
class Asked:
    """One `commands` call: all it said but its id, and its id."""

    key: Hashable
    id: int | str


@dataclass(frozen=True)
class _Reply:
    """A 200 as the SDK sent it: its headers but content-length, its body after the id."""

    headers: tuple[tuple[bytes, bytes], ...]
    tail: bytes


def may_ask(scope: Scope) -> bool:
    """Whether a request may be a `commands` call, by its headers alone: a POST with a small
    body, and the newest protocol's Mcp-Method and Mcp-Name, where sent, saying so."""
    if scope.get("method") != "POST":
        return False
    length = method = name = None
    for key, value in scope.get("headers", []):
        if key == b"content-length":
            length = value
        elif key == b"mcp-method":
            method = value
        elif key == b"mcp-name":
            name = value
    if length is None or not length.isdigit() or int(length) > ASKED_AT_MOST:
        return False
    return method in (None, b"tools/call") and name in (None, b"commands")


def _id_json(request_id: int | str) -> bytes:
    # as the SDK writes it (pydantic's JSON: a text's characters as they are, not escaped)
    return pydantic_core.to_json(request_id)


class Replies:
    """The SDK's replies to `commands` calls, for one listing version at a time."""

    def __init__(self) -> None:
        self._version: object = None
        self._kept: dict[Hashable, _Reply] = {}
        self._size = 0

    @staticmethod
    def asked(scope: Scope, caller: Caller, body: bytes) -> Asked | None:
        """The call a request body makes, when it is a `commands` call; else None."""
        try:
            message = json.loads(body)
        except ValueError:
            return None
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return None
        params = message.get("params")
        request_id = message.get("id")
        if not isinstance(params, dict) or params.get("name") != "commands":
            return None
        if isinstance(request_id, bool) or not isinstance(request_id, int | str):
            return None
        said = {k: v for k, v in message.items() if k != "id"}
        headers = tuple((k, v) for k, v in scope.get("headers", []) if k not in _LEFT_OUT)
        key = (
            caller,
            scope.get("path"),
            scope.get("query_string"),
            headers,
            json.dumps(said, sort_keys=True, separators=(",", ":")),
        )
        return Asked(key, request_id)

    def answer(self, version: object, asked: Asked) -> list[Message] | None:
        """The kept reply to this call, with its own id; None when there is none."""
        reply = self._kept.get(asked.key) if version == self._version else None
        if reply is None:
            return None
        body = b"".join((_HEAD, _id_json(asked.id), reply.tail))
        headers = [*reply.headers, (b"content-length", str(len(body)).encode())]
        return [
            {"type": "http.response.start", "status": 200, "headers": headers},
            {"type": "http.response.body", "body": body},
        ]

    def keeping(self, version: object, asked: Asked, send: Send) -> Send:
        """`send`, keeping the reply it carries when it is one to give again: a whole JSON
        reply, written in one piece, with this call's id and no refusal."""
        sent: list[Message] = []

        async def keep(message: Message) -> None:
            sent.append(message)
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                self._keep(version, asked, sent)

        return keep

    def _keep(self, version: object, asked: Asked, sent: list[Message]) -> None:
        if len(sent) != 2 or sent[0]["type"] != "http.response.start":
            return
        start = sent[0]
        if start.get("status") != 200:
            return
        headers = tuple((bytes(k), bytes(v)) for k, v in start.get("headers", []))
        if (b"content-type", b"application/json") not in headers:
            return
        body = bytes(sent[1].get("body", b""))
        head = _HEAD + _id_json(asked.id)
        # A refusal is not kept: it may be the moment's (a store that failed).
        if not body.startswith(head) or len(body) > MOST or b'"isError":true' in body:
            return
        if version != self._version or self._size + len(body) > MOST:
            self._version, self._kept, self._size = version, {}, 0
        left = tuple((k, v) for k, v in headers if k != b"content-length")
        self._kept[asked.key] = _Reply(left, body[len(head) :])
        self._size += len(body)


__all__ = ["ASKED_AT_MOST", "Asked", "Replies", "may_ask"]
