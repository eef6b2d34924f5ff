"""Commands: the model every command shares, and an app's declared commands.

`load_commands(files, vocabulary, at)` is what the platform calls at deploy and
at start-up to turn an app's tools.json (or tools.yml) and vocab.json into
`Command` objects, refusing every problem in one `DeployRefused`.
"""

# The names load on first use (PEP 562), so `pasture --help` and the doors that
# never touch this package do not pay for importing it.
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pasture.commands.declared import Template, declared_commands
    from pasture.commands.generated import generated_commands
    from pasture.commands.loader import load_commands, read_tools
    from pasture.commands.model import Command, Context, Result

_WHERE = {
    "Template": "pasture.commands.declared",
    "declared_commands": "pasture.commands.declared",
    "generated_commands": "pasture.commands.generated",
    "load_commands": "pasture.commands.loader",
    "read_tools": "pasture.commands.loader",
    "Command": "pasture.commands.model",
    "Context": "pasture.commands.model",
    "Result": "pasture.commands.model",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(where), name)
    globals()[name] = value
    return value


__all__ = [
    "Command",
    "Context",
    "Result",
    "Template",
    "declared_commands",
    "generated_commands",
    "load_commands",
    "read_tools",
]
