"""Tab completion at the console (pasture.cli._completion): command names and their words,
arguments not given yet, values from an enum, a boolean or a command's own hook."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from helpers.club import RUNS
from pasture.cli._completion import CommandCompleter, _at_cursor
from pasture.cli.console import BUILTINS, Known, known_commands
from pasture.commands.model import Command, Context
from pasture.platform.service import Service
from pasture.result import Result


def _run(args: Mapping[str, Any], ctx: Context) -> Result:
    return Result("done", dict(args))


SIZES = {"type": "string", "enum": ["small", "large"], "description": "How big"}
CART_ADD = Command(
    name="cart add",
    description="Add a product to the cart",
    input={
        "type": "object",
        "properties": {"sku": {"type": "string"}, "size": SIZES, "gift": {"type": "boolean"}},
        "required": ["sku"],
    },
    read_only=False,
    run=_run,
    family="code",
    positional=("sku", "size"),
    suggest=lambda key, partial: (
        [{"value": "V60-02", "description": "Dripper"}, "V60 filters"] if key == "sku" else []
    ),
)
CART_STATUS = Command(
    name="cart status", description="The cart", input={}, read_only=True, run=_run, family="code"
)


@pytest.fixture
def completer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CommandCompleter:
    monkeypatch.setenv("PASTURE_USER", "ada")
    service = Service(tmp_path / "home")
    owner = service.local_owner()
    service.deploy(owner, RUNS)
    known = [
        *known_commands(service, owner),
        Known("ada/shop", "Shop", "127.0.0.1:8000/ada/shop/", CART_ADD),
        Known("ada/shop", "Shop", "127.0.0.1:8000/ada/shop/", CART_STATUS),
    ]
    return CommandCompleter(lambda: known, BUILTINS)


def complete(completer: CommandCompleter, text: str) -> list[str]:
    """What Tab offers after `text`, as the line would read once one is taken."""
    found = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
    return [text[: len(text) + c.start_position] + c.text for c in found]


def test_tab_completes_command_names_and_the_console_s_words(completer: CommandCompleter) -> None:
    assert complete(completer, "lo") == ["log_run"]
    assert complete(completer, "le") == ["leaderboard"]
    assert set(complete(completer, "")) >= {"log_run", "leaderboard", "since", "cart_add", "help"}
    assert complete(completer, "st") == ["status"]
    assert complete(completer, "help l") == ["help log_run", "help leaderboard"]
    assert complete(completer, "help cart s") == ["help cart status"]
    assert complete(completer, "help log_run ") == []


def test_tab_completes_the_words_of_a_command_named_in_words(completer: CommandCompleter) -> None:
    assert complete(completer, "ca") == ["cart_add", "cart", "cart_status"]
    assert complete(completer, "cart ") == ["cart add", "cart status"]
    assert complete(completer, "cart s") == ["cart status"]


def test_tab_completes_arguments_not_given_yet(completer: CommandCompleter) -> None:
    assert complete(completer, "log_run --") == [
        "log_run --who=",
        "log_run --miles=",
        "log_run --at=",
        "log_run --app=",
        "log_run --json",
    ]
    assert complete(completer, "log_run --m") == ["log_run --miles="]
    assert complete(completer, "log_run Ada --") == [
        "log_run Ada --miles=",
        "log_run Ada --at=",
        "log_run Ada --app=",
        "log_run Ada --json",
    ]
    assert complete(completer, "log_run --miles 5 --w") == ["log_run --miles 5 --who="]
    assert complete(completer, "leaderboard --") == ["leaderboard --app=", "leaderboard --json"]


def test_tab_completes_values_from_enum_bool_and_suggest(completer: CommandCompleter) -> None:
    assert complete(completer, "cart add --size=") == [
        "cart add --size=small",
        "cart add --size=large",
    ]
    assert complete(completer, "cart_add --size=l") == ["cart_add --size=large"]
    assert complete(completer, "cart add --size ") == [
        "cart add --size small",
        "cart add --size large",
    ]
    assert complete(completer, "cart add --gift=") == [
        "cart add --gift=true",
        "cart add --gift=false",
    ]
    # The next positional argument's values come first, then the arguments by name.
    assert complete(completer, "cart add V60-02 ")[:2] == [
        "cart add V60-02 small",
        "cart add V60-02 large",
    ]
    assert complete(completer, "cart add --sku=V6") == [
        "cart add --sku=V60-02",
        "cart add --sku='V60 filters'",
    ]
    assert complete(completer, "cart add V") == ["cart add V60-02", "cart add 'V60 filters'"]
    assert complete(completer, "log_run --app=") == ["log_run --app=ada/runs"]


def test_a_hook_that_fails_offers_nothing_and_keeps_the_prompt() -> None:
    def broken(key: str, partial: str) -> list[str]:
        raise RuntimeError("the catalog is down")

    failing = replace(CART_ADD, suggest=broken)
    completer = CommandCompleter(
        lambda: [Known("ada/shop", "Shop", "127.0.0.1:8000/ada/shop/", failing)], BUILTINS
    )
    assert complete(completer, "cart add --sku=") == []


words = st.lists(st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"])), max_size=5)


@given(words)
def test_the_word_at_the_cursor_is_the_word_shlex_reads(typed: list[str]) -> None:
    text = " ".join(shlex.quote(w) for w in typed)
    done, raw, value = _at_cursor(text)
    if typed:
        assert done == typed[:-1] and value == typed[-1] and text.endswith(raw)
    else:
        assert (done, raw) == ([], "")
    assert _at_cursor(text + " ")[:2] == (typed, "")
