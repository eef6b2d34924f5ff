"""What a running command may ask of its caller's client: the person, the model, the roots.

Over MCP a client may say it can put a form to its person (elicitation), let the
server use its model (sampling) and name the folders it works in (roots). A command
of a registry served on its own reaches them through its `ctx`:

    answer = ctx.ask("size", "Which size?", {"type": "object",
                     "properties": {"size": {"type": "string"}}})
    if answer["action"] == "accept": …answer["content"]…
    said = ctx.sample("summary", "Summarise this order in a line", max_tokens=60)
    roots = ctx.roots("where")
    ctx.log("info", "looked the order up")

Each question has a key of the code's choosing. A door answers it the way its
protocol revision does (`pasture.mcp._client_asks`): in the handshake generation it
puts the question to the client while the code waits; in the newest (2026-07-28) the
call answers `input_required` with every question asked so far unanswered, and the
client calls again with the answers — the code runs again from the start, and each
`ask` it reaches with an answer returns it at once. So code that asks does nothing it
cannot do twice before it has its answers. `ctx.ask_all({key: Ask, …})` asks several
at once. A client that did not say it can be asked such a thing is not asked:
`CannotAsk`, or look first with `ctx.can_ask("elicitation" | "sampling" | "roots")`.
A door that can ask nobody (the platform's, the command line) is `NOBODY_ASKS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pasture.errors import Refused

Kind = Literal["elicitation", "sampling", "roots"]
Level = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LEVELS: tuple[Level, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)

_METHOD: dict[Kind, str] = {
    "elicitation": "elicitation/create",
    "sampling": "sampling/createMessage",
    "roots": "roots/list",
}


@dataclass(frozen=True)
class Ask:
    """One question for the client: what kind it is and its parameters, as MCP names them."""

    kind: Kind
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def method(self) -> str:
        return _METHOD[self.kind]


def form(message: str, schema: Mapping[str, Any]) -> Ask:
    """A form for the person: a message and the JSON Schema of what they fill in."""
    return Ask("elicitation", {"mode": "form", "message": message, "requestedSchema": dict(schema)})


def sampling(text: str, *, max_tokens: int = 100) -> Ask:
    """A message for the client's model, answered at most `max_tokens` long."""
    message = {"role": "user", "content": {"type": "text", "text": text}}
    return Ask("sampling", {"messages": [message], "maxTokens": max_tokens})


def roots() -> Ask:
    """The folders the client works in."""
    return Ask("roots", {})


class InputRequired(Refused):
    """Code asked its client what it has not answered yet (the newest revision): the door
    answers `input_required` with `asks` and runs the call again with the answers."""

    def __init__(self, asks: Mapping[str, Ask], answered: Mapping[str, Any]) -> None:
        keys = ", ".join(asks)
        super().__init__(f"this call needs an answer from its client first: {keys}")
        self.asks = dict(asks)
        self.answered = dict(answered)


class CannotAsk(Refused):
    """The caller's client cannot be asked what the code asks: it declared no such thing."""

    def __init__(self, kind: Kind) -> None:
        what = {"elicitation": "a form", "sampling": "its model", "roots": "its roots"}[kind]
        super().__init__(
            f"this call needs to ask the client for {what}, and the client did not say it "
            f"can be asked ({kind})"
        )
        self.kind = kind


class ClientAsks(Protocol):
    """What a door gives a running command to reach its caller's client."""

    def can_ask(self, kind: Kind) -> bool: ...

    def ask(self, asks: Mapping[str, Ask]) -> dict[str, Any]: ...

    def log(self, level: Level, message: str) -> None: ...


class Asking:
    """What code asks its client with (`ctx.ask`, …), over `self.client`: a command's
    `Context` is one, and so is what a prompt of a registry served on its own is given."""

    client: ClientAsks

    def can_ask(self, kind: Kind) -> bool:
        """Whether the caller's client said it can be asked this: `elicitation` (a form for
        the person), `sampling` (its model) or `roots` (the folders it works in)."""
        return self.client.can_ask(kind)

    def ask_all(self, asks: Mapping[str, Ask]) -> dict[str, Any]:
        """Several questions at once, each under its key: the answers by key."""
        return self.client.ask(asks)

    def ask(self, key: str, message: str, schema: Mapping[str, Any]) -> dict[str, Any]:
        """A form for the person: `{"action": "accept" | "decline" | "cancel", "content"?}`."""
        answer: dict[str, Any] = self.ask_all({key: form(message, schema)})[key]
        return answer

    def sample(self, key: str, text: str, *, max_tokens: int = 100) -> dict[str, Any]:
        """A message for the client's model: its answer (`{"role", "content", "model", …}`)."""
        answer: dict[str, Any] = self.ask_all({key: sampling(text, max_tokens=max_tokens)})[key]
        return answer

    def roots(self, key: str) -> list[dict[str, Any]]:
        """The folders the client works in: `[{"uri", "name"?}]`."""
        answer = self.ask_all({key: roots()})[key]
        found = answer.get("roots", []) if isinstance(answer, Mapping) else []
        return [dict(r) for r in found if isinstance(r, Mapping)]

    def log(self, level: Level, message: str) -> None:
        """A line for the client's log (MCP's `notifications/message`), where it is told."""
        self.client.log(level, message)


class Questions(Asking):
    """`Asking` over a client and nothing else: what a prompt's `get(args, ask)` is given."""

    def __init__(self, client: ClientAsks) -> None:
        self.client = client


class _NobodyAsks:
    """A door that can ask nobody, and that tells the code's log lines nowhere."""

    def can_ask(self, kind: Kind) -> bool:
        return False

    def ask(self, asks: Mapping[str, Ask]) -> dict[str, Any]:
        first = next(iter(asks.values()), None)
        raise CannotAsk(first.kind if first is not None else "elicitation")

    def log(self, level: Level, message: str) -> None:
        return None


NOBODY_ASKS: ClientAsks = _NobodyAsks()


__all__ = [
    "LEVELS",
    "NOBODY_ASKS",
    "Ask",
    "Asking",
    "CannotAsk",
    "ClientAsks",
    "InputRequired",
    "Kind",
    "Level",
    "Questions",
    "form",
    "roots",
    "sampling",
]
