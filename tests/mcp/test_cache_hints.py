"""On the newest revision every list and read says how long it stays true (`ttlMs`) and whose
it is (`cacheScope`): the tool list and the views' template are everyone's, a caller's views
their own (`pasture.mcp._server.CACHE_HINTS`)."""

from __future__ import annotations

from typing import Any

from mcp_talk import Club, in_memory

from mcp import Client


def _hints(result: Any) -> tuple[int | None, str | None]:
    return result.ttl_ms, result.cache_scope


def test_lists_and_reads_say_how_long_they_stay_true_and_whose_they_are(club: Club) -> None:
    async def talk(client: Client) -> list[tuple[int | None, str | None]]:
        return [
            _hints(await client.list_tools()),
            _hints(await client.list_resources()),
            _hints(await client.list_resource_templates()),
            _hints(await client.read_resource("ui://ada/runs/leaderboard.html")),
        ]

    hints = in_memory(club.service, club.ada, "auto", talk)
    assert hints == [(0, "public"), (0, "private"), (0, "public"), (0, "private")]
