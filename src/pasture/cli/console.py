"""`pasture console`: commands typed one line at a time, as the command line takes them.

A line is `NAME [ARGS…] [--x=y …] [--app A] [--yes] [--json]`, split as a shell would
(shlex) and mapped onto the command's arguments by the command line's own
`split_words` and `Words.bind`, so `log_run Ada 5 2026-09-01` here is
`pasture command log_run Ada 5 2026-09-01` there. A few words belong to the
console itself (`BUILTINS`). A refusal prints its sentence in red and the
console reads the next line; nothing ends it but Ctrl-D, `exit` or `quit`.

At a terminal the prompt is prompt_toolkit's, with Tab completion
(`pasture.cli._completion`) and a history in the data directory. With stdin piped it
reads plain lines and prints plain results, so a script can drive it; its exit
code is then the last refusal's (0 when every line was served).
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from pasture.caller import Caller
from pasture.cli import _words
from pasture.cli._completion import CommandCompleter
from pasture.cli._man import arguments_table, by_provider, man_page
from pasture.cli._render import apps_table, command_answer, key_values, rows_table, terminal
from pasture.cli._words import Confirm, Words, run_words, split_words
from pasture.errors import PastureError, UsageError
from pasture.platform import Offered, Service
from pasture.result import Result

HISTORY = "console_history"

BUILTINS: dict[str, str] = {
    "help": "your commands by app; help NAME for one command's arguments",
    "man": "man NAME: a command's whole page — every argument, its limits, an example",
    "commands": "your apps' commands with their arguments",
    "status": "one line per app: version, title, size, access",
    "apps": "every app in your spaces",
    "clear": "clear the screen",
    "exit": "leave the console (also quit, or Ctrl-D)",
    "quit": "leave the console",
}


# A command the caller can run, with the app (`space/slug`) it belongs to, its title and
# its address: what `commands` lists, as the platform offers it.
Known = Offered


def known_commands(service: Service, caller: Caller) -> list[Known]:
    """Every command of the caller's apps, in the order `commands` lists them."""
    return service.listing.offered(caller)


def command_name(words: Sequence[str], known: Iterable[Known]) -> tuple[str, list[str]]:
    """The command a line names and the words after it (`cart add V60-02` is cart add)."""
    return _words.command_name(words, {k.command.agent_name for k in known})


