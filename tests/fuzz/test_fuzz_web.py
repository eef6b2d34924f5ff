"""The web door under generated hostile input: the API's four calls, pages, and bodies.

Every answer is under 500 with a sentence, nothing is logged at ERROR, and a
refused request writes nothing (see fuzz_checks).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from fuzz_checks import FUZZ, fresh, web_answer
from fuzz_inputs import WEB, WILD_ANSWERS, command_names, filters, page_paths, query_string
from fuzz_site import Site
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from pasture.jsontext import MAX_DEPTH
from pasture.web.app import MAX_BODY

apps = st.sampled_from(["runs", "cart", "wild", "nope", "%ED%A0%80", "a%00b", "x" * 300])
grammar_safe = "&=.!*,~<>?$-_:"  # the grammar's own punctuation, sent as written


def _answer(site: Site, caplog: pytest.LogCaptureFixture, response: object, before: dict) -> None:
    web_answer(
        site,
        caplog,
        response.status_code,  # type: ignore[attr-defined]
        response.text,  # type: ignore[attr-defined]
        response.headers.get("content-type", ""),  # type: ignore[attr-defined]
        before,
    )


@settings(FUZZ, max_examples=250)
@given(text=filters, app=apps, how=st.sampled_from(["whole", "written", "parts", "form"]))
def test_any_filter_is_rows_or_a_sentence(
    site: Site,
    web: TestClient,
    caplog: pytest.LogCaptureFixture,
    text: str,
    app: str,
    how: str,
) -> None:
    before = fresh(site, caplog)
    if how == "whole":  # as client.js sends it
        query = query_string(text)
    elif how == "written":  # as a person writes it, what a URL cannot hold percent-encoded
        query = quote(text, safe=grammar_safe, errors="surrogatepass")
    else:  # each part encoded, as httpx's params= (form: a space as +) or quote() would
        encode = quote_plus if how == "form" else quote
        query = "&".join(encode(p, safe="", errors="surrogatepass") for p in text.split("&"))
    if len(query) > 60_000:  # more than an HTTP client sends in one URL
        query = query[:60_000]
    response = web.get(f"/ada/{app}/api/query?{query}")
    _answer(site, caplog, response, before)


# The query string's own bytes, as a server hands them on, no client re-encoding them:
# escapes cut short, quotes left open or encoded, + and & anywhere, bytes that are not UTF-8.
query_bytes = st.binary(max_size=60) | st.lists(
    st.sampled_from(
        [b"%", b"%2", b"%22", b'"', b"%5C", b"\\", b"&", b"%26", b"%25", b"+", b"%2B", b"%ff",
         b"\xff", b"\xc3\xa9", b"%ED%A0%80", b"%00", b".jog.who=", b".jog!", b"filter=", b"=",
         b".doc.title~=", b"limit=", b"1..3", b",", b" "]
    ),
    max_size=12,
).map(b"".join)  # fmt: skip


@settings(FUZZ, max_examples=250)
@given(query=query_bytes, app=st.sampled_from(["runs", "cart"]))
def test_any_query_string_bytes_are_rows_or_a_sentence(
    site: Site, web: TestClient, caplog: pytest.LogCaptureFixture, query: bytes, app: str
) -> None:
    before = fresh(site, caplog)
    status, body, content_type = _raw_get(web, f"/ada/{app}/api/query", query)
    web_answer(site, caplog, status, body, content_type, before)


def _raw_get(web: TestClient, path: str, query: bytes) -> tuple[int, str, str]:
    """GET `path?query` into the ASGI app as a server hands it on: the bytes as they came."""
    sent: dict[str, Any] = {"status": 0, "body": b"", "type": b""}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            sent["status"] = message["status"]
            sent["type"] = dict(message.get("headers", [])).get(b"content-type", b"")
        elif message["type"] == "http.response.body":
            sent["body"] += message.get("body", b"")

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query,
        "headers": [
            (b"host", b"testserver"),
            (b"authorization", web.headers["Authorization"].encode()),
        ],
        "client": ("127.0.0.1", 1),
        "server": ("testserver", 80),
    }
    assert web.portal is not None  # the client is open (the fixture's `with`)
    web.portal.call(web.app, scope, receive, send)
    return sent["status"], sent["body"].decode("utf-8", "replace"), sent["type"].decode()


@settings(FUZZ, max_examples=250)
@given(sent=WEB.bundles, app=apps, raw=st.none() | st.binary(max_size=40))
def test_any_body_to_apply_writes_all_or_is_refused_writing_nothing(
    site: Site,
    web: TestClient,
    caplog: pytest.LogCaptureFixture,
    sent: object,
    app: str,
    raw: bytes | None,
) -> None:
    before = fresh(site, caplog)
    body = raw if raw is not None else json.dumps(sent).encode()
    response = web.post(
        f"/ada/{app}/api/apply", content=body, headers={"Content-Type": "application/json"}
    )
    _answer(site, caplog, response, before)


@settings(FUZZ, max_examples=200)
@given(
    name=command_names,
    args=WEB.command_args,
    app=st.sampled_from(["runs", "cart", "wild"]),
    kind=st.sampled_from(WILD_ANSWERS),
)
def test_any_command_call_answers_or_is_refused_writing_nothing(
    site: Site,
    web: TestClient,
    caplog: pytest.LogCaptureFixture,
    name: str,
    args: dict[str, object],
    app: str,
    kind: str,
) -> None:
    before = fresh(site, caplog)
    if app == "wild":  # its one command, answering with what is not JSON, most of the time
        name, args = "answer", {**args, "kind": kind}
    body = json.dumps({"name": name, "args": args}).encode()
    response = web.post(
        f"/ada/{app}/api/command", content=body, headers={"Content-Type": "application/json"}
    )
    _answer(site, caplog, response, before)


@settings(FUZZ, max_examples=200)
@given(
    name=st.sampled_from(["todos", "add_todo", "set_todo_done", "clear_done"]) | command_names,
    args=WEB.command_args | WEB.values,
    app=st.sampled_from(["todos", "wild", "runs"]) | apps,
    signed_in=st.booleans(),
)
def test_any_handler_call_answers_or_is_refused_writing_nothing(
    site: Site,
    web: TestClient,
    caplog: pytest.LogCaptureFixture,
    name: str,
    args: object,
    app: str,
    signed_in: bool,
) -> None:
    before = fresh(site, caplog)
    body = json.dumps({"name": name, "args": args}).encode()
    request = web.build_request(
        "POST", f"/ada/{app}/api/call", content=body, headers={"Content-Type": "application/json"}
    )
    if not signed_in:  # a stranger on an open app: ctx.auth is nobody
        del request.headers["Authorization"]
    _answer(site, caplog, web.send(request), before)


@settings(FUZZ, max_examples=150)
@given(
    path=page_paths,
    space=st.sampled_from(["ada", "%ED%A0%80", "a%00", "x" * 300]),
    app=apps,
    api=st.sampled_from(["", "api/me", "api/tools", "api/client.js", "api/webmcp.js", "api/x"]),
)
def test_any_page_address_is_a_page_or_a_sentence(
    site: Site,
    web: TestClient,
    caplog: pytest.LogCaptureFixture,
    path: str,
    space: str,
    app: str,
    api: str,
) -> None:
    before = fresh(site, caplog)
    response = web.get(f"/{space}/{app}/{api or path}")
    _answer(site, caplog, response, before)


@settings(FUZZ, max_examples=150)
@given(
    where=st.sampled_from(["/api/tools", "/tools"]),
    app=st.none() | st.sampled_from(["todos", "ada/runs", "bo/x", "/", "a/b/c"]) | apps,
    signed_in=st.booleans(),
)
def test_any_tools_listing_is_a_list_or_a_sentence(
    site: Site,
    web: TestClient,
    caplog: pytest.LogCaptureFixture,
    where: str,
    app: str | None,
    signed_in: bool,
) -> None:
    before = fresh(site, caplog)
    request = web.build_request("GET", where, params={"app": app} if app is not None else {})
    if not signed_in:
        del request.headers["Authorization"]
    _answer(site, caplog, web.send(request), before)


# -- the classes, each once by name ------------------------------------------------------------


def _chunks(size: int) -> Iterator[bytes]:
    sent = 0
    yield b"["
    while sent < size:
        yield b" " * 65_536
        sent += 65_536
    yield b"]"


@pytest.mark.parametrize("call", ["apply", "command"])
@pytest.mark.parametrize("declared", [True, False])
def test_an_over_size_body_is_413_with_the_json_sentence(
    site: Site, web: TestClient, caplog: pytest.LogCaptureFixture, call: str, declared: bool
) -> None:
    before = fresh(site, caplog)
    if declared:  # Content-Length says so up front
        content: bytes | Iterator[bytes] = b"[" + b" " * (MAX_BODY + 1) + b"]"
    else:  # chunked: only counting tells
        content = _chunks(MAX_BODY + 1)
    response = web.post(
        f"/ada/runs/api/{call}", content=content, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json() == {
        "error": "the body is larger than 8 MB, the most one call takes — send less at a time, "
        "like fewer bundles in each apply"
    }
    _answer(site, caplog, response, before)


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        (
            b'{"entity": {"eid": "$r"}, "jog": {"miles": 1180591620717411303424}}',
            "jog.miles is a number between -9223372036854775808 and 9223372036854775807 — "
            "write a larger one as a decimal, like 1.2e21",
        ),
        (
            b'{"entity": {"eid": "$r"}, "jog": {"miles": NaN}}',
            "the body holds NaN, which JSON has no number for — send a finite number, or null",
        ),
        (
            b'{"entity": {"eid": "$r"}, "jog": {"miles": 1e999}}',
            "the body holds a number too large for JSON to carry (beyond about 1.8e308) or none "
            "at all (NaN) — send a finite number, or null",
        ),
        (
            b'{"entity": {"eid": "$r"}, "jog": {"who": "\\ud800"}}',
            "the body holds \\ud800, half of a UTF-16 surrogate pair and not a character — "
            "send text as whole characters",
        ),
        (
            b"[" * 1_000 + b"]" * 1_000,
            f"the body nests lists and objects more than {MAX_DEPTH} deep — pasture reads at "
            f"most {MAX_DEPTH} levels",
        ),
    ],
)
def test_what_json_cannot_carry_is_refused_with_its_sentence(
    site: Site, web: TestClient, caplog: pytest.LogCaptureFixture, body: bytes, sentence: str
) -> None:
    before = fresh(site, caplog)
    response = web.post(
        "/ada/runs/api/apply", content=body, headers={"Content-Type": "application/json"}
    )
    assert (response.status_code, response.json()) == (400, {"error": sentence})
    _answer(site, caplog, response, before)


@pytest.mark.parametrize(
    ("query", "sentence"),
    [
        (
            "filter=.jog.miles%3E1180591620717411303424",
            "jog.miles is a number between -9223372036854775808 and 9223372036854775807 — "
            "write a larger one as a decimal, like 1.2e21",
        ),
        (
            "filter=" + ".comment.target" * 300 + ".doc.title~%3Dx",
            ".comment.target… walks 300 references, and a filter walks at most 4 — like "
            ".comment.target.doc.title~=word, which walks one",
        ),
        (
            "filter=.jog.who~%3D" + "a" * 5_000,
            "~= looks for at most 1000 characters in jog.who — look for a shorter part of it",
        ),
        (
            "filter=" + "a" * 5_000,
            "a full-text search looks for at most 1000 characters of words — search for "
            "fewer words",
        ),
    ],
)
def test_numbers_walks_and_searches_past_their_bounds_are_refused(
    site: Site, web: TestClient, caplog: pytest.LogCaptureFixture, query: str, sentence: str
) -> None:
    before = fresh(site, caplog)
    response = web.get(f"/ada/runs/api/query?{query}")
    assert (response.status_code, response.json()) == (400, {"error": sentence})
    _answer(site, caplog, response, before)


@pytest.mark.parametrize("kind", [*WILD_ANSWERS, "raw_nan", "raw_surrogate", "raw_deep"])
def test_code_answering_with_what_is_not_json_is_a_424_sentence(
    site: Site, web: TestClient, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    before = fresh(site, caplog)
    body = json.dumps({"name": "answer", "args": {"kind": kind}}).encode()
    response = web.post(
        "/ada/wild/api/command", content=body, headers={"Content-Type": "application/json"}
    )
    if kind in ("ok", "big_int"):
        assert response.status_code == 200, response.text
    else:
        assert response.status_code == 424, response.text
        assert response.json()["error"].startswith("answer ")
    _answer(site, caplog, response, before)


def test_query_string_bytes_that_are_not_utf8_are_read_not_a_500(
    site: Site, web: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    before = fresh(site, caplog)
    for query in (b".jog!&.jog.who=\xff", b".jog.who=%22\xc3\xa9%22&.jog!"):
        status, body, content_type = _raw_get(web, "/ada/runs/api/query", query)
        assert status == 200, body
        web_answer(site, caplog, status, body, content_type, before)
