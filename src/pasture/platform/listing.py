"""Commands across a caller's apps: the listing, finding the one a name means, each app's status.

The refusals are the spec's sentences: the ambiguous name (`log_run is a
command of club/runs and yourname/runs — say which app`) and the unknown one
(`no command add_run — your apps offer …`). What `resolve` finds (`Resolved`) is what
`pasture.platform.running` runs, so a call looks its command up once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pasture.caller import Caller
from pasture.commands.model import Command
from pasture.commands.registry import run_status
from pasture.errors import NotFound, Refused, Unauthorized, UsageError, echo
from pasture.names import agent_name
from pasture.platform.access.gate import Gate
from pasture.platform.catalog import Catalog
from pasture.platform.nouns import (
    SIGN_IN,
    AppInfo,
    CommandInfo,
    Loaded,
    Reached,
    Resolved,
    and_,
    plural,
)
from pasture.platform.running import Running
from pasture.result import Result

if TYPE_CHECKING:
    from pasture.platform.access.audit import Call


def arguments_of(entry: Mapping[str, Any]) -> list[str]:
    """A listed command's arguments as its signature shows them: `sku`, `qty?`."""
    schema = entry.get("input")
    if not isinstance(schema, Mapping):
        return []
    props = schema.get("properties")
    wanted = schema.get("required")
    required = wanted if isinstance(wanted, list) else []
    return [a if a in required else f"{a}?" for a in (props if isinstance(props, Mapping) else {})]


def kind_of(entry: Mapping[str, Any]) -> str:
    """What a listed command does, in a word people read: reads, writes, hard to undo."""
    if entry.get("readOnly"):
        return "reads"
    return "hard to undo" if entry.get("consequential") else "writes"


@dataclass(frozen=True)
class Offered:
    """One command a caller's app offers, with what listing it takes: the app (`space/slug`),
    its title and its address (`127.0.0.1:8000/ada/runs/`)."""

    at: str
    title: str
    address: str
    command: CommandInfo

    def line(self) -> str:
        return self.command.line(self.at, self.title, self.address)


@dataclass(frozen=True)
class _Listed:
    """One app's part of the listing, made once per loaded version and title."""

    loaded: Loaded
    title: str
    block: str  # "## space/app" and a line per command; "" for an app without commands
    entries: list[dict[str, Any]]
    offered: list[Offered]


