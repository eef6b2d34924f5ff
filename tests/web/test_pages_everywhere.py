"""Ordered, paged reads at every door, against a real `pasture serve --max-rows 5`.

Twelve recipes, so every read is three pages, the last one short: `./api/query`, MCP's
`graph_query` and `command` (`find_recipe`) over streamable HTTP, `./api/command`,
`./api/subscribe`, `pasture query` and the console (with `$PASTURE_MAX_ROWS=5`) each
answer at most a page, say so when cut short — how many came, that more follow, and how
to go on — and carry `more` and the `cursor`; following the cursor gives every row once,
in the order asked, and the last page says no more follow. A bad sort or cursor is the
same sentence through each of them, and no cursor anyone sends makes a server fail.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client.streamable_http import streamable_http_client

from helpers import needs
from helpers.browser import chromium, in_chromium
from helpers.club import RECIPES, as_user
from helpers.command_line import PastureMain
from helpers.mcp_answers import sentence_and_data
from helpers.processes import running_server
from helpers.streams import Stream
from mcp import Client
from pasture.errors import Refused
from pasture.platform.service import Service

pytestmark = pytest.mark.processes

PAGE = 5
SERVES = [2, 5, 1, 5, 3, 2, 4, 1, 5, 3, 2, 0]  # ties in serves, so creation orders them too
AT = "ada/recipes"
ORDERS = ["", "&sort=-recipe.serves", "&sort=recipe.cuisine,-recipe.serves"]

Page = tuple[str, dict[str, Any]]  # what a door said (its text) and its data


@dataclass
class Site:
    url: str
    home: Path
    service: Service
    token: str
    eids: list[str]  # the recipes, in the order they were written

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def every(self, filter: str) -> list[str]:
        """The eids a filter answers, whole: read here, where a page is far larger."""
        with as_user("ada"):
            rows = self.service.graph.query(self.service.local_owner(), AT, filter).data["rows"]
        assert len(rows) < 1000
        return [row["entity"]["eid"] for row in rows]

    def cli(self) -> PastureMain:
        return PastureMain(self.home, PASTURE_MAX_ROWS=str(PAGE), COLUMNS="200")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    home = tmp_path_factory.mktemp("pages") / "home"
    with as_user("ada"):
        service = Service(home)
        ada = service.local_owner()
        service.deploy(ada, RECIPES, space="ada", app="recipes", access="public")
        eids: list[str] = []
        for i, serves in enumerate(SERVES):  # one at a time: each later in creation
            recipe: dict[str, Any] = {"serves": serves}
            if i % 4 != 3:  # and some with no cuisine, which sorts first
                recipe["cuisine"] = "abc"[i % 3]
            written = service.apply(ada, AT, {"doc": {"title": f"Recipe {i}"}, "recipe": recipe})
            eids.append(written.data["entities"][0])
        token = service.new_token(ada)
    try:
        with running_server(
            home, "--max-rows", str(PAGE), "--rate", "off", "--rate-address", "off"
        ) as url:
            yield Site(url, home, service, token, eids)
    finally:
        service.close()


Said = Callable[[int, str | None, bool], str]  # the line of a page: rows, cursor, asked after


def follow(ask: Callable[[str | None], Page], said: Said) -> list[str]:
    """Every row a door answers, page by page from its first, following each cursor: every
    page at most `PAGE` rows, its text `said(rows, cursor, asked with a cursor)`, `more` and
    `cursor` in its data until the last, which carries neither. The eids, in the order they
    came."""
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(10):
        text, data = ask(cursor)
        rows = data["rows"]
        assert len(rows) <= PAGE
        seen += [row["entity"]["eid"] for row in rows]
        continued = cursor is not None
        cursor = data.get("cursor")
        assert text == said(len(rows), cursor, continued)
        if cursor is None:
            assert "more" not in data and len(rows) == len(SERVES) % PAGE
            return seen
        assert data["more"] is True and len(rows) == PAGE
    raise AssertionError("the pages never ended")


def said_of_a_filter(rows: int, cursor: str | None, continued: bool = False) -> str:
    if cursor is None:
        return f"{rows} rows in {AT}"
    if continued:  # a filter with after= already: a second would be refused
        return (
            f"{rows} rows in {AT}, and more follow — the next page is the same filter with "
            f"after={cursor} in place of its after="
        )
    return (
        f"{rows} rows in {AT}, and more follow — the next page is the same filter with "
        f"&after={cursor}"
    )


def said_of(command: str) -> Said:
    def said(rows: int, cursor: str | None, continued: bool) -> str:
        if cursor is None:
            return f"{command}: {rows} rows in {AT}"
        return (
            f"{command}: {rows} rows in {AT}, and more follow — the next page is the same "
            f"command with after={cursor}"
        )

    return said


def _with(filter: str, cursor: str | None) -> str:
    return filter if cursor is None else f"{filter}&after={cursor}"


# -- each door, page by page -------------------------------------------------------------


@pytest.mark.parametrize("order", ORDERS)
def test_api_query_answers_a_page_and_the_cursor_reads_on(site: Site, order: str) -> None:
    filter = f".recipe!{order}"

    def ask(cursor: str | None) -> Page:
        answer = httpx.get(f"{site.url}/{AT}/api/query?{_with(filter, cursor)}", timeout=30)
        assert answer.status_code == 200, answer.text
        return answer.json()["text"], answer.json()["data"]

    assert follow(ask, said_of_a_filter) == site.every(filter)

    def ask_whole(cursor: str | None) -> Page:  # ?filter=<the filter>&after=<cursor>
        params = {"filter": filter, **({"after": cursor} if cursor else {})}
        answer = httpx.get(f"{site.url}/{AT}/api/query", params=params, timeout=30)
        assert answer.status_code == 200, answer.text
        return answer.json()["text"], answer.json()["data"]

    assert follow(ask_whole, said_of_a_filter) == site.every(filter)
    if not order:  # no sort: creation order, oldest first
        assert site.every(filter) == site.eids


def _mcp(site: Site, calls: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        transport = streamable_http_client(
            f"{site.url}/mcp", http_client=httpx2.AsyncClient(headers=site.bearer, timeout=30)
        )
        async with Client(transport, mode="auto") as client:
            return await calls(client)

    return anyio.run(main)


def _tool_page(result: types.CallToolResult) -> Page:
    """The answer's sentence, and its data as its text carries it: the structured content."""
    return sentence_and_data(result)


