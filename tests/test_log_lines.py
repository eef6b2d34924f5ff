"""The server's log as lines (`pasture.log_lines`): JSON one object a line whatever a record
says, text for people; both naming the request a record was logged serving."""

from __future__ import annotations

import json
import logging
import sys

from hypothesis import given
from hypothesis import strategies as st

from pasture import request_ids
from pasture.log_lines import JsonLines, TextLines, formatter


def record(message: str, *args: object, **extra: object) -> logging.LogRecord:
    made = logging.LogRecord("pasture.web", logging.ERROR, __file__, 1, message, args, None)
    for key, value in extra.items():
        setattr(made, key, value)
    return made


@given(st.text(st.characters(exclude_categories=("Cs",))))
def test_a_json_line_is_one_line_whatever_the_message_says(message: str) -> None:
    line = JsonLines().format(record("%s", message))
    assert "\n" not in line and "\r" not in line
    parsed = json.loads(line)
    assert parsed["message"] == message
    assert (parsed["level"], parsed["logger"]) == ("error", "pasture.web")


def test_a_json_line_carries_the_request_its_fields_and_its_traceback() -> None:
    served, token = request_ids.begin()
    try:
        try:
            raise RuntimeError("the internals")
        except RuntimeError:
            failed = record("unexpected error on %s", "GET /", fields={"status": 500, "level": "x"})
            failed.exc_info = sys.exc_info()
        line = json.loads(JsonLines().format(failed))
    finally:
        request_ids.end(token)
    assert line["request_id"] == served.id
    assert line["message"] == "unexpected error on GET /"
    assert line["status"] == 500
    assert line["level"] == "error"  # a field never hides what the record itself says
    assert (
        line["exception"].startswith("Traceback")
        and "RuntimeError: the internals" in line["exception"]
    )
    assert set(line) == {"time", "level", "logger", "message", "request_id", "status", "exception"}


def test_outside_a_request_a_line_names_none() -> None:
    assert "request_id" not in json.loads(JsonLines().format(record("said")))
    assert TextLines().format(record("said")).endswith(" ERROR pasture.web: said")


def test_a_text_line_names_the_request_after_the_logger() -> None:
    served, token = request_ids.begin()
    try:
        line = TextLines().format(record("something"))
    finally:
        request_ids.end(token)
    assert line.endswith(f" ERROR pasture.web [{served.id}]: something")


def test_the_format_is_chosen_by_its_name() -> None:
    assert isinstance(formatter("json"), JsonLines)
    assert isinstance(formatter("text"), TextLines)
