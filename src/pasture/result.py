"""What every Service call answers: a line for people and the data for agents.

It is ground, below every layer: commands return it, the platform passes it on,
and each door renders it (MCP's `content` and `structuredContent`, a table in a
terminal, JSON over HTTP) without knowing where it was made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Result:
    """A line for people (`text`) and the data for agents (`data`)."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)


__all__ = ["Result"]
