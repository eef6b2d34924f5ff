"""Commands: the model every command shares, and an app's declared commands.

`load_commands(files, vocabulary, at)` is what the platform calls at deploy and
at start-up to turn an app's tools.json (or tools.yml) and vocab.json into
`Command` objects, refusing every problem in one `DeployRefused`.
"""

from pasture.commands.declared import Template, declared_commands
from pasture.commands.generated import generated_commands
from pasture.commands.loader import load_commands, read_tools
from pasture.commands.model import Command, Context, Result

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
