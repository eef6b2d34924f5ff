"""The server's log as lines: for people (`TextLines`), or one JSON object a line (`JsonLines`).

`pasture serve --log-format text|json` puts one of these on pasture's log
(`pasture.cli._opening.server_log`). Both say the id of the request a record was
logged while serving (`pasture.request_ids`), so a fault's sentence can be found:

    2026-05-04 10:12:03,517 ERROR pasture.web [3f9a1c2e]: unexpected error on GET / (fault 3f9a1c2e)

    {"time": "2026-05-04T10:12:03.517Z", "level": "error", "logger": "pasture.web",
     "message": "unexpected error on GET …", "request_id": "3f9a1c2e", "exception": "Traceback…"}

(one line each, folded here). A request's own line (`pasture.web.traffic`) carries
its fields as `fields` on the record: in JSON each is a key of the object, beside the
ones above; in text the message says them.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from pasture.request_ids import current

TEXT = "%(asctime)s %(levelname)s %(name)s%(request)s: %(message)s"


def _request_id(record: logging.LogRecord) -> str | None:
    given = getattr(record, "request_id", None)
    return given if isinstance(given, str) else current()


class TextLines(logging.Formatter):
    """`time LEVEL logger [request]: message`, the traceback after it."""

    def __init__(self) -> None:
        super().__init__(TEXT)

    def format(self, record: logging.LogRecord) -> str:
        request = _request_id(record)
        record.request = f" [{request}]" if request else ""
        return super().format(record)


class JsonLines(logging.Formatter):
    """One JSON object a line: time (UTC), level, logger, message, the request's id, the
    record's `fields`, and the traceback as `exception`."""

    def format(self, record: logging.LogRecord) -> str:
        moment = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        line: dict[str, Any] = {
            "time": moment.replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request = _request_id(record)
        if request:
            line["request_id"] = request
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update({k: v for k, v in fields.items() if k not in line})
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def formatter(log_format: str) -> logging.Formatter:
    """The formatter `--log-format` names: `text` or `json`."""
    return JsonLines() if log_format == "json" else TextLines()


__all__ = ["JsonLines", "TextLines", "formatter"]
