"""The views as one resource template, and completion of its arguments.

Every view is `ui://<space>/<app>/<file>`, so `resources/templates/list` answers one
template, `ui://{space}/{app}/{file}`, of the views' MIME type. `completion/complete`
completes that template's arguments (a prompt's are `pasture.mcp._prompts`') from the
views the caller can read (`Pages.views`, which asks the gate), and from nothing else:

- the values are those of the caller's views whose other arguments are what the
  request's context says they are (each one the client gave, exactly), and whose
  argument being completed begins with the value typed so far (case aside);
- a space, app or file the caller cannot read is never among them, whatever is typed
  or given as context: a context naming someone else's space completes to nothing,
  the same answer as a space that does not exist.

A reference to another template (or a prompt, which `_prompts` completes) or an
argument the template does not have is `NotFound`, its sentence said as an invalid
request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import mcp_types as types
from mcp.server.apps import APP_MIME_TYPE

from pasture.errors import NotFound

VIEW_TEMPLATE_URI = "ui://{space}/{app}/{file}"
ARGUMENTS = ("space", "app", "file")
MOST = 100  # the values one answer carries at most (the protocol's bound)

VIEW_TEMPLATE = types.ResourceTemplate(
    uri_template=VIEW_TEMPLATE_URI,
    name="view",
    title="A view of one of your apps",
    description=(
        "A page of one of your apps that a command's answer is drawn in: the space, the app "
        "and the page's file, as `commands` names a command's `view`. resources/list lists "
        "every view you can read; completion/complete offers the space, app and file."
    ),
    mime_type=APP_MIME_TYPE,
)


def view_parts(uris: Iterable[str]) -> list[tuple[str, str, str]]:
    """The (space, app, file) of each `ui://space/app/file` view address."""
    parts = []
    for uri in uris:
        space, _, rest = uri.removeprefix("ui://").partition("/")
        app, _, file = rest.partition("/")
        if space and app and file:
            parts.append((space, app, file))
    return parts


def complete(
    views: Iterable[tuple[str, str, str]], params: types.CompleteRequestParams
) -> types.Completion:
    """The values of the argument `params` asks about, among `views` (the caller's own)."""
    ref = params.ref
    if not isinstance(ref, types.ResourceTemplateReference):
        raise NotFound(f"no prompt {ref.name} among the views — it completes {VIEW_TEMPLATE_URI}")
    if ref.uri != VIEW_TEMPLATE_URI:
        raise NotFound(f"no resource template {ref.uri} — this server has one, {VIEW_TEMPLATE_URI}")
    name = params.argument.name
    if name not in ARGUMENTS:
        raise NotFound(
            f"{VIEW_TEMPLATE_URI} has no argument {name} — its arguments are space, app and file"
        )
    given: Mapping[str, str] = (params.context.arguments if params.context else None) or {}
    at = ARGUMENTS.index(name)
    others = [(i, given[key]) for i, key in enumerate(ARGUMENTS) if key != name and key in given]
    typed = params.argument.value.casefold()
    values = sorted(
        {
            view[at]
            for view in views
            if view[at].casefold().startswith(typed)
            and all(view[i] == value for i, value in others)
        }
    )
    return types.Completion(values=values[:MOST], total=len(values), has_more=len(values) > MOST)


__all__ = ["ARGUMENTS", "VIEW_TEMPLATE", "VIEW_TEMPLATE_URI", "complete", "view_parts"]