@pytest.mark.parametrize("order", ORDERS)
def test_graph_query_answers_a_page_and_the_cursor_reads_on(site: Site, order: str) -> None:
    filter = f".recipe!{order}"

    async def calls(client: Client) -> list[types.CallToolResult]:
        answers: list[types.CallToolResult] = []
        cursor: str | None = None
        for _ in range(10):
            answer = await client.call_tool(
                "graph_query", {"app": AT, "filter": _with(filter, cursor)}
            )
            answers.append(answer)
            cursor = (answer.structured_content or {}).get("cursor")
            if cursor is None:
                return answers
        return answers

    pages = iter(_mcp(site, calls))
    assert follow(lambda _: _tool_page(next(pages)), said_of_a_filter) == site.every(filter)


def test_find_over_mcp_and_the_api_answers_a_page_and_takes_the_cursor(site: Site) -> None:
    async def calls(client: Client) -> list[types.CallToolResult]:
        answers: list[types.CallToolResult] = []
        args: dict[str, Any] = {"sort": "-serves"}
        for _ in range(10):
            answer = await client.call_tool(
                "command", {"name": "find_recipe", "args": args, "app": AT}
            )
            answers.append(answer)
            cursor = (answer.structured_content or {}).get("cursor")
            if cursor is None:
                return answers
            args = {"sort": "-serves", "after": cursor}
        return answers

    pages = iter(_mcp(site, calls))
    expected = site.every(".recipe!&sort=-recipe.serves")
    assert follow(lambda _: _tool_page(next(pages)), said_of("find_recipe")) == expected

    def ask(cursor: str | None) -> Page:
        args = {"sort": "cuisine", **({"after": cursor} if cursor else {})}
        answer = httpx.post(
            f"{site.url}/{AT}/api/command",
            json={"name": "find_recipe", "args": args},
            headers=site.bearer,
            timeout=30,
        )
        assert answer.status_code == 200, answer.text
        return answer.json()["text"], answer.json()["data"]

    assert follow(ask, said_of("find_recipe")) == site.every(".recipe!&sort=recipe.cuisine")


