"""A command's arguments as typed at a terminal: `NAME a b` is `NAME --who=a --miles=b`.

`pasture command` and the console both run a command through `run_words`, so
the two read a line the same way.

Positional words take the command's arguments in declared order; `--name=value`
or `--name value` names one; `--flag` alone is `true`. Values stay text: the
command converts them to its declared types (`"5"` → 5) as it does for anyone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pasture.commands.model import Command, Result
from pasture.errors import UsageError

if TYPE_CHECKING:
    from pasture.caller import Caller
    from pasture.platform.service import Service


@dataclass
class Words:
    positional: list[str] = field(default_factory=list)
    named: dict[str, str] = field(default_factory=dict)
    app: str | None = None
    json: bool = False

    def bind(self, command: Command) -> dict[str, str]:
        """The arguments by name, positional words taking the declared order."""
        order = list(command.positional) or command.arguments
        free = [a for a in order if a not in self.named]
        if len(self.positional) > len(free):
            wanted = ", ".join(order) or "no arguments"
            raise UsageError(
                f"{command.agent_name} takes {wanted} — {len(self.positional)} "
                f"{'word was' if len(self.positional) == 1 else 'words were'} given "
                "for them; quote a value that has spaces"
            )
        values = dict(self.named)
        for name, word in zip(free, self.positional, strict=False):
            values[name] = word
        return values


def split_words(words: Sequence[str]) -> Words:
    out = Words()
    i = 0
    only_positional = False
    while i < len(words):
        word = words[i]
        i += 1
        if only_positional or not word.startswith("--") or word == "--":
            if word == "--" and not only_positional:
                only_positional = True
                continue
            out.positional.append(word)
            continue
        key, has_value, value = word[2:].partition("=")
        key = key.replace("-", "_")
        if not has_value:
            if key == "json":
                out.json = True
                continue
            if i < len(words) and not words[i].startswith("--"):
                value = words[i]
                i += 1
            else:
                value = "true"
        if not key:
            raise UsageError(f"{word} names no argument — write --name=value")
        if key == "app":
            out.app = value
        else:
            out.named[key] = value
    return out


def run_words(service: Service, caller: Caller, name: str, words: Words) -> Result:
    """Run the command `name` with the words typed after it, as the caller."""
    _, command = service.resolve_command(caller, name, words.app)
    values = words.bind(command)
    # Words typed at a terminal are text: code commands convert them to their types.
    return service.run_command(caller, name, values, words.app, typed_text=True)
