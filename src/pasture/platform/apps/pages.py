"""An app's files as the web and MCP serve them: pages, and the views commands name.

A page is any file of the app's current version but its source (tools.json,
vocab.json, worker.py, …); an HTML page comes with a `<base href>` at the
app's address unless it carries its own (`pasture.platform.apps.rewrite`). A view
is a page a command names, read by `ui://space/app/file`, and names its app in a
`<meta name="pasture-app">`.
"""

from __future__ import annotations

import mimetypes

from pasture.caller import Caller
from pasture.errors import NotFound, PastureError
from pasture.platform.access.gate import Gate
from pasture.platform.apps import paths
from pasture.platform.apps import versions as _deploy
from pasture.platform.apps.rewrite import with_base
from pasture.platform.catalog import Catalog
from pasture.platform.nouns import AppInfo, Page


def media_type(path: str) -> str:
    if path.endswith((".html", ".htm")):
        return "text/html; charset=utf-8"
    guessed, _ = mimetypes.guess_type(path)
    if guessed is None:
        return "application/octet-stream"
    if guessed.startswith("text/") or guessed in ("application/javascript", "application/json"):
        return f"{guessed}; charset=utf-8"
    return guessed


class Pages:
    """Files of apps for the web, and views for the MCP connector."""

    def __init__(self, catalog: Catalog, gate: Gate) -> None:
        self.catalog = catalog
        self.gate = gate

    def page(
        self,
        caller: Caller,
        space: str,
        slug: str,
        path: str,
        *,
        module: str | None = None,
        base: str | None = None,
    ) -> Page:
        """A file of the app for the web; source files (tools.json, vocab.json, worker.py and
        every other module of its code) are NotFound.

        An HTML page gets its `<base>` and, with `module`, that script (see `rewrite`).
        """
        info = self.gate.web_app(caller, space, slug)
        if path == "" or path.endswith("/"):
            path += "index.html"
        target = paths.inside(self.catalog.app_dir(space, slug) / f"v{info.version}", path)
        if _deploy.is_source(path) or not target.is_file():
            raise NotFound(f"no page {paths.shown(path)} in {info.at}")
        body = target.read_bytes()
        media = media_type(path)
        if media.startswith("text/html"):
            body = with_base(body, base or info.url, module=module)
        return Page(body, media)

    def view(self, caller: Caller, uri: str) -> Page:
        """A page a command names, by `ui://space/app/file`, for the MCP connector."""
        missing = NotFound(f"no resource {uri}")
        if not uri.startswith("ui://"):
            raise missing
        parts = uri[len("ui://") :].split("/", 2)
        if len(parts) != 3:
            raise missing
        space, slug, file = parts
        try:
            info = self.gate.app_info(caller, f"{space}/{slug}")
        except PastureError:
            raise missing from None
        if file not in info.views or paths.problem(file) is not None or _deploy.is_source(file):
            raise missing
        target = paths.inside(self.catalog.app_dir(space, slug) / f"v{info.version}", file)
        if not target.is_file():
            raise missing
        # The view names its app, which an address of the app's own origin does not.
        body = with_base(target.read_bytes(), info.url, app=info.at)
        return Page(body, "text/html;profile=mcp-app")

    def views(self, caller: Caller) -> list[tuple[str, AppInfo]]:
        """Every `ui://…` view the caller can read, with its app."""
        return [
            (f"ui://{info.space}/{info.slug}/{v}", info)
            for info in self.gate.list_apps(caller)
            for v in info.views
        ]
