"""`pasture console`: commands typed one line at a time, as the command line takes them.

A line is `NAME [ARGS…] [--x=y …] [--app A] [--yes] [--json]`, split as a shell would
(shlex) and mapped onto the command's arguments by the command line's own
`split_words` and `Words.bind`, so `log_run Ada 5 2026-09-01` here is
`pasture command log_run Ada 5 2026-09-01` there. A few words belong to the
console itself (`BUILTINS`). A refusal prints its sentence in red and the
console reads the next line; nothing ends it but Ctrl-D, `exit` or `quit`.

At a terminal the prompt is prompt_toolkit's, with Tab completion
(`CommandCompleter`) and a history in the data directory. With stdin piped it
reads plain lines and prints plain results, so a script can drive it; its exit
code is then the last refusal's (0 when every line was served).
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pasture.caller import Caller
from pasture.cli import _words
from pasture.cli._render import apps_table, key_values, rows_table
from pasture.cli._words import Confirm, Words, run_words, split_words
from pasture.errors import PastureError, UsageError
from pasture.naming import agent_name
from pasture.platform.listing import Offered
from pasture.platform.service import Command, Service
from pasture.result import Result
from pasture.schema import EXAMPLE_OF_FORMAT, requirement
from pasture.values import type_of_property

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
    return service.offered(caller)


def command_name(words: Sequence[str], known: Iterable[Known]) -> tuple[str, list[str]]:
    """The command a line names and the words after it (`cart add V60-02` is cart add)."""
    return _words.command_name(words, {k.command.agent_name for k in known})


# -- completion --------------------------------------------------------------
def _at_cursor(text: str) -> tuple[list[str], str, str]:
    """The finished words before the cursor, the word being typed as written, and its value.

    Quotes are followed as shlex follows them, so `--who="Ada L` is one word being typed.
    """
    start = len(text)
    quote: str | None = None
    escaped = False
    in_word = False
    for i, ch in enumerate(text):
        if not in_word and not ch.isspace():
            start, in_word = i, True
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch.isspace():
            in_word = False
    if not in_word:
        start = len(text)
    raw = text[start:]
    try:
        done = shlex.split(text[:start])
    except ValueError:
        done = text[:start].split()
    closed = (raw[:-1] if escaped else raw) + (quote or "")
    try:
        value = "".join(shlex.split(closed))
    except ValueError:
        value = raw
    return done, raw, value


def _quote(value: str) -> str:
    return shlex.quote(value) if value else "''"


def type_words(schema: dict[str, Any]) -> str:
    """An argument's type as a person reads it: `number`, `time`, `one of a, b`, `list of text`."""
    enum = schema.get("enum")
    if isinstance(enum, list):
        return "one of " + ", ".join(str(v) for v in enum)
    if schema.get("type") == "integer":
        return "whole number"
    kind = type_of_property(schema)
    if kind is not None:
        return kind
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, dict):
        return f"list of {type_words(items)}"
    declared = schema.get("type")
    if isinstance(declared, list):
        return " or ".join(str(t) for t in declared if t != "null") or "any"
    return str(declared or "any")


