"""What an answer may carry besides its text: an image, a sound, a resource's contents.

Ground, like `Result`: a command written as code (or a prompt of a registry served on
its own) returns these, and a door renders them its own way — over MCP as the
`image`, `audio` and `resource` parts of a tool's `content` or a prompt's messages.
A part is one of them, or plain text (`str`).

    return {"text": "The chart:", "content": [Image(png, "image/png")]}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pasture.errors import UsageError


@dataclass(frozen=True)
class Image:
    """An image, its bytes and their type."""

    data: bytes
    mime_type: str = "image/png"


@dataclass(frozen=True)
class Audio:
    """A sound, its bytes and their type."""

    data: bytes
    mime_type: str = "audio/wav"


@dataclass(frozen=True)
class Embedded:
    """A resource's contents carried in the answer itself: its text, or its bytes."""

    uri: str
    text: str | None = None
    blob: bytes | None = None
    mime_type: str = "text/plain"

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise UsageError(f"an embedded resource ({self.uri}) carries text or a blob: one")


Part = str | Image | Audio | Embedded
PARTS = (str, Image, Audio, Embedded)


@dataclass(frozen=True)
class Message:
    """One message of a prompt: a part, said by the person (`user`) or the model."""

    content: Part
    role: Literal["user", "assistant"] = "user"


def parts_of(value: object, what: str) -> tuple[Part, ...]:
    """`value` as parts (one part, or a list of them); UsageError naming `what` otherwise."""
    items = value if isinstance(value, list | tuple) else [value]
    if not all(isinstance(item, PARTS) for item in items):
        raise UsageError(f"{what} is text, an Image, an Audio or an Embedded, or a list of them")
    return tuple(items)


__all__ = ["PARTS", "Audio", "Embedded", "Image", "Message", "Part", "parts_of"]
