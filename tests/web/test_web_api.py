"""An app's API in-process: who is asking, apply, query, command, me, client.js, refusals."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient
from web_site import BASE, Site

from pasture.caller import Caller
from pasture.platform.service import Service
from pasture.result import Result
from pasture.web import create_app
from pasture.web.app import SERVER_FAULT
from pasture.web.query_string import filter_of

VIEWER = "you can read this app but not change it — its owner can make you an editor"
BAD_TOKEN = "that token is not one this server gave out — make one with pasture token new"

# -- who is asking --------------------------------------------------------------------


def test_me_names_the_bearer_of_a_token(site: Site) -> None:
    answer = site.client(site.bob_token).get("/ada/runs/api/me")
    assert answer.status_code == 200
    assert answer.json() == {"eid": site.bob.eid, "name": "bob"}


def test_me_names_the_holder_of_the_session_cookie(site: Site) -> None:
    answer = site.signed_in("ada").get("/ada/runs/api/me")
    assert answer.json() == {"eid": site.ada.eid, "name": "ada"}


def test_me_is_nobody_without_either(site: Site) -> None:
    assert site.client().get("/ada/runs/api/me").json() == {"eid": None}


def test_a_token_wins_over_a_cookie(site: Site) -> None:
    client = site.signed_in("ada")
    client.headers["Authorization"] = f"Bearer {site.cy_token}"
    assert client.get("/ada/runs/api/me").json()["name"] == "cy"


def test_a_bad_token_is_a_401_with_the_services_sentence(site: Site) -> None:
    for path in ("/ada/runs/api/me", "/ada/runs/api/query?.jog!"):
        answer = site.client("pst_nonsense").get(path)
        assert answer.status_code == 401
        assert answer.json() == {"error": BAD_TOKEN}


def test_an_authorization_header_that_is_not_a_bearer_token_is_a_401(site: Site) -> None:
    client = site.client()
    client.headers["Authorization"] = "Basic YWRhOnB3"
    answer = client.get("/ada/runs/api/me")
    assert answer.status_code == 401
    assert "Bearer <token>" in answer.json()["error"]


# -- apply and query ---------------------------------------------------------------


def test_apply_writes_bundles_as_the_caller(site: Site) -> None:
    client = site.client(site.ada_token)
    bundle = {"entity": {"eid": "$run"}, "jog": {"who": "Ada Lovelace", "miles": 5}}
    answer = client.post("/ada/runs/api/apply", json=[bundle])
    assert answer.status_code == 200
    body = answer.json()
    assert body["text"].startswith("wrote 1 entity in ada/runs: $run=")
    eid = body["data"]["aliases"]["$run"]
    assert body["data"]["entities"] == [eid]
    rows = client.get("/ada/runs/api/query?.jog!&.created!").json()["data"]["rows"]
    mine = [r for r in rows if r["entity"]["eid"] == eid]
    assert mine[0]["jog"] == {"who": "Ada Lovelace", "miles": 5}
    assert mine[0]["created"]["by"] == {"eid": site.ada.eid, "name": "ada"}


def test_query_passes_the_filter_on_as_written(site: Site) -> None:
    client = site.client(site.ada_token)
    logged = {"name": "log_run", "args": {"who": "Zed & Q", "miles": 42}}
    client.post("/ada/runs/api/command", json=logged)
    # The grammar decodes values itself: %26 is a literal `&`, %20 a space.
    answer = client.get("/ada/runs/api/query?.jog!&.jog.miles=42&.jog.who=Zed%20%26%20Q")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["text"] == "1 row in ada/runs"
    assert [r["jog"]["who"] for r in body["data"]["rows"]] == ["Zed & Q"]


def test_query_takes_a_whole_filter_encoded_as_filter(site: Site) -> None:
    client = site.client(site.ada_token)
    logged = {"name": "log_run", "args": {"who": "Yan", "miles": 41}}
    client.post("/ada/runs/api/command", json=logged)
    written = '.jog.miles>=41&.jog.miles<42&.jog.who="Yan"'
    answer = client.get(f"/ada/runs/api/query?filter={quote(written, safe='')}")
    assert answer.status_code == 200, answer.text
    assert [r["jog"]["who"] for r in answer.json()["data"]["rows"]] == ["Yan"]


def test_query_answers_an_aggregate_as_its_object(site: Site) -> None:
    client = site.client(site.ada_token)
    for who in ("Ann", "Ann", "Ben"):
        client.post(
            "/ada/runs/api/command", json={"name": "log_run", "args": {"who": who, "miles": 1}}
        )
    count = client.get("/ada/runs/api/query?.jog.who=Ann,Ben&.count!").json()
    assert count == {"text": "3 entities in ada/runs", "data": {"count": 3}}
    tally = client.get("/ada/runs/api/query?.jog.who=Ann,Ben&.tally=jog.who").json()
    assert tally["data"] == {"tally": {"Ann": 2, "Ben": 1}}
    distinct = client.get("/ada/runs/api/query?.jog.who=Ann,Ben&.distinct=jog.who").json()
    assert distinct["data"] == {"distinct": ["Ann", "Ben"]}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (".jog!&.created!", ".jog!&.created!"),
        (".doc.title=a%26b", ".doc.title=a%26b"),
        ("filter=.jog.miles%3E%3D5%26.doc%3F", ".jog.miles>=5&.doc?"),
        ("filter=.doc.title%3Da%2526b", ".doc.title=a%26b"),
    ],
)
def test_filter_of_a_query_string(query: str, expected: str) -> None:
    assert filter_of(query) == expected


def test_a_filter_the_store_cannot_serve_is_refused_with_a_sentence(site: Site) -> None:
    answer = site.client(site.ada_token).get("/ada/runs/api/query?.jog.miles%3E%3E3")
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error and "Traceback" not in error


def test_a_public_app_is_read_by_anyone_but_written_only_by_its_editors(site: Site) -> None:
    bundle = {"entity": {"eid": "$run"}, "jog": {"who": "Bob", "miles": 1}}
    assert site.client().get("/ada/runs/api/query?.jog!").status_code == 200
    assert site.client(site.bob_token).get("/ada/runs/api/query?.jog!").status_code == 200
    stranger = site.client(site.bob_token).post("/ada/runs/api/apply", json=bundle)
    assert stranger.status_code == 403
    assert stranger.json() == {"error": VIEWER}
    viewer = site.client(site.cy_token).post("/ada/runs/api/apply", json=bundle)
    assert viewer.status_code == 403
    assert viewer.json() == {"error": VIEWER}
    nobody = site.client().post("/ada/runs/api/apply", json=bundle)
    assert nobody.status_code == 401
    assert nobody.json()["error"].startswith("sign in to change ada/runs")


def test_an_open_app_is_written_by_anyone_who_reaches_it(site: Site) -> None:
    bundle = {"entity": {"eid": "$run"}, "jog": {"who": "Passer-by", "miles": 2}}
    answer = site.client().post("/ada/board/api/apply", json=bundle)
    assert answer.status_code == 200
    assert answer.json()["text"].startswith("wrote 1 entity in ada/board")


def test_a_private_apps_api_is_hidden_from_strangers(site: Site) -> None:
    for client in (site.client(), site.client(site.bob_token)):
        for answer in (
            client.get("/ada/secret/api/query?.jog!"),
            client.get("/ada/secret/api/me"),
            client.get("/ada/secret/api/client.js"),
            client.post("/ada/secret/api/command", json={"name": "leaderboard", "args": {}}),
            client.post("/ada/secret/api/apply", json={"entity": {"eid": "$x"}}),
        ):
            assert answer.status_code == 404
            assert answer.json() == {"error": "no app ada/secret"}
    member = site.client(site.cy_token).get("/ada/secret/api/query?.jog!")
    assert member.status_code == 200


def test_a_stale_guard_is_a_409_conflict(site: Site) -> None:
    client = site.client(site.ada_token)
    made = client.post("/ada/runs/api/apply", json={"entity": {"eid": "$r"}, "jog": {"miles": 3}})
    eid = made.json()["data"]["aliases"]["$r"]
    guarded = {"entity": {"eid": eid}, "jog": {"miles": 4}, "$was": {"jog": {"miles": "0" * 64}}}
    answer = client.post("/ada/runs/api/apply", json=guarded)
    assert answer.status_code == 409
    assert answer.json()["error"]


def test_a_body_that_is_not_json_is_refused_with_a_sentence(site: Site) -> None:
    answer = site.client(site.ada_token).post("/ada/runs/api/apply", content=b"{not json")
    assert answer.status_code == 400
    assert answer.json() == {
        "error": "the body is not JSON — send the bundles, a JSON object or a list of them"
    }


# -- command ------------------------------------------------------------------------


def test_a_command_runs_as_the_signed_in_person(site: Site) -> None:
    client = site.signed_in("ada")
    answer = client.post(
        "/ada/runs/api/command", json={"name": "log_run", "args": {"who": "Ada", "miles": "5"}}
    )
    assert answer.status_code == 200
    body = answer.json()
    assert body["text"].startswith("log_run: wrote 1 entity in ada/runs: $run=")
    assert set(body["data"]) >= {"entities", "aliases"}
    board = client.post("/ada/runs/api/command", json={"name": "leaderboard"}).json()
    assert board["text"].startswith("leaderboard: ")
    assert any(r["jog"] == {"who": "Ada", "miles": 5} for r in board["data"]["rows"])


def test_a_viewer_running_a_write_command_gets_the_specs_sentence(site: Site) -> None:
    answer = site.client(site.cy_token).post(
        "/ada/runs/api/command", json={"name": "log_run", "args": {"who": "Cy", "miles": 1}}
    )
    assert answer.status_code == 403
    assert answer.json() == {"error": VIEWER}


def test_a_stranger_may_run_a_read_command_of_a_public_app_on_the_web(site: Site) -> None:
    answer = site.client(site.bob_token).post(
        "/ada/runs/api/command", json={"name": "leaderboard", "args": {}}
    )
    assert answer.status_code == 200
    assert "rows" in answer.json()["data"]


def test_a_bad_argument_is_refused_in_the_specs_words(site: Site) -> None:
    answer = site.client(site.ada_token).post(
        "/ada/runs/api/command", json={"name": "log_run", "args": {"who": "Ada", "miles": "far"}}
    )
    assert answer.status_code == 400
    assert "miles is a number" in answer.json()["error"]


def test_an_unknown_command_is_refused_with_a_sentence(site: Site) -> None:
    answer = site.client(site.ada_token).post(
        "/ada/runs/api/command", json={"name": "add_run", "args": {}}
    )
    assert answer.status_code in (400, 404)
    assert "add_run" in answer.json()["error"]


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        ({"args": {}}, 'send the command as {"name": "log_run", "args": {…}}'),
        (["log_run"], 'send the command as {"name": "log_run", "args": {…}}'),
        ({"name": "log_run", "args": [1]}, "args is an object of the command's arguments"),
    ],
)
def test_a_command_body_of_the_wrong_shape_says_how_to_write_it(
    site: Site, body: Any, sentence: str
) -> None:
    answer = site.client(site.ada_token).post("/ada/runs/api/command", json=body)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith(sentence)


# -- client.js --------------------------------------------------------------------------


def test_client_js_is_an_es_module_exporting_the_four_calls(site: Site) -> None:
    answer = site.client().get("/ada/runs/api/client.js")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/javascript")
    for name in ("apply(bundles)", "query(filter)", "command(name, args = {}, {", "me()"):
        assert f"export async function {name}" in answer.text
    assert 'credentials: "same-origin"' in answer.text
    assert 'new URL("./", import.meta.url)' in answer.text


# -- routes and faults ------------------------------------------------------------------


def test_an_unknown_api_route_is_a_json_404(site: Site) -> None:
    answer = site.client().get("/ada/runs/api/nothing")
    assert answer.status_code == 404
    assert answer.json() == {"error": "no page api/nothing in ada/runs"}


def test_the_wrong_method_is_a_405_with_a_sentence(site: Site) -> None:
    answer = site.client().get("/ada/runs/api/apply")
    assert answer.status_code == 405
    assert answer.json() == {"error": "GET is not how /ada/runs/api/apply is used — POST it"}
    assert answer.headers["allow"] == "POST"


def test_the_mcp_connector_answers_at_mcp(site: Site) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    with site.client(site.ada_token) as client:  # entering it runs the lifespan
        answer = client.post("/mcp", json=hello, headers=headers)
        assert answer.status_code == 200, answer.text
        assert answer.json()["result"]["serverInfo"]["name"]
        tools = client.post("/mcp/", json=listing, headers=headers)
        assert tools.status_code == 200, tools.text
        names = [t["name"] for t in tools.json()["result"]["tools"]]
        assert names[:2] == ["commands", "command"]


class _BrokenQuery(Service):
    """A real Service whose query has a bug in it, to see what the web makes of a bug."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)

        def query(caller: Caller, app: str, filter: str, *, via_web: bool = False) -> Result:
            raise RuntimeError("/secret/path/store.db is locked")

        self.graph.query = query  # type: ignore[method-assign]


