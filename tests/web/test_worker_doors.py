"""An app's code, misbehaving, seen through every door of a real `pasture serve`.

A real server in a subprocess (worker_server.py sets its home up), the app
`shop/till` carrying a worker.py whose commands crash or run past a limit in
every way we could think of. Through `/mcp` (the SDK's own client, both protocol
generations), `./api/command` and WebMCP in Chromium:

- each crash and limit (time, CPU, memory, scratch) reaches the caller as one
  sentence, never a traceback, and right after, another app answers and the same
  app's write works again;
- an answer sent twice never reaches the next caller, and what a command prints
  reaches the server's log only in part, the rest counted;
- a viewer or a signed-out visitor cannot write through the app's code, not
  even through a command that says it only reads; the owner can, and on an
  `open` app anyone can;
- fifty calls asleep in an app's code do not keep anyone from reading another
  app or loading a page.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import anyio
import httpx
import pytest
from worker_server import Served, processes_of, refused, serve

from helpers import needs
from helpers.browser import CHROMIUM, LAUNCH_ARGS, in_chromium
from helpers.databases import IN_A_BROWSER, fresh_database, sqlite_only
from helpers.mcp_answers import ok, sentence_and_data
from pasture.mcp import text_of
from pasture.result import Result

# The servers these tests share run in processes of their own.
pytestmark = pytest.mark.processes

MODES = ["legacy", "auto"]
# Every call that is to answer has minutes of time and CPU, however busy the machine; the
# memory and scratch limits are small, as crash_hog and crash_fill are stopped by them
# whatever the clock says.
LIMITS = (
    "--worker-time", "120", "--worker-cpu", "60", "--worker-memory", "300",
    "--worker-scratch", "16",
)  # fmt: skip
# A stop the clock makes is tried on a server of its own, where that limit is small and
# every other call there still has far more than it needs: for crash_spin, CPU time far
# below wall time, so the loop meets the CPU limit first however busy the machine; for
# crash_sleep, which sleeps for ever, a wall time far above what a write takes.
STOPPED_BY_THE_CLOCK = {
    "crash_spin": ("--worker-cpu", "2", "--worker-time", "120", "--worker-memory", "300"),
    "crash_sleep": ("--worker-time", "10", "--worker-cpu", "60", "--worker-memory", "300"),
}
TILL = "shop/till"  # public: anyone reads, ada (its space's owner) writes, bo is a viewer
STALL = "shop/stall"  # open: anyone writes
RUNS = "ada/runs"

VIEWER_WRITES = "you can read this app but not change it — its owner can make you an editor"
SIGN_IN_TO_CHANGE = f"sign in to change {TILL} — anyone reads it, its space's editors change it"
ONLY_READS = (
    "note peek only reads (it is marked readOnly), so it cannot write — "
    "its app's author registers it without readOnly if it changes things"
)
NO_APP_SIGNED_OUT = (
    f"no app {TILL} — sign in, or present a token (Authorization: Bearer …), to reach your apps"
)


def _failed(name: str, kind: str) -> str:
    return (
        f"{name} failed in its own code ({kind}) — nothing about the request was wrong as far "
        "as pasture can tell; the server's log has the details"
    )


# Each misbehaving command and the sentence its caller gets.
CASES: dict[str, str] = {
    "crash_exit": _failed("crash exit", "SystemExit"),
    "crash_interrupt": _failed("crash interrupt", "KeyboardInterrupt"),
    "crash_base": _failed("crash base", "BaseException"),
    "crash_spin": "crash spin used more than 2 s of CPU time and was stopped",
    "crash_hog": "crash hog used more than 300 MB of memory and was stopped",
    "crash_sleep": "crash sleep took longer than 10 s and was stopped",
    "crash_set": (
        "crash set answered with something that is not JSON (set) — its data is made of "
        "text, numbers, true/false, null, lists and objects"
    ),
    "crash_int": (
        "crash int answered with something other than text and data — its code returns a "
        "Result or {'text': …, 'data': {…}, 'content': [parts]?}; the server's log has what it "
        "returned"
    ),
    "crash_die": (
        "crash die stopped: its worker process ended in the middle of the call (exit code 3), "
        "and is started again for the next one — the server's log has the details"
    ),
    "crash_fill": "crash fill wrote more than 16 MB to its scratch folder and was stopped",
    "crash_files": "crash files made more than 10,000 files in its scratch folder and was stopped",
}


def _says(sentence: str, case: str) -> None:
    """The sentence a case's caller got is the one it should get, and nothing else."""
    assert sentence == CASES[case]
    assert "Traceback" not in sentence and 'File "' not in sentence
    assert "\n" not in sentence


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, module_database: str) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("doors") / "home"
    with serve(home, *LIMITS) as server:
        yield server


