"""What every Service call answers: a line for people and the data for agents.

It is ground, below every layer: commands return it, the platform passes it on,
and each door renders it (MCP's `content` and `structuredContent`, a table in a
terminal, JSON over HTTP) without knowing where it was made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pasture.content import Part


@dataclass(frozen=True)
class Result:
    """A line for people (`text`) and the data for agents (`data`); `content`, what else it
    carries for a door that can show it (an image, a sound, a resource: `pasture.content`)."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)
    content: tuple[Part, ...] = ()


__all__ = ["Result"]
