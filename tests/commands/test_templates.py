"""Filling a template (pasture.commands.template): what a command sends to the store for the
arguments it got. A declared command converting its arguments: test_declared.py."""

from __future__ import annotations

from pasture.commands.template import fill_apply, fill_query
from pasture.store.grammar import parse


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
