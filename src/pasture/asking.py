"""Asking the person before a command that is hard to undo: one question, one refusal.

The registry document marks such a command `{ consequential: true }`, and then "the
person is asked first". Each door asks in its own way: the command line at its
terminal (or `--yes` on the line), a page through WebMCP with the agent's own way of
asking or the page's dialog, the MCP connector through the client (elicitation). A no,
or nobody to answer, runs nothing and says `CANCELLED` at every door.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

CANCELLED = "cancelled — nothing was run"


def question(title: str | None, name: str, at: str | None, args: Mapping[str, Any] | None) -> str:
    """`An agent is about to run Empty the cart (cart_clear) on ada/cart, which is hard to
    undo. Run it?`: the app where there is one, and the arguments it was given, if any, as
    the agent sent them."""
    what = f"{title} ({name})" if title else name
    where = f" on {at}" if at else ""
    given = f" with {json.dumps(dict(args), ensure_ascii=False)}" if args else ""
    return f"An agent is about to run {what}{where}{given}, which is hard to undo. Run it?"


__all__ = ["CANCELLED", "question"]
