"""Reading a served page as a browser's tokenizer does: its tags, and the modules it loads."""

from __future__ import annotations

from html.parser import HTMLParser

# What the rewrite adds after the <base href>, on a page of an app with an address of its own.
SCRIPT = '<script type="module" src="./api/webmcp.js"></script>'


class Tags(HTMLParser):
    """Every real start tag of a page, in order, as a browser's tokenizer would see them."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def modules(page: str) -> list[str | None]:
    """The `src` of each module script, in order."""
    return [a.get("src") for t, a in Tags(page).tags if t == "script" and a.get("type")]
