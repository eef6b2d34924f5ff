"""What the connector's answers hold, through the SDK's own client, in memory, on both
databases: each tool's `outputSchema`, every `structuredContent` valid against it, and a
text that carries the same data after its sentence — so a client that forwards only
`content` loses nothing.

The SDK's client checks every answer's structured content against the tool's output
schema itself, and raises when it does not fit; the tests check it again with jsonschema,
over the answers of generated writes and reads: rows, pages, aggregates and refusals.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import mcp_types as types
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp_talk import BASE_URL, MODES, TOOL_NAMES, Club, in_memory, set_up_club

from helpers.club import RUNS
from helpers.mcp_answers import ok, sentence_and_data, text
from mcp import Client
from pasture.mcp._tool_results import TEXT_AT_MOST, text_of
from pasture.platform.service import Service
from pasture.result import Result

RUN = {"who": "Ada", "miles": 5, "at": "2026-09-01"}
PAGE = 4  # rows a page of `paged` holds at most, so reads are cut short and read on


def _schemas(club: Club) -> dict[str, dict[str, Any]]:
    async def talk(client: Client) -> list[types.Tool]:
        return (await client.list_tools()).tools

    tools = in_memory(club.service, club.ada, "legacy", talk)
    assert [t.name for t in tools] == TOOL_NAMES
    schemas = {}
    for tool in tools:
        assert tool.output_schema is not None, tool.name
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        schemas[tool.name] = tool.output_schema
    return schemas


def _valid(schemas: dict[str, dict[str, Any]], name: str, result: types.CallToolResult) -> None:
    """A refusal has no structured content; any other answer's is valid against its tool's
    schema, and its text is its sentence followed by that data — but `commands`' listing
    and `app_files`' file, whose text is what they say for people."""
    if result.is_error:
        assert result.structured_content is None, text(result)
        assert text(result)
        return
    said, data = ok(result)
    jsonschema.Draft202012Validator(schemas[name]).validate(data)
    if name not in ("commands", "app_files"):
        assert json.loads(said.rpartition("\n")[2]) == data, said


@pytest.mark.parametrize("mode", MODES)
def test_each_tool_says_what_it_answers_and_answers_it(club: Club, mode: str) -> None:
    schemas = _schemas(club)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("commands", {"app": "ada/runs"}),
        ("command", {"name": "log_run", "args": RUN, "app": "ada/runs"}),
        ("command", {"name": "leaderboard", "app": "ada/runs"}),  # no args: none taken
        ("status", {}),
        ("graph_schema", {"app": "ada/runs"}),
        ("graph_query", {"app": "ada/runs", "filter": ".jog!&.created!"}),
        ("graph_apply", {"app": "ada/runs", "bundles": [{"jog": {"who": "Bo", "miles": 2}}]}),
        ("app_list", {}),
        ("app_files", {"app": "ada/runs"}),
        ("app_files", {"app": "ada/runs", "path": "tools.json"}),
        ("app_deploy", {"files": {"index.html": "<title>Notes</title>"}, "app": "notes"}),
    ]

    async def talk(client: Client) -> list[types.CallToolResult]:
        return [await client.call_tool(name, arguments) for name, arguments in calls]

    answers = in_memory(club.service, club.ada, mode, talk)
    for (name, _), answer in zip(calls, answers, strict=True):
        _valid(schemas, name, answer)
    assert {name for name, _ in calls} == set(TOOL_NAMES)

    wrote, board = answers[1], answers[2]
    eid = ok(wrote)[1]["aliases"]["$run"]
    sentence, data = sentence_and_data(board)
    assert sentence == "leaderboard: 1 row in ada/runs"
    assert [(r["entity"]["eid"], r["jog"]) for r in data["rows"]] == [(eid, RUN)]
    # The listing and the files stay as people read them: the Service's own text.
    listing = club.service.listing.list_commands(club.ada, "ada/runs")
    assert ok(answers[0]) == (listing.text, listing.data)
    assert ok(answers[9])[0] == (RUNS / "tools.json").read_text()
    assert "tools.json" in ok(answers[8])[0].splitlines()


