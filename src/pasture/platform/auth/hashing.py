"""Hashing: password hashes, and the secrets of tokens, sessions and passes kept as hashes.

Passwords are kept as scrypt hashes with a random salt; tokens and session ids
are random and kept only as their sha256, so a copy of `platform.db` signs
nobody in.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets

from pasture.errors import UsageError
from pasture.values import lone_surrogate, not_characters

# scrypt's cost: 16 MiB of memory per check, the usual interactive setting.
_N, _R, _P = 2**14, 8, 1


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
