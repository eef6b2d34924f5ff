"""Each app a caller reaches is a prompt of the connector (`pasture.mcp._prompts`), in
memory over the SDK's client, in both protocol generations: only their own apps are
listed, a prompt's message is the app's listing with the person's task folded in, and a
prompt out of reach is refused with the sentence every door gives for that app."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp_talk import MODES, Club, in_memory

from helpers.club import RUNS
from helpers.mcp_answers import text
from mcp import Client
from pasture.caller import Caller


def _names(club: Club, caller: Caller, mode: str) -> list[str]:
    async def talk(client: Client) -> list[str]:
        listed = await client.session.list_prompts()
        return [prompt.name for prompt in listed.prompts]

    return in_memory(club.service, caller, mode, talk)


@pytest.mark.parametrize("mode", MODES)
def test_the_prompts_are_the_callers_own_apps(club: Club, mode: str) -> None:
    assert _names(club, club.ada, mode) == ["ada_runs", "club_runs"]
    assert _names(club, club.bo, mode) == ["ada_runs"]  # a viewer of ada's space
    assert _names(club, club.cy, mode) == []  # in no space of theirs


@pytest.mark.parametrize("mode", MODES)
def test_a_prompt_tells_the_app_and_its_commands(club: Club, mode: str) -> None:
    async def talk(client: Client) -> dict[str, Any]:
        listed = await client.session.list_prompts()
        plain = await client.session.get_prompt("ada_runs")
        tasked = await client.session.get_prompt("ada_runs", {"task": "log 5 miles for Ada"})
        return {"listed": listed.prompts[0], "plain": plain, "tasked": tasked}

    seen = in_memory(club.service, club.ada, mode, talk)
    prompt = seen["listed"]
    assert prompt.title == "Run club (ada/runs)"
    assert [(a.name, a.required) for a in prompt.arguments or []] == [("task", False)]
    listing = club.service.listing.list_commands(club.ada, "ada/runs").text
    for got in (seen["plain"], seen["tasked"]):
        [message] = got.messages
        assert message.role == "user"
        assert isinstance(message.content, types.TextContent)
        assert listing in message.content.text  # what `commands` lists for that app
        assert "the `command` tool" in message.content.text and '"ada/runs"' in message.content.text
    plain = seen["plain"].messages[0].content.text
    tasked = seen["tasked"].messages[0].content.text
    assert "Ask the person what they want done there" in plain
    assert tasked.endswith("What the person wants done there: log 5 miles for Ada")


@pytest.mark.parametrize("mode", MODES)
def test_a_prompt_out_of_reach_is_refused_as_its_app_is(club: Club, mode: str) -> None:
    async def talk(client: Client) -> dict[str, str]:
        said = {}
        for name in ("ada_runs", "club_runs", "runs", "ada_laps"):
            try:
                await client.session.get_prompt(name)
            except MCPError as refused:
                said[name] = refused.error.message
        commands = await client.call_tool("commands", {"app": "ada/runs"})
        said["commands"] = text(commands)
        return said

    said = in_memory(club.service, club.cy, mode, talk)
    # The very sentence `commands` answers for an app cy cannot reach.
    assert said["ada_runs"] == said["commands"]
    assert said["ada_runs"].startswith("no app ada/runs")
    assert said["club_runs"].startswith("no app club/runs")
    assert said["runs"].startswith("no prompt runs — each of your apps is a prompt")
    assert said["ada_laps"].startswith("no app ada/laps")


@pytest.mark.parametrize("mode", MODES)
def test_a_prompts_task_completes_to_its_apps_commands(club: Club, mode: str) -> None:
    async def talk(client: Client) -> dict[str, Any]:
        runs = types.PromptReference(name="ada_runs")
        done = {
            typed: (await client.complete(runs, {"name": "task", "value": typed})).completion.values
            for typed in ("", "l", "LE", "x")
        }
        for ref, argument in ((runs, "who"), (types.PromptReference(name="cy_miles"), "task")):
            with pytest.raises(MCPError) as refused:
                await client.complete(ref, {"name": argument, "value": ""})
            done[f"{ref.name} {argument}"] = refused.value.error.message
        return done

    done = in_memory(club.service, club.ada, mode, talk)
    assert done[""] == ["leaderboard", "log_run", "since"]
    assert done["l"] == ["leaderboard", "log_run"]
    assert done["LE"] == ["leaderboard"]
    assert done["x"] == []
    assert done["ada_runs who"] == "the prompt ada_runs has no argument who — its one is task"
    assert done["cy_miles task"].startswith("no app cy/miles")


@pytest.mark.parametrize("mode", MODES)
def test_a_deploy_is_told_as_the_prompts_changing(club: Club, mode: str) -> None:
    """A new app is a new prompt: a connection of the handshake generation hears
    `notifications/prompts/list_changed`, a listen stream of the newest `PromptsListChanged`,
    and the list holds it then."""
    heard: list[IncomingMessage] = []

    def deploy() -> None:
        club.service.deploy(club.ada, RUNS, space="ada", app="laps", title="Laps")

    async def talk(client: Client) -> list[str]:
        await client.session.list_prompts()
        if mode == "legacy":
            await anyio.to_thread.run_sync(deploy)
            with anyio.fail_after(30):
                while not any(isinstance(m, types.PromptListChangedNotification) for m in heard):
                    await anyio.sleep(0.02)
        else:
            async with client.listen(prompts_list_changed=True) as stream:
                await anyio.to_thread.run_sync(deploy)
                with anyio.fail_after(30):
                    async for event in stream:
                        if type(event).__name__ == "PromptsListChanged":
                            break
        listed = await client.session.list_prompts()
        return [prompt.name for prompt in listed.prompts]

    names = in_memory(club.service, club.ada, mode, talk, heard=heard)
    assert names == ["ada_laps", "ada_runs", "club_runs"]
