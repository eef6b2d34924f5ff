"""The run club's vocabulary, two callers, a clock to set, and the writes every backend must
refuse whole."""

from datetime import UTC, datetime

import pytest

from helpers.club import JOG
from pasture.caller import Caller
from pasture.errors import Conflict, Refused
from pasture.store import fingerprint
from pasture.store.postgres import PostgresStore
from pasture.store.sqlite import SqliteStore

RUNS = {
    "$defs": {
        "jog": JOG,
        "recipe": {
            "properties": {
                "serves": {"type": "integer"},
                "cuisine": {"type": "string"},
                "vegan": {"type": "boolean"},
                "source": {"type": "string", "format": "uri"},
                "coach": {"type": "string", "format": "reference"},
            }
        },
        "starred": {"kind": False},
    }
}

ADA = Caller("a1a1a1a1a1a1a1a1", "Ada")
BOB = Caller("b2b2b2b2b2b2b2b2", "Bob")

AnyStore = SqliteStore | PostgresStore


class Clock:
    """The store's clock in a test: the real time until a test sets `now`."""

    def __init__(self) -> None:
        self.now: datetime | None = None

    def __call__(self) -> datetime:
        return self.now or datetime.now(UTC)


def refuse_bad_batches(store: AnyStore, eid: str) -> None:
    """Batches each refused at their last bundle, after writes that must not stay.

    `eid` is a run whose jog.miles is 5. Bob is not a person of the store yet, so a
    batch that got anywhere would also have added him.
    """
    bad = [
        {"jog": {"who": "new"}, "doc": {"title": "new"}},
        {"entity": {"eid": eid}, "jog": {"miles": 6}},
        {"entity": {"eid": eid}, "tombstone": {}, "$was": {"jog": {"miles": fingerprint(1)}}},
    ]
    with pytest.raises(Refused):
        store.apply(bad, BOB)
    with pytest.raises(Conflict):
        store.apply(
            [
                {"jog": {"who": "new"}, "edges": [{"type": "m", "child": eid}]},
                {
                    "entity": {"eid": eid},
                    "jog": {"miles": 1},
                    "$was": {"jog": {"miles": fingerprint(2)}},
                },
            ],
            BOB,
        )
