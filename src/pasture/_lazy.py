"""Names a package exports but imports only on first use (PEP 562).

`pasture --help` and the doors that never touch a package should not pay for
importing it, yet `from pasture.store import open_store` must keep working.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # not typing's: `pasture --help` imports this, and typing costs
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, MutableMapping
    from typing import Any


def lazy_names(
    namespace: MutableMapping[str, Any], where: Mapping[str, str]
) -> Callable[[str], Any]:
    """A module `__getattr__` that imports `name` from `where[name]` once, then keeps it."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
