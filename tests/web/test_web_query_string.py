"""`./api/query?<filter>` as real clients send it: raw, encoded part by part, or `?filter=`.

A browser's `fetch` of a plain URL, httpx's `params=`, `urllib.parse.quote` of
every part and curl's `--data-urlencode` each encode a filter differently; each
part is decoded once at the door (pasture.web.query_string), so all of them get
the answer the filter gets written raw, and the answer `Service.query` (what
MCP's `graph_query` and `pasture query` call) gives: the same rows, or the same
refusal sentence.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from helpers import needs
from helpers.browser import CHROMIUM, in_chromium, loopback, serving
from pasture.errors import Refused
from pasture.platform.access.limits import Rates
from pasture.platform.service import Service
from pasture.web import create_app
from pasture.web.query_string import filter_of

VOCAB = """{"$defs": {"jog": {"properties": {
    "who": {"type": "string"}, "miles": {"type": "number"}}}}}"""

# What the runs are logged by: every character a client might encode, and some it must.
WHO = [
    "Ada",
    "Ada Lovelace",
    "Bo & Co",
    "50% off",
    "100%41",
    'say "hi"',
    "a,b",
    "back\\slash",
    "c++ & c#",
    "naïve café",
    "日本語",
    "x=y<z>!",
    "  spaced  ",
    "🐑 pasture",
    "?why;not",
]


@dataclass
class Served:
    url: str
    service: Service
    token: str
    client: httpx.Client  # one, kept open: as a browser keeps its connection

    def get(self, query: str) -> httpx.Response:
        """GET ./api/query with this query string, sent as it is (httpx encodes only
        what a URL cannot hold, as a browser does)."""
        return self.client.get(f"{self.url}/ada/runs/api/query?{query}", headers=self.auth)

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def answer(self, text: str) -> tuple[int, Any]:
        """What `Service.query` answers, as the web would send it."""
        try:
            result = self.service.graph.query(self.service.local_owner(), "ada/runs", text)
        except Refused as e:
            return e.status, {"error": e.sentence}
        return 200, json.loads(json.dumps({"text": result.text, "data": result.data}))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`pasture serve` as it runs, on a free loopback port: uvicorn over a real Service
    whose club has a run by each of WHO (no rate limits: the property asks a lot). On
    SQLite alone: each answer is checked against the same store's own, so what is under
    it adds nothing to how a query string is read."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PASTURE_USER", "ada")
        sock, url = loopback()
        service = Service(home, base_url=url, rates=Rates(None, None, None))
        ada = service.local_owner()
    service.deploy(ada, {"index.html": "<title>Runs</title>", "vocab.json": VOCAB}, app="runs")
    bundles = [
        {"entity": {"eid": f"$r{i}"}, "jog": {"who": who, "miles": i}, "doc": {"title": who}}
        for i, who in enumerate(WHO)
    ]
    service.apply(ada, "ada/runs", bundles)
    try:
        with (
            serving(create_app(service, bind_host="127.0.0.1"), sock),
            httpx.Client(timeout=60) as client,
        ):
            yield Served(url, service, service.new_token(ada), client)
    finally:
        service.close()


def _who(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [row["jog"]["who"] for row in response.json()["data"]["rows"]]


# -- the rule, part by part --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # as written: passed on untouched
        (".jog!&.created!", ".jog!&.created!"),
        ('.doc.title="a & b"&.jog!', '.doc.title="a & b"&.jog!'),
        # a browser's fetch: `"`, space, `<`, `>` encoded, `&` inside the quotes left as it is
        (".doc.title=%22a%20&%20b%22&.jog.miles%3E=5", '.doc.title="a & b"&.jog.miles>=5'),
        # httpx params=, curl --data-urlencode: nearly everything encoded, a space as +
        (
            ".jog.who=%22Ada+Lovelace%22&.jog%21&.jog.miles%3e%3d5",
            '.jog.who="Ada Lovelace"&.jog!&.jog.miles>=5',
        ),
        ("%2Ejog.who%3D%22a%2Bb%22", '.jog.who="a+b"'),
        # a %26 is a literal &, decoded or not, and so is a %25 a literal %
        (".doc.title=a%26b", ".doc.title=a%26b"),
        (".jog.who=Zed%20%26%20Q", ".jog.who=Zed %26 Q"),
        (".doc.title=50%25", ".doc.title=50%"),
        (".doc.title=100%2541", ".doc.title=100%2541"),
        (".doc.title=%22100%2541%22", '.doc.title="100%2541"'),
        # an escaped quote inside quotes, encoded: still inside
        (".doc.title=%22say%5C%22hi%22%22&.jog!", '.doc.title="say\\"hi""&.jog!'),
        (".doc.title=%22x%5C%22&y%22&.jog!", '.doc.title="x\\"&y"&.jog!'),
        # an escape of the grammar's punctuation is that punctuation now: quote such a value
        (".jog.who=a%2Cb", ".jog.who=a,b"),
        # what cannot be decoded stays a sentence's business, never a crash
        (".doc.title=%22x%20&%20y", '.doc.title="x & y'),
        (".x=%ff%fe", ".x=\ufffd\ufffd"),
        ("%", "%"),
        ("%zz+%4", "%zz %4"),
        # ?filter= is the whole filter, encoded once: as it always was
        ("filter=.jog.miles%3E%3D5%26.doc%3F", ".jog.miles>=5&.doc?"),
        ("filter=.doc.title%3Da%2526b", ".doc.title=a%26b"),
        ("filter=a+b", "a b"),  # as a form encoder (httpx, requests, curl) sends a space
        ("filter=c%2B%2B", "c++"),
        # and the parts after it join it: the next page, as an answer cut short says
        ("filter=.jog%21%26sort%3D-jog.miles&after=WyJh", ".jog!&sort=-jog.miles&after=WyJh"),
        ("filter=.jog!&.doc?", ".jog!&.doc?"),
        ("filter=a+b&.doc.title=50%25", "a b&.doc.title=50%"),
    ],
)
def test_each_part_is_decoded_once_keeping_percent_and_ampersand_literal(
    query: str, expected: str
) -> None:
    assert filter_of(query) == expected
    assert filter_of(query.encode()) == expected


def test_raw_bytes_that_are_not_utf8_are_a_replacement_character_not_an_error() -> None:
    assert filter_of(b".jog.who=\xff&.jog!") == ".jog.who=\ufffd&.jog!"
    assert filter_of(b".jog.who=%22\xc3%A9%22") == '.jog.who="é"'


# -- real clients, a real server ---------------------------------------------------------------


FILTERS = [
    '.jog.who="Bo & Co"',
    '.doc.title="50% off"&.jog!',
    '.jog.who="say \\"hi\\""',
    '.jog.who="a,b"',
    '.jog.who="back\\\\slash"',
    '.jog.who="c++ & c#"&.jog.miles>=0',
    ".jog.who=naïve café",
    '.jog.who="x=y<z>!"',
    '.jog.who="  spaced  "',
    ".jog.who~=🐑",
    ".jog.who=Ada,Ada Lovelace&.jog.miles<=1&.doc?",
    ".jog.miles=2..4&limit=2",
    '"Bo & Co"',
    '.jog.who="?why;not"',
]


@pytest.mark.parametrize("written", FILTERS)
def test_every_client_gets_the_answer_the_filter_gets(served: Served, written: str) -> None:
    expected = served.answer(written)
    assert expected[0] == 200 and expected[1]["data"]["rows"], expected
    parts = _parts(written)
    # as written; a URL carries +, % and # only encoded
    raw = served.get(_url_safe(written))
    # urllib.parse.quote of every part, and encodeURIComponent's twin
    quoted = served.get("&".join(quote(p, safe="") for p in parts))
    # httpx's params=: each part a name and a value, form-encoded (a space as +)
    pairs = [tuple(p.split("=", 1)) if "=" in p else (p, None) for p in parts]
    if all(v is not None for _, v in pairs):
        params = httpx.get(
            f"{served.url}/ada/runs/api/query", params=pairs, headers=served.auth, timeout=60
        )
        assert (params.status_code, params.json()) == expected
    # the whole filter as ?filter= (client.js), and as a form encoder sends it
    whole = served.get("filter=" + quote(written, safe=""))
    form = httpx.get(
        f"{served.url}/ada/runs/api/query",
        params={"filter": written},
        headers=served.auth,
        timeout=60,
    )
    for response in (raw, quoted, whole, form):
        assert (response.status_code, response.json()) == expected, response.request.url


def test_a_literal_percent_escape_in_a_value_is_read_as_written(served: Served) -> None:
    # `100%41` is a value: quoted per part it arrives as 100%41 and stays so ...
    assert _who(served.get(quote('.jog.who="100%41"', safe=""))) == ["100%41"]
    # ... and the grammar's own way of writing it, %25 for the %, still works raw
    assert _who(served.get(".jog.who=100%2541")) == ["100%41"]
    assert _who(served.get("filter=" + quote(".jog.who=100%2541", safe=""))) == ["100%41"]
    assert _who(served.get(".jog.who=50%25%20off")) == ["50% off"]


def test_a_plus_is_a_space_and_percent_2b_a_plus(served: Served) -> None:
    assert _who(served.get(".jog.who=Ada+Lovelace")) == ["Ada Lovelace"]
    assert _who(served.get('.jog.who="c%2B%2B+%26+c%23"')) == ["c++ & c#"]


def test_a_refusal_is_the_same_sentence_however_it_was_encoded(served: Served) -> None:
    written = '.jog.miles=>5&.doc.title="a & b"'
    expected = served.answer(written)
    assert expected == (400, {"error": "write >= for at least: .jog.miles>=5"})
    for query in (
        _url_safe(written),
        "&".join(quote(p, safe="") for p in _parts(written)),
        "&".join(quote_plus(p, safe="") for p in _parts(written)),
        "filter=" + quote(written, safe=""),
    ):
        response = served.get(query)
        assert (response.status_code, response.json()) == expected, query


def test_curl_data_urlencode(served: Served) -> None:
    curl = needs.program("curl", "curl", "the tests of what curl sends")
    for written in FILTERS:
        expected = served.answer(written)
        # `--data-urlencode =TEXT` encodes all of TEXT; `NAME=TEXT` only what follows the =
        whole = [a for p in _parts(written) for a in ("--data-urlencode", f"={p}")]
        named = [a for p in _parts(written) for a in ("--data-urlencode", p)]
        for encoding in (whole, named):
            done = subprocess.run(
                [curl, "-sS", "-G", *encoding, "-H", f"Authorization: Bearer {served.token}",
                 "-w", "\n%{http_code}", f"{served.url}/ada/runs/api/query"],
                capture_output=True, text=True, timeout=60, check=True,
            )  # fmt: skip
            body, status = done.stdout.rsplit("\n", 1)
            assert (int(status), json.loads(body)) == expected, (written, encoding)


@in_chromium
def test_a_browser_given_a_plain_url(served: Served) -> None:
    sync_api = needs.playwright()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_context(extra_http_headers=served.auth).new_page()
            for written in [f for f in FILTERS if "#" not in f and "%" not in f]:
                # the browser encodes the URL itself, as fetch() of a plain URL does
                response = page.goto(f"{served.url}/ada/runs/api/query?{written}")
                assert response is not None
                got = (response.status, json.loads(response.text()))
                assert got == served.answer(written), (written, response.url)
        finally:
            browser.close()


# -- any filter: the same answer raw, encoded part by part, and whole --------------------------

_NAMES = st.sampled_from(["jog", "doc", "created", "nope"])
_COLUMNS = st.sampled_from(["who", "miles", "title", "at", "by", "x"])
_OPS = st.sampled_from(["=", "!=", "~=", "<", "<=", ">", ">=", "=>", "=="])
_CHARS = st.sampled_from([*"ab AZ09&%\"\\,.=<>!~?*+#;/:-_'\t", "é", "日", "🐑", "\u00a0"])
# `%` and two hex digits are the one text the forms read apart: sent raw or whole, the
# grammar decodes it (%41 is A); decoded at the door it is literal. Leave it out here
# (test_a_literal_percent_escape_in_a_value_is_read_as_written has it).
_ESCAPE = re.compile("%[0-9A-Fa-f]{2}")
_text = st.one_of(
    st.sampled_from([w for w in WHO if not _ESCAPE.search(w)]),
    st.text(_CHARS, max_size=12).filter(lambda t: not _ESCAPE.search(t)),
)
_numbers = st.integers(-3, 20).map(str) | st.sampled_from(["1.5", "2..4", "1...3", "x"])


def _written(value: str) -> str:
    """A value in a filter: bare when it is letters and digits, else in quotes."""
    if value.isalnum():
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


_values = st.one_of(
    _text.map(_written),
    _numbers,
    st.lists(_text.map(_written), min_size=2, max_size=3).map(",".join),
)
_predicates = st.one_of(
    st.builds(lambda c, m: f".{c}{m}", _NAMES, st.sampled_from(["!", "=", "?"])),
    st.builds(lambda c, col, op, v: f".{c}.{col}{op}{v}", _NAMES, _COLUMNS, _OPS, _values),
    st.builds(lambda v: f".jog.who~={v}", _text.map(_written)),
    _text.filter(lambda t: t.strip() != "").map(_written),  # words for the full-text search
    st.sampled_from(["*", ".count!", ".tally=jog.who", "limit=3", "limit=x", "id=nope"]),
)


# Seven hundred and fifty requests to a real server took two minutes on a busy machine: it
# is given longer than the five minutes the suite gives a test (pyproject.toml).
@pytest.mark.timeout(1800)
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(parts=st.lists(_predicates, min_size=1, max_size=4))
def test_any_filter_gets_one_answer_however_it_is_sent(served: Served, parts: list[str]) -> None:
    written = "&".join(parts)
    expected = served.answer(written)
    assert expected[0] < 500
    event(f"answered {expected[0]}" + (" with rows" if _rows(expected) else ""))
    sent = {
        "raw": _url_safe(written),
        "quoted": "&".join(quote(p, safe="") for p in parts),
        "form": "&".join(quote_plus(p, safe="") for p in parts),
        "whole": "filter=" + quote(written, safe=""),
    }
    for how, query in sent.items():
        response = served.get(query)
        assert (response.status_code, response.json()) == expected, (how, query)


# -- helpers -----------------------------------------------------------------------------------


def _rows(answer: tuple[int, Any]) -> bool:
    return answer[0] == 200 and bool(answer[1]["data"].get("rows"))


def _parts(written: str) -> list[str]:
    """A filter split on `&` outside double quotes, as the grammar splits it."""
    parts, start, quoted, i = [], 0, False, 0
    while i < len(written):
        ch = written[i]
        if quoted and ch == "\\":
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        elif ch == "&" and not quoted:
            parts.append(written[start:i])
            start = i + 1
        i += 1
    return [*parts, written[start:]]


def _url_safe(written: str) -> str:
    """A filter as a person writes it into a URL: as it is, but for the three characters a
    query string reads as its own (`%` an escape, `+` a space, `#` the end of it) and
    control characters, which no URL holds. The client encodes the rest as it sees fit."""
    return re.sub(r"[%+#\x00-\x1f\x7f]", lambda m: f"%{ord(m.group()):02X}", written)
