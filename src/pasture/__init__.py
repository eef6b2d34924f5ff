"""pasture: a self-hosted app platform whose apps carry commands.

The public API is what `__all__` names; everything else is the platform's own.
"""

from pasture._lazy import lazy_names
from pasture.version import __version__

TYPE_CHECKING = False  # not typing's: `python -m pasture` imports this package first
if TYPE_CHECKING:
    from pasture.caller import NOBODY, Caller
    from pasture.commands.app_tables import table
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
    from pasture.commands.model import Command, Context
    from pasture.commands.registry import Registry
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
    from pasture.result import Result


# Every name is loaded on first use: `pasture --help` (whose `python -m pasture` imports
# this package first) needs none of them, nor dataclasses, typing or JSON Schema checking.
_HANDLERS = "pasture.commands.handlers"
_ERRORS = "pasture.errors"
__getattr__ = lazy_names(
    globals(),
    {
        "NOBODY": "pasture.caller",
        "Caller": "pasture.caller",
        "Command": "pasture.commands.model",
        "Context": "pasture.commands.model",
        "Result": "pasture.result",
        **{
            name: _ERRORS
            for name in (
                "Conflict",
                "DeployRefused",
                "Forbidden",
                "NotFound",
                "PastureError",
                "Refused",
                "Unauthorized",
                "UsageError",
            )
        },
        "Registry": "pasture.commands.registry",
        "table": "pasture.commands.app_tables",
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
    "table",
    "user_id",
]
