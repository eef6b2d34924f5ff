"""Reading what a tool call answers."""

from __future__ import annotations

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
