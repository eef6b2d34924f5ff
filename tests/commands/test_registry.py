"""Code commands: registering, the rules on names and fields, running, status, changes.

Served on its own over MCP: tests/mcp/test_registry.py."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import anyio
import pytest

from helpers.cart import cart_registry
from pasture import Registry, Result
from pasture.caller import Caller
from pasture.commands.model import Context
from pasture.commands.registry import BadCommand, CommandFailed
from pasture.errors import NotFound, Refused, UsageError


def problems(name: str = "cart add", **fields: Any) -> str:
    registry = Registry()
    given: dict[str, Any] = {
        "description": "Add a product",
        "annotations": {},
        "run": lambda args, ctx: None,
    }
    given.update(fields)
    with pytest.raises(BadCommand) as bad:
        registry.register(name, **given)
    return str(bad.value)


# -- what a command is -----------------------------------------------------------------
def test_a_registered_command_is_a_code_command_of_the_one_model() -> None:
    registry, _ = cart_registry()
    add = registry.get("cart add")
    assert add is not None and registry.get("cart_add") is add
    assert (add.family, add.name, add.agent_name, add.provider) == (
        "code",
        "cart add",
        "cart_add",
        "cart",
    )
    assert add.signature() == "cart_add(sku, qty?)"
    assert (add.read_only, add.consequential, add.title) == (False, False, "Add to the cart")
    assert add.positional == ("sku", "qty")
    entry = add.listing("ada/shop", "Shop")
    assert entry["name"] == "cart_add" and entry["readOnly"] is False
    assert entry["input"]["additionalProperties"] is False
    assert entry["examples"] == ["cart add V60-02 --qty=2"] and entry["seeAlso"] == ["cart status"]
    assert [c.agent_name for c in registry.commands()] == ["cart_add", "cart_status"]


def test_the_decorator_registers_the_function_and_returns_it() -> None:
    registry = Registry()

    @registry.command("notes count", description="How many notes", annotations={"readOnly": True})
    def count(args: dict[str, Any], ctx: Context) -> Result:
        return Result("3 notes", {"count": 3})

    assert count({}, registry.context()).text == "3 notes"
    assert registry.run("notes count").data == {"count": 3}


def test_the_provider_is_the_first_word_unless_named() -> None:
    registry = Registry()
    registry.register("menu go", description="Go", annotations={}, run=lambda a, c: None)
    registry.register(
        "go home", provider="menu", description="Home", annotations={}, run=lambda a, c: None
    )
    assert [c.provider for c in registry.commands()] == ["menu", "menu"]
    assert registry.providers() == ["menu"]


# -- the rules ---------------------------------------------------------------------------
@pytest.mark.parametrize("word", ["help", "man", "status", "clear"])
def test_names_starting_with_a_clients_word_are_refused(word: str) -> None:
    assert problems(f"{word} me") == (
        f"{word} me: names starting with help, man, status or clear are refused — those "
        "words belong to clients; start the name with the part of the app that owns it, "
        "like cart status"
    )


@pytest.mark.parametrize("name", ["Cart add", "cart  add", "cart-add", " cart", "", "cart add!"])
def test_a_name_is_lowercase_words(name: str) -> None:
    assert "the name is lowercase words (a-z, 0-9, _) separated by one space" in problems(name)


@pytest.mark.parametrize("argument", ["help", "json", "wide", "app"])
def test_inputs_named_like_a_clients_flag_are_refused(argument: str) -> None:
    schema = {"type": "object", "properties": {argument: {"type": "string"}}}
    assert problems(input=schema) == (
        f"cart add: input: an input named {argument} is refused — help, json, wide, app belong "
        "to clients; name it otherwise"
    )


def test_a_command_hard_to_undo_takes_no_input_named_confirm() -> None:
    """`confirm` beside its arguments is the person's yes (`pasture.asking`)."""
    schema = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
    assert problems(input=schema, annotations={"consequential": True}) == (
        "cart add: input: confirm is the person's yes to a command that is hard to undo, sent "
        "beside its arguments — call this argument something else"
    )
    Registry().register("cart add", description="Add", input=schema, annotations={}, run=print)


