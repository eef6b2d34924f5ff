"""The name agents see for a command: its words joined by `_` (`cart add` → `cart_add`).

A command's name is lowercase words (see DESIGN.md, Names); agents call it by the
words joined with `_`, and a person may type either. Every layer that turns a name
it was given into the one agents see goes through `agent_name`.
"""

from __future__ import annotations


def agent_name(name: str) -> str:
    """`cart add` → `cart_add`: the name agents see, and one people may type."""
    return "_".join(name.split())


__all__ = ["agent_name"]
