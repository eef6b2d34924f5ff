"""One site for the whole fuzz suite: the apps are deployed once, every door is opened on it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio.from_thread
import mcp_types as types
import pytest
from fuzz_checks import CallTool
from fuzz_site import BASE, Site, open_site
from starlette.testclient import TestClient

from mcp import Client
from pasture.mcp import build_server
from pasture.web import create_app


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    yield from open_site(tmp_path_factory.mktemp("fuzz") / "home")


@pytest.fixture(scope="session")
def web(site: Site) -> Iterator[TestClient]:
    """The web door, signed in as ada with a token; a bug answers 500 rather than raising."""
    app = create_app(site.service)
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as client:
        client.headers["Authorization"] = f"Bearer {site.token}"
        yield client


@pytest.fixture(scope="session")
def call_tool(site: Site) -> Iterator[CallTool]:
    """A tool call over the SDK's own in-memory client, held open for the whole session."""
    with anyio.from_thread.start_blocking_portal() as portal:
        client = Client(build_server(site.service, lambda: site.ada), mode="legacy")
        with portal.wrap_async_context_manager(client) as connected:

            def call(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
                return portal.call(connected.call_tool, name, arguments)

            yield call
