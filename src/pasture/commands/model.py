"""The command model every kind of command shares, declared or written as code.

A `Command` is a name, a sentence, an input schema, whether it only reads, and
a `run` that takes checked arguments and a `Context` and returns a `Result`.
Doors list commands with `listing()` and never look inside `run`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pasture.caller import Caller
from pasture.client_asks import NOBODY_ASKS, Asking, ClientAsks
from pasture.long_calls import LongCall, progress_of
from pasture.names import agent_name
from pasture.result import Result

if TYPE_CHECKING:
    from pasture.commands.appstore import AppStore


@dataclass(frozen=True)
class Context(Asking):
    """What a running command may use: who called, the app's store as them, the app's name.

    `store` reads and writes the app as `caller` and nobody else
    (`pasture.commands.appstore`); `secrets` are the app's own
    (`pasture secret set APP NAME`), given to code commands only. `long_call` is
    the call as its door watches it (`pasture.long_calls`): `progress()` reports to
    it, and `cancelled` says whether its caller asked it to stop. `client` is the
    caller's client where a door can ask it (`ask`, `sample`, `roots`, `log`:
    `pasture.client_asks`).
    """

    caller: Caller
    store: AppStore
    at: str  # the app as `space/app`, e.g. "ada/runs"
    # The arguments are text a person typed (the command line, the console):
    # code commands convert it to their declared types; typed values never are.
    typed_text: bool = False
    secrets: Mapping[str, str] = field(default_factory=dict)
    long_call: LongCall = field(default_factory=LongCall)
    client: ClientAsks = NOBODY_ASKS  # the caller's client, where a door can ask it

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Say how far the call has come: `done` of `total` (None: not known), and a line
        for people. The door shows it (MCP's `notifications/progress`, a bar at a
        terminal) where it can, a few times a second at most."""
        self.long_call.report(progress_of(done, total, message))

    @property
    def cancelled(self) -> bool:
        """Whether the caller asked the call to stop (an agent's cancel, a request gone,
        Ctrl-C): code that takes a while looks now and then, and stops — whatever a
        mutation wrote is not kept, and code that goes on is ended after a grace period."""
        return self.long_call.cancelled


Family = Literal["declared", "code"]
Run = Callable[[Mapping[str, Any], Context], Result]
# `suggest(argument, partial)` → values for Tab completion: [{"value", "description"?}].
Suggest = Callable[[str, str], list[dict[str, str]]]


@dataclass(frozen=True)
class Command:
    """One command of one app."""

    name: str
    description: str
    input: dict[str, Any]  # JSON Schema of an object
    read_only: bool
    run: Run
    family: Family = "declared"
    view: str | None = None
    positional: tuple[str, ...] = ()
    action: dict[str, Any] | None = None  # the declared template, {"apply": …} or {"query": …}
    # Code commands (pasture.commands.registry) say more about themselves:
    provider: str | None = None  # who owns it: the first word, or the app for declared ones
    consequential: bool = False  # hard to undo: the person is asked first
    title: str | None = None  # a short name for people, in prompts and tool lists
    output: dict[str, Any] | None = None  # JSON Schema of the data it returns
    examples: tuple[str, ...] = ()
    see_also: tuple[str, ...] = ()
    suggest: Suggest | None = None  # values for Tab completion
    handler: str | None = None  # a worker.py handler tagged as a tool: query, mutation, action

    @property
    def arguments(self) -> list[str]:
        """Argument names in declared order."""
        return list(self.input.get("properties", {}))

    @property
    def required(self) -> set[str]:
        return set(self.input.get("required", []))

    def signature(self) -> str:
        """`log_run(who, miles)`, with `?` on an optional argument."""
        required = self.required
        parts = [a if a in required else f"{a}?" for a in self.arguments]
        return f"{self.agent_name}({', '.join(parts)})"

    @property
    def agent_name(self) -> str:
        """The name agents see: words joined by `_` (`cart add` → `cart_add`)."""
        return agent_name(self.name)

    def view_uri(self, at: str) -> str | None:
        """The page the answer is drawn in, as the MCP resource it is: `ui://space/app/file`."""
        return f"ui://{at}/{self.view}" if self.view else None

    def line(self, at: str, app_title: str, address: str) -> str:
        """The command's line in the `commands` text: its signature, its own title and
        sentence, the app it belongs to, and the view it is drawn in."""
        said = f"{self.title}: {self.description}" if self.title else self.description
        view = self.view_uri(at)
        drawn = f" — view {view}" if view else ""
        return f"{self.signature()} — {said} — {app_title}, an app at {address}{drawn}"

    def listing(self, at: str, app_title: str) -> dict[str, Any]:
        """The entry `commands` carries: `{at, name, title, description, readOnly, input, view?}`.

        `title` is the app's title, because a slug is not what the person called it; a
        command's own short name for people, where it has one, is `commandTitle`. `view`
        is the page's MCP resource, `ui://space/app/file`.
        """
        entry: dict[str, Any] = {
            "at": at,
            "name": self.agent_name,
            "title": app_title,
            "description": self.description,
            "readOnly": self.read_only,
            "input": self.input,
        }
        view = self.view_uri(at)
        if view:
            entry["view"] = view
        # Only what a command says beyond the declared ones, so their entries stay as they were.
        if self.title:
            entry["commandTitle"] = self.title
        if self.consequential:
            entry["consequential"] = True
        if self.output is not None:
            entry["output"] = self.output
        if self.examples:
            entry["examples"] = list(self.examples)
        if self.see_also:
            entry["seeAlso"] = list(self.see_also)
        return entry