@pytest.fixture(scope="module")
def server(
    request: pytest.FixtureRequest,
    served: Served,
    module_database: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Served]:
    """The server the case that is this fixture's parameter is called on: `served`, or for
    a stop the clock makes a server of its own (STOPPED_BY_THE_CLOCK), with a database of
    its own on PostgreSQL."""
    case = request.param
    if case not in STOPPED_BY_THE_CLOCK:
        yield served
        return
    home = tmp_path_factory.mktemp(case) / "home"
    with ExitStack() as running:
        with pytest.MonkeyPatch.context() as env:  # the database, as it is set up and started
            if module_database:
                database = fresh_database(request.getfixturevalue("pg_url"))
                env.setenv("PASTURE_DATABASE_URL", database)
            clocked = running.enter_context(serve(home, *STOPPED_BY_THE_CLOCK[case]))
        yield clocked


# -- 1. crashes and limits -----------------------------------------------------------------
# A call past its time limit waits the limit out: the database adds nothing to the clock.
# Each case twice: as itself, and as the parameter of the `server` it is called on.
WAITS = sqlite_only("it waits out a time limit")
CASE_PARAMS = [pytest.param(c, c, id=c, marks=WAITS if c == "crash_sleep" else ()) for c in CASES]


def _web_still_serves(served: Served, note: str) -> None:
    """Another app answers, and the code app's own write works again."""
    runs = served.query(RUNS, ".jog!")
    assert runs.status_code == 200, runs.text
    assert [r["jog"]["who"] for r in runs.json()["data"]["rows"]] == ["Ada"]
    again = served.command(TILL, "note_add", {"text": note})
    assert again.status_code == 200, again.text
    assert again.json()["text"] == f"noted {note}"


@pytest.mark.parametrize(("case", "server"), CASE_PARAMS, indirect=["server"])
def test_a_crash_through_the_web_api_is_one_sentence_and_the_server_goes_on(
    server: Served, case: str
) -> None:
    answer = server.command(TILL, case, {})
    assert answer.status_code == 424  # the app's code failed, not pasture: no 5xx
    assert answer.headers["content-type"] == "application/json"
    body = answer.json()
    assert list(body) == ["error"]
    _says(body["error"], case)
    assert "Traceback" not in answer.text
    _web_still_serves(server, f"after {case} on the web")
    assert f"after {case} on the web" in server.notes(TILL)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("case", "server"), CASE_PARAMS, indirect=["server"])
def test_a_crash_through_mcp_is_one_sentence_and_the_server_goes_on(
    server: Served, case: str, mode: str
) -> None:
    note = f"after {case} over MCP ({mode})"

    async def main() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with server.mcp("ada", mode) as client:
            seen["crash"] = await client.call_tool(
                "command", {"name": case, "args": {}, "app": TILL}
            )
            seen["runs"] = await client.call_tool("graph_query", {"app": RUNS, "filter": ".jog!"})
            seen["again"] = await client.call_tool(
                "command", {"name": "note_add", "args": {"text": note}, "app": TILL}
            )
        return seen

    seen = anyio.run(main)
    assert seen["crash"].structured_content is None
    _says(refused(seen["crash"]), case)
    assert [r["jog"]["who"] for r in ok(seen["runs"])[1]["rows"]] == ["Ada"]
    assert sentence_and_data(seen["again"])[0] == f"noted {note}"
    assert note in server.notes(TILL)


def test_a_command_that_prints_a_lot_still_answers(served: Served) -> None:
    answer = served.command(TILL, "crash_chatty", {})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"text": "talked", "data": {"lines": 50_000}}

    async def main() -> Any:
        async with served.mcp("ada", "auto") as client:
            return await client.call_tool(
                "command", {"name": "crash_chatty", "args": {}, "app": TILL}
            )

    assert sentence_and_data(anyio.run(main)) == ("talked", {"lines": 50_000})
    _web_still_serves(served, "after the chatty one")
    assert "line 49999 of a worker" not in answer.text
    # The log has its first lines, not its last, and says how much more it printed.
    log = served.log_text()
    assert "line 0 of a worker that talks a lot" in log
    assert "line 49999 of a worker" not in log
    assert "crash chatty printed " in log and " bytes more than the log keeps" in log


