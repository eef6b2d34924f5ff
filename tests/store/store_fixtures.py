"""The run club's vocabulary and two callers, shared by the store's tests."""

from pasture.caller import Caller
from pasture.store.postgres import PostgresStore
from pasture.store.sqlite import SqliteStore

RUNS = {
    "$defs": {
        "jog": {
            "properties": {
                "who": {"type": "string"},
                "miles": {"type": "number"},
                "at": {"type": "string", "format": "date-time"},
            }
        },
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