def test_a_bug_is_a_bare_500_with_no_traceback(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    broken = _BrokenQuery(site.home, base_url=BASE)
    try:
        client = TestClient(create_app(broken), base_url=BASE)
        answer = client.get("/ada/runs/api/query?.jog!")
    finally:
        broken.close()
    assert answer.status_code == 500
    fault = answer.headers["x-request-id"]
    assert answer.json() == {"error": f"{SERVER_FAULT}, naming fault {fault}"}
    assert "secret" not in answer.text
    assert "/secret/path/store.db is locked" in caplog.text  # logged on the server


# -- the cookie only acts from this server's own pages ----------------------------------------


def test_a_change_another_site_posts_with_the_cookie_is_refused(site: Site) -> None:
    client = site.signed_in("ada")
    logged = {"name": "log_run", "args": {"who": "Eve", "miles": 1}}
    answer = client.post(
        "/ada/runs/api/command", json=logged, headers={"Origin": "http://127.0.0.1:3000"}
    )
    assert answer.status_code == 403
    assert answer.json()["error"].startswith(
        "this request came from another site (http://127.0.0.1:3000)"
    )
    own = client.post("/ada/runs/api/command", json=logged, headers={"Origin": BASE})
    assert own.status_code == 200


def test_a_form_posted_with_the_cookie_is_not_taken_as_json(site: Site) -> None:
    client = site.signed_in("ada")
    # What a form with enctype=text/plain on another page could send.
    body = b'{"name": "log_run", "args": {"who": "Eve", "miles": 1}, "x": "="}'
    answer = client.post(
        "/ada/runs/api/command", content=body, headers={"Content-Type": "text/plain"}
    )
    assert answer.status_code == 415
    assert answer.json() == {"error": "send the body as JSON, with Content-Type: application/json"}
    # A token is not sent by a browser on its own: a script may leave the type out.
    scripted = site.client(site.ada_token).post("/ada/runs/api/command", content=body)
    assert scripted.status_code == 200


def test_signing_in_from_another_sites_form_is_refused(site: Site) -> None:
    answer = site.client().post(
        "/signin",
        data={"name": "ada", "password": "correct horse battery"},
        headers={"Origin": "https://evil.example"},
    )
    assert answer.status_code == 403
    assert "set-cookie" not in answer.headers
