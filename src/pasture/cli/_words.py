"""A command's arguments as typed at a terminal: `NAME a b` is `NAME --who=a --miles=b`.

`pasture command` and the console both run a command through `run_words`, so
the two read a line the same way.

Positional words take the command's arguments in declared order; `--name=value`
or `--name value` names one; `--flag` alone is `true`. Values stay text: the
command converts them to its declared types (`"5"` → 5) as it does for anyone.

A consequential command (hard to undo) runs only once the person said so:
`--yes` on the line, or `y` to the question `confirm` asks at a terminal.
With no one to ask (stdin piped) and no `--yes`, nothing runs, and the refusal is the
sentence every door says where nothing can ask (`pasture.asking.unconfirmed`), with
`--yes` for the `"confirm": true` of the others.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pasture.asking import CANCELLED, unconfirmed
from pasture.errors import Refused, UsageError
from pasture.platform import CommandInfo
from pasture.result import Result

if TYPE_CHECKING:
    from rich.console import Console

    from pasture.caller import Caller
    from pasture.platform import Service


@dataclass
class Words:
    positional: list[str] = field(default_factory=list)
    named: dict[str, str] = field(default_factory=dict)
    app: str | None = None
    json: bool = False
    yes: bool = False  # run a consequential command without asking

    def bind(self, command: CommandInfo) -> dict[str, str]:
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


def command_name(words: Sequence[str], names: Collection[str]) -> tuple[str, list[str]]:
    """The command a line names, and the words after it.

    A code command's name may be several words (`cart add`, listed as `cart_add`): the
    longest run of leading words that is one of `names` wins, so `cart add V60-02 2`
    runs cart_add; otherwise the first word is the name.
    """
    for n in range(len(words), 1, -1):
        lead = words[:n]
        if not any(w.startswith("-") for w in lead) and "_".join(lead) in names:
            return " ".join(lead), list(words[n:])
    return words[0], list(words[1:])


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
            if key == "yes":
                out.yes = True
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


# How a yes is said on the line, where nobody at a terminal can be asked.
YES = "run it again with --yes"

# `confirm(what)` shows what is about to run and answers whether the person said yes.
Confirm = Callable[[str], bool]


def about_to_run(command: CommandInfo, at: str, values: dict[str, str]) -> str:
    """`Empty the cart: cart clear --sku=V60-02 (ada/cart)`: the command's title where it
    has one, then the command and its arguments as typed."""
    parts = [command.name, *(f"--{k}={shlex.quote(v)}" for k, v in values.items())]
    titled = f"{command.title}: " if command.title else ""
    return f"{titled}{' '.join(parts)} ({at})"


def run_words(
    service: Service,
    caller: Caller,
    name: str,
    words: Words,
    confirm: Confirm | None = None,
    *,
    bar: bool = False,
    err: Console | None = None,
) -> tuple[Result, CommandInfo]:
    """Run the command `name` with the words typed after it, as the caller: its result,
    and the command that ran.

    A consequential command needs `--yes`, or `confirm` (None: no one to ask) to say yes.
    While it runs, Ctrl-C stops it, and with `bar` its progress is drawn on `err`
    (`pasture.cli._watching`).
    """
    found = service.listing.resolve(caller, name, words.app)
    command = found.command
    values = words.bind(command)
    if command.consequential and not words.yes:
        if confirm is None:
            raise Refused(unconfirmed(command.title, command.name, found.at, values, YES))
        if not confirm(about_to_run(command, found.at, values)):
            raise Refused(CANCELLED)
    # Words typed at a terminal are text: code commands convert them to their types.
    # What was found is what runs: the command is not looked up again. Got this far, a
    # consequential command has the person's yes.
    from pasture.cli._watching import watched  # rich, only once a command runs

    with watched(bar=bar and not words.json, err=err) as long_call:
        result = service.run_command(
            caller, found, values, typed_text=True, confirmed=True, long_call=long_call
        )
    return result, command