def test_annotations_are_required_and_know_two_words() -> None:
    registry = Registry()
    with pytest.raises(TypeError):
        registry.register(  # type: ignore[call-arg]
            "cart add", description="Add", run=lambda a, c: None
        )
    assert problems(annotations=None) == (
        'cart add: annotations are required: {"readOnly": True} if it changes nothing, '
        '{"consequential": True} if it is hard to undo, {} for an ordinary change'
    )
    assert problems(annotations={"readonly": True}) == (
        "cart add: annotations know readOnly and consequential, not readonly"
    )
    assert problems(annotations={"readOnly": "yes"}) == (
        "cart add: annotations' readOnly is true or false"
    )
    assert problems(annotations={"readOnly": True, "consequential": True}) == (
        "cart add: a readOnly command changes nothing, so it is not consequential — keep one"
    )


def test_a_status_command_only_reads() -> None:
    assert problems("cart status") == (
        "cart status: cart status is its provider's status command, so it only reads — "
        'give it annotations={"readOnly": True}'
    )


def test_every_problem_with_a_command_comes_back_at_once() -> None:
    message = problems(
        "cart add",
        description="two\nlines",
        run="not a function",
        input={"type": "object", "properties": {"sku": {"type": "strin"}}, "required": ["x"]},
        positional=["qty"],
    )
    assert message == (
        "cart add: description is one line that says what the command does; "
        "run is a function run(args, ctx) that returns text and data; "
        "input: sku's type is one of string, integer, number, boolean, array, object, null, "
        "or a list of them; input: required names x, which is not in properties; "
        "positional names qty, which is not an input property"
    )


def test_a_name_is_registered_once_in_either_form() -> None:
    registry, _ = cart_registry()
    with pytest.raises(BadCommand) as bad:
        registry.register("cart_add", description="Again", annotations={}, run=lambda a, c: None)
    assert str(bad.value) == (
        "cart_add: cart_add is registered already — call the function its register() "
        "returned to remove it first"
    )


# -- running -----------------------------------------------------------------------------
def test_running_checks_the_input_first_and_people_may_type_either_name() -> None:
    registry, cart = cart_registry()
    assert registry.run("cart add", {"sku": "V60-02", "qty": 2}).text == "Added 2 × V60-02."
    assert registry.run("cart_add", {"sku": "V60-02"}).data == {"count": 3}
    with pytest.raises(UsageError) as refused:
        registry.run("cart add", {"qty": 0, "colour": "red"})
    assert refused.value.sentence == (
        "qty is at least 1; sku is required; colour is not an argument — the arguments are sku, qty"
    )
    assert cart.lines == {"V60-02": 3}


def test_console_text_is_converted_and_typed_values_are_not() -> None:
    registry, _ = cart_registry()
    assert registry.run("cart add", {"sku": "A", "qty": "2"}, typed_text=True).data == {"count": 2}
    with pytest.raises(UsageError, match=r"^qty is a whole number$"):
        registry.run("cart add", {"sku": "A", "qty": "2"})
    with pytest.raises(UsageError, match=r"^qty is a whole number$"):
        registry.run("cart add", {"sku": "A", "qty": True})


def test_a_run_answers_with_a_result_a_dict_text_or_nothing() -> None:
    registry = Registry()
    answers: dict[str, Any] = {
        "a result": Result("r", {"x": 1}),
        "a dict": {"text": "d", "data": {"y": 2}},
        "text only": "just words",
        "nothing": None,
    }
    for i, answer in enumerate(answers.values()):
        registry.register(
            f"say a{i}", description="Say", annotations={}, run=lambda a, c, v=answer: v
        )
    got = [registry.run(f"say a{i}") for i in range(len(answers))]
    assert got == [
        Result("r", {"x": 1}),
        Result("d", {"y": 2}),
        Result("just words", {}),
        Result("done", {}),
    ]


def test_an_async_run_is_awaited() -> None:
    registry = Registry()

    async def later(args: dict[str, Any], ctx: Context) -> Result:
        await anyio.sleep(0)
        return Result("later", {})

    registry.register("say later", description="Say", annotations={}, run=later)
    assert registry.run("say later").text == "later"

    async def from_async_code() -> str:  # a program using the registry from its own loop
        return registry.run("say later").text

    assert asyncio.run(from_async_code()) == "later"