@pytest.mark.parametrize("order", ORDERS)
def test_pasture_query_prints_a_page_and_the_cursor_reads_on(site: Site, order: str) -> None:
    filter = f".recipe!{order}"
    pasture = site.cli()

    def as_json(cursor: str | None) -> Page:
        done = pasture("query", AT, _with(filter, cursor), "--json")
        assert done.returncode == 0, done.stderr
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        # a page cut short ends with a line that is no row: {"more": true, "cursor": …}
        if lines and "entity" not in lines[-1]:
            trailer = lines.pop()
            assert trailer == {"more": True, "cursor": trailer["cursor"]}
            return said_of_a_filter(len(lines), trailer["cursor"], cursor is not None), {
                "rows": lines,
                **trailer,
            }
        return said_of_a_filter(len(lines), None), {"rows": lines}

    assert follow(as_json, said_of_a_filter) == site.every(filter)

    def as_text(cursor: str | None) -> Page:
        done = pasture("query", AT, _with(filter, cursor))
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        eids = [e for e in re.findall(r"\b[0-9a-f]{16}\b", done.stdout) if e in site.eids]
        found = re.search(r"more follow — .*?after=([A-Za-z0-9_-]+)", lines[0])
        data: dict[str, Any] = {"rows": [{"entity": {"eid": e}} for e in eids]}
        if found:  # said first, and again under the table, where a person looks
            assert lines[-1] == lines[0]
            data.update(more=True, cursor=found.group(1))
        return lines[0], data

    assert follow(as_text, said_of_a_filter) == site.every(filter)


def test_the_console_prints_a_page_and_the_cursor_reads_on(site: Site) -> None:
    pasture = site.cli()

    def ask(cursor: str | None) -> Page:
        line = "find_recipe --sort=-serves" + (f" --after={cursor}" if cursor else "")
        data = pasture("console", input=f"{line} --json\n")
        text = pasture("console", input=f"{line}\n")
        assert data.returncode == text.returncode == 0, data.stderr + text.stderr
        lines = text.stdout.splitlines()
        if json.loads(data.stdout).get("more"):
            assert lines[-1] == lines[0]  # said again under the table
        return lines[0], json.loads(data.stdout)

    assert follow(ask, said_of("find_recipe")) == site.every(".recipe!&sort=-recipe.serves")


# -- live pages --------------------------------------------------------------------------


def test_a_subscription_sends_its_page_and_the_cursor(site: Site) -> None:
    filter = ".recipe!&sort=-recipe.serves"
    address = f"{site.url}/{AT}/api/subscribe"
    first = Stream(address, {"filter": filter}, site.bearer)
    try:
        opened = first.next()
        assert opened is not None and opened.kind == "answer"
        page = opened.data["data"]
        assert len(page["rows"]) == PAGE and page["more"] is True
        expected = site.every(filter)
        assert [r["entity"]["eid"] for r in page["rows"]] == expected[:PAGE]
        assert opened.data["text"] == said_of_a_filter(PAGE, page["cursor"])
        after = Stream(address, {"filter": f"{filter}&after={page['cursor']}"}, site.bearer)
        try:
            second = after.next()
            assert second is not None
            assert [r["entity"]["eid"] for r in second.data["data"]["rows"]] == (
                expected[PAGE : 2 * PAGE]
            )
        finally:
            after.close()
        # A row past the first page changes nothing it shows; one at its top does.
        with as_user("ada"):
            owner = site.service.local_owner()
            site.service.apply(owner, AT, {"recipe": {"serves": -1}})
            top = site.service.apply(owner, AT, {"recipe": {"serves": 99}})
        sent = first.next()
        assert sent is not None and sent.kind == "answer"
        rows = sent.data["data"]["rows"]
        assert len(rows) == PAGE and sent.data["data"]["more"] is True
        assert rows[0]["entity"]["eid"] == top.data["entities"][0]
        assert [r["entity"]["eid"] for r in rows[1:]] == expected[: PAGE - 1]
    finally:
        first.close()
        with as_user("ada"):  # as the other tests found them
            owner = site.service.local_owner()
            extra = [e for e in site.every(".recipe!") if e not in site.eids]
            site.service.apply(owner, AT, [{"entity": {"eid": e}, "tombstone": {}} for e in extra])


