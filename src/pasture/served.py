"""What a door needs of a registry it serves on its own: the shape, not the class.

A `Registry` (pasture.commands.registry) may be served with no platform, each
command its own MCP tool (DESIGN §6). That server is a door (pasture.mcp), and a
door never imports `pasture.commands`: it works against these structural types,
which `commands.registry.Registry` and `commands.model.Command` satisfy as they are (and
`commands.resources`' `Resource` and `Prompt`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from pasture.client_asks import ClientAsks
from pasture.content import Message
from pasture.long_calls import LongCall
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


class ServedResource(Protocol):
    """A resource, or a template of them (`{name}` parts in its uri), as the door lists it."""

    @property
    def uri(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def title(self) -> str | None: ...

    @property
    def description(self) -> str: ...

    @property
    def mime_type(self) -> str: ...

    @property
    def is_template(self) -> bool: ...

    @property
    def parts(self) -> list[str]: ...

    @property
    def suggest(self) -> Callable[[str, str], Sequence[str]] | None: ...


class ServedPrompt(Protocol):
    """A prompt: its arguments (name → what it is), and its messages for some arguments."""

    @property
    def name(self) -> str: ...

    @property
    def title(self) -> str | None: ...

    @property
    def description(self) -> str: ...

    @property
    def arguments(self) -> dict[str, str]: ...

    @property
    def optional(self) -> frozenset[str]: ...

    @property
    def suggest(self) -> Callable[[str, str], Sequence[str]] | None: ...

    def get(self, args: Mapping[str, Any], client: ClientAsks | None = None) -> list[Message]: ...


class ServedRegistry(Protocol):
    """Commands listed, called by name as a `Result` (watched by a `LongCall`), changes told
    to whoever listens; its resources read and its prompts got."""

    def commands(self) -> Sequence[ServedCommand]: ...

    def status_commands(self) -> Sequence[ServedCommand]: ...

    def get(self, name: str) -> ServedCommand | None: ...

    def run(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        long_call: LongCall | None = None,
        client: ClientAsks | None = None,
    ) -> Result: ...

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]: ...

    def resources(self) -> Sequence[ServedResource]: ...

    def read(self, uri: str) -> tuple[ServedResource, str | bytes]: ...

    def prompts(self) -> Sequence[ServedPrompt]: ...

    def get_prompt(self, name: str) -> ServedPrompt | None: ...


__all__ = ["ServedCommand", "ServedPrompt", "ServedRegistry", "ServedResource"]