class CommandCompleter(Completer):
    """Tab completion: command names, then `--argument=` names, then values.

    Values come from the argument's `enum`, `true`/`false` for a boolean, and a
    code command's `suggest(key, partial)` hook when it has one (its answers may
    be strings or `{value, description}`).
    """

    def __init__(
        self,
        known: Callable[[], Sequence[Known]],
        builtins: Iterable[str] = BUILTINS,
    ) -> None:
        self.known = known
        self.builtins = list(builtins)

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        done, raw, value = _at_cursor(document.text_before_cursor)
        try:
            yield from self._complete(self.known(), done, raw, value)
        except Exception:  # completion never ends the prompt, whatever an app's hook does
            return

    def _complete(
        self, known: Sequence[Known], done: list[str], raw: str, value: str
    ) -> Iterator[Completion]:
        back = -len(raw)
        if not done:
            yield from self._names(known, value, back, builtins=True)
            return
        # `help NAME` and `man NAME` complete NAME as a line's first words are, and no more.
        named = done[1:] if done[0] in ("help", "man") else done
        if not named:
            yield from self._names(known, value, back, builtins=False)
            return
        spaced = [k for k in known if " " in k.command.name]
        following = self._next_words(spaced, named, value)
        if following or named is not done:
            for word, meta in following:
                yield Completion(word, back, display_meta=meta)
            return
        name, rest = command_name(done, known)
        agent = agent_name(name)
        matches = [k for k in known if k.command.agent_name == agent]
        if not matches:
            return
        words = _lenient(rest)
        if words.app is not None:
            matches = [k for k in matches if words.app in (k.at, k.at.split("/", 1)[-1])] or matches
        command = matches[0].command
        # `--level ` waits for the value of level, as split_words reads it.
        if rest and rest[-1].startswith("--") and "=" not in rest[-1] and not raw.startswith("--"):
            key = rest[-1][2:].replace("-", "_")
            if key == "app":
                yield from self._apps(known, matches, value, back, "")
                return
            if key in command.arguments:
                yield from self._values(command, key, value, back, "")
                return
        if raw.startswith("--") and "=" in raw:
            key, _, typed = value[2:].partition("=")
            key = key.replace("-", "_")
            prefix = f"--{key}="
            if key == "app":
                yield from self._apps(known, matches, typed, back, prefix)
            else:
                yield from self._values(command, key, typed, back, prefix)
            return
        if not raw.startswith("-"):
            order = list(command.positional) or command.arguments
            free = [a for a in order if a not in words.named]
            if len(words.positional) < len(free):
                yield from self._values(command, free[len(words.positional)], value, back, "")
            if raw:
                return
        yield from self._arguments(command, words, value, back, multi_app=len(matches) > 1)

    def _names(
        self, known: Sequence[Known], typed: str, back: int, *, builtins: bool
    ) -> Iterator[Completion]:
        seen: set[str] = set()
        for k in known:
            cmd = k.command
            candidates = [cmd.agent_name]
            if " " in cmd.name:
                candidates.append(cmd.name.split()[0])
            for name in candidates:
                if name not in seen and name.startswith(typed):
                    seen.add(name)
                    meta = cmd.description if name == cmd.agent_name else ""
                    yield Completion(name, back, display_meta=meta)
        if builtins:
            for name in self.builtins:
                if name not in seen and name.startswith(typed):
                    seen.add(name)
                    yield Completion(name, back, display_meta=BUILTINS.get(name, ""))

    @staticmethod
    def _next_words(spaced: Sequence[Known], done: list[str], typed: str) -> list[tuple[str, str]]:
        """The next word of multi-word names that begin with the words typed so far."""
        found: dict[str, str] = {}
        for k in spaced:
            parts = k.command.name.split()
            if len(parts) > len(done) and parts[: len(done)] == done:
                word = parts[len(done)]
                if word.startswith(typed) and word not in found:
                    last = len(parts) == len(done) + 1
                    found[word] = k.command.description if last else ""
        return list(found.items())

    @staticmethod
    def _arguments(
        command: Command, words: Words, typed: str, back: int, *, multi_app: bool
    ) -> Iterator[Completion]:
        order = list(command.positional) or command.arguments
        filled = set(words.named) | set(
            [a for a in order if a not in words.named][: len(words.positional)]
        )
        props = command.input.get("properties", {})
        for name in command.arguments:
            option = f"--{name}="
            if name not in filled and option.startswith(typed):
                schema = props.get(name, {})
                meta = type_words(schema)
                if schema.get("description"):
                    meta += f" — {schema['description']}"
                yield Completion(option, back, display_meta=meta)
        if words.app is None and "--app=".startswith(typed) and (multi_app or typed):
            yield Completion("--app=", back, display_meta="the app, where two have this command")
        if not words.json and "--json".startswith(typed) and typed:
            yield Completion("--json", back, display_meta="print the data as JSON")

    @staticmethod
    def _values(
        command: Command, key: str, typed: str, back: int, prefix: str
    ) -> Iterator[Completion]:
        schema = command.input.get("properties", {}).get(key, {})
        if not isinstance(schema, dict):
            return
        offered: list[tuple[str, str]] = []
        enum = schema.get("enum")
        items = schema.get("items")
        if not isinstance(enum, list) and isinstance(items, dict):
            enum = items.get("enum")
        if isinstance(enum, list):
            offered = [(_text(v), "") for v in enum]
        elif schema.get("type") == "boolean" or type_of_property(schema) == "bool":
            offered = [("true", ""), ("false", "")]
        elif type_of_property(schema) == "time":
            offered = [(date.today().isoformat(), "today")]
        suggest = getattr(command, "suggest", None)
        if callable(suggest):
            offered += [_suggestion(s) for s in suggest(key, typed) or []]
        seen: set[str] = set()
        for value, meta in offered:
            if value not in seen and value.startswith(typed):
                seen.add(value)
                yield Completion(prefix + _quote(value), back, display=value, display_meta=meta)

    @staticmethod
    def _apps(
        known: Sequence[Known], matches: Sequence[Known], typed: str, back: int, prefix: str
    ) -> Iterator[Completion]:
        for at in dict.fromkeys(k.at for k in (matches or known)):
            if at.startswith(typed):
                yield Completion(prefix + at, back, display=at)


