"""A registry's resources and prompts, for a registry served on its own over MCP.

    registry.resource("cart://contents", lambda params: cart.as_json(),
                      description="What is in the cart", mime_type="application/json")
    registry.resource("cart://item/{sku}", lambda params: catalog.page(params["sku"]),
                      description="One product's page")
    registry.prompt("cart review", lambda args: f"Review the cart of {args['who']}",
                    description="Ask for a review of the cart", arguments={"who": "whose"})

A **resource** is an address and a function that reads it: text (`str`) or bytes. An
address with `{name}` parts is a template: the reader gets each part as it was asked
for, and a `suggest(part, partial)` completes them. A **prompt** is a name, the
arguments it takes (each a line that says what it is; all required unless named in
`optional`), and a function that returns its messages: text, a part of
`pasture.content` (an image, an embedded resource), a `Message` to say who says it,
or a list of them; `get(args, ask)` may ask the caller's client first, as a command's
`ctx` does (`pasture.client_asks`). They are the registry's to list; the MCP door serves them
(`pasture.mcp.build_registry_server`). The platform's apps carry neither: their views
are the connector's resources.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pasture.client_asks import NOBODY_ASKS, ClientAsks, Questions
from pasture.content import PARTS, Message, Part
from pasture.errors import NotFound, UsageError
from pasture.names import agent_name

ReadResource = Callable[[dict[str, str]], str | bytes]
GetPrompt = Callable[..., Any]  # get(args) or get(args, ask)
SuggestValues = Callable[[str, str], Sequence[str]]

_PART = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")


@dataclass(frozen=True)
class Resource:
    """One resource, or a template of them (`uri` with `{name}` parts)."""

    uri: str
    read_with: ReadResource
    description: str
    name: str
    title: str | None = None
    mime_type: str = "text/plain"
    suggest: SuggestValues | None = None
    _match: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    @property
    def is_template(self) -> bool:
        return self._match is not None

    @property
    def parts(self) -> list[str]:
        """The names of a template's parts, in order (none for a plain resource)."""
        return _PART.findall(self.uri)

    def params(self, uri: str) -> dict[str, str] | None:
        """The parts `uri` fills in, if it is this resource (or one of this template's)."""
        if self._match is None:
            return {} if uri == self.uri else None
        found = self._match.fullmatch(uri)
        return None if found is None else found.groupdict()

    def read(self, params: dict[str, str]) -> str | bytes:
        value = self.read_with(params)
        if not isinstance(value, str | bytes):
            raise UsageError(f"the reader of {self.uri} returns text or bytes")
        return value


def resource(
    uri: str,
    read: ReadResource,
    *,
    description: str,
    name: str | None = None,
    title: str | None = None,
    mime_type: str = "text/plain",
    suggest: SuggestValues | None = None,
) -> Resource:
    """A resource checked: an address (`scheme:…`, `{name}` parts for a template), a
    reader, a sentence. UsageError names what is wrong."""
    if not isinstance(uri, str) or not _URI.match(uri):
        raise UsageError("a resource's uri is an address like cart://contents")
    if not callable(read):
        raise UsageError(f"{uri}: read is a function of the parts asked for, read(params)")
    if not isinstance(description, str) or not description.strip():
        raise UsageError(f"{uri}: description is a sentence that says what it holds")
    match = None
    if _PART.search(uri):
        pattern = "".join(
            f"(?P<{piece}>[^/]+)" if i % 2 else re.escape(piece)
            for i, piece in enumerate(_PART.split(uri))
        )
        match = re.compile(pattern)
    return Resource(uri, read, description, name or uri, title, mime_type, suggest, match)


@dataclass(frozen=True)
class Prompt:
    """One prompt: its name as agents see it, its arguments, and what makes its messages."""

    name: str
    get_with: GetPrompt
    description: str
    arguments: dict[str, str]  # name → what it is
    optional: frozenset[str] = frozenset()
    title: str | None = None
    suggest: SuggestValues | None = None

    def get(self, args: Mapping[str, Any], client: ClientAsks | None = None) -> list[Message]:
        """Its messages for `args`: every required argument given, none it does not take.
        A `get(args, ask)` of two parameters may ask the caller's `client` (`ask.ask(…)`,
        `ask.sample(…)`: `pasture.client_asks`)."""
        unknown = sorted(set(args) - set(self.arguments))
        if unknown:
            known = ", ".join(self.arguments) or "none"
            raise UsageError(f"{unknown[0]} is not an argument — the arguments are {known}")
        for key in self.arguments:
            if key not in self.optional and args.get(key) in (None, ""):
                raise UsageError(f"{key} is required")
        given = {k: str(v) for k, v in args.items()}
        if _takes_two(self.get_with):
            said = self.get_with(given, Questions(client or NOBODY_ASKS))  # type: ignore[call-arg]
        else:
            said = self.get_with(given)
        items = said if isinstance(said, list | tuple) else [said]
        messages = []
        for item in items:
            if isinstance(item, Message):
                messages.append(item)
            elif isinstance(item, PARTS):
                part: Part = item
                messages.append(Message(part))
            else:
                raise UsageError(
                    f"the prompt {self.name} returns text, a part of pasture.content or a "
                    "Message, or a list of them"
                )
        return messages


def _takes_two(function: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in parameters)


def prompt(
    name: str,
    get: GetPrompt,
    *,
    description: str,
    arguments: Mapping[str, str] | None = None,
    optional: Sequence[str] = (),
    title: str | None = None,
    suggest: SuggestValues | None = None,
) -> Prompt:
    """A prompt checked; its name as agents see it (`cart review` → `cart_review`)."""
    if not isinstance(name, str) or not name.strip():
        raise UsageError("a prompt's name is lowercase words, like cart review")
    if not callable(get):
        raise UsageError(f"{name}: get is a function of its arguments, get(args)")
    if not isinstance(description, str) or not description.strip():
        raise UsageError(f"{name}: description is a sentence that says what it asks")
    taken = dict(arguments or {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in taken.items()):
        raise UsageError(f"{name}: arguments are names, each with a line that says what it is")
    left = sorted(set(optional) - set(taken))
    if left:
        raise UsageError(f"{name}: {left[0]} is optional but not one of its arguments")
    return Prompt(agent_name(name), get, description, taken, frozenset(optional), title, suggest)


class Parts:
    """A registry's resources and prompts, by address and by name, in the order given."""

    def __init__(self) -> None:
        self.resources: dict[str, Resource] = {}
        self.prompts: dict[str, Prompt] = {}

    def add_resource(self, found: Resource) -> None:
        if found.uri in self.resources:
            raise UsageError(f"{found.uri} is a resource already")
        self.resources[found.uri] = found

    def add_prompt(self, found: Prompt) -> None:
        if found.name in self.prompts:
            raise UsageError(f"{found.name} is a prompt already")
        self.prompts[found.name] = found

    def find(self, uri: str) -> tuple[Resource, dict[str, str]]:
        """The resource at `uri` and the parts it fills in; NotFound when there is none."""
        plain = self.resources.get(uri)
        if plain is not None and not plain.is_template:
            return plain, {}
        for each in self.resources.values():
            params = each.params(uri)
            if params is not None:
                return each, params
        raise NotFound(f"no resource {uri}")


__all__ = [
    "GetPrompt",
    "Parts",
    "Prompt",
    "ReadResource",
    "Resource",
    "SuggestValues",
    "prompt",
    "resource",
]
