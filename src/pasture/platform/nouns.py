"""The platform's nouns and its shared sentences: apps as listed, pages, roles, accesses,
commands as the doors see them.

Every module of the platform speaks these; the doors take the door-facing ones from
`pasture.platform` (`AppInfo`, `Page`, `Access`, `Role`, `CommandInfo`, `Resolved`, …).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from pasture.caller import Caller
    from pasture.commands.model import Command, Suggest
    from pasture.store.vocab import Vocabulary

Access = Literal["private", "public", "open"]
Role = Literal["owner", "editor", "viewer"]
ACCESSES: tuple[Access, ...] = ("private", "public", "open")
ROLES: tuple[Role, ...] = ("owner", "editor", "viewer")
# What each access means, as a sentence says it.
ACCESS_SAID: dict[str, str] = {
    "private": "only the members of its space see it",
    "public": "anyone reads it; its space's owners and editors change it",
    "open": "anyone who can reach it reads and changes it",
}

VIEWER_WRITES = "you can read this app but not change it — its owner can make you an editor"
SIGN_IN = "sign in, or present a token (Authorization: Bearer …), to reach your apps"
# what every OAuth access token begins with (`pasture.platform.auth.oauth`)
OAUTH_ACCESS_PREFIX = "psa_"

READ_ONLY_GRANT = (
    "this token only reads — it was made, or its client approved, to read only; make one that "
    "reads and writes (pasture token new, without --read), or approve the client again with "
    "writing"
)


@dataclass(frozen=True)
class AppInfo:
    """An app as listings show it."""

    space: str
    slug: str
    title: str
    access: Access
    version: int
    url: str  # the app's address, ending in "/"
    commands: list[str] = field(default_factory=list)
    views: list[str] = field(default_factory=list)  # pages a command names
    code: bool = False  # its worker.py runs code (in a worker process of its own)

    @property
    def at(self) -> str:
        return f"{self.space}/{self.slug}"

    def as_data(self) -> dict[str, Any]:
        """The app as every door's JSON carries it."""
        return {
            "at": self.at,
            "space": self.space,
            "slug": self.slug,
            "title": self.title,
            "access": self.access,
            "version": self.version,
            "url": self.url,
            "commands": list(self.commands),
            "views": list(self.views),
            "code": self.code,
        }


@dataclass(frozen=True)
class Page:
    """A file of an app as the web serves it."""

    body: bytes
    media_type: str


@dataclass
class Loaded:
    """An app's current version, ready to run: no file is read on a command call."""

    version: int
    title: str
    access: Access
    commands: list[Command]
    vocabulary: Vocabulary
    # The manifest of worker.py's commands, as its worker process last described them;
    # None for an app without code.
    code: list[dict[str, Any]] | None = None

    def command(self, name: str) -> Command | None:
        for cmd in self.commands:
            if cmd.agent_name == name:
                return cmd
        return None


@dataclass(frozen=True)
class Reached:
    """An app the caller reached, with their role in its space (None for a stranger)."""

    space: str
    slug: str
    role: Role | None

    @property
    def at(self) -> str:
        return f"{self.space}/{self.slug}"


class CommandInfo(Protocol):
    """A command as a door sees it: what it is called, what it takes and says, what it does
    to the world — never how it runs (`pasture.commands.model.Command` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def agent_name(self) -> str: ...

    @property
    def title(self) -> str | None: ...

    @property
    def description(self) -> str: ...

    @property
    def input(self) -> dict[str, Any]: ...

    @property
    def output(self) -> dict[str, Any] | None: ...

    @property
    def read_only(self) -> bool: ...

    @property
    def consequential(self) -> bool: ...

    @property
    def family(self) -> Literal["declared", "code"]: ...

    @property
    def provider(self) -> str | None: ...

    @property
    def handler(self) -> str | None: ...

    @property
    def positional(self) -> tuple[str, ...]: ...

    @property
    def arguments(self) -> list[str]: ...

    @property
    def required(self) -> set[str]: ...

    @property
    def examples(self) -> tuple[str, ...]: ...

    @property
    def see_also(self) -> tuple[str, ...]: ...

    @property
    def suggest(self) -> Suggest | None: ...

    def signature(self) -> str: ...

    def listing(self, at: str, app_title: str) -> dict[str, Any]: ...

    def line(self, at: str, app_title: str, address: str) -> str: ...


@dataclass(frozen=True)
class Resolved:
    """The one command a call named, found once for one caller: what a door shows or asks
    about (`info`, `command`), and what running it takes (`Service.run_command(caller,
    resolved, …)`), so nothing is looked up again between the two."""

    caller: Caller
    info: AppInfo
    reached: Reached = field(repr=False)
    loaded: Loaded = field(repr=False)
    found: Command = field(repr=False)  # the command, as the platform runs it
    via_web: bool = False  # reached as the web reaches apps (a public app of another space)

    @property
    def command(self) -> CommandInfo:
        return self.found

    @property
    def at(self) -> str:
        return self.info.at


def plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def and_(items: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"
