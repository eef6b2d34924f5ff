"""`pasture query APP FILTER`: real processes on a fresh home, and the same answer through
`Service.query`, MCP's `graph_query` and `./api/query` for the same filter."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import anyio
import mcp_types as types
import pytest
from rich.cells import cell_len
from starlette.testclient import TestClient

from helpers.club import RUNS
from helpers.command_line import PastureMain
from mcp import Client
from pasture.cli import show_query
from pasture.errors import Refused
from pasture.mcp import build_server
from pasture.platform.service import Service
from pasture.result import Result
from pasture.web import create_app

BASE = "http://testserver"
LOGGED = [
    ("Ada", "5", "2026-09-01"),
    ("Bo & Co 50%", "3.5", "2026-09-02T10:00:00Z"),
    ('Cy "the quick" 日本', "12", "2026-09-03"),
]
FILTERS = [
    ".jog!&.created!",
    ".jog.miles>=5&.doc?",
    '.jog.who="Bo & Co 50%"',
    ".jog.who~=quick&.jog.miles=10..20",
    "Ada",
    ".count!",
    ".tally=jog.who",
    ".jog.who=Zed",
]
REFUSED = [
    ".jog.miles=>5",
    ".jog!.doc!",
    ".nope!",
    '.doc.title="open',
    "limit=x",
]


@pytest.fixture(scope="module")
def pasture(tmp_path_factory: pytest.TempPathFactory) -> PastureMain:
    """A home with the run club deployed by the command line and three runs logged."""
    run = PastureMain(
        tmp_path_factory.mktemp("cli") / "home", COLUMNS="200"
    )  # wide, unless a test says otherwise
    assert run("deploy", str(RUNS)).returncode == 0
    for who, miles, at in LOGGED:
        logged = run("command", "log_run", who, miles, at)
        assert logged.returncode == 0, logged.stderr
    return run


@pytest.fixture(scope="module")
def service(pasture: PastureMain) -> Iterator[Service]:
    """The same home opened in this process, as `pasture serve` would open it."""
    opened = Service(pasture.home, base_url=BASE)
    yield opened
    opened.close()


def _json_lines(out: str) -> list[Any]:
    return [json.loads(line) for line in out.splitlines()]


# -- what it prints ----------------------------------------------------------------------------


def test_rows_print_as_a_table_with_whole_eids(pasture: PastureMain, service: Service) -> None:
    done = pasture("query", "runs", ".jog!&.created!")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "3 rows in ada/runs"
    assert re.split(r"\s*┃\s*", lines[1].strip()) == [
        "eid",
        "jog.who",
        "jog.miles",
        "jog.at",
        "created.at",
        "created.by",
    ]
    rows = service.graph.query(service.local_owner(), "runs", ".jog!&.created!").data["rows"]
    for row, line in zip(rows, lines[3:], strict=True):
        assert line.split("│")[0].strip() == row["entity"]["eid"]
        assert row["jog"]["who"] in line and row["created"]["at"] in line


def test_json_is_one_row_a_line(pasture: PastureMain, service: Service) -> None:
    done = pasture("query", "runs", ".jog.miles>=5&.doc?", "--json")
    assert done.returncode == 0, done.stderr
    expected = service.graph.query(service.local_owner(), "runs", ".jog.miles>=5&.doc?").data
    assert len(done.stdout.splitlines()) == 2
    assert _json_lines(done.stdout) == expected["rows"]
    none = pasture("query", "runs", ".jog.who=Zed", "--json")
    assert (none.returncode, none.stdout) == (0, "")


def test_a_refusal_is_its_sentence_and_a_non_zero_exit(
    pasture: PastureMain, service: Service
) -> None:
    for written in REFUSED:
        done = pasture("query", "runs", written)
        with pytest.raises(Refused) as said:
            service.graph.query(service.local_owner(), "runs", written)
        assert done.returncode == said.value.exit_code != 0
        assert done.stdout == ""
        assert done.stderr == said.value.sentence + "\n"
        assert "Traceback" not in done.stderr
    assert pasture("query", "runs", ".jog.miles=>5").stderr == (
        "write >= for at least: .jog.miles>=5\n"
    )
    elsewhere = pasture("query", "nope", ".jog!")
    assert elsewhere.returncode == 1
    assert elsewhere.stderr == "no app nope — your apps are ada/runs\n"


def test_a_forgotten_filter_is_a_usage_line(pasture: PastureMain) -> None:
    done = pasture("query", "runs")
    assert done.returncode == 2
    assert "pasture query APP FILTER" in done.stderr and "Traceback" not in done.stderr


def test_a_narrow_terminal_gets_each_row_as_a_block(pasture: PastureMain, service: Service) -> None:
    done = pasture("query", "runs", ".jog!&.doc?&.created!", COLUMNS="40")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert all(cell_len(line.rstrip()) <= 40 for line in lines), done.stdout
    rows = service.graph.query(service.local_owner(), "runs", ".jog!&.doc?&.created!").data["rows"]
    blocks = done.stdout.split("\n\n")
    assert len(blocks) == len(rows)
    for row, block in zip(rows, blocks, strict=True):
        eid = row["entity"]["eid"]
        assert eid in block.splitlines()  # whole, on a line of its own
        assert re.search(rf"^  jog\.who\s+{re.escape(row['jog']['who'])}\s*$", block, re.M)
        assert re.search(r"^  doc\.title\s+Run by", block, re.M)
    # narrower than anything folds into: the lines as they are, nothing cut
    tiny = pasture("query", "runs", ".jog!&.created!", COLUMNS="12")
    assert tiny.returncode == 0, tiny.stderr
    for row in rows:
        assert row["entity"]["eid"] in tiny.stdout.splitlines()
        assert row["created"]["at"] in tiny.stdout


def test_a_token_acts_as_its_person(pasture: PastureMain) -> None:
    made = pasture("token", "new", "--read", "--json")
    token = json.loads(made.stdout)["token"]
    mine = pasture("query", "runs", ".jog!", "--json")
    theirs = pasture("query", "ada/runs", ".jog!", "--json", "--token", token)
    assert (theirs.returncode, theirs.stdout) == (0, mine.stdout)
    assert pasture("user", "new", "bob").returncode == 0
    bobs = json.loads(pasture("token", "new", "--user", "bob", "--json").stdout)["token"]
    stranger = pasture("query", "ada/runs", ".jog!", "--token", bobs)
    assert stranger.returncode != 0 and "Traceback" not in stranger.stderr
    assert stranger.stderr.startswith("no app ada/runs")
    bad = pasture("query", "runs", ".jog!", PASTURE_TOKEN="pst_nonsense")
    assert bad.returncode == 1
    assert bad.stderr == (
        "that token is not one this server gave out — make one with pasture token new\n"
    )


def test_data_that_is_not_rows_prints_as_key_value_lines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # An aggregate may answer with its own shape: printed whole, whatever its keys.
    answer = Result("3 runs by 2 people", {"count": 3, "tally": {"Ada": 2, "Bo": 1}})
    assert show_query(answer, as_json=False) == 0
    assert capsys.readouterr().out == "3 runs by 2 people\ncount: 3\ntally:\n  Ada: 2\n  Bo: 1\n"
    assert show_query(answer, as_json=True) == 0
    assert _json_lines(capsys.readouterr().out) == [{"count": 3, "tally": {"Ada": 2, "Bo": 1}}]
    assert show_query(Result("no runs", {"rows": []}), as_json=False) == 0
    assert capsys.readouterr().out == "no runs\n"


def test_a_page_cut_short_says_so_under_its_rows_and_as_a_last_json_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = [{"kind": "jog", "entity": {"eid": "4f3c2a1b0c9d8e7f"}, "jog": {"who": "Ada"}}]
    text = "1 row in ada/runs, and more follow — the next page is the same filter with &after=WyJh"
    page = Result(text, {"rows": rows, "more": True, "cursor": "WyJh"})
    assert show_query(page, as_json=True) == 0
    assert _json_lines(capsys.readouterr().out) == [*rows, {"more": True, "cursor": "WyJh"}]
    assert show_query(page, as_json=False) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == printed[-1] == text and "4f3c2a1b0c9d8e7f" in "".join(printed)
    last = Result("1 row in ada/runs", {"rows": rows})
    assert show_query(last, as_json=True) == 0
    assert _json_lines(capsys.readouterr().out) == rows


# -- one answer through every door -------------------------------------------------------------


@pytest.mark.parametrize("written", FILTERS + REFUSED)
def test_the_same_answer_as_mcp_and_the_web(
    pasture: PastureMain, service: Service, written: str
) -> None:
    owner = service.local_owner()
    try:
        result = service.graph.query(owner, "ada/runs", written)
        expected: Any = json.loads(json.dumps(result.data))
    except Refused as e:
        expected = e
    done = pasture("query", "ada/runs", written, "--json")
    mcp = _graph_query(service, written)
    token = service.new_token(owner)
    web = TestClient(create_app(service), base_url=BASE)
    web.headers["Authorization"] = f"Bearer {token}"
    as_written = web.get(f"/ada/runs/api/query?{quote(written, safe='&=.!*,~<>?')}")
    whole = web.get(f"/ada/runs/api/query?filter={quote(written, safe='')}")
    if isinstance(expected, Refused):
        assert done.returncode != 0 and done.stderr == expected.sentence + "\n"
        assert mcp.is_error and _text(mcp) == expected.sentence
        for answer in (as_written, whole):
            assert (answer.status_code, answer.json()) == (400, {"error": expected.sentence})
        return
    assert done.returncode == 0, done.stderr
    assert _json_lines(done.stdout) == expected.get("rows", [expected])
    assert not mcp.is_error and mcp.structured_content == expected
    for answer in (as_written, whole):
        assert answer.status_code == 200, answer.text
        assert answer.json()["data"] == expected


def _graph_query(service: Service, written: str) -> types.CallToolResult:
    """MCP's `graph_query`, over the SDK's in-memory client, as the owner."""

    async def main() -> types.CallToolResult:
        owner = service.local_owner()
        async with Client(build_server(service, lambda: owner), mode="legacy") as client:
            return await client.call_tool("graph_query", {"app": "ada/runs", "filter": written})

    return anyio.run(main)


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text
