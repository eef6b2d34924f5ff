"""pasture: a self-hosted app platform whose apps carry commands.

The public API is what `__all__` names; everything else is the platform's own.
"""

from typing import TYPE_CHECKING, Any

from pasture.caller import NOBODY, Caller
from pasture.commands.model import Command, Context, Result
from pasture.errors import (
    Conflict,
    DeployRefused,
    Forbidden,
    NotFound,
    PastureError,
    Refused,
    Unauthorized,
    UsageError,
)

__version__ = "0.1.0"

if TYPE_CHECKING:
    from pasture.commands.registry import Registry


def __getattr__(name: str) -> Any:
    # Loaded on first use, so `pasture --help` does not import JSON Schema checking.
    if name == "Registry":
        from pasture.commands.registry import Registry

        return Registry
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "NOBODY",
    "Caller",
    "Command",
    "Conflict",
    "Context",
    "DeployRefused",
    "Forbidden",
    "NotFound",
    "PastureError",
    "Refused",
    "Registry",
    "Result",
    "Unauthorized",
    "UsageError",
    "__version__",
]