def test_an_answer_sent_twice_never_reaches_the_next_caller(served: Served) -> None:
    """The owner's call sends its answer twice; the next caller — a visitor on the web, a
    viewer over MCP — gets their own answer, from another process where the one they were
    given says the owner's again first."""
    mine = served.command(TILL, "note_twice", {})
    assert (mine.status_code, mine.json()["data"]) == (200, {"for": "ada"})
    theirs = served.command(TILL, "note_whoami", {}, None)
    assert theirs.json() == {"text": "for None", "data": {"for": None}}

    async def main() -> list[Any]:
        async with served.mcp("ada", "auto") as client:
            owner = await client.call_tool(
                "command", {"name": "note_twice", "args": {}, "app": TILL}
            )
        async with served.mcp("bo", "auto") as client:
            viewer = await client.call_tool(
                "command", {"name": "note_whoami", "args": {}, "app": TILL}
            )
        return [owner, viewer]

    owner, viewer = anyio.run(main)
    assert ok(owner)[1] == {"for": "ada"}
    assert ok(viewer)[1] == {"for": "bo"}
    _web_still_serves(served, "after an answer sent twice")


def test_the_servers_log_has_the_details_a_crash_sentence_promises(served: Served) -> None:
    answer = served.command(TILL, "crash_base", {})
    assert answer.json()["error"] == CASES["crash_base"]
    # The worker's output reaches the log through a thread of the server: waited for, with
    # a deadline only so a log that never says it fails.
    deadline = time.monotonic() + 60
    while "the very bottom" not in served.log_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    log = served.log_text()
    assert "BaseException: the very bottom" in log
    assert "crash_base" in log or "crash base" in log


# -- 2. writing where the caller may not ---------------------------------------------------
def test_the_web_api_lets_the_owner_write_and_nobody_else(served: Served) -> None:
    mine = served.command(TILL, "note_add", {"text": "ada on the web"})
    assert (mine.status_code, mine.json()["text"]) == (200, "noted ada on the web")

    tries = {
        ("bo", "note_add"): (403, VIEWER_WRITES),
        ("bo", "note_peek"): (400, ONLY_READS),
        (None, "note_add"): (401, SIGN_IN_TO_CHANGE),
        (None, "note_peek"): (400, ONLY_READS),
        ("ada", "note_peek"): (400, ONLY_READS),  # marked readOnly: not even its owner writes
    }
    tried: list[str] = []
    for (who, name), (status, sentence) in tries.items():
        tried.append(f"{who} tried {name} on the web")
        answer = served.command(TILL, name, {"text": tried[-1]}, who)
        assert (answer.status_code, answer.json()) == (status, {"error": sentence}), (who, name)

    notes = served.notes(TILL)
    assert "ada on the web" in notes
    assert [n for n in notes if n in tried] == []

    # On an open app, anyone who reaches it writes — a signed-out visitor too.
    open_write = served.command(STALL, "note_add", {"text": "a visitor at the stall"}, None)
    assert (open_write.status_code, open_write.json()["text"]) == (
        200,
        "noted a visitor at the stall",
    )
    assert "a visitor at the stall" in served.notes(STALL)
    still = served.command(STALL, "note_peek", {"text": "peeked at the stall"}, None)
    assert (still.status_code, still.json()) == (400, {"error": ONLY_READS})
    assert "peeked at the stall" not in served.notes(STALL)


