"""pasture: a self-hosted app platform whose apps carry commands.

The public API is what `__all__` names; everything else is the platform's own.
"""

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
    "Result",
    "Unauthorized",
    "UsageError",
    "__version__",
]