# -- one line ----------------------------------------------------------------
class Session:
    """The caller's console: runs one line at a time and prints what it answers."""

    def __init__(
        self,
        service: Service,
        caller: Caller,
        *,
        json_always: bool = False,
        out: Console | None = None,
        err: Console | None = None,
    ) -> None:
        self.service = service
        self.caller = caller
        self.json_always = json_always
        self.out = out or terminal(highlight=False)
        self.err = err or terminal(stderr=True, highlight=False)
        self.known: list[Known] = []
        self.leaving = False
        self.on_clear: Callable[[], None] = self.out.clear
        # Asks before a consequential command runs; None (piped) refuses it without --yes.
        self.confirm: Confirm | None = None
        self.bar = False  # at a terminal: a command's progress drawn while it runs

    def refresh(self) -> None:
        """Read the caller's commands again (an app may have been deployed meanwhile)."""
        try:
            self.known = known_commands(self.service, self.caller)
        except PastureError:
            self.known = []

    def handle(self, line: str) -> int:
        """Run one line; 0 when it was served, else the refusal's exit code."""
        try:
            self._line(line)
            return 0
        except PastureError as e:
            self.err.print(Text(e.sentence, style="red"), soft_wrap=True)
            return e.exit_code
        except KeyboardInterrupt:
            self.err.print(Text("cancelled", style="red"))
            return 130
        except Exception as e:  # a bug: one line, never a traceback
            self.err.print(
                Text(f"something went wrong ({type(e).__name__}: {e})", style="red"),
                soft_wrap=True,
            )
            return 1

    def _line(self, line: str) -> None:
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            raise UsageError(
                "a quote on this line is not closed — close it, or put a \\ before it"
            ) from None
        if not words:
            return
        head = words[0]
        if head in BUILTINS:
            self._builtin(head, split_words(words[1:]))
            return
        name, rest = command_name(words, self.known)
        typed = split_words(rest)
        result, command = run_words(
            self.service,
            self.caller,
            name,
            typed,
            self.confirm,
            bar=self.bar and not self.json_always,
            err=self.err,
        )
        self.show(result, json_=typed.json, data=command.family == "code")

    def _builtin(self, head: str, words: Words) -> None:
        if head in ("exit", "quit"):
            self.leaving = True
            return
        if head == "clear":
            self.on_clear()
            return
        if head == "help" and len(words.positional) == 1 and words.positional[0] in BUILTINS:
            word = words.positional[0]
            self.out.print(Text(f"{word} — {BUILTINS[word]} (a word of the console)"))
            return
        if head == "help" and words.positional:
            self.help_command(" ".join(words.positional), words.app, json_=words.json)
            return
        if head == "man":
            if not words.positional:
                raise UsageError("man takes a command's name: man log_run — help lists them")
            self.man_command(" ".join(words.positional), words.app, json_=words.json)
            return
        if words.positional or words.named:
            extra = " ".join([*words.positional, *(f"--{k}" for k in words.named)])
            takes = "--app and --json" if head in ("help", "commands") else "--json"
            raise UsageError(f"{head} takes only {takes}, not {extra}")
        if head in ("help", "commands"):
            listing = self.service.listing.list_commands(self.caller, words.app)
            if head == "help" and listing.data.get("commands"):
                offered = self.service.listing.offered(self.caller, words.app)
                listing = Result(by_provider(offered), listing.data)
            self.show(listing, json_=words.json)
            if head == "help" and not (words.json or self.json_always):
                self.out.print(
                    Text(
                        "\nhelp NAME shows a command's arguments, man NAME its whole page; also: "
                        "commands, status, apps, clear, exit. Tab completes names, --arguments "
                        "and values.",
                        style="dim",
                    ),
                    soft_wrap=True,
                )
        elif head == "status":
            self.show(self.service.listing.status(self.caller), json_=words.json)
        elif head == "apps":
            self.apps(json_=words.json)

    def apps(self, *, json_: bool) -> None:
        apps = self.service.gate.list_apps(self.caller)
        if json_ or self.json_always:
            self._json({"apps": [a.as_data() for a in apps]})
        elif not apps:
            self.out.print(Text("you have no apps yet — deploy one with pasture deploy DIR"))
        else:
            apps_table(apps, self.out)

    def help_command(self, name: str, app: str | None, *, json_: bool) -> None:
        """One command: its signature and sentence, then each argument's type and description."""
        found = self.service.listing.resolve(self.caller, name, app)
        info, command = found.info, found.command
        if json_ or self.json_always:
            self._json(command.listing(info.at, info.title))
            return
        self.out.print(
            Text(f"{command.signature()} — {command.description} — {info.title}, {info.at}"),
            soft_wrap=True,
        )
        props = command.input.get("properties", {})
        if props:
            self.out.print(arguments_table(command))
            order = list(command.positional) or command.arguments
            by_place = " ".join(a.upper() for a in order)
            by_name = " ".join(f"--{a}=…" for a in command.arguments)
            usage = f"{command.agent_name} {by_place}   or   {command.agent_name} {by_name}"
        else:
            usage = f"it takes no arguments: type {command.agent_name}"
        self.out.print(Text(usage, "dim"), soft_wrap=True)
        if command.examples:
            self.out.print(Text("for example: " + "   ".join(command.examples)), soft_wrap=True)
        if command.see_also:
            self.out.print(Text("see also: " + ", ".join(command.see_also)), soft_wrap=True)
        self.out.print(Text(f"man {command.name} shows its whole page", "dim"), soft_wrap=True)

    def man_command(self, name: str, app: str | None, *, json_: bool) -> None:
        """A command's whole page: what it is, who provides it, whether it only reads or
        is hard to undo, every argument with its type, limits and default, how to type it,
        examples, what it answers with, and the commands to see beside it."""
        found = self.service.listing.resolve(self.caller, name, app)
        info, command = found.info, found.command
        if json_ or self.json_always:
            self._json(command.listing(info.at, info.title))
            return
        for line in man_page(command, info.at, info.title):
            self.out.print(Text(line, style="bold" if line.isupper() else ""), soft_wrap=True)

    def show(self, result: Result, *, json_: bool = False, data: bool = False) -> None:
        """As `pasture command` prints it: the text, rows as a table (with `data`, a code
        command's data all formatted); `--json` the data as it is."""
        if json_ or self.json_always:
            self._json(result.data)
            return
        if data:
            command_answer(result.text, result.data, self.out)
            return
        if result.text:
            self.out.print(Text(result.text), soft_wrap=True)
        rows = result.data.get("rows")
        if isinstance(rows, list):
            if rows:
                rows_table(rows, self.out)
                if result.text and result.data.get("more"):
                    # said again where a person looks after a page of rows
                    self.out.print(Text(result.text), soft_wrap=True)
        elif result.data and not result.text:
            key_values(result.data, self.out)

    def _json(self, data: Any) -> None:
        self.out.file.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
        self.out.file.flush()


# -- the loops ---------------------------------------------------------------
def run_console(service: Service, caller: Caller, *, json_always: bool = False) -> int:
    """The console: a prompt at a terminal, plain lines from a pipe."""
    session = Session(service, caller, json_always=json_always)
    if sys.stdin.isatty() and sys.stdout.isatty():
        return _interactive(session, service.home / HISTORY)
    return _piped(session, sys.stdin)


def _piped(session: Session, lines: Iterable[str]) -> int:
    code = 0
    for line in lines:
        session.refresh()
        status = session.handle(line)
        if status:
            code = status
        if session.leaving:
            break
    return code


def _interactive(session: Session, history: Path) -> int:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.shortcuts import clear

    prompt: PromptSession[str] = PromptSession(
        history=FileHistory(str(history)),
        completer=CommandCompleter(lambda: session.known, BUILTINS),
        auto_suggest=AutoSuggestFromHistory(),
        complete_while_typing=False,
    )
    session.on_clear = clear

    asker: PromptSession[str] = PromptSession()  # its answers stay out of the history

    def confirm(what: str) -> bool:
        session.out.print(Text(f"about to run: {what}"), soft_wrap=True)
        try:
            answer = asker.prompt("run it? [y/N] ")
        except (EOFError, KeyboardInterrupt):
            return False
        return answer.strip().lower() in ("y", "yes")

    session.confirm = confirm
    session.bar = True
    name = session.caller.name or "nobody"
    session.out.print(
        Text(f"pasture console as {name} — help lists your commands, Tab completes, Ctrl-D leaves")
    )
    while not session.leaving:
        session.refresh()
        try:
            line = prompt.prompt(f"{name}> ")
        except KeyboardInterrupt:  # Ctrl-C drops the line being typed
            continue
        except EOFError:
            break
        session.handle(line)
    return 0
