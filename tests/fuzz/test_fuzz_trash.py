"""The trash's doors under generated hostile input: `/api/trash/remove` and `/restore` with any
JSON body, and any name at the Service. Every answer is under 500 with a sentence, nothing is
logged at ERROR, and a refusal writes nothing (see fuzz_checks); whatever an input did remove
is restored before the next, so the session's apps stay as they were."""

from __future__ import annotations

import pytest
from fuzz_checks import FUZZ, fresh, sentence_ok, web_answer
from fuzz_inputs import WEB, hostile_text, json_text
from fuzz_site import Site
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from pasture.errors import Refused

names = st.sampled_from(["runs", "ada", "ada/", "/", "ada/nope", "ada//runs", ""]) | hostile_text
bodies = (
    st.fixed_dictionaries({}, optional={"app": names | WEB.values, "space": names | WEB.values})
    | st.fixed_dictionaries({"name": names | WEB.values})
    | WEB.values
)


def _put_back(site: Site) -> None:
    """What an input moved to the trash, back (spaces first)."""
    listed = site.service.trash.listing(site.ada).data["trash"]
    for item in sorted(listed, key=lambda t: t["kind"] != "space"):
        site.service.restore_from_trash(site.ada, item["what"])


@settings(FUZZ, max_examples=150)
@given(body=bodies, path=st.sampled_from(["/api/trash/remove", "/api/trash/restore"]))
def test_any_body_to_the_trash_is_an_answer_or_a_sentence(
    site: Site, web: TestClient, caplog: pytest.LogCaptureFixture, body: object, path: str
) -> None:
    before = fresh(site, caplog)
    try:
        # as JSON text can be written (NaN, lone surrogates), not only as httpx writes it
        response = web.post(
            path,
            content=json_text(body),
            headers={"Content-Type": "application/json"},
        )
        content = response.headers.get("content-type", "")
        web_answer(site, caplog, response.status_code, response.text, content, before)
    finally:
        _put_back(site)


@settings(FUZZ, max_examples=150)
@given(name=names)
def test_any_name_to_remove_or_restore_is_done_or_a_sentence(
    site: Site, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    before = fresh(site, caplog)
    service = site.service
    try:
        for call in (service.remove_app, service.remove_space, service.restore_from_trash):
            try:
                call(site.ada, name)
            except Refused as e:
                sentence_ok(e.sentence)
    finally:
        _put_back(site)
    assert site.counts() == before
