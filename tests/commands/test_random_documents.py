"""Random tools documents load or are refused with a list of problems, never anything else."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.club import RUNS_VOCAB
from pasture.commands import load_commands
from pasture.commands.declared import Template
from pasture.errors import DeployRefused, UsageError
from pasture.store.vocab import Vocabulary
from pasture.values import TYPES

VOCABULARY = Vocabulary.from_json(RUNS_VOCAB)
FILES = {"index.html": b"", "leaderboard.html": b"", "sub/page.html": b""}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)

names = st.sampled_from(
    ["log_run", "who", "miles", "at", "run", "since", "Bad", "9x", ""]
) | st.text(max_size=6)
variables = st.sampled_from(["$who", "$miles", "$at", "$run", "$said", "$since", "$$", "$"])
values = (
    variables
    | st.sampled_from(["Run by $who", "$$5", "plain", "$who and $miles"])
    | st.integers()
    | st.booleans()
    | st.none()
)
columns = st.sampled_from(["who", "miles", "at", "title", "body", "name", "target", "pace"])
components = st.sampled_from(["jog", "doc", "alias", "comment", "created", "nope"])
bundles = st.dictionaries(
    components | st.sampled_from(["entity", "edges", "tombstone", "was"]),
    st.dictionaries(columns | st.just("eid"), values, max_size=3) | values,
    max_size=4,
)
clauses = st.sampled_from(
    [
        ".jog!",
        ".created!",
        ".doc?",
        ".jog.miles>=$miles",
        ".created.at>=$since",
        "$who",
        "limit=$miles",
        "id=$run",
        ".nope!",
        "&",
        "=",
        ".jog.who=$who",
        "$$",
        '"a & b"',
    ]
)
queries = st.lists(clauses, max_size=4).map("&".join) | st.text(max_size=10)
inputs = st.dictionaries(names, st.sampled_from([*TYPES, "int", "string"]), max_size=4)
entries = st.fixed_dictionaries(
    {},
    optional={
        "description": st.sampled_from(["Log a run", "", "  "]) | json_values,
        "input": inputs | json_values,
        "apply": bundles | st.lists(bundles, max_size=3) | json_values,
        "query": queries | json_values,
        "view": st.sampled_from(
            ["leaderboard.html", "gone.html", "../x.html", "sub/page.html", "/a.html"]
        )
        | json_values,
        "screen": json_values,
    },
)
# Entries that are mostly right, so many documents load and run.
plausible = st.fixed_dictionaries(
    {
        "description": st.just("Log a run"),
        "input": st.dictionaries(
            st.sampled_from(["who", "miles", "since"]), st.sampled_from(TYPES), max_size=3
        ),
    },
    optional={"view": st.just("leaderboard.html")},
).flatmap(
    lambda entry: st.one_of(
        queries.map(lambda q: {**entry, "query": q}),
        bundles.map(lambda b: {**entry, "apply": {"entity": {"eid": "$run"}, **b}}),
    )
)
documents = st.dictionaries(names, plausible | entries | json_values, max_size=4)


def placeholder_args(run: Template) -> dict[str, Any]:
    sample = {
        "text": "Ada",
        "number": "5",
        "bool": "true",
        "time": "2026-09-01",
        "url": "https://a.example/",
    }
    # an argument that is one of a few words (find's sort) takes the first of them
    return {
        name: next(iter(run.choices[name])) if name in run.choices else sample[kind]
        for name, kind in run.types.items()
    }


def check(files: dict[str, bytes]) -> None:
    try:
        found = load_commands(files, VOCABULARY, "yourname/runs")
    except DeployRefused as refused:
        assert refused.problems
        assert all(isinstance(p, str) and p.strip() for p in refused.problems)
        assert str(refused).startswith(refused.prefix + ": ")
        return
    for command in found:
        run = command.run
        assert isinstance(run, Template)
        filled = run.fill(run.convert(placeholder_args(run)))
        assert isinstance(filled, str | dict | list)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_a_random_tools_json_loads_or_is_refused_with_problems(doc: dict[Any, Any]) -> None:
    check({**FILES, "tools.json": json.dumps(doc).encode()})


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_a_random_tools_yml_loads_or_is_refused_with_problems(doc: dict[Any, Any]) -> None:
    check({**FILES, "tools.yml": yaml.safe_dump(doc).encode()})


@settings(max_examples=200)
@given(st.binary(max_size=60) | st.text(max_size=60).map(str.encode))
def test_random_bytes_never_break_the_loader(body: bytes) -> None:
    check({"tools.json": body})
    check({"tools.yml": body})


LOG_RUN = load_commands(
    {
        "tools.json": json.dumps(
            {
                "log_run": {
                    "description": "Log a run",
                    "input": {
                        "who": "text",
                        "miles": "number",
                        "ready": "bool",
                        "at": "time",
                        "link": "url",
                    },
                    "apply": {
                        "entity": {"eid": "$run"},
                        "jog": {"who": "$who", "miles": "$miles", "at": "$at"},
                    },
                }
            }
        ).encode()
    },
    VOCABULARY,
    "yourname/runs",
)[0].run
assert isinstance(LOG_RUN, Template)


@given(
    st.dictionaries(st.sampled_from(["who", "miles", "ready", "at", "link", "extra"]), json_values)
)
def test_random_arguments_are_converted_or_refused_by_name(args: dict[str, Any]) -> None:
    assert isinstance(LOG_RUN, Template)
    try:
        converted = LOG_RUN.convert(args)
    except UsageError as refused:
        for sentence in str(refused).split("; "):
            assert sentence.split(" ")[0] in LOG_RUN.types
        return
    assert set(converted) == set(LOG_RUN.types)
    assert isinstance(converted["who"], str)
    assert isinstance(converted["miles"], int | float) and not isinstance(converted["miles"], bool)
    assert isinstance(converted["ready"], bool)
