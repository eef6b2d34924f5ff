"""pasture: a self-hosted app platform whose apps carry commands.

The public API is what `__all__` names; everything else is the platform's own.
"""

from typing import TYPE_CHECKING

from pasture._lazy import lazy_names
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
    from pasture.commands.handlers import (
        action,
        boolean,
        id,
        json_value,
        mutation,
        number,
        query,
        string,
        user_id,
    )
    from pasture.commands.registry import Registry


# Loaded on first use, so `pasture --help` does not import JSON Schema checking.
_HANDLERS = "pasture.commands.handlers"
__getattr__ = lazy_names(
    globals(),
    {
        "Registry": "pasture.commands.registry",
        **{
            name: _HANDLERS
            for name in (
                "action",
                "boolean",
                "id",
                "json_value",
                "mutation",
                "number",
                "query",
                "string",
                "user_id",
            )
        },
    },
)


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
    "action",
    "boolean",
    "id",
    "json_value",
    "mutation",
    "number",
    "query",
    "string",
    "user_id",
]
