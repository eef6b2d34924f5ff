"""What each kind of name may be: one pattern per meaning, each matched whole (`fullmatch`).

- `WORD`: a word of an app's vocabulary — a component, a column, a declared
  command, a declared argument: lowercase letters, digits and _, starting with a
  letter, at most 40 characters (`jog`, `miles`, `log_run`).
- `LOWER_WORD`: the same characters at any length — a handler's name and its
  arguments, and the kind an `id()` names; the filter grammar tells a name that is
  only too long from one that is not a name at all by it.
- `COMMAND_NAME`: a code command's name, lowercase words separated by one space
  (`cart add`); its first word names the provider.
- `SLUG`: a space's name or an app's: lowercase letters, digits and -, starting
  with a letter, at most 40 characters — a part of an address (`ada/runs`).
- `USER_NAME`: a person's name: letters, digits, _ . and -, starting with a
  letter, at most 40 characters.
- `SECRET_NAME`: an app's secret, named as an environment variable is
  (`STRIPE_KEY`), at most 64 characters.

The checks that refuse a name with a sentence saying what it may be (`check_slug`,
`check_space_name`, `check_user_name`, `check_title`) and the name agents see for a
command (`agent_name`: its words joined by `_`, `cart add` → `cart_add`; a person may
type either) live here too, so every layer names things the same way.
"""

from __future__ import annotations

import re

from pasture.errors import UsageError
from pasture.values import lone_surrogate, not_characters

WORD = re.compile(r"[a-z][a-z0-9_]{0,39}")
LOWER_WORD = re.compile(r"[a-z][a-z0-9_]*")
COMMAND_NAME = re.compile(r"[a-z][a-z0-9_]*( [a-z][a-z0-9_]*)*")
SLUG = re.compile(r"[a-z][a-z0-9-]{0,39}")
USER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,39}")
SECRET_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")

MAX_TITLE = 200  # characters of an app's title

# Space names sit at the root of the web's addresses, beside the platform's own.
RESERVED = frozenset(
    {
        "api", "mcp", "signin", "signout", "static", "docs", "docs.md", "me", "tokens",
        "audit", "oauth", "authorize", "token", "register", "revoke", "tools",
    }
)  # fmt: skip


def agent_name(name: str) -> str:
    """`cart add` → `cart_add`: the name agents see, and one people may type."""
    return "_".join(name.split())


def check_title(title: str) -> None:
    """An app's title is text a page shows: whole characters, no control characters."""
    surrogate = lone_surrogate(title)
    if surrogate is not None:
        raise UsageError(not_characters("the title", surrogate))
    if any(not ch.isprintable() for ch in title):
        raise UsageError("the title is one line of text, with no control characters")
    if len(title) > MAX_TITLE:
        raise UsageError(f"the title is at most {MAX_TITLE} characters")


def space_name_for(user: str) -> str:
    """A personal space's name: the user's name, lowercased, safe in an address."""
    name = re.sub(r"[^a-z0-9-]+", "-", user.lower()).strip("-") or "me"
    if not name[0].isalpha():
        name = f"u-{name}"
    return name[:40]


def check_space_name(name: str) -> None:
    if not SLUG.fullmatch(name) or name in RESERVED:
        raise UsageError(
            f"{name!r} is not a space name — use lowercase letters, digits and -, "
            "starting with a letter (not api, mcp, signin or static)"
        )


def check_slug(slug: str) -> None:
    if not SLUG.fullmatch(slug):
        raise UsageError(
            f"{slug!r} is not an app name — use lowercase letters, digits and -, "
            "starting with a letter; name it with --app"
        )


def check_user_name(name: str) -> None:
    if not USER_NAME.fullmatch(name):
        raise UsageError(
            f"{name!r} is not a user name — use letters, digits, _ . and -, starting with a letter"
        )


__all__ = [
    "COMMAND_NAME",
    "LOWER_WORD",
    "MAX_TITLE",
    "RESERVED",
    "SECRET_NAME",
    "SLUG",
    "USER_NAME",
    "WORD",
    "agent_name",
    "check_slug",
    "check_space_name",
    "check_title",
    "check_user_name",
    "space_name_for",
]
