"""A registry served on its own over MCP (pasture.mcp._registry_server): each command its own
tool, `status` for every provider, changes announced on both protocol generations."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import IncomingMessage

from helpers.cart import cart_registry
from mcp import Client
from pasture import Registry, Result
from pasture.mcp import build_registry_server


def _talk(registry: Registry, mode: str, talk: Any, heard: list[IncomingMessage]) -> Any:
    async def handler(message: IncomingMessage) -> None:
        heard.append(message)

    async def main() -> Any:
        async with Client(
            build_registry_server(registry), mode=mode, message_handler=handler
        ) as client:
            return await talk(client)

    return anyio.run(main)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_each_command_is_its_own_tool_with_status(mode: str) -> None:
    registry, _ = cart_registry()

    async def talk(client: Client) -> tuple[list[types.Tool], Any, Any, Any]:
        tools = (await client.list_tools()).tools
        added = await client.call_tool("cart_add", {"sku": "V60-02", "qty": 2})
        bad = await client.call_tool("cart_add", {"qty": "2"})
        status = await client.call_tool("status", {})
        return tools, added, bad, status

    tools, added, bad, status = _talk(registry, mode, talk, [])
    assert [t.name for t in tools] == ["cart_add", "cart_status", "status"]
    add = tools[0]
    assert add.title == "Add to the cart" and add.description == "Add a product to the cart"
    assert add.input_schema["required"] == ["sku"]
    assert add.annotations is not None and add.annotations.read_only_hint is False
    assert tools[1].annotations is not None and tools[1].annotations.read_only_hint is True
    assert not added.is_error and added.structured_content == {"count": 2}
    assert added.content[0].text == 'Added 2 × V60-02.\n{"count":2}'  # its data too
    # An agent's values arrive typed: "2" for an integer is not converted.
    assert bad.is_error and bad.content[0].text == "qty is a whole number; sku is required"
    assert status.content[0].text == 'cart: 2 items\n{"cart":{"count":2}}'


def test_registering_and_removing_announce_that_the_tools_changed() -> None:
    registry, _ = cart_registry()
    heard: list[IncomingMessage] = []

    async def talk(client: Client) -> list[list[str]]:
        seen = [[t.name for t in (await client.list_tools()).tools]]
        remove = registry.register(
            "cart checkout",
            description="Pay for what is in the cart",
            annotations={"consequential": True},
            run=lambda a, c: Result("paid", {}),
        )
        await anyio.sleep(0.05)
        seen.append([t.name for t in (await client.list_tools()).tools])
        remove()
        await anyio.sleep(0.05)
        seen.append([t.name for t in (await client.list_tools()).tools])
        return seen

    seen = _talk(registry, "legacy", talk, heard)
    assert seen == [
        ["cart_add", "cart_status", "status"],
        ["cart_add", "cart_status", "cart_checkout", "status"],
        ["cart_add", "cart_status", "status"],
    ]
    changed = [m for m in heard if isinstance(m, types.ToolListChangedNotification)]
    assert len(changed) == 2


def test_a_change_reaches_a_listen_stream_in_the_newest_protocol() -> None:
    registry, _ = cart_registry()

    async def main() -> list[object]:
        events: list[object] = []
        async with (
            Client(build_registry_server(registry), mode="auto") as client,
            client.listen(tools_list_changed=True) as subscription,
        ):
            registry.register("cart empty", description="Empty", annotations={}, run=lambda a, c: 0)
            with anyio.fail_after(60):  # a deadline only, so that a silent stream fails
                async for event in subscription:
                    events.append(event)
                    break
        return events

    [event] = anyio.run(main)
    assert type(event).__name__ == "ToolsListChanged"


def test_a_consequential_command_is_marked_destructive_for_agents() -> None:
    registry = Registry()
    registry.register(
        "cart checkout", description="Pay", annotations={"consequential": True}, run=lambda a, c: 0
    )

    async def talk(client: Client) -> list[types.Tool]:
        return (await client.list_tools()).tools

    [tool] = _talk(registry, "legacy", talk, [])
    assert tool.annotations is not None and tool.annotations.destructive_hint is True
    command = registry.get("cart checkout")
    assert command is not None and command.listing("a/b", "B")["consequential"] is True


@pytest.mark.processes
def test_serving_a_registry_loads_no_platform() -> None:
    code = (
        "import sys\n"
        "from pasture import Registry\n"
        "from pasture.mcp import build_registry_server\n"
        "build_registry_server(Registry())\n"
        "print(sorted(m for m in sys.modules if m.startswith('pasture.platform')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.stdout.strip() == "[]"
