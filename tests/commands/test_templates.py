"""Filling a template: what a command sends to the store for the arguments it got."""

from __future__ import annotations

import pytest

from pasture.commands.declared import Template
from pasture.commands.template import fill_apply, fill_query
from pasture.errors import UsageError
from pasture.store.grammar import parse
from pasture.store.vocab import Vocabulary

from .conftest import load

LOG_RUN = {
    "log_run": {
        "description": "Log a run for the club leaderboard",
        "input": {"who": "text", "miles": "number", "at": "time"},
        "apply": {
            "entity": {"eid": "$run"},
            "doc": {"title": "Run by $who"},
            "jog": {"who": "$who", "miles": "$miles", "at": "$at"},
        },
    }
}


def template(runs: Vocabulary, name: str = "log_run", doc: dict[str, object] = LOG_RUN) -> Template:
    run = load(doc, runs)[name].run
    assert isinstance(run, Template)
    return run


def test_a_whole_variable_keeps_its_type_and_a_spliced_one_is_text(runs: Vocabulary) -> None:
    log_run = template(runs)
    args = log_run.convert({"who": "Ada", "miles": "5", "at": "2026-09-01", "shoes": "red"})
    assert log_run.fill(args) == {
        "entity": {"eid": "$run"},
        "doc": {"title": "Run by Ada"},
        "jog": {"who": "Ada", "miles": 5, "at": "2026-09-01"},
    }


def test_arguments_are_converted_as_the_spec_says(runs: Vocabulary) -> None:
    log_run = template(runs)
    assert log_run.convert({"who": "Ada", "miles": "5.5", "at": "2026-09-01T10:00:00+02:00"}) == {
        "who": "Ada",
        "miles": 5.5,
        "at": "2026-09-01T08:00:00Z",
    }
    assert log_run.convert({"who": 7, "miles": 5, "at": "2026-09-01"})["who"] == "7"


def test_every_bad_argument_is_named_in_one_refusal(runs: Vocabulary) -> None:
    log_run = template(runs)
    with pytest.raises(UsageError) as caught:
        log_run.convert({"who": {"name": "Ada"}, "at": "tuesday"})
    assert str(caught.value) == (
        "who is text; miles is required; at is a time, like 2026-09-01 or 2026-09-01T10:00:00Z"
    )
    with pytest.raises(UsageError, match=r"^miles is a number$"):
        log_run.convert({"who": "Ada", "miles": "many", "at": "2026-09-01"})


def test_bool_and_url_refusals_are_plain(runs: Vocabulary) -> None:
    doc = {
        "flag": {
            "description": "Mark a run",
            "input": {"ready": "bool", "link": "url"},
            "apply": {"entity": {"eid": "$x"}, "doc": {"title": "$link", "body": "ready: $ready"}},
        }
    }
    flag = template(runs, "flag", doc)
    with pytest.raises(UsageError) as caught:
        flag.convert({"ready": "maybe", "link": "nowhere"})
    assert str(caught.value) == (
        "ready is true or false; link is a web address, like https://example.com/page"
    )
    args = flag.convert({"ready": "true", "link": "https://example.com/r"})
    assert flag.fill(args)["doc"] == {"title": "https://example.com/r", "body": "ready: true"}


def test_a_dollar_dollar_is_a_dollar_sign() -> None:
    assert fill_apply({"doc": {"title": "$$5 for $who, $$who"}}, {"who": "Ada"}) == {
        "doc": {"title": "$5 for Ada, $who"}
    }


def test_an_unbound_variable_is_an_alias_for_the_store() -> None:
    bundles = [
        {"entity": {"eid": "$run"}, "jog": {"who": "$who"}},
        {"entity": {"eid": "$said"}, "comment": {"target": "$run"}},
    ]
    assert fill_apply(bundles, {"who": "Ada"}) == [
        {"entity": {"eid": "$run"}, "jog": {"who": "Ada"}},
        {"entity": {"eid": "$said"}, "comment": {"target": "$run"}},
    ]


def test_a_bound_variable_at_an_eid_patches_that_row() -> None:
    assert fill_apply({"entity": {"eid": "$run"}, "tombstone": {}}, {"run": "4f3c"}) == {
        "entity": {"eid": "4f3c"},
        "tombstone": {},
    }


def test_was_is_the_store_s_guard_and_edges_fill_too() -> None:
    template = {
        "entity": {"eid": "$run"},
        "jog": {"miles": "$miles"},
        "was": {"jog": {"miles": "$seen"}},
        "edges": [{"type": "member", "child": "$club"}],
    }
    assert fill_apply(template, {"run": "e1", "miles": 6, "seen": "abc", "club": "c1"}) == {
        "entity": {"eid": "e1"},
        "jog": {"miles": 6},
        "$was": {"jog": {"miles": "abc"}},
        "edges": [{"type": "member", "child": "c1"}],
    }


def test_a_spliced_query_value_is_percent_encoded() -> None:
    line = fill_query(".doc.title=Run by $who&.jog!", {"who": "Ada & Bob, 5%"})
    assert line == ".doc.title=Run by Ada%20%26%20Bob%2C%205%25&.jog!"
    assert len(parse(line).predicates) == 2  # the & in the value did not start a predicate


def test_a_query_value_keeps_its_text_form() -> None:
    assert fill_query(".jog.miles>=$m&.x.ok=$ok", {"m": 5.0, "ok": False}) == (
        ".jog.miles>=5&.x.ok=false"
    )


def test_optional_arguments_left_out_leave_out_their_clauses() -> None:
    query = ".recipe!&.doc?&$words&.recipe.serves=$serves&limit=$limit"
    optional = {"words", "serves", "limit"}
    assert fill_query(query, {}, optional, {"words"}) == ".recipe!&.doc?"
    assert fill_query(query, {"words": "banana  bread", "limit": 3}, optional, {"words"}) == (
        ".recipe!&.doc?&banana&bread&limit=3"
    )


def test_optional_columns_left_out_leave_out_their_component_unless_kept() -> None:
    template = {
        "entity": {"eid": "$recipe"},
        "doc": {"title": "$title", "body": "$body"},
        "alias": {"name": "$alias"},
        "recipe": {"serves": "$serves"},
    }
    optional = {"body", "alias", "serves"}
    assert fill_apply(template, {"title": "Soup"}, optional, {"recipe"}) == {
        "entity": {"eid": "$recipe"},
        "doc": {"title": "Soup"},
        "recipe": {},
    }
