"""A declared command at run time (pasture.commands.declared): its arguments converted as
the spec says, every bad one named in one refusal, then its template filled."""

from __future__ import annotations

import pytest

from pasture.commands.declared import Template
from pasture.errors import UsageError
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