def test_command_takes_a_name_alone(club: Club) -> None:
    async def talk(client: Client) -> tuple[types.Tool, types.CallToolResult]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        return tools["command"], await client.call_tool(
            "command", {"name": "leaderboard", "app": "ada/runs"}
        )

    tool, board = in_memory(club.service, club.ada, "auto", talk)
    assert tool.input_schema["required"] == ["name"]
    assert set(tool.input_schema["properties"]) >= {"name", "args", "app"}
    assert sentence_and_data(board) == ("leaderboard: 0 rows in ada/runs", {"rows": []})


def test_a_page_too_long_for_the_text_holds_what_fits_and_says_so(club: Club) -> None:
    runs = [{"jog": {"who": f"{'x' * 400}{n}", "miles": n}} for n in range(300)]
    club.service.apply(club.ada, "ada/runs", runs)

    async def talk(client: Client) -> list[types.CallToolResult]:
        return [
            await client.call_tool("graph_query", {"app": "ada/runs", "filter": ".jog!"}),
            await client.call_tool("command", {"name": "leaderboard", "app": "ada/runs"}),
        ]

    query, board = in_memory(club.service, club.ada, "legacy", talk)
    for answer, sentence in ((query, "300 rows in ada/runs"), (board, None)):
        said, data = ok(answer)
        first, note, last = said.split("\n")
        assert sentence is None or first == sentence
        shown = json.loads(last)["rows"]
        kept = len(shown)
        assert 0 < kept < 300 and shown == data["rows"][:kept]
        assert len(last) <= TEXT_AT_MOST  # and one more row would not have fitted
        more = json.dumps(data["rows"][kept], ensure_ascii=False, separators=(",", ":"))
        assert len(last) + 1 + len(more) > TEXT_AT_MOST
        assert note == (
            f"(this text holds the first {kept} of the 300 rows: it carries 64,000 characters "
            "of JSON at most; structuredContent holds every one — or read fewer rows at a "
            "time: a filter with limit=N and a sort=)"
        )
    assert len(ok(board)[1]["rows"]) == 300


# -- many answers ----------------------------------------------------------------------
@pytest.fixture
def paged(tmp_path: Path, database: str) -> Iterator[Club]:
    """The club on a server whose pages hold `PAGE` rows, so reads are cut short."""
    service = Service(tmp_path / "home", base_url=BASE_URL, max_rows=PAGE)
    try:
        yield set_up_club(service)
    finally:
        service.close()


names = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=8)
runs = st.fixed_dictionaries(
    {"who": names | st.sampled_from(["Ada", "Bo"]), "miles": st.integers(0, 50)},
    optional={"at": st.sampled_from(["2026-09-01", "2026-09-02T10:00:00Z"])},
)
filters = st.sampled_from(
    [
        ".jog!&.created!",
        ".jog!&.doc?",
        ".jog!&sort=-jog.miles",
        ".jog!&sort=jog.who&limit=2",
        ".jog.miles>=20",
        ".jog!&.count!",
        ".tally=jog.who",
        ".distinct=jog.who",
        "Run",
        ".jog!&limit=1",
        ".nope!",  # refused: no such component
        ".jog!&sort=",  # refused: a sort of nothing
        ".jog!&after=nope",  # refused: no cursor
    ]
)
calls = st.one_of(
    st.tuples(st.just("graph_query"), filters.map(lambda f: {"app": "ada/runs", "filter": f})),
    st.tuples(
        st.just("command"),
        st.sampled_from(
            [
                {"name": "leaderboard", "app": "ada/runs"},
                {"name": "since", "args": {"since": "2026-01-01"}, "app": "ada/runs"},
                {"name": "since", "args": {"since": "yesterday-ish"}, "app": "ada/runs"},
                {"name": "find_jog", "args": {"sort": "-miles"}, "app": "ada/runs"},
                {"name": "nope", "app": "ada/runs"},
            ]
        ),
    ),
    st.tuples(
        st.just("command"), runs.map(lambda r: {"name": "log_run", "args": r, "app": "ada/runs"})
    ),
    st.tuples(
        st.just("graph_apply"),
        st.lists(runs.map(lambda r: {"jog": r}), max_size=3).map(
            lambda bundles: {"app": "ada/runs", "bundles": bundles}
        ),
    ),
)


