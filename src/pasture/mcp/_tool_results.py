"""A `Result` as a tool's answer, the same for every server this door builds.

Text goes out as `content`, data as `structuredContent`; a `PastureError` (a
refusal, or a fault) becomes an `isError` answer carrying its sentence and
nothing else, here and nowhere else;
anything unexpected becomes a plain sentence, its traceback kept in the log. The
platform's connector (`_server`) and a registry served on its own (`_registry`)
both answer this way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import mcp_types as types

from pasture.errors import PastureError
from pasture.request_ids import fault_id
from pasture.result import Result

logger = logging.getLogger("pasture.mcp")

# A tool's answer goes back as the dict the SDK would have dumped from a
# CallToolResult: the SDK checks that dict against the protocol's own model
# before it is sent, and dumping a large structuredContent once more before
# that check cost as much as the rest of a `commands` call.
Wire = dict[str, Any]


def _dumped(is_error: bool) -> Wire:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="")], is_error=is_error
    ).model_dump(by_alias=True, mode="json", exclude_none=True)


# The SDK's own dump of an answer with empty text, once: each answer is a copy with its text.
_ANSWER, _REFUSAL = _dumped(False), _dumped(True)


def success(result: Result) -> Wire:
    text = {**_ANSWER["content"][0], "text": result.text}
    return {**_ANSWER, "content": [text], "structuredContent": result.data}


def refusal(sentence: str) -> Wire:
    text = {**_REFUSAL["content"][0], "text": sentence}
    return {**_REFUSAL, "content": [text]}


def answer(tool: str, run: Callable[[], Result]) -> Wire:
    """Run one call: its Result, its refusal's sentence, or a plain sentence for a bug."""
    try:
        return success(run())
    except PastureError as refused:
        return refusal(refused.sentence)
    except Exception:
        logger.exception("tool %s failed (fault %s)", tool, fault_id())
        return failed(tool)


def failed(tool: str) -> Wire:
    """The answer of a call that failed on the server (its traceback logged by the caller),
    naming the fault's id, which the server's log has too."""
    return refusal(
        f"{tool} failed on the server; nothing about it is your mistake — try again, "
        f"and if it keeps failing tell the person who runs this pasture, naming fault {fault_id()}"
    )


__all__ = ["Wire", "answer", "failed", "refusal", "success"]
