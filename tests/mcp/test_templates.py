"""The views as a resource template, and completion of its arguments, in both protocol
generations (pasture.mcp._templates): what is offered is what the caller reads, and no
partial value or context ever draws out a name of what they cannot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.shared.exceptions import MCPError
from mcp_talk import BASE_URL, MODES, Club, in_memory, set_up_club

from helpers.club import RUNS
from mcp import Client
from pasture.mcp._templates import complete
from pasture.platform.service import Service

TEMPLATE = "ui://{space}/{app}/{file}"
REF = types.ResourceTemplateReference(uri=TEMPLATE)
VIEW = "leaderboard.html"

# What each person reads, written out by hand from the club's set-up: ada her own space and
# club's, bo (a viewer of ada) hers alone, cy only the space of his own.
READS: dict[str, set[tuple[str, str, str]]] = {
    "ada": {("ada", "runs", VIEW), ("ada", "laps", VIEW), ("club", "runs", VIEW)},
    "bo": {("ada", "runs", VIEW), ("ada", "laps", VIEW)},
    "cy": {("cy", "miles", VIEW)},
}
NAMES = sorted({name for views in READS.values() for view in views for name in view})
ARGUMENTS = ("space", "app", "file")


@pytest.fixture
def club(tmp_path: Path, database: str) -> Iterator[Club]:
    service = Service(tmp_path / "home", base_url=BASE_URL)
    try:
        club = set_up_club(service)
        service.deploy(club.ada, RUNS, space="ada", app="laps", title="Laps")
        service.deploy(club.cy, RUNS, space="cy", app="miles", title="Miles")
        yield club
    finally:
        service.close()


def _expected(person: str, argument: str, typed: str, context: dict[str, str]) -> list[str]:
    """The one rule, over what `person` reads: the views the context names, the argument's
    values among them that begin with what was typed."""
    at = ARGUMENTS.index(argument)
    return sorted(
        {
            view[at]
            for view in READS[person]
            if view[at].casefold().startswith(typed.casefold())
            and all(view[ARGUMENTS.index(k)] == v for k, v in context.items() if k != argument)
        }
    )


@pytest.mark.parametrize("mode", MODES)
def test_the_views_are_one_template_and_its_arguments_complete_from_what_the_caller_reads(
    club: Club, mode: str
) -> None:
    async def talk(client: Client) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        seen["capabilities"] = client.server_capabilities
        seen["templates"] = (await client.list_resource_templates()).resource_templates
        for argument, typed, context in (
            ("space", "", None),
            ("space", "c", None),
            ("space", "C", None),
            ("app", "", {"space": "ada"}),
            ("app", "r", {"space": "ada"}),
            ("app", "", {"space": "club"}),
            ("app", "", None),
            ("file", "", {"space": "ada", "app": "runs"}),
            ("file", "lead", {"space": "club", "app": "runs"}),
            ("file", "", {"space": "cy", "app": "miles"}),
        ):
            done = await client.complete(REF, {"name": argument, "value": typed}, context)
            seen[(argument, typed, str(context))] = done.completion.values
        for ref, argument in (
            (types.PromptReference(name="runs"), "space"),
            (types.ResourceTemplateReference(uri="ui://{space}/{app}"), "space"),
            (REF, "page"),
        ):
            with pytest.raises(MCPError) as refused:
                await client.complete(ref, {"name": argument, "value": ""})
            seen[("refused", str(ref), argument)] = refused.value.error.message
        return seen

    seen = in_memory(club.service, club.ada, mode, talk)
    assert seen["capabilities"].completions is not None
    [template] = seen["templates"]
    assert template.uri_template == TEMPLATE
    assert template.mime_type == "text/html;profile=mcp-app"
    assert seen[("space", "", "None")] == ["ada", "club"]
    assert seen[("space", "c", "None")] == seen[("space", "C", "None")] == ["club"]
    assert seen[("app", "", "{'space': 'ada'}")] == ["laps", "runs"]
    assert seen[("app", "r", "{'space': 'ada'}")] == ["runs"]
    assert seen[("app", "", "{'space': 'club'}")] == ["runs"]
    assert seen[("app", "", "None")] == ["laps", "runs"]
    assert seen[("file", "", "{'space': 'ada', 'app': 'runs'}")] == [VIEW]
    assert seen[("file", "lead", "{'space': 'club', 'app': 'runs'}")] == [VIEW]
    assert seen[("file", "", "{'space': 'cy', 'app': 'miles'}")] == []  # cy's, not hers
    refusals = [v for k, v in seen.items() if k[0] == "refused"]
    # A prompt is an app of hers, named space_app (tests/mcp/test_app_prompts.py).
    assert refusals[0].startswith("no prompt runs — each of your apps is a prompt named space_app")
    assert refusals[1:] == [
        f"no resource template ui://{{space}}/{{app}} — this server has one, {TEMPLATE}",
        f"{TEMPLATE} has no argument page — its arguments are space, app and file",
    ]


# A partial value: a prefix of a real name (someone's or another's), in any case, or any text.
_typed = st.one_of(
    st.sampled_from(NAMES).flatmap(lambda n: st.integers(0, len(n)).map(lambda i: n[:i])),
    st.sampled_from(NAMES).map(str.upper),
    st.text(max_size=12),
)
_context = st.dictionaries(
    st.sampled_from(ARGUMENTS), st.one_of(st.sampled_from(NAMES), st.text(max_size=8)), max_size=3
)
_asked = st.tuples(st.sampled_from(ARGUMENTS), _typed, _context)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("person", ["bo", "cy"])
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(asked=st.lists(_asked, min_size=1, max_size=12))
def test_completion_reveals_nothing_its_caller_cannot_read(
    club: Club, mode: str, person: str, asked: list[tuple[str, str, dict[str, str]]]
) -> None:
    """bo (a viewer of ada's space, in none of club's) and cy (in no space of hers), typing
    anything and naming anyone's space and app as context: each answer is the one rule over
    what they read, so no name of ada's they cannot read (club, its runs; for cy, all of
    hers) is ever among the values — not even that it exists."""
    caller = club.bo if person == "bo" else club.cy
    readable = {name for view in READS[person] for name in view}

    async def talk(client: Client) -> list[list[str]]:
        answers = []
        for argument, typed, context in asked:
            done = await client.complete(REF, {"name": argument, "value": typed}, context)
            answers.append(done.completion.values)
        return answers

    answers = in_memory(club.service, caller, mode, talk)
    for (argument, typed, context), values in zip(asked, answers, strict=True):
        assert set(values) <= readable
        assert values == _expected(person, argument, typed, context)


def test_a_completion_past_a_hundred_values_says_there_are_more() -> None:
    views = [("ada", f"lap{n:03}", VIEW) for n in range(150)] + [("ada", "runs", VIEW)]
    asked = types.CompleteRequestParams(
        ref=REF,
        argument=types.CompletionArgument(name="app", value="LAP"),
        context=types.CompletionContext(arguments={"space": "ada"}),
    )
    completion = complete(views, asked)
    assert completion.values == [f"lap{n:03}" for n in range(100)]
    assert (completion.total, completion.has_more) == (150, True)
