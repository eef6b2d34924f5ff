"""The one façade every door calls: `Service`, with a `Caller` on every call.

A door (command line, web, MCP) turns its input into a call here and renders
the `Result` in its own form. Access is decided here and nowhere else, and a
refusal is a `Refused` whose sentence is the same through every door.

SKELETON: the signatures below are the contract the doors are written against;
the platform fills in the bodies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pasture.caller import Caller
from pasture.commands.model import Result

Access = Literal["private", "public", "open"]
Role = Literal["owner", "editor", "viewer"]


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

    @property
    def at(self) -> str:
        return f"{self.space}/{self.slug}"


@dataclass(frozen=True)
class Page:
    """A file of an app as the web serves it."""

    body: bytes
    media_type: str


class Service:
    """Everything pasture does, as one person or nobody."""

    def __init__(
        self,
        home: str | Path,
        *,
        database_url: str | None = None,
        base_url: str = "http://127.0.0.1:8000",
    ) -> None:
        raise NotImplementedError

    # -- who is asking ------------------------------------------------------
    def local_owner(self) -> Caller:
        """The machine's owner (created with a personal space on first use)."""
        raise NotImplementedError

    def caller_for_token(self, token: str | None) -> Caller:
        """The person a bearer token belongs to; nobody for None; Refused for a bad token."""
        raise NotImplementedError

    def caller_for_session(self, session: str | None) -> Caller:
        """The person a session cookie belongs to, or nobody."""
        raise NotImplementedError

    def sign_in(self, name: str, password: str) -> str:
        """A new session id for the web's cookie; Refused on a wrong name or password."""
        raise NotImplementedError

    def new_token(self, caller: Caller, label: str = "agent") -> str:
        """A new bearer token for the caller (stored hashed, shown once)."""
        raise NotImplementedError

    # -- people and spaces --------------------------------------------------
    def new_user(self, caller: Caller, name: str, password: str | None = None) -> Caller:
        """A new person (with a personal space of the same name); only the owner adds people."""
        raise NotImplementedError

    def new_space(self, caller: Caller, name: str) -> Result:
        raise NotImplementedError

    def add_member(self, caller: Caller, space: str, user: str, role: Role) -> Result:
        raise NotImplementedError

    # -- apps ---------------------------------------------------------------
    def deploy(
        self,
        caller: Caller,
        files: Path | Mapping[str, bytes | str],
        *,
        space: str | None = None,
        app: str | None = None,
        access: Access | None = None,
        title: str | None = None,
    ) -> Result:
        """Check the whole app, then install it as a new version; DeployRefused lists every problem.

        Result text: `deployed ada/runs v3: http://…/ada/runs/\\ncommands: log_run, …`.
        """
        raise NotImplementedError

    def list_apps(self, caller: Caller) -> list[AppInfo]:
        """Every app in every space the caller belongs to."""
        raise NotImplementedError

    def app_info(self, caller: Caller, app: str) -> AppInfo:
        """One app the caller can reach by command (`slug` or `space/slug`)."""
        raise NotImplementedError

    def files(self, caller: Caller, app: str, path: str | None = None) -> Result:
        """An app's source read back: the list of files, or one file's text."""
        raise NotImplementedError

    def rollback(self, caller: Caller, app: str, version: int) -> Result:
        raise NotImplementedError

    # -- commands -----------------------------------------------------------
    def list_commands(self, caller: Caller, app: str | None = None) -> Result:
        """The spec's listing grouped by app; data `{commands: [{at, name, title, …}]}`."""
        raise NotImplementedError

    def run_command(
        self,
        caller: Caller,
        name: str,
        args: Mapping[str, Any],
        app: str | None = None,
        *,
        via_web: bool = False,
    ) -> Result:
        """Run a command as the caller; the refusals are the spec's sentences."""
        raise NotImplementedError

    def status(self, caller: Caller) -> Result:
        """Every reachable app's state, one line each."""
        raise NotImplementedError

    # -- the graph ----------------------------------------------------------
    # `via_web=True`: `app` is `space/slug` from a page's address, and a public or
    # open app of a space the caller is not in is reachable (as on the web).
    def apply(self, caller: Caller, app: str, bundles: Any, *, via_web: bool = False) -> Result:
        """Write bundles under the app's access; data `{entities, aliases}`."""
        raise NotImplementedError

    def query(self, caller: Caller, app: str, filter: str, *, via_web: bool = False) -> Result:
        """Read under the app's access; data `{rows}`."""
        raise NotImplementedError

    def schema(self, caller: Caller, app: str, *, via_web: bool = False) -> Result:
        """Every component of the app with its columns and types."""
        raise NotImplementedError

    # -- the web ------------------------------------------------------------
    def web_app(self, caller: Caller, space: str, slug: str) -> AppInfo:
        """An app as the web reaches it: by its space, also public/open apps of other spaces.

        NotFound for a private app the caller is not a member of (hidden, not forbidden).
        """
        raise NotImplementedError

    def page(self, caller: Caller, space: str, slug: str, path: str) -> Page:
        """A file of the app for the web; source files (tools.json, vocab.json, …) are NotFound."""
        raise NotImplementedError

    def view(self, caller: Caller, uri: str) -> Page:
        """A page a command names, by `ui://space/app/file`, for the MCP connector."""
        raise NotImplementedError

    def views(self, caller: Caller) -> list[tuple[str, AppInfo]]:
        """Every `ui://…` view the caller can read, with its app."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


__all__ = ["Access", "AppInfo", "Page", "Role", "Service"]
