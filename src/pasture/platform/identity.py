"""Secrets and names: password hashes, token and session hashes, what a name may be.

Passwords are kept as scrypt hashes with a random salt; tokens and session ids
are random and kept only as their sha256, so a copy of `platform.db` signs
nobody in.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import secrets

from pasture.errors import Unauthorized as Unauthorized  # its home is pasture.errors
from pasture.errors import UsageError
from pasture.names import SLUG, USER_NAME
from pasture.values import lone_surrogate, not_characters

# scrypt's cost: 16 MiB of memory per check, the usual interactive setting.
_N, _R, _P = 2**14, 8, 1

MAX_TITLE = 200  # characters of an app's title

# Space names sit at the root of the web's addresses, beside the platform's own.
RESERVED = frozenset(
    {
        "api", "mcp", "signin", "signout", "static", "docs", "docs.md", "me", "tokens",
        "audit", "oauth", "authorize", "token", "register", "revoke", "tools",
    }
)  # fmt: skip


def hash_password(password: str) -> str:
    surrogate = lone_surrogate(password)
    if surrogate is not None:
        raise UsageError(not_characters("the password", surrogate))
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    return f"scrypt${_N}${_R}${_P}${salt.hex()}${digest.hex()}"


@functools.cache
def stand_in_hash() -> str:
    """A hash of a password nobody knows, made once: checked when a name has none, so a
    sign-in takes as long whether or not the name is a user's."""
    return hash_password(secrets.token_urlsafe(32))


def check_password(password: str, stored: str | None) -> bool:
    if not stored:
        return False
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    got = hashlib.scrypt(
        password.encode("utf-8", "surrogatepass"),  # half a character matches no password
        salt=bytes.fromhex(salt),
        n=int(n),
        r=int(r),
        p=int(p),
        dklen=32,
    )
    return hmac.compare_digest(got.hex(), digest)


def new_secret(prefix: str) -> str:
    return f"{prefix}_{secrets.token_urlsafe(32)}"


def secret_hash(secret: str) -> str:
    # half a character (a lone surrogate) hashes to what no token or session has
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


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