def _arguments_table(command: Command) -> Table:
    """Each argument: its name, type, whether it is needed (or its default), its description."""
    table = Table(show_edge=False, show_header=True, header_style="bold", box=None)
    for column in ("argument", "type", "", "description"):
        table.add_column(column)
    for arg, schema in command.input.get("properties", {}).items():
        schema = schema if isinstance(schema, dict) else {}
        need = "required" if arg in command.required else "optional"
        if schema.get("default") is not None:
            need = f"default {_text(schema['default'])}"
        table.add_row(arg, type_words(schema), need, str(schema.get("description") or ""))
    return table


def man_page(command: Command, at: str, app_title: str) -> list[str]:
    """The lines of `man NAME`: headings in capitals, the rest indented under them."""
    title = f"{command.name} — {command.title}" if command.title else command.name
    provider = (
        f"a {command.handler} in {at}'s worker.py"
        if command.handler
        else command.provider or f"{at}, declared"
    )
    what = (
        "it only reads"
        if command.read_only
        else "it is hard to undo: you are asked before it runs (--yes runs it without asking)"
        if command.consequential
        else "it changes things"
    )
    lines = [title, f"  {command.description}", ""]
    lines += ["ABOUT", f"  provider: {provider}", f"  app: {app_title} ({at})", f"  {what}"]
    lines += ["  agents call it " + command.agent_name, ""]
    props = command.input.get("properties", {})
    lines.append("ARGUMENTS")
    if not props:
        lines.append("  none")
    for arg, schema in props.items():
        schema = schema if isinstance(schema, dict) else {}
        need = "required" if arg in command.required else "optional"
        if schema.get("default") is not None:
            need = f"optional, default {_text(schema['default'])}"
        lines.append(f"  {arg} — {type_words(schema)}, {need}")
        if schema.get("description"):
            lines.append(f"      {schema['description']}")
        limits = limits_of(schema)
        if limits:
            lines.append(f"      {'; '.join(limits)}")
    order = list(command.positional) or command.arguments
    lines += ["", "USAGE"]
    if props:
        lines.append(f"  {command.name} {' '.join(a.upper() for a in order)}")
        lines.append(f"  {command.name} {' '.join(f'--{a}=…' for a in command.arguments)}")
    else:
        lines.append(f"  {command.name}")
    lines += ["", "EXAMPLES"]
    lines += [f"  {e}" for e in command.examples] or [f"  {example_line(command)}"]
    if command.output is not None:
        out = command.output.get("properties", {})
        lines += ["", "ANSWERS WITH"]
        lines += [f"  {k} — {type_words(v if isinstance(v, dict) else {})}" for k, v in out.items()]
        if not out:
            lines.append(f"  {type_words(command.output)}")
    if command.see_also:
        lines += ["", "SEE ALSO", "  " + ", ".join(command.see_also)]
    return lines


# The keywords `man` words, in the order it says them; a time's format is its type's to say.
_LIMITS = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "uniqueItems",
    "const",
    "format",
)


def limits_of(schema: dict[str, Any]) -> list[str]:
    """What an argument's schema holds a value to, in the words its refusals use, less the
    verb: `at least 1`, `at most 40 characters`, `matches the pattern ^[a-z]+$`."""
    said: list[str] = []
    for key in _LIMITS:
        if key not in schema or (key == "uniqueItems" and schema[key] is not True):
            continue
        if key == "format" and (schema[key] not in EXAMPLE_OF_FORMAT or _is_time(schema)):
            continue
        words = requirement(key, schema[key])
        # `is 5` stays whole: a lone value needs its verb to read as a limit.
        said.append(words if key == "const" else words.removeprefix("is ").removeprefix("has "))
    return said


def _is_time(schema: dict[str, Any]) -> bool:
    return type_of_property(schema) == "time"


_EG = re.compile(r"\be\.g\.,?\s+([^\s,;)]+)")


def example_line(command: Command) -> str:
    """A line that runs the command, made from its arguments when it gives no example:
    a value each required argument could take, or its name in capitals where no value
    can be made up (an id, a pattern)."""
    props = command.input.get("properties", {})
    order = list(command.positional) or command.arguments
    words = [command.name]
    for arg in order:
        if arg not in command.required:
            continue
        schema = props.get(arg)
        words.append(_quote(_sample(arg, schema if isinstance(schema, dict) else {})))
    return " ".join(words)