@pytest.mark.parametrize("mode", MODES)
def test_mcp_lets_the_owner_write_and_nobody_else(served: Served, mode: str) -> None:
    def run(name: str, who: str) -> dict[str, Any]:
        return {"name": name, "args": {"text": f"{who} {name} over MCP {mode}"}, "app": TILL}

    async def main() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for who in ("ada", "bo"):
            async with served.mcp(who, mode) as client:
                for name in ("note_add", "note_peek"):
                    seen[f"{who} {name}"] = await client.call_tool("command", run(name, str(who)))
        try:  # signed out, /mcp lets nobody in: a client is told to sign in first
            async with served.mcp(None, mode) as client:
                await client.call_tool("command", run("note_add", "None"))
        except BaseException as raised:
            while isinstance(raised, BaseExceptionGroup):
                raised = raised.exceptions[0]
            seen["None"] = str(raised)
        return seen

    seen = anyio.run(main)
    assert sentence_and_data(seen["ada note_add"])[0] == f"noted ada note_add over MCP {mode}"
    assert refused(seen["ada note_peek"]) == ONLY_READS
    assert refused(seen["bo note_add"]) == VIEWER_WRITES
    assert refused(seen["bo note_peek"]) == ONLY_READS
    assert seen["None"].startswith("sign in first")

    notes = [n for n in served.notes(TILL) if n.endswith(f"over MCP {mode}")]
    assert notes == [f"ada note_add over MCP {mode}"]


@in_chromium
@sqlite_only(IN_A_BROWSER)
def test_webmcp_lets_the_person_whose_tab_it_is_write_only_if_they_may(served: Served) -> None:
    sync_api = needs.playwright()
    problems: list[str] = []

    def tab(browser: Any, who: str | None) -> Any:
        context = browser.new_context(extra_http_headers=served.headers(who))
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.on("pageerror", lambda e: problems.append(f"{who}: {e}"))
        page.goto(f"{served.url}/{TILL}/")
        # Not the network's idling: the page's WebMCP keeps following its tools' stream.
        page.wait_for_load_state("load")
        for _ in range(600):  # the page follows ./api/tools/follow, registering each (a minute)
            if {"note_add", "note_peek"} <= {t["name"] for t in page.webmcp.tools()}:
                break
            page.wait_for_timeout(100)
        return page

    def call(page: Any, name: str, text: str) -> dict[str, Any]:
        answer: dict[str, Any] = page.webmcp.call_tool(name, {"text": text})
        return answer

    def refusal(sentence: str) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": sentence}], "isError": True}

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), args=[*LAUNCH_ARGS, "--enable-features=WebMCP"]
        )
        try:
            ada, bo, nobody = tab(browser, "ada"), tab(browser, "bo"), tab(browser, None)
            peek = next(t for t in ada.webmcp.tools() if t["name"] == "note_peek")
            assert peek.get("annotations") == {"readOnly": True}

            mine = call(ada, "note_add", "ada in the browser")
            assert "isError" not in mine
            # The text an MCP tool's answer carries: the sentence, then the data as JSON.
            said = text_of(Result("noted ada in the browser", mine["structuredContent"]))
            assert mine["content"] == [{"type": "text", "text": said}]
            assert call(ada, "note_peek", "ada peeks in the browser") == refusal(ONLY_READS)
            assert call(bo, "note_add", "bo in the browser") == refusal(VIEWER_WRITES)
            assert call(bo, "note_peek", "bo peeks in the browser") == refusal(ONLY_READS)
            assert call(nobody, "note_add", "nobody in the browser") == refusal(SIGN_IN_TO_CHANGE)
            assert call(nobody, "note_peek", "nobody peeks in the browser") == refusal(ONLY_READS)
            # A crash reaches the agent in the tab as its sentence too.
            crashed = ada.webmcp.call_tool("crash_set", {})
            assert crashed == refusal(CASES["crash_set"])
            # A mutation that fails after writing keeps nothing of it, here too.
            failed = ada.webmcp.call_tool(
                "note_then", {"text": "in the browser, then", "end": "raise"}
            )
            assert failed == refusal(MUTATION_ENDS["raise"])
        finally:
            browser.close()
    assert problems == []
    notes = [n for n in served.notes(TILL) if "in the browser" in n]
    assert notes == ["ada in the browser"]


# -- 2b. a mutation's writes: all of them or none, through every door ------------------------
MUTATION_ENDS = {
    "raise": "note_then failed in its own code (ValueError) — nothing about the request was "
    "wrong as far as pasture can tell; the server's log has the details",
    "exit": "note_then stopped: its worker process ended in the middle of the call (exit code "
    "3), and is started again for the next one — the server's log has what it printed",
    "unjson": "note_then answered with something that is not JSON (set) — its data is made of "
    "text, numbers, true/false, null, lists and objects",
}