def test_a_refusal_is_the_sentence_and_a_bug_is_a_plain_sentence_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = Registry()

    def refuse(args: dict[str, Any], ctx: Context) -> Result:
        raise Refused("the cart is locked — pay first")

    def crash(args: dict[str, Any], ctx: Context) -> Result:
        raise KeyError("secret internal detail")

    registry.register("cart pay", description="Pay", annotations={}, run=refuse)
    registry.register("cart crash", description="Crash", annotations={}, run=crash)
    registry.register("cart odd", description="Odd", annotations={}, run=lambda a, c: [1, 2])
    with pytest.raises(Refused) as refused:
        registry.run("cart pay")
    assert refused.value.sentence == "the cart is locked — pay first"
    with (
        caplog.at_level(logging.ERROR, logger="pasture.commands"),
        pytest.raises(CommandFailed) as failed,
    ):
        registry.run("cart crash")
    assert failed.value.sentence == (
        "cart crash failed in its own code (KeyError) — nothing about the request was wrong "
        "as far as pasture can tell; the server's log has the details"
    )
    assert "secret internal detail" not in failed.value.sentence
    assert any("secret internal detail" in (r.exc_text or "") for r in caplog.records)
    with pytest.raises(CommandFailed, match="answered with something other than text and data"):
        registry.run("cart odd")


def test_an_unknown_command_names_the_ones_there_are() -> None:
    registry, _ = cart_registry()
    with pytest.raises(NotFound) as missing:
        registry.run("cart empty")
    assert (
        missing.value.sentence == "no command cart_empty — the commands are cart_add, cart_status"
    )


def test_a_command_gets_the_caller_and_the_app() -> None:
    ada = Caller("e1", "Ada")
    registry = Registry(caller=ada, at="ada/shop")
    seen: list[tuple[Caller, str]] = []
    registry.register(
        "who am", description="Who", annotations={}, run=lambda a, c: seen.append((c.caller, c.at))
    )
    registry.run("who am")
    assert seen == [(ada, "ada/shop")]
    registry.register(
        "shop rows", description="Rows", annotations={}, run=lambda a, c: c.store.query(".x!")
    )
    with pytest.raises(Refused, match="runs outside any app, so it has no store"):
        registry.run("shop rows")


# -- status --------------------------------------------------------------------------------
def test_a_bare_status_runs_every_providers_status() -> None:
    registry, _ = cart_registry()
    registry.register(
        "menu status",
        description="Where the menu is",
        annotations={"readOnly": True},
        run=lambda a, c: Result("at home\nsecond line", {"page": "home"}),
    )
    registry.run("cart add", {"sku": "A", "qty": 2})
    status = registry.run("status")
    assert status.text == "cart: 2 items\nmenu: at home"
    assert status.data == {"cart": {"count": 2}, "menu": {"page": "home"}}
    assert Registry().run("status").text == "no provider has a status command"


def test_a_status_that_refuses_shows_its_sentence_and_the_others_answer() -> None:
    registry, _ = cart_registry()

    def broken(args: dict[str, Any], ctx: Context) -> Result:
        raise Refused("the menu is not loaded yet")

    registry.register("menu status", description="M", annotations={"readOnly": True}, run=broken)
    assert registry.run("status").text == "cart: 0 items\nmenu: the menu is not loaded yet"


# -- register when it makes sense, remove when it does not ------------------------------------
def test_register_returns_the_remover_and_listeners_hear_both() -> None:
    registry, _ = cart_registry()
    heard: list[list[str]] = []
    stop = registry.on_change(lambda: heard.append([c.agent_name for c in registry.commands()]))
    remove = registry.register(
        "cart checkout", description="Pay", annotations={"consequential": True}, run=lambda a, c: 1
    )
    assert registry.get("cart checkout") is not None
    remove()
    remove()  # a second call changes nothing
    assert registry.get("cart checkout") is None
    stop()
    registry.register("cart empty", description="Empty", annotations={}, run=lambda a, c: None)
    assert heard == [
        ["cart_add", "cart_status", "cart_checkout"],
        ["cart_add", "cart_status"],
    ]
