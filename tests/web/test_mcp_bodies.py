"""What `/mcp` reads of a request's body before the SDK does — whether it asks for progress,
whether it cancels a call — is what reading the whole body says, however it is written:
with `\\/` for `/`, with letters as `\\u` escapes, with or without non-ASCII text escaped.
Most bodies are told apart without being read (`_may_say`); none is told apart wrongly."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pasture.web.mcp_http import _asks_progress, _cancelled_id

STREAMS = {"type": "http", "headers": [(b"accept", b"application/json, text/event-stream")]}

IDS = st.one_of(st.integers(-(2**40), 2**40), st.text(max_size=8), st.none(), st.booleans())
MESSAGES = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "method": st.sampled_from(
            ["tools/call", "notifications/cancelled", "tools/list", "notifications/progress"]
        )
        | st.text(max_size=12),
    },
    optional={
        "id": IDS,
        "params": st.fixed_dictionaries(
            {},
            optional={
                "requestId": IDS,
                "name": st.text(max_size=8),
                "_meta": st.fixed_dictionaries({}, optional={"progressToken": IDS}),
            },
        ),
    },
)


def _written(message: dict[str, Any], ascii_only: bool, slashes: bool, escaped: str) -> bytes:
    text = json.dumps(message, ensure_ascii=ascii_only)
    for word in ("progressToken", "notifications/cancelled"):  # its letters as \u escapes
        written = "".join(f"\\u{ord(c):04x}" if c in escaped else c for c in word)
        text = text.replace(f'"{word}"', f'"{written}"')
    if slashes:  # "/" is only ever in a string: as \/ there
        text = text.replace("/", "\\/")
    return text.encode()


def _read_asks_progress(message: dict[str, Any]) -> bool:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return (
        message.get("method") == "tools/call"
        and isinstance(meta, dict)
        and meta.get("progressToken") is not None
    )


def _read_cancelled(message: dict[str, Any]) -> Any:
    params = message.get("params")
    if message.get("method") != "notifications/cancelled" or not isinstance(params, dict):
        return None
    request_id = params.get("requestId")
    return request_id if isinstance(request_id, str | int) else None


@given(
    message=MESSAGES,
    ascii_only=st.booleans(),
    slashes=st.booleans(),
    escaped=st.sampled_from(["", "c", "e", "p", "gT", "l"]),
)
def test_a_body_is_told_apart_as_reading_it_tells(
    message: dict[str, Any], ascii_only: bool, slashes: bool, escaped: str
) -> None:
    body = _written(message, ascii_only, slashes, escaped)
    assert json.loads(body) == message  # the same message, however written
    assert _asks_progress(body, STREAMS) == _read_asks_progress(message)
    assert _cancelled_id(body) == _read_cancelled(message)
