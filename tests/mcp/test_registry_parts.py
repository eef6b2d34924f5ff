"""A registry served on its own, in memory, in both protocol generations: its resources and
templates read, its prompts got and completed, answers beyond text, progress, a call the
client stops, and a command that asks the client — a form, its model, its roots — with the
answers it gives (asked while the code waits in the handshake generation, a round of
`input_required` in the newest).
The conformance suite runs the same registry over HTTP (`test_registry_conformance.py`)."""

from __future__ import annotations

import importlib.util
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from mcp import Client
from pasture import Registry
from pasture.mcp import build_registry_server

FIXTURES = Path(__file__).resolve().parents[1] / "conformance_app" / "fixtures.py"


def fixtures() -> Registry:
    """The conformance suite's fixtures, as the program the suite's test serves."""
    spec = importlib.util.spec_from_file_location("conformance_fixtures", FIXTURES)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    registry: Registry = module.fixtures()
    return registry


MODES = ["legacy", "auto"]


async def _person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(
        action="accept", content={"name": "Ada", "color": "green", "ok": True}
    )


async def _model(
    context: Any, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="Paris"), model="m"
    )


async def _roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])


def _talk(mode: str, talk: Any, **callbacks: Any) -> Any:
    async def main() -> Any:
        async with Client(build_registry_server(fixtures()), mode=mode, **callbacks) as client:
            return await talk(client)

    return anyio.run(main)


@pytest.mark.parametrize("mode", MODES)
def test_resources_templates_and_prompts_are_served(mode: str) -> None:
    async def talk(client: Client) -> dict[str, Any]:
        completed = await client.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": "par"},
        )
        return {
            "listed": [str(r.uri) for r in (await client.list_resources()).resources],
            "templates": [
                t.uri_template for t in (await client.list_resource_templates()).resource_templates
            ],
            "text": await client.read_resource("test://static-text"),
            "blob": await client.read_resource("test://static-binary"),
            "filled": await client.read_resource("test://template/123/data"),
            "prompt": await client.get_prompt(
                "test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"}
            ),
            "image": await client.get_prompt("test_prompt_with_image"),
            "completed": completed.completion.values,
        }

    seen = _talk(mode, talk)
    assert seen["listed"] == [
        "test://static-text",
        "test://static-binary",
        "test://watched-resource",
    ]
    assert seen["templates"] == ["test://template/{id}/data"]
    [text] = seen["text"].contents
    assert text.text == "This is the content of the static text resource."
    [blob] = seen["blob"].contents
    assert blob.mime_type == "image/png" and blob.blob
    [filled] = seen["filled"].contents
    assert '"id": "123"' in filled.text
    [said] = seen["prompt"].messages
    assert said.content.text == "Prompt with arguments: arg1='hello', arg2='world'"
    image, line = seen["image"].messages
    assert image.content.type == "image" and line.content.text == "Please analyze the image above."
    assert seen["completed"] == ["paris", "park", "party"]


@pytest.mark.parametrize("mode", MODES)
def test_an_address_that_is_no_resource_is_refused_naming_it(mode: str) -> None:
    async def talk(client: Client) -> Any:
        try:
            await client.read_resource("test://nothing-here")
        except Exception as refused:
            return refused
        return None

    refused = _talk(mode, talk)
    assert refused is not None and "no resource test://nothing-here" in str(refused)


@pytest.mark.parametrize("mode", MODES)
def test_an_answer_carries_an_image_and_a_resource_after_its_text(mode: str) -> None:
    async def talk(client: Client) -> types.CallToolResult:
        return await client.call_tool("test_multiple_content_types", {})

    result = _talk(mode, talk)
    assert [c.type for c in result.content] == ["text", "image", "resource"]
    assert result.content[0].text == "Multiple content types test:"


# In memory the SDK's client of the newest revision is told no progress; over HTTP it is,
# which the conformance suite checks for both (`test_registry_conformance.py`).
@pytest.mark.parametrize("mode", ["legacy"])
def test_progress_reaches_the_client(mode: str) -> None:
    told: list[float] = []

    async def talk(client: Client) -> types.CallToolResult:
        async def heard(progress: float, total: float | None, message: str | None) -> None:
            told.append(progress)

        return await client.call_tool("test_tool_with_progress", {}, progress_callback=heard)

    assert not _talk(mode, talk).is_error
    assert told == [0, 50, 100]


@pytest.mark.parametrize("mode", MODES)
def test_a_command_asks_the_person_the_model_and_the_roots(mode: str) -> None:
    async def talk(client: Client) -> list[str]:
        said = []
        for name in (
            "test_input_required_result_elicitation",
            "test_input_required_result_sampling",
            "test_input_required_result_list_roots",
            "test_input_required_result_multi_round",
        ):
            result = await client.call_tool(name, {})
            assert not result.is_error, result
            said.append(result.content[0].text)
        return said

    said = _talk(
        mode,
        talk,
        elicitation_callback=_person,
        sampling_callback=_model,
        list_roots_callback=_roots,
    )
    assert said == ["Hello, Ada!", "Paris", "Roots: file:///work", "Ada likes green."]


@pytest.mark.parametrize("mode", MODES)
def test_a_client_that_cannot_be_asked_is_not(mode: str) -> None:
    async def talk(client: Client) -> Any:
        try:
            return await client.call_tool("test_missing_capability", {})
        except Exception as refused:
            return refused

    refused = _talk(mode, talk)
    assert "did not say it can be asked (sampling)" in str(refused)


@pytest.mark.parametrize("mode", MODES)
def test_a_call_the_client_stops_sees_ctx_cancelled(mode: str) -> None:
    stopped = threading.Event()
    registry = Registry()

    def slow(args: dict[str, Any], ctx: Any) -> str:
        ctx.progress(1)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if ctx.cancelled:
                stopped.set()
                return "stopped"
            time.sleep(0.02)
        return "never stopped"

    registry.register("job run", description="A long job.", run=slow, annotations={})

    async def main() -> None:
        server = build_registry_server(registry)
        async with Client(server, mode=mode) as client, anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "job_run", {})
            await anyio.sleep(0.3)
            group.cancel_scope.cancel()  # the SDK's client sends its cancel

    anyio.run(main)
    assert stopped.wait(30)
