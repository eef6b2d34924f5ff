"""Verbs whose parsers are made only when the command line names one.

`pasture --help` lists two dozen verbs, and making every verb's parser and options
would cost more than starting Python does (argparse looks up a translation for each
parser it makes). So `build_parser` describes each verb to a `Later`, which keeps
what it is told, and the verb's parser is made from it when the command line
chooses that verb — or when something looks it up, as `verbs()` does. What is
printed and parsed is argparse's own, as if every parser had been made at once.
"""

from __future__ import annotations

import argparse
import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs `pasture --help` a millisecond
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    _Base = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    _Base = argparse._SubParsersAction


class Help(argparse.HelpFormatter):
    """argparse's help, as wide as the terminal — found the way shutil finds it, without
    importing shutil (and the archive modules it brings along) for `pasture --help`."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
        **more: Any,
    ) -> None:
        width = _columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width, **more)


def _columns() -> int:
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class Later:
    """A verb's parser, described: what it is given when it is made."""

    def __init__(self) -> None:
        self._steps: list[Callable[[argparse.ArgumentParser], object]] = []

    def add_argument(self, *names: str, **options: Any) -> None:
        self._steps.append(lambda parser: parser.add_argument(*names, **options))

    def set_defaults(self, **defaults: Any) -> None:
        self._steps.append(lambda parser: parser.set_defaults(**defaults))

    def add_subparsers(self, **options: Any) -> Verbs:
        verbs = Verbs()
        self._steps.append(lambda parser: verbs.attach(parser, **options))
        return verbs

    def make(self, parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
        for step in self._steps:
            step(parser)
        return parser


class Verbs:
    """A parser's verbs: each listed at once, its parser made when it is chosen."""

    def __init__(self) -> None:
        self._told: list[tuple[str, dict[str, Any], Later]] = []
        self._action: _Chosen | None = None

    def add_parser(self, name: str, **options: Any) -> Later:
        later = Later()
        if self._action is None:
            self._told.append((name, options, later))
        else:
            self._action.add_later(name, options, later)
        return later

    def attach(self, parser: argparse.ArgumentParser, **options: Any) -> Verbs:
        """Give `parser` these verbs (`add_subparsers`' options); those told so far, and any
        told from now on."""
        action = parser.add_subparsers(action=_Chosen, **options)
        assert isinstance(action, _Chosen)
        self._action = action
        for name, told, later in self._told:
            action.add_later(name, told, later)
        self._told.clear()
        return self


class _Parsers(dict[str, argparse.ArgumentParser]):
    """Each verb's parser by name, made the first time it is looked up."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []
        self.later: dict[str, Callable[[], argparse.ArgumentParser]] = {}

    def __missing__(self, name: str) -> argparse.ArgumentParser:
        make = self.later.pop(name, None)
        if make is None:
            raise KeyError(name)
        parser = self[name] = make()
        return parser

    def __contains__(self, name: object) -> bool:
        return name in self.later or super().__contains__(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


class _Chosen(_Base):
    """argparse's subcommands, whose parsers `_Parsers` makes when they are looked up."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._parsers = _Parsers()
        self._name_parser_map = self.choices = self._parsers

    def add_later(self, name: str, options: dict[str, Any], later: Later) -> None:
        rest = dict(options)
        summary = rest.pop("help", None)
        if summary is not None:  # listed now, as `add_parser` lists it
            self._choices_actions.append(self._ChoicesPseudoAction(name, (), summary))
        self._parsers.names.append(name)
        # Made by argparse's own `add_parser` (its prog, its parser class), told the rest.
        self._parsers.later[name] = lambda: later.make(self.add_parser(name, **rest))


__all__ = ["Help", "Later", "Verbs"]
