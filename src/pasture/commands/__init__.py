"""Commands: the model every command shares, and an app's declared commands.

`load_commands(files, vocabulary, at)` is what the platform calls at deploy and
at start-up to turn an app's tools.json (or tools.yml) and vocab.json into
`Command` objects, refusing every problem in one `DeployRefused`.
"""

from typing import TYPE_CHECKING

from pasture._lazy import lazy_names

if TYPE_CHECKING:
    from pasture.commands.declared import Template
    from pasture.commands.deploy_checks import declared_commands
    from pasture.commands.generated import generated_commands
    from pasture.commands.loader import load_commands, read_tools
    from pasture.commands.model import Command, Context
    from pasture.result import Result

_WHERE = {
    "Template": "pasture.commands.declared",
    "declared_commands": "pasture.commands.deploy_checks",
    "generated_commands": "pasture.commands.generated",
    "load_commands": "pasture.commands.loader",
    "read_tools": "pasture.commands.loader",
    "Command": "pasture.commands.model",
    "Context": "pasture.commands.model",
    "Result": "pasture.result",
}

# The names load on first use, so `pasture --help` does not import this package.
__getattr__ = lazy_names(globals(), _WHERE)


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