def _sample(arg: str, schema: dict[str, Any]) -> str:
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return _text(enum[0])
    if "default" in schema:
        return _text(schema["default"])
    kind = type_of_property(schema)
    if schema.get("type") == "boolean":
        return "true"
    if schema.get("type") in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        return _text(max(int(low) + (1 if "exclusiveMinimum" in schema else 0), 1))
    if kind == "time":
        return date.today().isoformat()
    if kind == "url":
        return "https://example.org/"
    found = _EG.search(str(schema.get("description") or ""))
    if found:
        return found.group(1)
    if kind == "text" and "pattern" not in schema:
        return arg.replace("_", " ")
    return arg.upper()


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _suggestion(item: Any) -> tuple[str, str]:
    """A `suggest` answer as (value, description): a string, a dict, or an object with `.value`."""
    if isinstance(item, dict):
        return _text(item.get("value", "")), str(item.get("description") or "")
    value = getattr(item, "value", None)
    if value is not None:
        return _text(value), str(getattr(item, "description", None) or "")
    return _text(item), ""


def _lenient(words: Sequence[str]) -> Words:
    """The words after a name, as the command line reads them, or as much as reads cleanly."""
    try:
        return split_words(words)
    except UsageError:
        return Words(positional=[w for w in words if not w.startswith("--")])


def by_provider(offered: Sequence[Offered]) -> str:
    """`help`'s listing: `commands`' lines app by app, with an app's code commands under
    their provider (`## ada/cart`, then `cart:` and its commands indented) where its first
    one stands; declared commands and handlers keep their own lines."""
    apps: dict[str, list[list[str]]] = {}
    grouped: dict[tuple[str, str], list[str]] = {}
    for o in offered:
        items = apps.setdefault(o.at, [[f"## {o.at}"]])
        command = o.command
        if command.family != "code" or command.handler is not None:
            items.append([o.line()])
            continue
        provider = command.provider or command.name.split()[0]
        group = grouped.get((o.at, provider))
        if group is None:
            group = grouped[(o.at, provider)] = [f"{provider}:"]
            items.append(group)
        group.append(f"  {o.line()}")
    return "\n\n".join(
        "\n".join(line for item in items for line in item) for items in apps.values()
    )


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
        self.out = out or Console(highlight=False)
        self.err = err or Console(stderr=True, highlight=False)
        self.known: list[Known] = []
        self.leaving = False
        self.on_clear: Callable[[], None] = self.out.clear
        # Asks before a consequential command runs; None (piped) refuses it without --yes.
        self.confirm: Confirm | None = None

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
        result = run_words(self.service, self.caller, name, typed, self.confirm)
        self.show(result, json_=typed.json)

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
            listing = self.service.list_commands(self.caller, words.app)
            if head == "help" and listing.data.get("commands"):
                offered = self.service.offered(self.caller, words.app)
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
            self.show(self.service.status(self.caller), json_=words.json)
        elif head == "apps":
            self.apps(json_=words.json)

    def apps(self, *, json_: bool) -> None:
        apps = self.service.list_apps(self.caller)
        if json_ or self.json_always:
            self._json({"apps": [a.as_data() for a in apps]})
        elif not apps:
            self.out.print(Text("you have no apps yet — deploy one with pasture deploy DIR"))
        else:
            apps_table(apps, self.out)

    def help_command(self, name: str, app: str | None, *, json_: bool) -> None:
        """One command: its signature and sentence, then each argument's type and description."""
        info, command = self.service.resolve_command(self.caller, name, app)
        if json_ or self.json_always:
            self._json(command.listing(info.at, info.title))
            return
        self.out.print(
            Text(f"{command.signature()} — {command.description} — {info.title}, {info.at}"),
            soft_wrap=True,
        )
        props = command.input.get("properties", {})
        if props:
            self.out.print(_arguments_table(command))
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
        info, command = self.service.resolve_command(self.caller, name, app)
        if json_ or self.json_always:
            self._json(command.listing(info.at, info.title))
            return
        for line in man_page(command, info.at, info.title):
            self.out.print(Text(line, style="bold" if line.isupper() else ""), soft_wrap=True)

    def show(self, result: Result, *, json_: bool = False) -> None:
        """As `pasture command` prints it: the text, rows as a table; `--json` the data as it is."""
        if json_ or self.json_always:
            self._json(result.data)
            return
        if result.text:
            self.out.print(Text(result.text), soft_wrap=True)
        rows = result.data.get("rows")
        if isinstance(rows, list):
            if rows:
                rows_table(rows, self.out)
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
        completer=CommandCompleter(lambda: session.known),
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