@pytest.mark.parametrize("end", list(MUTATION_ENDS))
def test_a_mutation_that_fails_keeps_nothing_at_any_door(served: Served, end: str) -> None:
    web, mcp = f"web {end}", f"mcp {end}"
    answer = served.command(TILL, "note_then", {"text": web, "end": end})
    assert answer.status_code == 424, answer.text
    said = {"web": answer.json()["error"]}

    async def main() -> None:
        async with served.mcp("ada", "auto") as client:
            result = await client.call_tool(
                "command", {"name": "note_then", "args": {"text": mcp, "end": end}, "app": TILL}
            )
            said["mcp"] = refused(result)

    anyio.run(main)
    notes = served.notes(TILL)
    assert not any(n.startswith((web, mcp)) for n in notes), notes
    assert said["web"] == said["mcp"]
    assert said["web"].split(" — ")[0] == MUTATION_ENDS[end].split(" — ")[0], said
    kept = served.command(TILL, "note_then", {"text": f"kept after {end}", "end": "ok"})
    assert kept.json()["text"] == f"noted kept after {end} twice", kept.text
    assert {f"kept after {end}", f"kept after {end} again"} <= set(served.notes(TILL))


# -- 3. fifty slow calls starve nobody else ---------------------------------------------------
SLOW_CALLS = 50


def _answered(read: Callable[[], httpx.Response]) -> httpx.Response:
    try:
        return read()
    except httpx.TimeoutException:
        raise AssertionError(
            f"a read did not answer while {SLOW_CALLS} calls slept in {TILL}'s code"
        ) from None


def test_fifty_calls_asleep_in_an_apps_code_keep_nobody_from_reading(
    tmp_path_factory: pytest.TempPathFactory, database: str
) -> None:
    home = tmp_path_factory.mktemp("starved") / "home"
    with serve(home, "--worker-time", "600") as served:  # none is stopped while it runs
        ended: list[str] = []  # how each slow call ended, in the order they did
        lock = threading.Lock()

        def slow(n: int) -> None:
            try:
                answer = served.command(TILL, "crash_sleep", {})
                outcome = f"{n}: answered {answer.status_code}"
            except httpx.HTTPError as e:
                outcome = f"{n}: {type(e).__name__}"
            with lock:
                ended.append(outcome)

        callers = [threading.Thread(target=slow, args=(n,), daemon=True) for n in range(SLOW_CALLS)]
        for caller in callers:
            caller.start()
        # In flight: the app's worker processes (4, the default) have started, each with a
        # call, and the calls that did not get one wait their turn.
        for _ in range(300):
            if len(processes_of(home)) >= 4:
                break
            time.sleep(0.1)
        time.sleep(1.5)
        busy = processes_of(home)

        runs = _answered(lambda: served.query(RUNS, ".jog!"))
        # The run club's page, at its own origin (the server has an apps domain).
        own = {"Host": f"runs--ada.localhost:{served.url.rsplit(':', 1)[1]}"}
        page = _answered(lambda: httpx.get(f"{served.url}/", headers=own, timeout=60))
        till = _answered(lambda: served.query(TILL, ".note!"))

        async def over_mcp() -> Any:
            async with served.mcp("ada", "legacy") as client:
                return await client.call_tool("graph_query", {"app": RUNS, "filter": ".jog!"})

        mcp_runs = anyio.run(over_mcp)
        with lock:
            ended_when_read = list(ended)

        served.process.send_signal(signal.SIGKILL)  # not waiting for them: they sleep for ever
        served.process.wait(timeout=30)
        for caller in callers:
            caller.join(timeout=60)

    assert len(busy) >= 4
    assert runs.status_code == 200, runs.text
    assert [r["jog"]["who"] for r in runs.json()["data"]["rows"]] == ["Ada"]
    assert page.status_code == 200
    assert "<title>Run club</title>" in page.text
    assert till.status_code == 200 and till.json()["data"]["rows"] == []
    assert [r["jog"]["who"] for r in ok(mcp_runs)[1]["rows"]] == ["Ada"]
    assert ended_when_read == []  # every read answered while all fifty were still waiting
    assert not [c for c in callers if c.is_alive()]
    assert len(ended) == SLOW_CALLS
    assert not [e for e in ended if "answered" in e]  # the server was killed under them all
    # The killed server's worker processes went with it.
    for _ in range(300):
        if not processes_of(home):
            break
        time.sleep(0.1)
    assert processes_of(home) == []
