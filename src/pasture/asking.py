"""Asking the person before a command that is hard to undo: one question, one refusal.

The registry document marks such a command `{ consequential: true }`, and then "the
person is asked first". Each door asks in its own way: the command line at its
terminal (or `--yes` on the line), a page through WebMCP with the agent's own way of
asking or the page's dialog, the MCP connector through the client (elicitation). A no
runs nothing and says `CANCELLED` at every door.

Where nothing can ask (an MCP client without elicitation, `./api/command`, a registry
served to such a client), the command is not run either: the answer is `unconfirmed`,
which says it is hard to undo, what it would run, and the one way to confirm it —
`CONFIRM` beside the call's arguments, `"confirm": true`, which only the person's own
yes should set. An agent is told to ask its person and only then call again with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pasture.errors import UsageError, echo

CANCELLED = "cancelled — nothing was run"

CONFIRM = "confirm"
"""The one spelling of the person's yes, where nothing could ask them: `"confirm": true`
beside a call's name and arguments (`--yes` on the command line)."""

AGAIN = f"call it again with the same arguments and {CONFIRM}: true"


def question(title: str | None, name: str, at: str | None, args: Mapping[str, Any] | None) -> str:
    """`An agent is about to run Empty the cart (cart_clear) on ada/cart, which is hard to
    undo. Run it?`: the app where there is one, and the arguments it was given, if any, as
    the agent sent them."""
    what = f"{title} ({name})" if title else name
    where = f" on {at}" if at else ""
    given = f" with {json.dumps(dict(args), ensure_ascii=False)}" if args else ""
    return f"An agent is about to run {what}{where}{given}, which is hard to undo. Run it?"


def unconfirmed(
    title: str | None,
    name: str,
    at: str | None,
    args: Mapping[str, Any] | None,
    again: str = AGAIN,
) -> str:
    """`cart_clear is hard to undo, so it was not run: it would run Empty the cart
    (cart_clear) on ada/cart with sku "V60-02". Ask your person whether to run it, and only
    once they say yes call it again with the same arguments and confirm: true.` — `again`
    is how a yes is said at this door."""
    what = f"{title} ({name})" if title else name
    where = f" on {at}" if at else ""
    return (
        f"{name} is hard to undo, so it was not run: it would run {what}{where} "
        f"{in_words(args)}. Ask your person whether to run it, and only once they say yes "
        f"{again}."
    )


def confirmed(value: object) -> bool:
    """Whether a call's `confirm` says the person said yes: `true`; left out or `false`,
    no; anything else is refused, as a yes must be said plainly."""
    if value is None or isinstance(value, bool):
        return value is True
    raise UsageError(
        f"{CONFIRM} is true, once the person said yes to a command that is hard to undo, "
        "or left out"
    )


def in_words(args: Mapping[str, Any] | None) -> str:
    """`with sku "V60-02" and qty 2`, each value as JSON and shortened; `with no arguments`."""
    if not args:
        return "with no arguments"
    said = [
        f"{echo(str(k), 40)} {echo(json.dumps(v, ensure_ascii=False, default=str))}"
        for k, v in args.items()
    ]
    return "with " + (said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}")


__all__ = ["AGAIN", "CANCELLED", "CONFIRM", "confirmed", "in_words", "question", "unconfirmed"]
