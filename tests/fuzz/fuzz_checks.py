"""What every answer to a hostile input must be, whichever door it came through.

- never a 5xx, a server-fault sentence, or an exception out of the door;
- a sentence: a refusal carries a non-empty one, and no traceback is in it;
- nothing logged at ERROR (a door logs a bug's traceback; a refusal is not a bug);
- a refused request writes nothing: every app's store holds as many entities after.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import mcp_types as types
import pytest
from fuzz_site import Site
from hypothesis import HealthCheck, settings

from pasture.web.app import SERVER_FAULT

# Examples per door are few enough for the suite to run in tens of seconds.
FUZZ = settings(
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
    derandomize=False,
)

CallTool = Callable[[str, dict[str, Any]], types.CallToolResult]

FAULTS = ("failed on the server", "something went wrong", SERVER_FAULT)


def fresh(site: Site, caplog: pytest.LogCaptureFixture) -> dict[str, int]:
    """Forget what was logged before this input; the entity counts before it."""
    site.errors.clear()
    caplog.clear()
    return site.counts()


def nothing_logged(site: Site, caplog: pytest.LogCaptureFixture) -> None:
    records = site.errors + [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not records, "logged at ERROR:\n" + "\n".join(
        f"{r.name}: {r.getMessage()}\n{r.exc_text or ''}" for r in records
    )


def sentence_ok(sentence: object) -> str:
    assert isinstance(sentence, str) and sentence.strip(), f"no sentence: {sentence!r}"
    assert "Traceback" not in sentence and 'File "' not in sentence, sentence
    assert not any(fault in sentence for fault in FAULTS), sentence
    return sentence


def web_answer(
    site: Site,
    caplog: pytest.LogCaptureFixture,
    status: int,
    body: str,
    content_type: str,
    before: dict[str, int],
) -> None:
    """A web answer: under 500, a sentence (JSON `error` or a page), nothing written if refused."""
    assert status < 500, f"{status}: {body[:500]}"
    assert "Traceback" not in body
    if content_type.startswith("application/json"):
        answer = json.loads(body)
        if status >= 400:
            assert isinstance(answer, dict) and list(answer) == ["error"], body[:500]
            sentence_ok(answer["error"])
    elif status >= 400:
        assert "<title>" in body and SERVER_FAULT not in body, body[:500]
    nothing_logged(site, caplog)
    if status >= 400:
        assert site.counts() == before, f"a refused request ({status}) wrote: {body[:300]}"


def tool_answer(
    site: Site,
    caplog: pytest.LogCaptureFixture,
    result: types.CallToolResult,
    before: dict[str, int],
) -> None:
    """A tool's answer: one text block; an isError one is a refusal sentence, nothing written."""
    assert result.content, "an answer with no content"
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    if result.is_error:
        sentence_ok(block.text)
    nothing_logged(site, caplog)
    if result.is_error:
        assert site.counts() == before, f"a refused call wrote: {block.text[:300]}"


__all__ = [
    "FUZZ",
    "CallTool",
    "fresh",
    "nothing_logged",
    "sentence_ok",
    "tool_answer",
    "web_answer",
]
