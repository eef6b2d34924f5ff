"""An app's store: an entity–component graph, written in bundles, read with filters.

store = open_store("runs.db")
store.declare({"$defs": {"jog": {"properties": {"miles": {"type": "number"}}}}})
store.apply({"entity": {"eid": "$run"}, "jog": {"miles": 5}}, caller)
store.query(".jog!&.created!&limit=20", caller)
"""

# The names load on first use (PEP 562), so `pasture --help` and the doors that
# never touch this package do not pay for importing it.
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pasture.store.base import Applied, Bundle, Row, Store, new_eid
    from pasture.store.bundles import fingerprint
    from pasture.store.sqlite import SqliteStore, open_store
    from pasture.store.vocab import Column, Component, Vocabulary, check_filter

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
    "check_filter": "pasture.store.vocab",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(where), name)
    globals()[name] = value
    return value


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
