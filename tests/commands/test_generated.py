"""add_<kind> and find_<kind>: the two commands every kind gets for nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from helpers.club import EXAMPLES
from pasture.commands import load_commands
from pasture.commands.declared import Template
from pasture.commands.model import Command
from pasture.errors import UsageError
from pasture.store.vocab import Vocabulary

RECIPES: dict[str, Any] = json.loads((EXAMPLES / "recipes" / "vocab.json").read_text())


def commands(vocab: dict[str, Any], files: dict[str, bytes] | None = None) -> dict[str, Command]:
    vocabulary = Vocabulary.from_json(vocab)
    found = load_commands(files or {"index.html": b""}, vocabulary, "yourname/recipes")
    return {c.name: c for c in found}


def template(command: Command) -> Template:
    assert isinstance(command.run, Template)
    return command.run


def test_a_kind_gets_add_and_find_with_the_spec_s_arguments() -> None:
    found = commands(RECIPES)
    assert [c.signature() for c in found.values()] == [
        "add_recipe(title, body?, alias?, serves?, cuisine?)",
        "find_recipe(words?, serves?, cuisine?, limit?, sort?, after?)",
    ]
    add, find = found["add_recipe"], found["find_recipe"]
    assert add.description == "Add a recipe to yourname/recipes"
    assert find.description == (
        "Find recipes in yourname/recipes by words in the title or body, serves or cuisine;"
        " with no arguments, every recipe there is, a page at a time"
    )
    assert (add.read_only, find.read_only) == (False, True)
    assert add.input["required"] == ["title"]
    assert "required" not in find.input
    assert find.input["properties"]["limit"]["type"] == "integer"
    assert add.listing("yourname/recipes", "Recipes")["name"] == "add_recipe"


def test_add_writes_a_doc_an_alias_and_the_kind() -> None:
    add = template(commands(RECIPES)["add_recipe"])
    args = add.convert({"title": "Soup", "alias": "soup", "serves": "4", "cuisine": "thai"})
    assert add.fill(args) == {
        "entity": {"eid": "$recipe"},
        "doc": {"title": "Soup"},
        "alias": {"name": "soup"},
        "recipe": {"serves": 4, "cuisine": "thai"},
    }
    # The kind component is written even with no column given.
    assert add.fill(add.convert({"title": "Toast"})) == {
        "entity": {"eid": "$recipe"},
        "doc": {"title": "Toast"},
        "recipe": {},
    }


def test_add_wants_a_title() -> None:
    with pytest.raises(UsageError, match=r"^title is required; serves is a number$"):
        template(commands(RECIPES)["add_recipe"]).convert({"serves": "lots"})


def test_find_leaves_out_every_clause_left_out() -> None:
    find = template(commands(RECIPES)["find_recipe"])
    assert find.fill(find.convert({})) == ".recipe!&.doc?&.alias?"
    args = find.convert({"words": "green curry", "cuisine": "thai & lao", "limit": "2"})
    assert find.fill(args) == (
        ".recipe!&.doc?&.alias?&green&curry&.recipe.cuisine=thai%20%26%20lao&limit=2"
    )


@pytest.mark.parametrize("limit", ["0", -1, 2.5, "many"])
def test_a_limit_is_a_whole_number(limit: object) -> None:
    find = template(commands(RECIPES)["find_recipe"])
    with pytest.raises(UsageError):
        find.convert({"limit": limit})


def test_tools_false_turns_them_all_off() -> None:
    assert commands({**RECIPES, "tools": False}) == {}


def test_kind_false_turns_one_off() -> None:
    vocab = {"$defs": {**RECIPES["$defs"], "starred": {"kind": False}}}
    assert list(commands(vocab)) == ["add_recipe", "find_recipe"]


def test_a_declared_entry_of_the_same_name_wins_whole() -> None:
    mine = {
        "add_recipe": {
            "description": "Save a recipe somebody cooked tonight",
            "input": {"title": "text"},
            "apply": {"entity": {"eid": "$r"}, "doc": {"title": "$title"}, "recipe": {}},
        }
    }
    found = commands(RECIPES, {"tools.json": json.dumps(mine).encode()})
    assert list(found) == ["add_recipe", "find_recipe"]
    assert found["add_recipe"].description == "Save a recipe somebody cooked tonight"
    assert found["add_recipe"].signature() == "add_recipe(title)"


def test_a_new_column_is_a_new_argument() -> None:
    vocab = json.loads(json.dumps(RECIPES))
    vocab["$defs"]["recipe"]["properties"]["tried"] = {"type": "boolean"}
    assert commands(vocab)["find_recipe"].arguments == [
        "words",
        "serves",
        "cuisine",
        "tried",
        "limit",
        "sort",
        "after",
    ]


def test_find_reads_in_the_order_asked_and_on_from_a_cursor() -> None:
    find = template(commands(RECIPES)["find_recipe"])
    assert find.fill(find.convert({"sort": "-serves", "limit": "2"})) == (
        ".recipe!&.doc?&.alias?&limit=2&sort=-recipe.serves"
    )
    assert find.fill(find.convert({"sort": "newest", "after": "WyI4Il0"})) == (
        ".recipe!&.doc?&.alias?&sort=-created.at&after=WyI4Il0"
    )
    schema = commands(RECIPES)["find_recipe"].input["properties"]["sort"]
    assert schema["enum"] == ["newest", "oldest", "serves", "-serves", "cuisine", "-cuisine"]
    with pytest.raises(UsageError) as refused:
        find.convert({"sort": "calories"})
    assert refused.value.sentence == (
        "sort is one of newest, oldest, serves, -serves, cuisine, -cuisine — not calories"
    )


def test_a_column_named_like_a_fixed_argument_gets_the_kind_s_name() -> None:
    vocab = {"$defs": {"book": {"properties": {"title": {"type": "string"}}}}}
    found = commands(vocab)
    assert found["add_book"].signature() == "add_book(title, body?, alias?, book_title?)"
    add = template(found["add_book"])
    assert add.fill(add.convert({"title": "Dune", "book_title": "Dune"}))["book"] == {
        "title": "Dune"
    }
