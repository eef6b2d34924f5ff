"""Tab completion at the console: command names, their words, arguments and values.

What is offered follows the line as the command line would read it (`split_words`):
a command's name (either form, `cart add` or `cart_add`), then the arguments not
given yet, then the values an argument takes — its enum, true/false, the apps
that have the command, or what the command's own `suggest` hook answers.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import date
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from pasture.cli import _words
from pasture.cli._man import quoted, type_words, value_text
from pasture.cli._words import Words, split_words
from pasture.errors import UsageError
from pasture.names import agent_name
from pasture.platform import CommandInfo, Offered
from pasture.values import type_of_property

# A command the caller can run, with its app, as the platform offers it.
Known = Offered


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


class CommandCompleter(Completer):
    """Tab completion: command names, then `--argument=` names, then values.

    Values come from the argument's `enum`, `true`/`false` for a boolean, and a
    code command's `suggest(key, partial)` hook when it has one (its answers may
    be strings or `{value, description}`).
    """

    def __init__(self, known: Callable[[], Sequence[Known]], builtins: Mapping[str, str]) -> None:
        self.known = known
        self.builtins = dict(builtins)  # the console's own words, and what each does

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
        name, rest = _words.command_name(done, {k.command.agent_name for k in known})
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
                    yield Completion(name, back, display_meta=self.builtins[name])

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
        command: CommandInfo, words: Words, typed: str, back: int, *, multi_app: bool
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
        command: CommandInfo, key: str, typed: str, back: int, prefix: str
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
            offered = [(value_text(v), "") for v in enum]
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
                yield Completion(prefix + quoted(value), back, display=value, display_meta=meta)

    @staticmethod
    def _apps(
        known: Sequence[Known], matches: Sequence[Known], typed: str, back: int, prefix: str
    ) -> Iterator[Completion]:
        for at in dict.fromkeys(k.at for k in (matches or known)):
            if at.startswith(typed):
                yield Completion(prefix + at, back, display=at)


def _suggestion(item: Any) -> tuple[str, str]:
    """A `suggest` answer as (value, description): a string, a dict, or an object with `.value`."""
    if isinstance(item, dict):
        return value_text(item.get("value", "")), str(item.get("description") or "")
    value = getattr(item, "value", None)
    if value is not None:
        return value_text(value), str(getattr(item, "description", None) or "")
    return value_text(item), ""


def _lenient(words: Sequence[str]) -> Words:
    """The words after a name, as the command line reads them, or as much as reads cleanly."""
    try:
        return split_words(words)
    except UsageError:
        return Words(positional=[w for w in words if not w.startswith("--")])


__all__ = ["CommandCompleter"]
