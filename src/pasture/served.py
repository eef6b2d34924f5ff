"""What a door needs of a registry it serves on its own: the shape, not the class.

A `Registry` (pasture.commands.registry) may be served with no platform, each
command its own MCP tool (DESIGN §6). That server is a door (pasture.mcp), and a
door never imports `pasture.commands`: it works against these structural types,
which `commands.registry.Registry` and `commands.model.Command` satisfy as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from pasture.result import Result


class ServedCommand(Protocol):
    """A command as a tool: its agent name, what it says, its input, what it does to the world."""

    @property
    def agent_name(self) -> str: ...

    @property
    def title(self) -> str | None: ...

    @property
    def description(self) -> str: ...

    @property
    def input(self) -> dict[str, Any]: ...

    @property
    def read_only(self) -> bool: ...

    @property
    def consequential(self) -> bool: ...


class ServedRegistry(Protocol):
    """Commands listed, called by name as a `Result`, and changes told to whoever listens."""

    def commands(self) -> Sequence[ServedCommand]: ...

    def status_commands(self) -> Sequence[ServedCommand]: ...

    def get(self, name: str) -> ServedCommand | None: ...

    def run(self, name: str, args: Mapping[str, Any] | None = None) -> Result: ...

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]: ...


__all__ = ["ServedCommand", "ServedRegistry"]
