"""The one change pasture makes to an app's HTML: a `<base href>` right after `<head>`, then
the WebMCP module, whatever else the page holds (the doors that serve pages: test_webmcp.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from helpers.pages import SCRIPT, Tags, modules
from pasture.platform.apps.rewrite import with_base

# Pieces a page may be made of, some of them traps for a rewrite that reads text.
_PIECES = st.sampled_from(
    [
        "<!doctype html>",
        "<html>",
        "<head>",
        "<HEAD lang=en>",
        "</head>",
        "<body>",
        "<title>t</title>",
        "<!-- <head><script> -->",
        '<script>let s = "<head><script>";</script>',
        "<style>p::before { content: '<head>' }</style>",
        '<p title="<head>">x</p>',
        "&lt;head&gt;",
        "\n",
        "text",
        "<header>h</header>",
    ]
)


@given(st.lists(_PIECES, max_size=12))
def test_any_page_gets_exactly_one_base_then_one_module(pieces: list[str]) -> None:
    page = "".join(pieces)
    out = with_base(page.encode(), "U/", module="api/webmcp.js").decode()
    added = '<base href="U/">' + SCRIPT
    assert out.count(added) == 1
    assert out.replace(added, "", 1) == page
    tags = Tags(out).tags
    names = [t for t, _ in tags]
    assert names.count("base") == 1
    assert modules(out) == ["./api/webmcp.js"]
    at = names.index("base")
    assert names[at + 1] == "script"
    assert all(t in ("html", "head") for t in names[:at])


APP = '<meta name="pasture-app" content="ada/runs">'


@given(st.lists(_PIECES, max_size=12))
def test_a_view_is_told_its_app_right_after_its_base(pieces: list[str]) -> None:
    page = "".join(pieces)
    out = with_base(page.encode(), "U/", app="ada/runs").decode()
    assert out.replace('<base href="U/">' + APP, "", 1) == page


def test_a_page_with_a_base_of_its_own_is_told_its_app_too() -> None:
    page = '<!doctype html><head><base href="https://cdn.example/"><p>x</p>'
    out = with_base(page.encode(), "U/", app='a"b/c').decode()
    assert out == (
        '<!doctype html><head><meta name="pasture-app" content="a&quot;b/c">'
        '<base href="https://cdn.example/"><p>x</p>'
    )
