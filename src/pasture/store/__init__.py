"""An app's store: an entity–component graph, written in bundles, read with filters.

store = open_store("runs.db")
store.declare({"$defs": {"jog": {"properties": {"miles": {"type": "number"}}}}})
store.apply({"entity": {"eid": "$run"}, "jog": {"miles": 5}}, caller)
store.query(".jog!&.created!&limit=20", caller)
"""

from pasture.store.base import Applied, Bundle, Row, Store, new_eid
from pasture.store.bundles import fingerprint
from pasture.store.sqlite import SqliteStore, open_store
from pasture.store.vocab import Column, Component, Vocabulary, check_filter

__all__ = [
    "Applied",
    "Bundle",
    "Column",
    "Component",
    "Row",
    "SqliteStore",
    "Store",
    "Vocabulary",
    "check_filter",
    "fingerprint",
    "new_eid",
    "open_store",
]
