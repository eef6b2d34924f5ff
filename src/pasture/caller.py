"""Who is asking: a person (an eid and a name the store can print) or nobody — and with what.

A person who signs in with their password has all of their own rights. A token
or an OAuth grant carries a scope they chose when they made it: whether it may
change anything (`writes`), and which of their spaces it reaches (`spaces`,
None for all of them). Every layer that decides who may do what reads these
(`pasture.platform.access.gate`), so a read-only grant writes nothing through any
door, command or app code. Nor does it make another sign-in: only a person signed
in themselves does (`themselves`).

A program names its person with `Authorization: Bearer <token>`, read by `bearer`,
the one reading of that header every HTTP door uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from pasture.errors import BadToken

Through = Literal["token", "grant", "pass"]

BEARER_SHAPE = (
    "the Authorization header is `Bearer <token>` — make a token with `pasture token new`"
)


@dataclass(frozen=True)
class Caller:
    """The person on whose behalf a door calls in; `eid=None` is nobody."""

    eid: str | None = None
    name: str | None = None
    writes: bool = True  # the grant lets them change things
    spaces: frozenset[str] | None = None  # the spaces the grant reaches; None: all of theirs
    # What they came through, for the audit: `token 4f3c…`, `client Claude`, `session`.
    via: str | None = field(default=None, compare=False)
    # The door they came in by, for the audit: `web`, `webmcp`, `mcp`, `cli`.
    door: str | None = field(default=None, compare=False)
    # Where nobody called from over HTTP (the web door sets it): anonymous writes to open
    # apps are limited per address (`pasture.platform.access.limits`).
    address: str | None = field(default=None, compare=False)
    # What they came through that they made, when it is not their own sign-in: a token,
    # an agent's OAuth grant, a page's pass. Set where each is read back (tokens, oauth,
    # passes); None for a person signed in themselves.
    through: Through | None = field(default=None, compare=False)

    @property
    def signed_in(self) -> bool:
        return self.eid is not None

    @property
    def themselves(self) -> bool:
        """Signed in as the person themselves (their password on the web, the machine's
        owner at its command line): only such a sign-in makes or ends others — tokens,
        grants, passes, sign-in links — so none of those outlives or outgrows its maker."""
        return self.signed_in and self.through is None

    def at_door(self, door: str, via: str | None = None) -> Caller:
        """The same caller, come in by `door` (and through `via`, where the door knows it)."""
        return replace(self, door=door, via=self.via if via is None else via)

    def reaches(self, space: str) -> bool:
        """Whether the grant reaches this space at all (their role there is another matter)."""
        return self.spaces is None or space in self.spaces


NOBODY = Caller()


def bearer(header: str | None) -> str | None:
    """The token an Authorization header carries: None without the header; BadToken when it
    is not `Bearer <token>` (the scheme in any case, then a token)."""
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise BadToken(BEARER_SHAPE)
    return token.strip()


__all__ = ["BEARER_SHAPE", "NOBODY", "Caller", "Through", "bearer"]
