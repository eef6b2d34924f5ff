"""Components: the kinds of things an app keeps, declared in its vocab.json.

SKELETON: the data classes are the contract the commands layer is written
against; the store fills in `Vocabulary.from_json` and `check_filter`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pasture.values import ValueType


@dataclass(frozen=True)
class Column:
    """A named, typed column of a component; `reference` columns hold an eid."""

    name: str
    type: ValueType
    reference: bool = False


@dataclass(frozen=True)
class Component:
    """A named set of typed columns.

    `kind` is False for a mark a row carries rather than a thing somebody adds
    (`"kind": false`); `platform` for the platform's own components; `writable`
    is False for the stamps (`created`, `updated`) the store writes itself.
    """

    name: str
    columns: Mapping[str, Column]
    kind: bool = True
    platform: bool = False
    writable: bool = True


@dataclass(frozen=True)
class Vocabulary:
    """An app's components (its own and the platform's), and whether it wants generated tools."""

    components: Mapping[str, Component]
    tools: bool = True

    @classmethod
    def from_json(
        cls, doc: Mapping[str, Any] | None, previous: Vocabulary | None = None
    ) -> Vocabulary:
        """Read vocab.json's document; DeployRefused("vocab.json: …") lists every problem.

        `previous` is the vocabulary installed now: a column whose type changes
        incompatibly on redeploy is refused.
        """
        raise NotImplementedError

    def declared(self) -> list[Component]:
        """This app's own components, in the order vocab.json lists them."""
        return [c for c in self.components.values() if not c.platform]

    def kinds(self) -> list[Component]:
        """This app's own components that are kinds of thing (they get add_/find_)."""
        return [c for c in self.declared() if c.kind]


def check_filter(text: str, vocabulary: Vocabulary) -> None:
    """Refuse (with the sentence a query would get) a filter line this vocabulary cannot serve."""
    raise NotImplementedError