@in_chromium
def test_a_page_reads_page_by_page_and_watches_one_page(site: Site) -> None:
    expect = needs.playwright().expect
    errors: list[str] = []
    with chromium() as browser:
        page = browser.new_context().new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.set_default_timeout(30_000)
        # The recipe box lists find_recipe's pages, newest first, one more at each click.
        page.goto(f"{site.url}/{AT}/")
        listed, more = page.locator("#box li"), page.get_by_role("button", name="More recipes")
        for shown in (PAGE, 2 * PAGE):
            expect(listed).to_have_count(shown)
            more.click()
        expect(listed).to_have_count(len(SERVES))
        expect(more).to_be_hidden()
        titles = [text.split(" · ")[0] for text in listed.all_inner_texts()]
        assert titles == [f"Recipe {i}" for i in reversed(range(len(SERVES)))]
        # client.js: a subscription is sent its page and the cursor; query reads on from it
        filter = ".recipe!&sort=-recipe.serves"
        seen = page.evaluate(
            """async (filter) => {
                const { subscribe, query } = await import('./api/client.js');
                const first = await new Promise((resolve, reject) => {
                    const stop = subscribe(filter, (data) => { stop(); resolve(data); }, reject);
                });
                return { first, next: await query(filter + '&after=' + first.cursor) };
            }""",
            filter,
        )
    assert errors == []
    expected = site.every(filter)
    first, after = seen["first"], seen["next"]
    assert first["more"] is True and after["more"] is True and after["cursor"] != first["cursor"]
    assert [r["entity"]["eid"] for r in first["rows"]] == expected[:PAGE]
    assert [r["entity"]["eid"] for r in after["rows"]] == expected[PAGE : 2 * PAGE]


# -- refusals ----------------------------------------------------------------------------


def _refusals(site: Site, filter: str) -> dict[str, str]:
    """What each door says of a filter it refuses."""
    said: dict[str, str] = {}
    with as_user("ada"), pytest.raises(Refused) as refused:
        site.service.graph.query(site.service.local_owner(), AT, filter)
    said["store"] = refused.value.sentence
    web = httpx.get(
        f"{site.url}/{AT}/api/query", params={"filter": filter}, headers=site.bearer, timeout=30
    )
    assert web.status_code == 400, web.text
    said["./api/query"] = web.json()["error"]

    async def calls(client: Client) -> types.CallToolResult:
        return await client.call_tool("graph_query", {"app": AT, "filter": filter})

    answer = _mcp(site, calls)
    assert answer.is_error and isinstance(answer.content[0], types.TextContent)
    said["graph_query"] = answer.content[0].text
    done = site.cli()("query", AT, filter)
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    said["pasture query"] = done.stderr.removesuffix("\n")
    return said


