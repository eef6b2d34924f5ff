"""The messages between the server and a worker process: whatever bytes arrive on the
channel are messages or its end, and nothing larger than the limit is read."""

from __future__ import annotations

import json
import socket
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pasture.platform.workers.protocol import MAX_MESSAGE, Channel, Closed, TooLarge, WireError


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=64), max_size=6))
def test_any_bytes_on_the_channel_are_messages_or_the_end(chunks: list[bytes]) -> None:
    ours, theirs = socket.socketpair()
    try:
        sender = threading.Thread(target=lambda: [theirs.sendall(c) for c in chunks])
        sender.start()
        sender.join()
        theirs.close()
        channel = Channel(ours)
        while True:
            try:
                message = channel.receive(timeout=1)
            except (Closed, WireError):
                break
            assert message is None or isinstance(message, dict)
            if message is None:
                break
    finally:
        ours.close()


def test_a_message_over_the_size_limit_ends_the_conversation() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall((MAX_MESSAGE + 1).to_bytes(4, "big") + b"{}")
        with pytest.raises(WireError):
            Channel(ours).receive(timeout=1)
        theirs.sendall(b"")
    ours2, theirs2 = socket.socketpair()
    with ours2, theirs2:
        body = json.dumps([1, 2]).encode()
        theirs2.sendall(len(body).to_bytes(4, "big") + body)
        with pytest.raises(WireError, match="not an object"):
            Channel(ours2).receive(timeout=1)


def test_a_reader_bounds_the_objects_and_lists_in_a_message() -> None:
    """What the server reads from a worker: 16 MB at most, said by the header before the
    body is read, and at most so many objects and lists, counted before it is parsed."""
    cases = [
        ({"x": [{} for _ in range(11)]}, "more than 10 objects and lists in one message"),
        ({"x": [[1]] * 5, "text": "{[{["}, "more than 10 objects and lists in one message"),
        ({"x": [{} for _ in range(8)]}, None),
    ]
    for message, refusal in cases:
        ours, theirs = socket.socketpair()
        with ours, theirs:
            body = json.dumps(message).encode()
            theirs.sendall(len(body).to_bytes(4, "big") + body)
            channel = Channel(ours, most_bytes=1024, most_containers=10)
            if refusal is None:
                assert channel.receive(timeout=1) == message
            else:
                with pytest.raises(TooLarge, match=refusal):
                    channel.receive(timeout=1)
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall((1025).to_bytes(4, "big"))  # no body: the header is enough
        with pytest.raises(TooLarge, match="more than 1,024 bytes in one message"):
            Channel(ours, most_bytes=1024).receive(timeout=1)