def test_every_answer_fits_its_schema_and_its_text_carries_it(paged: Club) -> None:
    schemas = _schemas(paged)
    seen: set[str] = set()

    @settings(
        max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(st.lists(calls, min_size=1, max_size=6))
    @example(
        [("command", {"name": "log_run", "args": RUN, "app": "ada/runs"})] * (PAGE + 1)
        + [
            ("graph_query", {"app": "ada/runs", "filter": f})
            for f in (".jog!", ".jog!&.count!", ".tally=jog.who", ".distinct=jog.who", ".nope!")
        ]
    )
    def every(asked: list[tuple[str, dict[str, Any]]]) -> None:
        async def talk(client: Client) -> list[tuple[str, types.CallToolResult]]:
            answers = []
            for name, arguments in asked:
                answer = await client.call_tool(name, arguments)
                answers.append((name, answer))
                cursor = (answer.structured_content or {}).get("cursor")
                if name == "graph_query" and cursor:  # and the page after it
                    more = {**arguments, "filter": f"{arguments['filter']}&after={cursor}"}
                    answers.append((name, await client.call_tool(name, more)))
            return answers

        for name, answer in in_memory(paged.service, paged.ada, "legacy", talk):
            _valid(schemas, name, answer)
            data = answer.structured_content or {}
            seen.update(key for key in ("rows", "count", "tally", "distinct") if key in data)
            seen.update(("cursor",) if data.get("cursor") else ())
            seen.update(("refused",) if answer.is_error else ())

    every()
    assert seen >= {"rows", "cursor", "count", "tally", "distinct", "refused"}


# -- the bound, said of any data -------------------------------------------------------
def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 3000), max_size=400),
    other=st.text(max_size=50),
    fill=st.sampled_from(["x", "é", '"', "\\", "\n"]),
)
@example(sizes=[TEXT_AT_MOST, 5], other="", fill="x")  # not even its first row fits
@example(sizes=[TEXT_AT_MOST // 200] * 300, other="", fill='"')  # a long list, cut
def test_the_text_holds_the_longest_prefix_of_the_list_that_fits(
    sizes: list[int], other: str, fill: str
) -> None:
    rows = [fill * n for n in sizes]
    data = {"at": other, "rows": rows, "more": True}
    said = text_of(Result("a page", data))
    lines = said.split("\n")
    assert lines[0] == "a page"
    whole = _compact(data)
    if len(whole) <= TEXT_AT_MOST:
        assert lines[1:] == [whole]
        return
    note, last = lines[1], lines[-1]
    if last.startswith("("):  # not one row fits
        assert note == last and len(lines) == 2
        assert len(_compact({**data, "rows": rows[:1]})) > TEXT_AT_MOST
        return
    kept = json.loads(last)
    n = len(kept["rows"])
    assert kept == {**data, "rows": rows[:n]} and 0 < n < len(rows)
    assert len(last) <= TEXT_AT_MOST < len(_compact({**data, "rows": rows[: n + 1]}))
    assert note.startswith(f"(this text holds the first {n:,} of the {len(rows):,} rows: ")


def test_data_with_no_list_to_cut_is_left_to_the_structured_content() -> None:
    data = {"text": "x" * TEXT_AT_MOST, "at": "ada/notes"}
    assert text_of(Result("a long note", data)) == (
        f"a long note\n(the data, {len(_compact(data)):,} characters of JSON, is more than "
        "this text carries (64,000 at most); structuredContent holds it)"
    )
    # At the bound exactly, it is said whole.
    fits = {"text": "x" * (TEXT_AT_MOST - len(_compact({"text": ""})))}
    assert text_of(Result("a note", fits)) == f"a note\n{_compact(fits)}"