def _forged(values: list[Any], position: Any) -> str:
    """A cursor of `sort=recipe.serves` made by hand, holding whatever it is given."""
    digest = hashlib.sha256(b"recipe.serves").hexdigest()[:8]
    raw = json.dumps([digest, values, position]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


HALF = "\ud800"  # half of a surrogate pair: no text a column holds
CURSOR = (
    "after= takes the cursor an answer gave, unchanged — ask again without after= for the "
    "first page"
)
BAD = [
    (
        ".recipe!&sort=recipe.calories",
        "recipe has no column calories — its columns are serves, cuisine",
    ),
    (
        ".recipe!&sort=similar",
        "sort= orders rows by columns, like sort=jog.miles, or sort=-jog.miles for the largest "
        "first; several are comma-separated, like sort=-jog.miles,jog.who",
    ),
    (".recipe!&sort=recipe.serves&after=bm90IGEgY3Vyc29y", CURSOR),
    (
        ".recipe!&sort=recipe.serves&after=%%%",
        "after= continues from the cursor an answer gave, like after=<its cursor>",
    ),
    (f".recipe!&sort=recipe.serves&after={_forged([2**70], 1)}", CURSOR),
    (f".recipe!&sort=recipe.serves&after={_forged([HALF], 1)}", CURSOR),
    (f".recipe!&sort=recipe.serves&after={_forged([1], 2**64)}", CURSOR),
    (
        f".recipe!&sort=-recipe.cuisine&after={_forged([1], 1)}",
        "this cursor continues a read in another order than sort=-recipe.cuisine — ask with "
        "the sort= of the answer that gave it, or without after=",
    ),
    (
        ".recipe!&.order=similar",
        ".order=similar is not how rows are ordered here — write sort= with a column, like "
        "sort=jog.miles, or sort=-jog.miles for the largest first (a component named order "
        "is filtered by a column, like .order.<column>=similar)",
    ),
    (
        ".recipe!&offset=5",
        "offset=5 is not how pages are read here — an answer cut short carries a cursor, and "
        "the same filter with after=<that cursor> answers the next page",
    ),
]


@pytest.mark.parametrize(("filter", "sentence"), BAD)
def test_a_bad_sort_or_cursor_is_one_sentence_at_every_door(
    site: Site, filter: str, sentence: str | None
) -> None:
    said = _refusals(site, filter)
    assert len(set(said.values())) == 1, said
    if sentence is not None:
        assert said["store"] == sentence


def test_a_bad_cursor_given_to_find_is_the_stores_sentence_at_every_door(site: Site) -> None:
    args = {"sort": "-serves", "after": _forged([1], 1)}  # a cursor of sort=recipe.serves
    sentence = (
        "this cursor continues a read in another order than sort=-recipe.serves — ask with the "
        "sort= of the answer that gave it, or without after="
    )
    web = httpx.post(
        f"{site.url}/{AT}/api/command",
        json={"name": "find_recipe", "args": args},
        headers=site.bearer,
        timeout=30,
    )
    assert (web.status_code, web.json()) == (400, {"error": sentence})

    async def calls(client: Client) -> types.CallToolResult:
        return await client.call_tool("command", {"name": "find_recipe", "args": args})

    answer = _mcp(site, calls)
    assert answer.is_error and isinstance(answer.content[0], types.TextContent)
    assert answer.content[0].text == sentence
    done = site.cli()("console", input=f"find_recipe --sort=-serves --after={args['after']}\n")
    assert done.stderr == sentence + "\n" and done.returncode == 1


_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cursor=st.text(max_size=60)
    | st.text(alphabet=_alphabet, min_size=1, max_size=80)
    | st.binary(max_size=80).map(lambda raw: base64.urlsafe_b64encode(raw).decode())
    | st.tuples(
        st.lists(st.integers() | st.text(max_size=5) | st.none(), max_size=2), st.integers()
    ).map(lambda body: _forged(*body))
)
def test_no_cursor_makes_the_server_fail(site: Site, cursor: str) -> None:
    filter = f".recipe!&sort=recipe.serves&after={cursor}"
    with httpx.Client(base_url=site.url, timeout=30) as client:
        for answer in (
            client.get(f"/{AT}/api/query", params={"filter": filter}),
            client.get(f"/{AT}/api/query?filter={quote(filter, safe='')}"),
        ):
            assert answer.status_code in (200, 400), answer.text
            body = answer.json()
            if answer.status_code == 400:
                assert set(body) == {"error"} and body["error"]
                assert "Traceback" not in body["error"] and "SELECT" not in body["error"]
            else:
                assert len(body["data"]["rows"]) <= PAGE
