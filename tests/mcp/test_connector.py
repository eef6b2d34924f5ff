"""The connector through the SDK's own client, in memory, against a real Service.

Every test runs in both protocol generations the SDK serves: the initialize
handshake (`legacy`) and the newest (`auto` negotiates it).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp_talk import BASE_URL, MODES, TOOL_NAMES, Club, in_memory, refused, set_up_club

from helpers.club import RUNS
from helpers.mcp_answers import ok, said_with, sentence_and_data
from mcp import Client
from pasture.caller import NOBODY, Caller
from pasture.errors import Refused
from pasture.mcp import build_server
from pasture.platform.service import Service

READ_ONLY = {"commands", "status", "graph_schema", "graph_query", "app_list", "app_files"}
RUN = {"who": "Ada", "miles": "5", "at": "2026-09-01"}


def _sentence(
    club: Club, caller: Caller, name: str, args: dict[str, Any], app: str | None = None
) -> str:
    """What the Service itself refuses with, to hold the connector to the very same sentence."""
    with pytest.raises(Refused) as refusal:
        club.service.run_command(caller, name, args, app)
    return refusal.value.sentence


# -- the tool list -------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_the_tool_list_is_the_same_nine_tools_in_order_for_everyone(club: Club, mode: str) -> None:
    async def tools(client: Client) -> list[types.Tool]:
        return (await client.list_tools()).tools

    seen = {
        who.name or "nobody": in_memory(club.service, who, mode, tools)
        for who in (club.ada, club.bo, club.cy, NOBODY)
    }
    dumped = {who: [t.model_dump() for t in listed] for who, listed in seen.items()}
    assert [t.name for t in seen["ada"]] == TOOL_NAMES
    assert dumped["ada"] == dumped["bo"] == dumped["cy"] == dumped["nobody"]
    for tool in seen["ada"]:
        assert tool.description and len(tool.description) > 60
        assert tool.input_schema["type"] == "object"
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (tool.name in READ_ONLY)
        # what can run a command that is hard to undo, or delete a row, says it may
        may_destroy = tool.name in ("command", "graph_apply")
        assert tool.annotations.destructive_hint is (
            None if tool.name in READ_ONLY else may_destroy
        )


@pytest.mark.parametrize("mode", MODES)
def test_a_deploy_leaves_the_tool_list_as_it_was(club: Club, mode: str) -> None:
    async def deploy_between(client: Client) -> tuple[list[str], list[str]]:
        before = [t.name for t in (await client.list_tools()).tools]
        files = {"index.html": "<!doctype html><title>Notes</title><p>notes</p>"}
        ok(await client.call_tool("app_deploy", {"files": files, "app": "notes"}))
        after = [t.name for t in (await client.list_tools()).tools]
        return before, after

    before, after = in_memory(club.service, club.ada, mode, deploy_between)
    assert before == after == TOOL_NAMES


# -- commands ------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_commands_lists_the_run_club_grouped_by_app(club: Club, mode: str) -> None:
    async def commands(client: Client) -> types.CallToolResult:
        return await client.call_tool("commands", {"app": "ada/runs"})

    listing, data = ok(in_memory(club.service, club.ada, mode, commands))
    assert listing.startswith("## ada/runs\n")
    assert (
        "log_run(who, miles, at) — Log a run for the club leaderboard — Run club, an app at "
        "127.0.0.1:8000/ada/runs/" in listing
    )
    assert "## club/runs" not in listing
    by_name = {entry["name"]: entry for entry in data["commands"]}
    assert set(by_name) >= {"log_run", "leaderboard", "since"}
    log_run = by_name["log_run"]
    assert log_run["at"] == "ada/runs"
    assert log_run["title"] == "Run club"
    assert log_run["readOnly"] is False
    assert log_run["input"]["properties"]["miles"]["type"] == "number"
    assert "view" not in log_run
    assert by_name["leaderboard"]["readOnly"] is True
    assert by_name["leaderboard"]["view"] == "ui://ada/runs/leaderboard.html"
    assert (
        "leaderboard() — Every run logged so far, with who logged it — Run club, an app at "
        "127.0.0.1:8000/ada/runs/ — view ui://ada/runs/leaderboard.html" in listing
    )


@pytest.mark.parametrize("mode", MODES)
def test_commands_without_an_app_lists_every_app_the_caller_is_in(club: Club, mode: str) -> None:
    async def commands(client: Client) -> types.CallToolResult:
        return await client.call_tool("commands", {})

    listing, data = ok(in_memory(club.service, club.ada, mode, commands))
    assert "## ada/runs" in listing and "## club/runs" in listing
    assert {entry["at"] for entry in data["commands"]} == {"ada/runs", "club/runs"}
    assert listing == club.service.listing.list_commands(club.ada).text


# -- command -------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_logging_runs_with_string_arguments_and_reading_the_board_with_bylines(
    club: Club, mode: str
) -> None:
    async def runs(client: Client) -> tuple[types.CallToolResult, types.CallToolResult]:
        wrote = await client.call_tool(
            "command", {"name": "log_run", "args": RUN, "app": "ada/runs"}
        )
        await client.call_tool(
            "command",
            {"name": "log_run", "args": {**RUN, "miles": 3.5}, "app": "ada/runs"},
        )
        board = await client.call_tool(
            "command", {"name": "leaderboard", "args": {}, "app": "ada/runs"}
        )
        return wrote, board

    wrote, board = in_memory(club.service, club.ada, mode, runs)
    said, data = ok(wrote)
    assert said.startswith("log_run: wrote 1 entity in ada/runs: $run=")
    [eid] = data["entities"]
    assert data["aliases"] == {"$run": eid}

    said, data = ok(board)
    assert said.startswith("leaderboard: 2 rows in ada/runs")
    rows = data["rows"]
    assert [row["jog"]["miles"] for row in rows] == [5, 3.5]
    assert rows[0]["entity"]["eid"] == eid
    assert rows[0]["jog"]["who"] == "Ada"
    assert rows[0]["created"]["by"] == {"eid": club.ada.eid, "name": "ada"}


@pytest.mark.parametrize("mode", MODES)
def test_each_refusal_is_the_services_sentence_and_nothing_else(club: Club, mode: str) -> None:
    calls: list[tuple[Caller, dict[str, Any]]] = [
        (club.ada, {"name": "log_run", "args": {**RUN, "miles": "five"}, "app": "runs"}),
        (club.ada, {"name": "log_run", "args": {"who": "Ada", "at": "2026-09-01"}, "app": "runs"}),
        (club.ada, {"name": "log_run", "args": RUN}),
        (club.ada, {"name": "add_run", "args": {}}),
        (club.bo, {"name": "log_run", "args": RUN}),
        (club.cy, {"name": "log_run", "args": RUN}),
        (NOBODY, {"name": "log_run", "args": RUN}),
        (NOBODY, {"name": "leaderboard", "args": {}, "app": "ada/runs"}),
    ]
    for caller, arguments in calls:

        async def call(
            client: Client, arguments: dict[str, Any] = arguments
        ) -> types.CallToolResult:
            return await client.call_tool("command", arguments)

        sentence = refused(in_memory(club.service, caller, mode, call))
        assert sentence == _sentence(
            club, caller, arguments["name"], arguments["args"], arguments.get("app")
        )
        assert "Traceback" not in sentence and "sqlite" not in sentence.lower()

    # The spec's own sentences, as a person would read them.
    sentences = [
        _sentence(club, club.ada, "log_run", {**RUN, "miles": "five"}, "ada/runs"),
        _sentence(club, club.ada, "log_run", {"who": "Ada", "at": "2026-09-01"}, "ada/runs"),
        _sentence(club, club.ada, "log_run", RUN),
        _sentence(club, club.bo, "log_run", RUN),
    ]
    assert sentences == [
        "miles is a number",
        "miles is required",
        "log_run is a command of ada/runs and club/runs — say which app",
        "you can read this app but not change it — its owner can make you an editor",
    ]
    unknown = _sentence(club, club.ada, "add_run", {})
    assert unknown.startswith("no command add_run — your apps offer ada/runs: ")
    assert unknown.endswith("commands lists them with their arguments.")


@pytest.mark.parametrize("mode", MODES)
def test_a_viewer_reads_the_board_and_a_write_changes_nothing(club: Club, mode: str) -> None:
    async def viewer(client: Client) -> tuple[types.CallToolResult, types.CallToolResult]:
        write = await client.call_tool("command", {"name": "log_run", "args": RUN})
        board = await client.call_tool("command", {"name": "leaderboard", "args": {}})
        return write, board

    write, board = in_memory(club.service, club.bo, mode, viewer)
    assert refused(write) == (
        "you can read this app but not change it — its owner can make you an editor"
    )
    assert ok(board)[1]["rows"] == []


@pytest.mark.parametrize("mode", MODES)
def test_a_signed_out_caller_sees_the_tools_and_no_commands(club: Club, mode: str) -> None:
    async def nobody(client: Client) -> tuple[list[str], types.CallToolResult, Any]:
        tools = [t.name for t in (await client.list_tools()).tools]
        listing = await client.call_tool("commands", {})
        resources = (await client.list_resources()).resources
        return tools, listing, resources

    tools, listing, resources = in_memory(club.service, NOBODY, mode, nobody)
    assert tools == TOOL_NAMES
    said, data = ok(listing)
    assert said == club.service.listing.list_commands(NOBODY).text
    assert data == {"commands": []}
    assert resources == []


@pytest.mark.parametrize("mode", MODES)
def test_a_command_call_missing_its_name_says_so(club: Club, mode: str) -> None:
    async def call(client: Client) -> types.CallToolResult:
        return await client.call_tool("command", {"args": {}})

    assert refused(in_memory(club.service, club.ada, mode, call)) == "name is required"


# -- the graph and the app tools ------------------------------------------------
def test_graph_apply_takes_what_the_web_takes_and_refuses_as_it_does(club: Club) -> None:
    bundle = {"jog": {"who": "Bo", "miles": 2}}

    async def call(client: Client) -> list[types.CallToolResult]:
        return [
            await client.call_tool("graph_apply", {"app": "ada/runs", "bundles": bundles})
            for bundles in (bundle, [bundle, bundle], "jog", ["jog"])
        ]

    one, two, word, words = in_memory(club.service, club.ada, "legacy", call)
    assert one.structured_content is not None and len(one.structured_content["entities"]) == 1
    assert two.structured_content is not None and len(two.structured_content["entities"]) == 2
    # The store decides the shape, for every door: the web's apply says the same.
    for bundles, answer in (("jog", word), (["jog"], words)):
        with pytest.raises(Refused) as caught:
            club.service.apply(club.ada, "ada/runs", bundles, via_web=True)
        assert refused(answer) == caught.value.sentence
    assert refused(word).startswith("a write is a bundle or a list of bundles")


@pytest.mark.parametrize("mode", MODES)
def test_graph_and_app_tools_answer_as_the_service_does(club: Club, mode: str) -> None:
    bundle = {"entity": {"eid": "$r"}, "jog": {"who": "Bo", "miles": 2}}

    async def tools(client: Client) -> dict[str, types.CallToolResult]:
        return {
            "schema": await client.call_tool("graph_schema", {"app": "ada/runs"}),
            "apply": await client.call_tool(
                "graph_apply", {"app": "ada/runs", "bundles": [bundle]}
            ),
            "query": await client.call_tool(
                "graph_query", {"app": "ada/runs", "filter": ".jog!&.created!"}
            ),
            "list": await client.call_tool("app_list", {}),
            "files": await client.call_tool("app_files", {"app": "ada/runs"}),
            "tools.json": await client.call_tool(
                "app_files", {"app": "ada/runs", "path": "tools.json"}
            ),
            "status": await client.call_tool("status", {}),
        }

    got = in_memory(club.service, club.ada, mode, tools)
    service, ada = club.service, club.ada
    schema = service.graph.schema(ada, "ada/runs")
    assert ok(got["schema"]) == (said_with(schema.text, schema.data), schema.data)
    said, data = ok(got["apply"])
    assert list(data["aliases"]) == ["$r"]
    said, data = sentence_and_data(got["query"])  # the rows, in the text too
    assert said == "1 row in ada/runs"
    assert [row["jog"]["who"] for row in data["rows"]] == ["Bo"]
    assert data["rows"][0]["created"]["by"]["name"] == "ada"
    said, data = ok(got["list"])
    assert {app["at"] for app in data["apps"]} == {"ada/runs", "club/runs"}
    assert f"{BASE_URL}/ada/runs/" in said
    said, data = ok(got["files"])
    assert "tools.json" in data["files"] and "leaderboard.html" in data["files"]
    said, data = ok(got["tools.json"])
    assert said == (RUNS / "tools.json").read_text()
    said, data = ok(got["status"])
    status = service.listing.status(ada)
    assert (said, data) == (said_with(status.text, status.data), status.data)


@pytest.mark.parametrize("mode", MODES)
def test_graph_query_says_an_aggregate_and_carries_its_object(club: Club, mode: str) -> None:
    runs = [{"jog": {"who": who, "miles": 3}} for who in ("Ada", "Bo", "Ada")]
    club.service.apply(club.ada, "ada/runs", runs)

    async def ask(client: Client) -> list[types.CallToolResult]:
        filters = [".jog!&.count!", ".tally=jog.who", ".distinct=jog.who", ".jog!&.count!&limit=1"]
        return [
            await client.call_tool("graph_query", {"app": "ada/runs", "filter": f}) for f in filters
        ]

    count, tally, distinct, windowed = in_memory(club.service, club.ada, mode, ask)
    assert ok(count) == ('3 entities in ada/runs\n{"count":3}', {"count": 3})
    assert ok(tally) == (
        'tally of jog.who in ada/runs: Ada 2, Bo 1\n{"tally":{"Ada":2,"Bo":1}}',
        {"tally": {"Ada": 2, "Bo": 1}},
    )
    assert ok(distinct) == (
        '2 distinct jog.who in ada/runs: Ada, Bo\n{"distinct":["Ada","Bo"]}',
        {"distinct": ["Ada", "Bo"]},
    )
    assert ok(windowed) == ok(count)


@pytest.mark.parametrize("mode", MODES)
def test_a_deploy_with_problems_reports_every_one_and_installs_nothing(
    club: Club, mode: str
) -> None:
    files = {
        "index.html": "<!doctype html><title>Runs</title>",
        "tools.json": '{"bad": {"description": "Bad", "input": {}, "screen": 1, '
        '"apply": {"jog": {"who": "$who"}}}}',
    }

    async def deploy(client: Client) -> types.CallToolResult:
        return await client.call_tool("app_deploy", {"files": files, "app": "runs", "space": "ada"})

    sentence = refused(in_memory(club.service, club.ada, mode, deploy))
    assert sentence.startswith("tools.json: ")
    assert "bad: screen — " in sentence and "bad: jog is not a component" in sentence
    assert club.service.gate.app_info(club.ada, "ada/runs").version == 1


# -- views ---------------------------------------------------------------------
VIEW = "ui://ada/runs/leaderboard.html"


@pytest.mark.parametrize("mode", MODES)
def test_a_view_is_listed_and_read_with_its_base_and_csp(club: Club, mode: str) -> None:
    async def views(client: Client) -> tuple[list[types.Resource], types.ReadResourceResult]:
        listed = (await client.list_resources()).resources
        return listed, await client.read_resource(VIEW)

    listed, read = in_memory(club.service, club.ada, mode, views)
    address = f"{BASE_URL}/ada/runs/"
    by_uri = {resource.uri: resource for resource in listed}
    assert set(by_uri) == {VIEW, "ui://club/runs/leaderboard.html"}
    assert by_uri[VIEW].mime_type == "text/html;profile=mcp-app"
    [contents] = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.mime_type == "text/html;profile=mcp-app"
    assert contents.text.count("<base ") == 1
    assert f'<base href="{address}"' in contents.text
    assert contents.text.index("<base ") < contents.text.index('href="./style.css"')
    assert '<ol id="board"></ol>' in contents.text
    assert contents.meta is not None
    csp = contents.meta["ui"]["csp"]
    assert csp["resourceDomains"] == [address] and csp["connectDomains"] == [address]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("apps_domain", [None, "localhost"])
def test_a_view_names_its_app_so_its_redraw_reaches_that_one(
    tmp_path: Path, database: str, apps_domain: str | None, mode: str
) -> None:
    # ada has `since` in ada/runs and club/runs. On an origin of the app's own the view's
    # address has no path to read the app from: the page names it in a <meta>.
    service = Service(tmp_path / "home", base_url=BASE_URL, apps_domain=apps_domain)
    try:
        club = set_up_club(service)
        service.run_command(club.ada, "log_run", {**RUN, "who": "Di"}, "club/runs")

        async def talk(client: Client) -> dict[str, Any]:
            seen: dict[str, Any] = {}
            for at in ("ada/runs", "club/runs"):
                read = await client.read_resource(f"ui://{at}/leaderboard.html")
                [contents] = read.contents
                assert isinstance(contents, types.TextResourceContents)
                [named] = re.findall(r'<meta name="pasture-app" content="([^"]*)">', contents.text)
                args = {"since": "2026-01-01"}
                seen[at] = (
                    named,
                    await client.call_tool(
                        "command", {"name": "since", "args": args, "app": named}
                    ),
                )
            seen["unnamed"] = await client.call_tool(
                "command", {"name": "since", "args": {"since": "2026-01-01"}}
            )
            return seen

        seen = in_memory(service, club.ada, mode, talk)
    finally:
        service.close()
    named, board = seen["ada/runs"]
    assert named == "ada/runs" and ok(board)[1]["rows"] == []
    named, board = seen["club/runs"]
    assert named == "club/runs"
    assert [row["jog"]["who"] for row in ok(board)[1]["rows"]] == ["Di"]
    assert refused(seen["unnamed"]) == (
        "since is a command of ada/runs and club/runs — say which app"
    )


@pytest.mark.parametrize("mode", MODES)
def test_a_page_with_its_own_base_keeps_it(club: Club, mode: str) -> None:
    own = '<!doctype html><base href="https://cdn.example/"><p>mine</p>'
    club.service.deploy(
        club.ada,
        {
            "index.html": "<!doctype html><title>Mine</title>",
            "mine.html": own,
            "tools.json": '{"mine": {"description": "Every note there is", "input": {}, '
            '"query": ".doc!", "view": "mine.html"}}',
        },
        space="ada",
        app="mine",
    )

    async def read(client: Client) -> types.ReadResourceResult:
        return await client.read_resource("ui://ada/mine/mine.html")

    [contents] = in_memory(club.service, club.ada, mode, read).contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text.count("<base ") == 1
    assert '<base href="https://cdn.example/">' in contents.text


@pytest.mark.parametrize("mode", MODES)
def test_anything_but_a_view_is_no_resource(club: Club, mode: str) -> None:
    asked = [
        "ui://ada/runs/index.html",
        "ui://ada/runs/style.css",
        "ui://ada/runs/tools.json",
        "ui://nowhere/runs/leaderboard.html",
        "https://example.com/",
    ]

    async def read_all(client: Client) -> list[str]:
        said = []
        for uri in asked:
            with pytest.raises(MCPError) as error:
                await client.read_resource(uri)
            said.append(error.value.error.message)
        return said

    for caller in (club.ada, club.cy, NOBODY):
        said = in_memory(club.service, caller, mode, read_all)
        assert all(sentence.startswith("no resource") for sentence in said), said

    # Someone outside ada's space cannot read her view either.
    said = in_memory(club.service, club.cy, mode, read_all)
    assert said[0].startswith("no resource")


def test_a_deploy_announces_that_the_resources_changed_on_the_handshake(club: Club) -> None:
    heard: list[IncomingMessage] = []

    async def deploy(client: Client) -> None:
        files = {"index.html": "<!doctype html><title>Notes</title>"}
        ok(await client.call_tool("app_deploy", {"files": files, "app": "notes"}))
        await anyio.sleep(0.05)

    in_memory(club.service, club.ada, "legacy", deploy, heard=heard)
    assert any(isinstance(message, types.ResourceListChangedNotification) for message in heard), (
        heard
    )


def test_a_deploy_announces_that_the_resources_changed_on_a_listen_stream(club: Club) -> None:
    async def main() -> list[object]:
        server = build_server(club.service, lambda: club.ada)
        events: list[object] = []
        async with (
            Client(server, mode="auto") as client,
            client.listen(resources_list_changed=True) as subscription,
        ):
            files = {"index.html": "<!doctype html><title>Notes</title>"}
            ok(await client.call_tool("app_deploy", {"files": files, "app": "notes"}))
            with anyio.fail_after(60):  # a deadline only, so that a silent stream fails
                async for event in subscription:
                    events.append(event)
                    break
        return events

    [event] = anyio.run(main)
    assert type(event).__name__ == "ResourcesListChanged"


def test_a_refused_deploy_announces_nothing(club: Club) -> None:
    heard: list[IncomingMessage] = []

    async def deploy(client: Client) -> None:
        refused(await client.call_tool("app_deploy", {"files": {"tools.json": "{"}, "app": "x"}))
        await anyio.sleep(0.05)

    in_memory(club.service, club.ada, "legacy", deploy, heard=heard)
    assert not [m for m in heard if isinstance(m, types.ResourceListChangedNotification)]
