"""Who is asking: a person (an eid and a name the store can print) or nobody."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Caller:
    """The person on whose behalf a door calls in; `eid=None` is nobody."""

    eid: str | None = None
    name: str | None = None

    @property
    def signed_in(self) -> bool:
        return self.eid is not None


NOBODY = Caller()
