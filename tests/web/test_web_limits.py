"""Limits through the web door: 429, `Retry-After` and the sentence, for ./api/, pages and
sign-in; a token or an address past its limit leaves the others be.

Each test has a Service of its own with small limits and a clock it moves by hand,
and its clients come from addresses of their own (Starlette's TestClient `client=`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient
from web_site import BASE, PASSWORD, RUNS

from pasture.platform.access.limits import Rate, Rates
from pasture.platform.service import Service
from pasture.web import create_app

TOO_MANY_TRIES = "too many tries — wait a minute"
MISMATCH = "that name and password do not match"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Limited:
    service: Service
    clock: Clock
    ada_token: str
    bob_token: str

    def client(self, address: str, token: str | None = None) -> TestClient:
        client = TestClient(
            create_app(self.service),
            base_url=BASE,
            follow_redirects=False,
            client=(address, 50000),
        )
        if token is not None:
            client.headers["Authorization"] = f"Bearer {token}"
        return client


@pytest.fixture
def limited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> Iterator[Limited]:
    monkeypatch.setenv("PASTURE_USER", "ada")
    rates = Rates(caller=Rate(5), address=Rate(12), open_writes=Rate(3))
    service = Service(tmp_path / "home", base_url=BASE, rates=rates)
    clock = Clock()
    service.limiter.clock = clock
    service.limiter.sign_in.sleep = lambda seconds: None  # slowed, but not in a test
    ada = service.local_owner()
    service.people.set_password(ada, PASSWORD)
    bob = service.people.new_user(ada, "bob", PASSWORD)
    service.deploy(ada, RUNS, space="ada", app="runs", access="public")  # type: ignore[arg-type]
    service.deploy(ada, RUNS, space="ada", app="board", access="open")  # type: ignore[arg-type]
    yield Limited(service, clock, service.new_token(ada), service.new_token(bob))
    service.close()


def _too_many(answer: httpx.Response, sentence: str) -> None:
    assert answer.status_code == 429, answer.text
    assert answer.headers["retry-after"] == sentence.rsplit("try again in ", 1)[1].split()[0]
    assert answer.json() == {"error": sentence}


def test_a_token_past_its_limit_gets_429_and_others_go_on(limited: Limited) -> None:
    ada = limited.client("198.51.100.1", limited.ada_token)
    for _ in range(5):
        assert ada.get("/ada/runs/api/query?.jog!").status_code == 200
    said = "too many calls from this token — 5 a minute at most; try again in 12 s"
    _too_many(ada.get("/ada/runs/api/query?.jog!"), said)
    _too_many(ada.post("/ada/runs/api/command", json={"name": "leaderboard"}), said)
    page = ada.get("/ada/runs/")  # a page says it as a page
    assert page.status_code == 429 and page.headers["retry-after"] == "12"
    assert said in page.text.replace("&#39;", "'")
    # another token, from the same address, is not this one
    bob = limited.client("198.51.100.1", limited.bob_token)
    assert bob.get("/ada/runs/api/query?.jog!").status_code == 200
    limited.clock.now += 60  # a minute on, the bucket is full again
    assert all(ada.get("/ada/runs/api/me").status_code == 200 for _ in range(5))
    assert ada.get("/ada/runs/api/me").status_code == 429


def test_an_address_past_its_limit_gets_429_on_pages_and_the_api(limited: Limited) -> None:
    here = limited.client("198.51.100.2")
    for _ in range(12):
        assert here.get("/ada/runs/style.css").status_code == 200
    said = "too many calls from your address — 12 a minute at most; try again in 5 s"
    _too_many(here.get("/ada/runs/api/query?.jog!"), said)
    page = here.get("/ada/runs/")
    assert page.status_code == 429 and page.headers["retry-after"] == "5"
    assert page.headers["content-type"].startswith("text/html") and said in page.text
    assert here.get("/signin").status_code == 429  # the platform's own pages too
    # a token does not get round its address's limit; another address is not counted here
    assert limited.client("198.51.100.2", limited.ada_token).get("/ada/runs/").status_code == 429
    assert limited.client("198.51.100.3").get("/ada/runs/style.css").status_code == 200
    limited.clock.now += 5
    assert here.get("/ada/runs/style.css").status_code == 200
    assert here.get("/ada/runs/style.css").status_code == 429


def test_anonymous_writes_to_an_open_app_hit_their_own_lower_limit(limited: Limited) -> None:
    here = limited.client("198.51.100.4")
    run = {"name": "log_run", "args": {"who": "Cy", "miles": 3}}
    for _ in range(2):
        assert here.post("/ada/board/api/command", json=run).status_code == 200
    assert here.post("/ada/board/api/apply", json={"jog": {"who": "Cy"}}).status_code == 200
    said = (
        "too many changes from your address without signing in — 3 a minute at most; "
        "sign in, or try again in 20 s"
    )
    _too_many(here.post("/ada/board/api/command", json=run), said)
    _too_many(here.post("/ada/board/api/apply", json={"jog": {"who": "Cy"}}), said)
    # reading goes on; another address writes; a signed-in person is counted by their token
    assert here.get("/ada/board/api/query?.jog!").json()["data"]["rows"][2]["jog"]["who"] == "Cy"
    assert here.post("/ada/board/api/command", json={"name": "leaderboard"}).status_code == 200
    there = limited.client("198.51.100.5")
    assert there.post("/ada/board/api/command", json=run).status_code == 200
    bob = limited.client("198.51.100.4", limited.bob_token)
    assert bob.post("/ada/board/api/command", json=run).status_code == 200
    limited.clock.now += 20
    assert here.post("/ada/board/api/command", json=run).status_code == 200


def _sign_in(client: TestClient, name: str, password: str) -> tuple[int, str, str | None]:
    answer = client.post("/signin", data={"name": name, "password": password})
    return answer.status_code, answer.text, answer.headers.get("retry-after")


def test_signing_in_says_the_same_for_a_missing_name_and_a_wrong_password(
    limited: Limited,
) -> None:
    here = limited.client("198.51.100.6")
    missing = _sign_in(here, "nobody-here", PASSWORD)
    wrong = _sign_in(here, "ada", "not the password")
    assert missing[0] == wrong[0] == 401
    assert MISMATCH in missing[1] and MISMATCH in wrong[1]


def test_failed_sign_ins_are_refused_after_ten_and_a_success_starts_again(
    limited: Limited,
) -> None:
    here = limited.client("198.51.100.7")
    for n in range(10):
        status, page, _ = _sign_in(here, "ada", f"guess {n}")
        assert status == 401 and MISMATCH in page
    for password in ("guess 11", PASSWORD):  # the right password waits too
        status, page, retry = _sign_in(here, "ada", password)
        assert status == 429 and TOO_MANY_TRIES in page and retry == "60"
        assert 'name="password"' in page  # the sign-in page, with the sentence on it
    # another name from elsewhere is not held up
    assert _sign_in(limited.client("198.51.100.8"), "bob", PASSWORD)[0] == 303
    limited.clock.now += 61
    assert _sign_in(here, "ada", PASSWORD)[0] == 303
    for n in range(10):  # the count started again
        assert _sign_in(here, "ada", f"guess {n}")[0] == 401
    assert _sign_in(here, "ada", PASSWORD)[0] == 429


def test_guessing_links_on_the_sign_in_page_is_refused_for_a_while(
    limited: Limited,
) -> None:
    here = limited.client("198.51.100.9")
    for n in range(30):
        limited.clock.now += 5  # within the address's limit on calls
        assert here.get(f"/signin?link=psl_guess{n}").status_code == 401
    owner = limited.service.local_owner()
    answer = here.get(f"/signin?link={limited.service.sign_in_link(owner)}")
    assert answer.status_code == 429 and answer.headers["retry-after"] == "60"
    assert TOO_MANY_TRIES in answer.text
    elsewhere = limited.client("198.51.100.10")
    assert elsewhere.get(f"/signin?link={limited.service.sign_in_link(owner)}").status_code == 303
