"""Who is asking: a person (an eid and a name the store can print) or nobody — and with what.

A person who signs in with their password has all of their own rights. A token
or an OAuth grant carries a scope they chose when they made it: whether it may
change anything (`writes`), and which of their spaces it reaches (`spaces`,
None for all of them). Every layer that decides who may do what reads these
(`pasture.platform.access`), so a read-only grant writes nothing through any
door, command or app code.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Caller:
    """The person on whose behalf a door calls in; `eid=None` is nobody."""

    eid: str | None = None
    name: str | None = None
    writes: bool = True  # the grant lets them change things
    spaces: frozenset[str] | None = None  # the spaces the grant reaches; None: all of theirs
    # What they came through, for the audit: `token 4f3c…`, `client Claude`, `session`.
    via: str | None = field(default=None, compare=False)

    @property
    def signed_in(self) -> bool:
        return self.eid is not None

    def reaches(self, space: str) -> bool:
        """Whether the grant reaches this space at all (their role there is another matter)."""
        return self.spaces is None or space in self.spaces


NOBODY = Caller()
