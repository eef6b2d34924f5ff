"""Reading what a tool call answers."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types


def text(result: types.CallToolResult) -> str:
    """The one text block an answer carries."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def ok(result: types.CallToolResult) -> tuple[str, dict[str, Any]]:
    """A successful answer's text and structured content."""
    assert not result.is_error, text(result)
    assert isinstance(result.structured_content, dict)
    return text(result), result.structured_content


def said_with(sentence: str, data: dict[str, Any]) -> str:
    """The text an answer of `sentence` and `data` carries: the sentence, then the data as
    compact JSON on the last line."""
    return f"{sentence}\n{json.dumps(data, ensure_ascii=False, separators=(',', ':'))}"


def sentence_and_data(result: types.CallToolResult) -> tuple[str, Any]:
    """A successful answer's text, read as a client that has only the text reads it: the
    sentence, and the data its last line holds as JSON — which is the structured content."""
    said, data = ok(result)
    sentence, _, last = said.rpartition("\n")
    assert json.loads(last) == data, said
    return sentence, json.loads(last)
