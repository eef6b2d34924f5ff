"""What went wrong, answered once for every route (`pasture.web._failures`): JSON on the API's
routes, a short page elsewhere, each with its kind's status and sentence; a bug a bare 500."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient
from web_site import BASE, Site

from pasture.errors import Fault, PastureError, Unavailable
from pasture.platform.service import Service
from pasture.web import create_app
from pasture.web._failures import SERVER_FAULT, answers_json

FULL = "the data directory's disk is full — nothing was written"


@pytest.mark.parametrize(
    ("path", "json"),
    [
        ("/api/tools", True),
        ("/ada/runs/api/query", True),
        ("/ada/runs/api/", True),
        ("/ada/runs/api", False),  # a file named api, not the API
        ("/ada/runs/docs/api/index.html", False),  # an app's own folder named api
        ("/", False),
        ("/signin", False),
        ("/tools", False),
        ("/oauth/consent", False),
        ("/ada/runs/index.html", False),
    ],
)
def test_the_api_routes_answer_json_and_every_other_route_a_page(path: str, json: bool) -> None:
    assert answers_json(path) is json


def test_a_refusal_is_json_on_the_api_and_a_page_elsewhere(site: Site) -> None:
    api = site.client().get("/ada/secret/api/me")
    page = site.client().get("/ada/secret/index.html")
    assert api.status_code == page.status_code >= 400
    sentence = api.json()["error"]
    assert page.headers["content-type"].startswith("text/html")
    assert sentence.replace("'", "&#39;") in page.text


def test_a_folder_named_api_inside_an_app_is_answered_as_a_page(site: Site) -> None:
    answer = site.client(site.ada_token).get("/ada/runs/docs/api/index.html")
    assert answer.status_code == 404
    assert answer.headers["content-type"].startswith("text/html")


class _Failing(Service):
    """A real Service whose query and pages fail as the machine or a bug makes them."""

    raised: BaseException = RuntimeError("/secret/path/store.db is locked")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)

        def fail(*args: Any, **kwargs: Any) -> Any:
            raise self.raised

        self.graph.query = fail  # type: ignore[method-assign]
        self.pages.page = fail  # type: ignore[method-assign]


@pytest.fixture
def failing(site: Site) -> Iterator[tuple[_Failing, TestClient]]:
    service = _Failing(site.home, base_url=BASE)
    try:
        yield service, TestClient(create_app(service), base_url=BASE)
    finally:
        service.close()


def test_a_fault_is_answered_with_its_status_and_sentence_as_json_or_a_page(
    failing: tuple[_Failing, TestClient],
) -> None:
    service, client = failing
    service.raised = Unavailable(FULL)
    api = client.get("/ada/runs/api/query?.jog!")
    assert (api.status_code, api.json()) == (503, {"error": FULL})
    page = client.get("/ada/runs/index.html")
    assert page.status_code == 503
    assert page.headers["content-type"].startswith("text/html")
    assert "disk is full" in page.text and SERVER_FAULT not in page.text
    assert issubclass(Unavailable, Fault) and issubclass(Fault, PastureError)


def test_a_bug_is_a_bare_500_json_on_the_api_and_a_page_elsewhere(
    failing: tuple[_Failing, TestClient], caplog: pytest.LogCaptureFixture
) -> None:
    _, client = failing
    api = client.get("/ada/runs/api/query?.jog!")
    fault = api.headers["x-request-id"]  # named in the sentence, and in the log
    sentence = f"{SERVER_FAULT}, naming fault {fault}"
    assert (api.status_code, api.json()) == (500, {"error": sentence})
    assert f"fault {fault}" in caplog.text
    page = client.get("/ada/runs/index.html")
    assert page.status_code == 500
    assert f"naming fault {page.headers['x-request-id']}" in page.text
    assert page.headers["content-type"].startswith("text/html")
    assert "secret" not in page.text and "Traceback" not in page.text
    assert "/secret/path/store.db is locked" in caplog.text  # logged on the server