class Listing:
    """The commands a caller's apps offer, and running one of them as the caller."""

    def __init__(self, catalog: Catalog, gate: Gate, running: Running) -> None:
        self.catalog = catalog
        self.gate = gate
        self.running = running
        self._listed: dict[tuple[str, str], _Listed] = {}

    def _listing_of(self, space: str, slug: str, loaded: Loaded) -> _Listed:
        kept = self._listed.get((space, slug))
        if kept is not None and kept.loaded is loaded and kept.title == loaded.title:
            return kept
        at, title = f"{space}/{slug}", loaded.title
        address = self.catalog.url(space, slug).split("://", 1)[-1]
        offered = [Offered(at, title, address, cmd) for cmd in loaded.commands]
        lines = "".join(f"\n{o.line()}" for o in offered)
        listed = _Listed(
            loaded,
            title,
            f"## {at}{lines}" if lines else "",
            [cmd.listing(at, title) for cmd in loaded.commands],
            offered,
        )
        self._listed[(space, slug)] = listed
        return listed

    def _listings(
        self, caller: Caller, app: str | None, via_web: bool
    ) -> tuple[list[tuple[str, str]], list[_Listed]]:
        """The apps a listing covers, and each one's listing (an app without commands too)."""
        if app is not None:
            reached = self.gate.reach(caller, app, via_web=via_web)
            pairs = [(reached.space, reached.slug)]
        else:
            pairs = self.catalog.member_apps(caller)
        loads = self.catalog.loads(pairs)
        return pairs, [self._listing_of(s, a, ld) for (s, a), ld in zip(pairs, loads, strict=True)]

    def offered(self, caller: Caller, app: str | None = None) -> list[Offered]:
        """The commands `list_commands` lists, as they are: for a door that shows them its
        own way (the console groups code commands under their provider)."""
        if not caller.signed_in and app is None:
            return []
        _, listed = self._listings(caller, app, via_web=False)
        return [o for one in listed for o in one.offered]

    def list_commands(
        self, caller: Caller, app: str | None = None, *, via_web: bool = False
    ) -> Result:
        """The spec's listing grouped by app; data `{commands: [{at, name, title, …}]}`."""
        if not caller.signed_in and app is None:
            return Result(f"no apps to list — {SIGN_IN}", {"commands": []})
        pairs, every = self._listings(caller, app, via_web)
        blocks = [listed.block for listed in every if listed.block]
        listing = [entry for listed in every for entry in listed.entries]
        if not listing:
            if app is not None:
                return Result(f"{app} has no commands yet", {"commands": []})
            if not pairs:
                return Result(
                    "you have no apps yet — deploy one with pasture deploy DIR", {"commands": []}
                )
            return Result("your apps have no commands yet", {"commands": []})
        return Result("\n\n".join(blocks), {"commands": listing})

    def resolve(
        self,
        caller: Caller,
        name: str,
        app: str | None = None,
        *,
        via_web: bool = False,
        noted: Call | None = None,
    ) -> Resolved:
        """The one command a call names, or the spec's refusal (ambiguous, unknown): found
        for this caller, to show, to ask about, and to run (`Service.run_command`).

        `noted`: the audit's record of the call, told the app an unknown name was asked of."""
        reached, loaded, cmd = self._find(caller, agent_name(name), app, via_web, noted)
        info = self.catalog.describe(reached.space, reached.slug, loaded)
        return Resolved(caller, info, reached, loaded, cmd, via_web=via_web)

    def _find(
        self, caller: Caller, name: str, app: str | None, via_web: bool, noted: Call | None
    ) -> tuple[Reached, Loaded, Command]:
        if app is not None:
            reached = self.gate.reach(caller, app, via_web=via_web)
            if noted is not None:  # an unknown name is refused in the app it was asked of
                noted.app = reached.at
            loaded = self.catalog.load(reached.space, reached.slug)
            cmd = loaded.command(name)
            if cmd is None:
                raise self._unknown(caller, name, [(reached.space, reached.slug)])
            return reached, loaded, cmd
        if not caller.signed_in:
            raise Unauthorized(f"no command {echo(name)} — {SIGN_IN}")
        mine, roles = self.catalog.mine(caller)
        matches: list[tuple[str, str, Loaded, Command]] = []
        for (space, slug), loaded in zip(mine, self.catalog.loads(mine), strict=True):
            cmd = loaded.command(name)
            if cmd is not None:
                matches.append((space, slug, loaded, cmd))
        if not matches:
            raise self._unknown(caller, name, mine)
        if len(matches) > 1:
            ats = sorted(f"{s}/{a}" for s, a, _, _ in matches)
            raise UsageError(f"{name} is a command of {and_(ats)} — say which app")
        space, slug, loaded, cmd = matches[0]
        return Reached(space, slug, roles.get(space)), loaded, cmd

    def _unknown(self, caller: Caller, name: str, apps: list[tuple[str, str]]) -> Refused:
        name = echo(name)
        offers = []
        for (space, slug), loaded in zip(apps, self.catalog.loads(apps), strict=True):
            names = [c.agent_name for c in loaded.commands]
            if names:
                offers.append(f"{space}/{slug}: {', '.join(names)}")
        if not apps:
            return NotFound(
                f"no command {name} — you have no apps yet; deploy one with pasture deploy DIR"
            )
        if not offers:
            return NotFound(
                f"no command {name} — your apps have no commands yet; give one a "
                "tools.json or a vocab.json and deploy it again"
            )
        return NotFound(
            f"no command {name} — your apps offer {'; '.join(offers)}. "
            "commands lists them with their arguments."
        )

    def status(self, caller: Caller) -> Result:
        """Every reachable app's state, one line each."""
        if not caller.signed_in:
            return Result(f"no apps to show — {SIGN_IN}", {"apps": []})
        lines: list[str] = []
        apps: list[dict[str, Any]] = []
        for info in self.gate.list_apps(caller):
            entities = self._count(info.space, info.slug)
            lines.append(
                f"{info.at} v{info.version} — {info.title} — "
                f"{plural(entities, 'entity', 'entities')}, "
                f"{plural(len(info.commands), 'command', 'commands')}, {info.access}"
                + (", runs code" if info.code else "")
            )
            entry: dict[str, Any] = {**info.as_data(), "entities": entities}
            provided = self._provider_status(caller, info)
            if provided is not None:
                lines.extend(f"  {line}" for line in provided.text.splitlines())
                entry["status"] = provided.data
            apps.append(entry)
        if not lines:
            return Result("you have no apps yet — deploy one with pasture deploy DIR", {"apps": []})
        return Result("\n".join(lines), {"apps": apps})

    def _provider_status(self, caller: Caller, info: AppInfo) -> Result | None:
        """The app's `<provider> status` commands, run as the caller: a line each."""
        loaded = self.catalog.load(info.space, info.slug)
        found = [c for c in loaded.commands if c.family == "code" and c.read_only]
        found = [c for c in found if c.name == f"{c.provider} status"]
        if not found:
            return None
        return run_status(
            found, lambda cmd: self.running.context(caller, info.at, cmd, via_web=False)
        )

    def _count(self, space: str, slug: str) -> int:
        """How many things the app keeps: entities carrying its own components or a doc,
        counted by its store's database (no row is read here)."""
        return self.catalog.store(space, slug).count()
