"""What a deploy refuses in a tools.json: every problem, in the spec's words, in one message."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pasture.commands import load_commands
from pasture.errors import DeployRefused, Refused
from pasture.store.bundles import check
from pasture.store.vocab import Vocabulary

from .conftest import load, tools

LOG_RUN: dict[str, Any] = {
    "description": "Log a run for the club leaderboard",
    "input": {"who": "text", "miles": "number"},
    "apply": {"entity": {"eid": "$run"}, "jog": {"who": "$who", "miles": "$miles"}},
}


def refused(doc: Any, vocabulary: Vocabulary, *pages: str) -> DeployRefused:
    with pytest.raises(DeployRefused) as caught:
        load(doc, vocabulary, *pages)
    return caught.value


def test_the_spec_example_comes_back_whole_in_one_message(runs: Vocabulary) -> None:
    doc = {
        "bad": {"description": "Bad", "input": {}, "screen": 1, "apply": {"doc": {"title": "$who"}}}
    }
    error = refused(doc, runs)
    assert str(error) == (
        "tools.json: bad: screen — a tool says description, input, apply, query, view; "
        "bad: $who names no input and no entity — declare it in bad.input"
    )
    assert error.prefix == "tools.json"
    assert len(error.problems) == 2


def test_neither_action_or_both_is_refused(runs: Vocabulary) -> None:
    sentence = "log_run does one thing: apply (a bundle to write) or query (a filter line to read)"
    neither = {"log_run": {"description": "Log a run", "input": {}}}
    both = {"log_run": {**LOG_RUN, "query": ".jog!"}}
    assert refused(neither, runs).problems == [sentence]
    assert refused(both, runs).problems == [sentence]


def test_a_variable_that_names_nothing_is_a_typo(runs: Vocabulary) -> None:
    doc = {"log_run": {**LOG_RUN, "apply": {"jog": {"who": "$who", "at": "$when"}}}}
    assert refused(doc, runs).problems == [
        "log_run: $when names no input and no entity — declare it in log_run.input"
    ]


def test_a_query_variable_must_be_an_input(runs: Vocabulary) -> None:
    doc = {
        "since": {"description": "Runs since", "input": {}, "query": ".jog!&.created.at>=$since"}
    }
    assert refused(doc, runs).problems == [
        "since: $since names no input and no entity — declare it in since.input"
    ]


def test_a_missing_view_says_to_deploy_the_page(runs: Vocabulary) -> None:
    doc = {
        "board": {"description": "The board", "input": {}, "query": ".jog!", "view": "gone.html"}
    }
    assert str(refused(doc, runs)) == (
        "tools.json: gone.html — a view names a page in this app's own files; "
        "deploy the page beside index.html"
    )


def test_a_view_that_is_there_is_named_on_the_command(runs: Vocabulary) -> None:
    doc = {"board": {"description": "The board", "input": {}, "query": ".jog!", "view": "./b.html"}}
    assert load(doc, runs, "b.html")["board"].view == "b.html"


@pytest.mark.parametrize(
    "view", ["/abs.html", "../up.html", "a/../b.html", "page.htm", "https://x.example/a.html", 5]
)
def test_a_view_is_relative_with_no_dots_and_ends_in_html(runs: Vocabulary, view: object) -> None:
    doc = {"board": {"description": "The board", "input": {}, "query": ".jog!", "view": view}}
    assert refused(doc, runs).problems == [
        'board: view is a page of this app — a relative path ending in .html, with no "..",'
        ' like "leaderboard.html"'
    ]


@pytest.mark.parametrize("name", ["Log_run", "1run", "log-run", "_x", "x" * 41, ""])
def test_a_command_name_is_lowercase_words(runs: Vocabulary, name: str) -> None:
    problems = refused({name: LOG_RUN}, runs).problems
    assert problems == [
        f"{name} — a command's name is a-z, 0-9 and _, starting with a letter, at most 40"
        " characters"
    ]


def test_an_argument_name_and_type_are_checked(runs: Vocabulary) -> None:
    doc = {"log_run": {**LOG_RUN, "input": {"Who": "text", "miles": "int", "at": None}}}
    assert refused(doc, runs).problems == [
        "log_run: Who — an argument's name is a-z, 0-9 and _, starting with a letter, at most"
        " 40 characters",
        'log_run: miles is "int" — an argument\'s type is one of text, number, bool, time, url',
        "log_run: at is empty — an argument's type is one of text, number, bool, time, url",
        "log_run: $who names no input and no entity — declare it in log_run.input",
    ]


@pytest.mark.parametrize("entry", [{"input": ["who"]}, {"input": "who"}, {}])
def test_input_is_an_object_and_is_not_left_out(runs: Vocabulary, entry: dict[str, Any]) -> None:
    doc = {"board": {"description": "The board", "query": ".jog!", **entry}}
    assert refused(doc, runs).problems == [
        'board: input is an object of argument names to types, like {"who": "text",'
        ' "miles": "number"}, or {} for a command with none'
    ]
    for none in ({}, None):  # `input: {}`, or YAML's `input:` with nothing after it
        assert "board" in load({"board": {**doc["board"], "input": none}}, runs)


@pytest.mark.parametrize("description", [None, "", "   ", 5, ["Log"]])
def test_a_description_is_a_sentence(runs: Vocabulary, description: object) -> None:
    entry = {**LOG_RUN, "description": description}
    if description is None:
        del entry["description"]
    assert refused({"log_run": entry}, runs).problems == [
        "log_run: description is the sentence a model chooses the command by — write what it"
        ' does, like "Log a run for the club leaderboard"'
    ]


def test_an_entry_is_an_object(runs: Vocabulary) -> None:
    assert refused({"log_run": "Log a run"}, runs).problems == [
        "log_run: an entry is an object with a description, an input and one action, apply or query"
    ]


@pytest.mark.parametrize("query", [5, "", None, {"jog": True}])
def test_a_query_is_a_string(runs: Vocabulary, query: object) -> None:
    doc = {"board": {"description": "The board", "input": {}, "query": query}}
    assert refused(doc, runs).problems == [
        'board: query is a filter line, a string like ".jog!&.created!"'
    ]


@pytest.mark.parametrize("apply", ["jog", 5, [], [{"jog": {}}, "x"], None])
def test_an_apply_is_an_object_or_a_list_of_them(runs: Vocabulary, apply: object) -> None:
    doc = {"log_run": {**LOG_RUN, "apply": apply}}
    assert refused(doc, runs).problems == [
        "log_run: apply is a bundle to write — an object, or a list of them"
    ]


def test_a_component_nobody_declared_is_named(runs: Vocabulary) -> None:
    doc = {"log_run": {**LOG_RUN, "apply": {"run": {"who": "$who", "miles": "$miles"}}}}
    assert refused(doc, runs).problems == [
        "log_run: run is not a component of this app — declare it in vocab.json or use one of"
        " the platform's own: doc, alias, comment, person"
    ]


def test_the_stamps_are_the_store_s_own(runs: Vocabulary) -> None:
    doc = {"log_run": {**LOG_RUN, "apply": {"jog": {"who": "$who"}, "created": {"at": "$miles"}}}}
    assert refused(doc, runs).problems == [
        "log_run: created is stamped by the store — leave it out of the template"
    ]


def test_a_column_the_component_lacks_is_named(runs: Vocabulary) -> None:
    doc = {"log_run": {**LOG_RUN, "apply": {"jog": {"who": "$who", "pace": "$miles"}}}}
    assert refused(doc, runs).problems == [
        "log_run: jog has no column pace — its columns are who, miles, at"
    ]


def test_a_component_is_an_object_of_columns(runs: Vocabulary) -> None:
    doc = {"log_run": {**LOG_RUN, "apply": {"jog": "$who", "doc": {"title": "$miles"}}}}
    assert refused(doc, runs).problems == [
        'log_run: jog is an object of its columns, like {"who": "$value"}'
    ]


def test_an_alias_and_an_argument_share_one_namespace(runs: Vocabulary) -> None:
    doc = {
        "log_with_note": {
            "description": "Log a run and a note about how it felt",
            "input": {"who": "text", "miles": "number", "note": "text"},
            "apply": [
                {"entity": {"eid": "$run"}, "jog": {"who": "$who", "miles": "$miles"}},
                {
                    "entity": {"eid": "$note"},
                    "doc": {"body": "$note"},
                    "comment": {"target": "$run"},
                },
            ],
        }
    }
    assert refused(doc, runs).problems == [
        "log_with_note: $note is an argument and an entity at once — an alias and an argument"
        " share one namespace, so give the new entity a name of its own, like $note_row"
    ]
    # The spec's own form: $said is the alias because $note is the argument.
    doc["log_with_note"]["apply"][1]["entity"]["eid"] = "$said"
    assert list(load(doc, runs)) == ["log_with_note", "add_jog", "find_jog"]


def test_a_number_argument_cannot_name_an_entity(runs: Vocabulary) -> None:
    doc = {"log_run": {**LOG_RUN, "apply": {"entity": {"eid": "$miles"}, "jog": {"who": "$who"}}}}
    assert refused(doc, runs).problems == [
        "log_run: $miles is an argument and an entity at once — an alias and an argument share"
        " one namespace, so give the new entity a name of its own, like $miles_row"
    ]


def test_a_new_entity_is_not_spliced_into_text(runs: Vocabulary) -> None:
    doc = {"log_run": {**LOG_RUN, "apply": {**LOG_RUN["apply"], "doc": {"title": "Run $run"}}}}
    assert refused(doc, runs).problems == [
        "log_run: $run is a new entity, so it stands alone in its string — only an argument is"
        " spliced into a longer one"
    ]


def test_a_query_the_grammar_refuses_is_refused_at_deploy(runs: Vocabulary) -> None:
    doc = {
        "board": {"description": "The board", "input": {}, "query": ".jogs!"},
        "far": {"description": "Far runs", "input": {"m": "number"}, "query": ".jog.pace>=$m"},
    }
    assert refused(doc, runs).problems == [
        "board: jogs is not a component of this app — declare it in vocab.json or use one of"
        " the platform's own: doc, alias, comment, person",
        "far: jog has no column pace — its columns are who, miles, at",
    ]


def test_the_template_forms_the_spec_shows_all_load(runs: Vocabulary) -> None:
    doc = {
        "drop_run": {
            "description": "Delete a run somebody logged by mistake",
            "input": {"run": "text"},
            "apply": {"entity": {"eid": "$run"}, "tombstone": {}},
        },
        "relog": {
            "description": "Change a run's miles if nobody changed them since",
            "input": {"run": "text", "miles": "number", "seen": "text"},
            "apply": {
                "entity": {"eid": "$run"},
                "jog": {"miles": "$miles"},
                "was": {"jog": {"miles": "$seen"}},
                "doc": None,
            },
        },
        "join": {
            "description": "Put a run under a club",
            "input": {"run": "text", "club": "text"},
            "apply": {"entity": {"eid": "$run"}, "edges": [{"type": "member", "child": "$club"}]},
        },
        "board": {"description": "The board", "input": {}, "query": ".jog!&.created!"},
        "longest": {
            "description": "Runs over a distance",
            "input": {"miles": "number"},
            "query": ".jog.miles>=$miles&.doc?&limit=20",
        },
    }
    commands = load(doc, runs)
    assert [c for c in commands if not c.endswith("_jog")] == list(doc)
    assert commands["board"].read_only and not commands["drop_run"].read_only


def test_every_problem_in_every_entry_comes_back_together(runs: Vocabulary) -> None:
    doc = {
        "Bad": LOG_RUN,
        "log_run": {**LOG_RUN, "query": ".jog!"},
        "board": {"input": {}, "query": ".jog!", "view": "gone.html"},
        "good": LOG_RUN,
    }
    problems = refused(doc, runs).problems
    assert len(problems) == 4
    assert problems[-1].startswith("gone.html — ")


def test_a_refused_file_installs_nothing_and_says_which_file(runs: Vocabulary) -> None:
    files = tools({"log_run": {"input": {}}})
    files["tools.yml"] = files.pop("tools.json")
    with pytest.raises(DeployRefused) as caught:
        load_commands(files, runs, "yourname/runs")
    assert str(caught.value).startswith("tools.yml: log_run: description is")


def test_an_argument_whole_in_a_column_has_the_column_s_type(runs: Vocabulary) -> None:
    doc = {
        "log_run": {
            "description": "Log a run",
            "input": {"who": "text", "miles": "number", "at": "text", "note": "number"},
            "apply": [
                {"entity": {"eid": "$run"}, "jog": {"who": "$miles", "miles": "$who", "at": "$at"}},
                {"comment": {"target": "$note"}},
            ],
        }
    }
    assert refused(doc, runs).problems == [
        "log_run: jog.miles is a number and $who is text — declare who as number in log_run.input",
        "log_run: jog.at is a time and $at is text — declare at as time in log_run.input",
        "log_run: comment.target is an eid and $note is a number — declare note as text in"
        " log_run.input",
    ]


def test_a_query_is_checked_beside_the_entry_s_other_problems(runs: Vocabulary) -> None:
    doc = {"board": {"description": "", "input": {}, "query": ".jogs!"}}
    assert refused(doc, runs).problems == [
        "board: description is the sentence a model chooses the command by — write what it"
        ' does, like "Log a run for the club leaderboard"',
        "board: jogs is not a component of this app — declare it in vocab.json or use one of"
        " the platform's own: doc, alias, comment, person",
    ]


def test_a_literal_of_the_wrong_type_is_refused_at_deploy(runs: Vocabulary) -> None:
    apply = {"jog": {"who": "$who", "miles": "many", "at": "tuesday"}, "doc": {"title": 5}}
    assert refused({"log_run": {**LOG_RUN, "apply": apply}}, runs).problems == [
        'log_run: jog.miles is a number, and the template writes "many" there',
        "log_run: jog.at is a time, like 2026-09-01 or 2026-09-01T10:00:00Z, and the template"
        ' writes "tuesday" there',
    ]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    literal=st.one_of(
        st.text(max_size=12).filter(lambda t: "$" not in t),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),  # what JSON can carry
        st.booleans(),
        st.sampled_from(["5", "true", "2026-09-01", "https://example.com/r"]),
    ),
    column=st.sampled_from(["who", "miles", "at"]),
)
def test_a_literal_deploys_exactly_when_the_store_would_write_it(
    runs: Vocabulary, literal: object, column: str
) -> None:
    """What a template writes literally is checked at deploy by the store's own rule, so a
    command that deploys never meets that refusal at a call."""
    apply = {"jog": {"who": "$who", "miles": "$miles", column: literal}}
    try:
        check(apply | {"jog": {column: literal}}, runs)
    except Refused as refusal:
        problems = refused({"log_run": {**LOG_RUN, "apply": apply}}, runs).problems
        assert problems == [f"log_run: {refusal}, and the template writes {shown(literal)} there"]
    else:
        assert "log_run" in load({"log_run": {**LOG_RUN, "apply": apply}}, runs)


def shown(value: object) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    return str(value).lower() if isinstance(value, bool) else str(value)


def test_a_command_that_writes_may_say_it_is_hard_to_undo(runs: Vocabulary) -> None:
    """`"consequential": true`, beyond the document's five keys: asked about first."""
    loaded = load({"log_run": {**LOG_RUN, "consequential": True}}, runs)
    assert loaded["log_run"].consequential is True
    assert loaded["log_run"].listing("ada/runs", "Run club")["consequential"] is True
    assert not any(c.consequential for name, c in loaded.items() if name != "log_run")
    assert (
        load({"log_run": {**LOG_RUN, "consequential": False}}, runs)["log_run"].consequential
        is False
    )
    board = {"description": "Every run", "input": {}, "query": ".jog!"}
    doc = {
        "log_run": {**LOG_RUN, "consequential": "yes"},
        "board": {**board, "consequential": True},
    }
    assert refused(doc, runs).problems == [
        "log_run: consequential is true or false",
        "board: a query changes nothing, so it is not consequential",
    ]
