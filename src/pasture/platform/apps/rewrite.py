"""The one place pasture changes an app's HTML before serving it: `with_base`.

Every door that serves an app's page (the web, MCP's views) calls it:

- a `<base href>` at the app's address goes right after `<head>` (else after
  `<html>`, else after the doctype, else at the very top), so the page's
  relative links reach the app however the page was addressed; a page that
  carries a `<base>` of its own keeps it and gets none;
- with `app` (MCP's views pass `space/app`), a `<meta name="pasture-app"
  content="space/app">` after it, even in a page with its own `<base>`: a view
  reads from it which app it belongs to, which its address does not say on an
  origin of the app's own (`http://runs--ada.localhost/` has no path), and names
  that app when it calls a command back;
- with `module` (the web passes `api/webmcp.js`), a `<script type="module">`
  loading that file of the app goes right after the base, unless the page opts
  out with `<meta name="pasture-webmcp" content="off">`.

Where a tag goes is decided by a real parse (`html.parser`), so a comment, a
script or a string that mentions `<head>` or `<base` is not mistaken for one.
The parse stops at the first tag that belongs in a body, as a browser's head
ends there: a page's own `<base>` and its opt-out `<meta>` are read in its head.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from html.parser import HTMLParser

OPT_OUT = "pasture-webmcp"
"""`<meta name="pasture-webmcp" content="off">` keeps the web's script module off a page."""

APP_META = "pasture-app"
"""`<meta name="pasture-app" content="space/app">`: the app a view belongs to."""

_BOM = b"\xef\xbb\xbf"
# Tags a browser keeps in the head; any other start tag begins the body.
_HEAD_TAGS = frozenset(
    {"html", "head", "title", "meta", "link", "style", "script", "base", "noscript", "template"}
)


class _BodyBegins(Exception):
    """Raised to stop reading: nothing after the head changes where pasture's tags go."""


@dataclass
class _Outline:
    """What the parse found: where each landmark ends (a byte offset), and what the page says."""

    head: int | None = None
    html: int | None = None
    doctype: int | None = None
    own_base: bool = False
    opted_out: bool = False


class _Reader(HTMLParser):
    """Reads a page once and notes its landmarks; text, comments and scripts are skipped."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text = text
        self.outline = _Outline()
        self.started = False  # a start tag was seen: a later doctype is no landmark
        self.tags_before_head = 0  # start tags other than <html> seen so far
        self.lines = [0]  # where each line starts, found as far as the parse has read

    def here(self) -> int:
        line, column = self.getpos()
        while len(self.lines) < line:
            self.lines.append(self.text.index("\n", self.lines[-1]) + 1)
        return self.lines[line - 1] + column

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _HEAD_TAGS:
            raise _BodyBegins
        found = self.outline
        # A browser honours `<html>` only as the first tag and `<head>` only before any
        # other but `<html>`: a later one is ignored, and so it is no landmark here.
        if tag == "html" and not self.started:
            found.html = self.here() + len(self.get_starttag_text() or "")
        elif tag == "head" and found.head is None and self.tags_before_head == 0:
            found.head = self.here() + len(self.get_starttag_text() or "")
        elif tag == "base":
            found.own_base = True
        elif tag == "meta":
            named = {k: (v or "").strip().lower() for k, v in attrs}
            if named.get("name") == OPT_OUT and named.get("content") == "off":
                found.opted_out = True
        if tag != "html":
            self.tags_before_head += 1
        self.started = True

    def handle_decl(self, decl: str) -> None:
        if self.started or self.outline.doctype is not None:
            return
        if decl.lower().startswith("doctype"):
            end = self.text.find(">", self.here())
            if end != -1:
                self.outline.doctype = end + 1


def _outline(body: bytes) -> _Outline:
    # Latin-1 maps each byte to one character, so a character offset is a byte offset,
    # and every tag name and attribute pasture looks for is ASCII whatever the encoding.
    reader = _Reader(body.decode("latin-1"))
    try:
        reader.feed(reader.text)
        reader.close()
    except _BodyBegins:
        pass
    except Exception:  # a page the parser gives up on keeps what it found so far
        pass
    return reader.outline


def with_base(body: bytes, url: str, *, module: str | None = None, app: str | None = None) -> bytes:
    """The page with `<base href="url">` (unless it has its own), with `app` the app it
    belongs to (`space/app`) in a `<meta>`, and with `module` its script.

    `module` is a path under the app's address (`api/webmcp.js`); under pasture's own
    base it is written `./api/webmcp.js`, under a page's own base as a whole address.
    """
    found = _outline(body)
    tags = ""
    if not found.own_base:
        tags += f'<base href="{escape(url)}">'
    if app is not None:
        tags += f'<meta name="{APP_META}" content="{escape(app)}">'
    if module is not None and not found.opted_out:
        src = f"./{module}" if not found.own_base else url + module
        tags += f'<script type="module" src="{escape(src)}"></script>'
    if not tags:
        return body
    at = found.head if found.head is not None else found.html
    if at is None:
        at = found.doctype
    if at is None:
        # Before a doctype the browser would switch to quirks mode; after a BOM it
        # still reads the page's encoding from the BOM.
        at = len(_BOM) if body.startswith(_BOM) else 0
    return body[:at] + tags.encode() + body[at:]


__all__ = ["APP_META", "OPT_OUT", "with_base"]
