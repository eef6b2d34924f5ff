"""Undo and restore under generated hostile input: `/api/undo` and `/api/restore` with any JSON
body, and any call id, app and moment at the Service. Every answer is under 500 with a
sentence, nothing is logged at ERROR, and a refusal writes nothing (see fuzz_checks); a
restore an input made go through is undone before the next, so the session's apps stay as
they were."""

from __future__ import annotations

from typing import Any

import pytest
from fuzz_checks import FUZZ, fresh, sentence_ok, web_answer
from fuzz_inputs import WEB, hostile_text, json_text
from fuzz_site import Site
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from pasture.errors import Refused

calls_ = st.text("0123456789abcdef", min_size=12, max_size=12) | hostile_text
apps = st.sampled_from(["ada/runs", "runs", "ada/nope", "", "/", "ada//runs"]) | hostile_text
moments = (
    st.sampled_from(["now", "in 2 days", "2000-01-01", "9999-12-31T23:59", "-1 hours ago"])
    | hostile_text
)
bodies = (
    st.fixed_dictionaries({"call": calls_ | WEB.values}, optional={"app": apps | WEB.values})
    | st.fixed_dictionaries({"app": apps | WEB.values, "to": moments | WEB.values})
    | WEB.values
)


def _taken_back(site: Site, answer: Any) -> None:
    """A restore or an undo that went through, undone (it says its own call's id)."""
    undo = answer.get("undo") if isinstance(answer, dict) else None
    if isinstance(undo, str):
        site.service.undo(site.ada, undo)


@settings(FUZZ, max_examples=150)
@given(body=bodies, path=st.sampled_from(["/api/undo", "/api/restore"]))
def test_any_body_to_undo_or_restore_is_an_answer_or_a_sentence(
    site: Site, web: TestClient, caplog: pytest.LogCaptureFixture, body: object, path: str
) -> None:
    before = fresh(site, caplog)
    response = web.post(path, content=json_text(body), headers={"Content-Type": "application/json"})
    content = response.headers.get("content-type", "")
    web_answer(site, caplog, response.status_code, response.text, content, before)
    if response.status_code == 200:
        _taken_back(site, response.json()["data"])
    assert site.counts() == before


@settings(FUZZ, max_examples=150)
@given(call=calls_, app=st.none() | apps, moment=moments)
def test_any_call_app_or_moment_is_done_or_a_sentence(
    site: Site, caplog: pytest.LogCaptureFixture, call: str, app: str | None, moment: str
) -> None:
    before = fresh(site, caplog)
    service = site.service
    for attempt in (
        lambda: service.undo(site.ada, call, app),
        lambda: service.restore_app(site.ada, app or "ada/runs", moment),
    ):
        try:
            _taken_back(site, attempt().data)
        except Refused as e:
            sentence_ok(e.sentence)
    assert site.counts() == before
