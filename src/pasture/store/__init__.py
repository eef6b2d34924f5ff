"""An app's store: an entity–component graph, written in bundles, read with filters.

store = open_store("runs.db")
store.declare({"$defs": {"jog": {"properties": {"miles": {"type": "number"}}}}})
store.apply({"entity": {"eid": "$run"}, "jog": {"miles": 5}}, caller)
store.query(".jog!&.created!&limit=20", caller)
"""

from typing import TYPE_CHECKING

from pasture._lazy import lazy_names

if TYPE_CHECKING:
    from pasture.store.base import Applied, Bundle, Row, Store, new_eid
    from pasture.store.bundles import fingerprint
    from pasture.store.sql import check_filter
    from pasture.store.sqlite import SqliteStore, open_store
    from pasture.store.vocab import Column, Component, Vocabulary

_WHERE = {
    "Applied": "pasture.store.base",
    "Bundle": "pasture.store.base",
    "Row": "pasture.store.base",
    "Store": "pasture.store.base",
    "new_eid": "pasture.store.base",
    "fingerprint": "pasture.store.bundles",
    "SqliteStore": "pasture.store.sqlite",
    "open_store": "pasture.store.sqlite",
    "Column": "pasture.store.vocab",
    "Component": "pasture.store.vocab",
    "Vocabulary": "pasture.store.vocab",
    "check_filter": "pasture.store.sql",
}

# The names load on first use, so `pasture --help` does not import this package.
__getattr__ = lazy_names(globals(), _WHERE)


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
