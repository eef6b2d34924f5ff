"""Which release of the MCP tools each client listed, on both databases: a client is due
to be told only when it listed another release, is told once, and a restart (another
process on the same database) remembers it."""

from __future__ import annotations

from dataclasses import replace

from pasture.caller import NOBODY, Caller
from pasture.platform.db.tool_lists import ToolLists, client_of
from pasture.platform.service import Service


def test_a_client_is_due_only_after_listing_another_release(service: Service, ada: Caller) -> None:
    lists = ToolLists(service.db)
    agent = replace(ada, via="token 4f3c2b1a")
    assert not lists.due(agent, "second")  # never listed: nothing to tell
    lists.listed(agent, "first")
    assert not lists.due(agent, "first")
    # Another process — the new release's — reads what this one wrote.
    restarted = ToolLists(service.db)
    assert restarted.due(agent, "second")
    restarted.listed(agent, "second")  # told, or listed again: once is enough
    assert not restarted.due(agent, "second")
    assert not ToolLists(service.db).due(agent, "second")


def test_each_client_of_a_person_is_told_in_turn(service: Service, ada: Caller) -> None:
    lists = ToolLists(service.db)
    one, other = replace(ada, via="token aaaa"), replace(ada, via="client Claude (bbbb)")
    assert client_of(one) != client_of(other)
    lists.listed(one, "first")
    lists.listed(other, "first")
    lists.listed(one, "second")
    assert not lists.due(one, "second") and lists.due(other, "second")
    # Nobody lists nothing of their own, and is never due.
    lists.listed(NOBODY, "first")
    assert client_of(NOBODY) is None and not lists.due(NOBODY, "second")
