"""A `Result` as a tool's answer, the same for every server this door builds.

Text goes out as `content`, data as `structuredContent`; the text is the sentence
followed by the data as compact JSON on a line of its own (`text_of`), so a client
that hands a model only `content` hands it the rows too. A `PastureError` (a
refusal, or a fault) becomes an `isError` answer carrying its sentence and
nothing else, here and nowhere else;
anything unexpected becomes a plain sentence, its traceback kept in the log. The
platform's connector (`_server`) and a registry served on its own (`_registry`)
both answer this way.
"""

from __future__ import annotations

import base64
import json
import logging
import uuid
from collections.abc import Callable
from typing import Any

import mcp_types as types

from pasture.content import Audio, Embedded, Image, Part
from pasture.errors import PastureError
from pasture.request_ids import fault_id
from pasture.result import Result

logger = logging.getLogger("pasture.mcp")

# A tool's answer goes back as the dict the SDK would have dumped from a
# CallToolResult: the SDK checks that dict against the protocol's own model
# before it is sent, and dumping a large structuredContent once more before
# that check cost as much as the rest of a `commands` call.
Wire = dict[str, Any]


def _dumped(is_error: bool) -> Wire:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="")], is_error=is_error
    ).model_dump(by_alias=True, mode="json", exclude_none=True)


# The SDK's own dump of an answer with empty text, once: each answer is a copy with its text.
_ANSWER, _REFUSAL = _dumped(False), _dumped(True)


TEXT_AT_MOST = 64_000
"""Characters of JSON an answer's text carries at most: a page of rows (`pasture.store.pages`)
may be larger, and the text is what a model is given whole. Past it, the longest list is
cut and the text says how much of it it holds; `structuredContent` holds all of it."""


def text_of(result: Result) -> str:
    """An answer's text: its sentence, then its data as compact JSON, the last line.

    A value the sentence already is (a handler's text answer) is not said twice, and a
    handler's answer whose text is its `result` as JSON (`{"result": …}`, its text that
    JSON) is its text alone. Past `TEXT_AT_MOST`, the longest list is cut: a line before
    the JSON says how many of it the text holds."""
    text, data = result.text, result.data
    rest = {k: v for k, v in data.items() if not (text and isinstance(v, str) and v == text)}
    if not rest or _said(text, rest):
        return text
    said, note = _bounded(rest)
    return "\n".join(line for line in (text, note, said) if line is not None)


def _said(text: str, data: dict[str, Any]) -> bool:
    """Whether `text` is the data's one `result` already, as JSON (or `done` for none)."""
    if set(data) != {"result"}:
        return False
    if data["result"] is None:
        return text == "done"
    try:
        return bool(json.loads(text) == data["result"])
    except (ValueError, RecursionError):
        return False


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


_SHORT = 100  # items of a list short enough to say whole first, before seeing what fits


def _bounded(data: dict[str, Any]) -> tuple[str | None, str | None]:
    """The data's JSON within `TEXT_AT_MOST` (None: none of it fits), and what was left out
    of it (None: nothing). Its longest list is said an item at a time, so a page far past
    the bound costs only what fits."""
    lists = [k for k, v in data.items() if isinstance(v, list) and v]
    key = max(lists, key=lambda k: len(data[k]), default=None)
    if key is None or len(data[key]) <= _SHORT:  # most answers: said whole, at once
        whole = _compact(data)
        if len(whole) <= TEXT_AT_MOST:
            return whole, None
        if key is None:
            return None, _none_fits(len(whole), None)
    items: list[Any] = data[key]
    mark = _compact(f"\x00{uuid.uuid4().hex}")  # where the list goes: no value holds it
    frame = _compact({**data, key: json.loads(mark)})
    room = TEXT_AT_MOST - (len(frame) - len(mark)) - 2  # and the list's brackets
    said: list[str] = []
    for item in items:
        part = _compact(item)
        room -= len(part) + (1 if said else 0)
        if room < 0:
            break
        said.append(part)
    if not said:
        return None, _none_fits(len(frame) + sum(len(_compact(i)) + 1 for i in items), key)
    shown = frame.replace(mark, f"[{','.join(said)}]", 1)
    if len(said) == len(items):
        return shown, None
    return shown, (
        f"(this text holds the first {len(said):,} of the {len(items):,} {key}: it carries "
        f"{TEXT_AT_MOST:,} characters of JSON at most; structuredContent holds "
        f"every one{_fewer(key)})"
    )


def _none_fits(size: int, key: str | None) -> str:
    return (
        f"(the data, {size:,} characters of JSON, is more than this text carries "
        f"({TEXT_AT_MOST:,} at most); structuredContent holds it{_fewer(key)})"
    )


def _fewer(key: str | None) -> str:
    if key != "rows":
        return ""
    return " — or read fewer rows at a time: a filter with limit=N and a sort="


def part_of(part: Part) -> Wire:
    """One part of what an answer carries (`pasture.content`) as MCP content."""
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if isinstance(part, Image | Audio):
        kind = "image" if isinstance(part, Image) else "audio"
        data = base64.b64encode(part.data).decode("ascii")
        return {"type": kind, "data": data, "mimeType": part.mime_type}
    return {"type": "resource", "resource": embedded(part)}


def embedded(part: Embedded) -> Wire:
    """A resource's contents, text or blob, as MCP carries them."""
    held: Wire = {"uri": part.uri, "mimeType": part.mime_type}
    if part.blob is not None:
        return {**held, "blob": base64.b64encode(part.blob).decode("ascii")}
    return {**held, "text": part.text}


def success(result: Result, *, with_data: bool = True) -> Wire:
    """The answer of a call; `with_data=False` for one whose text says its data already,
    as people read it (`commands`' listing, `app_files`' file). What else it carries (an
    image, a sound, a resource) follows the text, which is left out when it has none."""
    said = text_of(result) if with_data else result.text
    text = {**_ANSWER["content"][0], "text": said}
    if not result.content:
        return {**_ANSWER, "content": [text], "structuredContent": result.data}
    content = [text] if said else []
    content += [part_of(p) for p in result.content]
    answered = {**_ANSWER, "content": content}
    if result.data:
        answered["structuredContent"] = result.data
    return answered


def refusal(sentence: str) -> Wire:
    text = {**_REFUSAL["content"][0], "text": sentence}
    return {**_REFUSAL, "content": [text]}


def answer(tool: str, run: Callable[[], Result], *, with_data: bool = True) -> Wire:
    """Run one call: its Result, its refusal's sentence, or a plain sentence for a bug."""
    try:
        return success(run(), with_data=with_data)
    except PastureError as refused:
        return refusal(refused.sentence)
    except Exception:
        logger.exception("tool %s failed (fault %s)", tool, fault_id())
        return failed(tool)


def failed(tool: str) -> Wire:
    """The answer of a call that failed on the server (its traceback logged by the caller),
    naming the fault's id, which the server's log has too."""
    return refusal(
        f"{tool} failed on the server; nothing about it is your mistake — try again, "
        f"and if it keeps failing tell the person who runs this pasture, naming fault {fault_id()}"
    )


__all__ = [
    "TEXT_AT_MOST",
    "Wire",
    "answer",
    "embedded",
    "failed",
    "part_of",
    "refusal",
    "success",
    "text_of",
]
