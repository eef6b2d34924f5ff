"""The platform's own pages: sign-in, the dashboard, tokens, the audit, the Tools tab, consent,
and the page for a refusal.

Each is a Jinja2 template in `templates/` (shipped with the package), rendered with
autoescaping on: whatever came from a person or an app is escaped by the template,
never by hand. Every page extends `base.html`, whose header carries the one
navigation and the sign-out for a signed-in person. The dashboard's one inline
script carries a nonce that the page's Content-Security-Policy names, so no other
script runs on these pages. This module turns what the endpoints hand it into what
the templates show; it decides nothing about who may see what.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from importlib.resources import files
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from pasture.caller import Caller
from pasture.platform import AppInfo, arguments_of, kind_of
from pasture.values import TIME_FORMAT, type_of_property

if TYPE_CHECKING:
    from jinja2 import Environment

# the calls that can change an app's data, so may be undone
CHANGES = frozenset({"command", "handler", "apply", "undo", "restore"})
AUDIT_PAGE = 50  # calls a page of the audit shows


@functools.cache
def _templates() -> Environment:
    # Loaded on the first page: a server that only answers the API or MCP never loads Jinja2.
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    return Environment(
        loader=PackageLoader("pasture.web", "templates"),
        # .html escapes every value; the style and the script are the platform's own text
        autoescape=select_autoescape(enabled_extensions=("html",), default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _render(
    template: str,
    title: str,
    caller: Caller | None = None,
    here: str = "",
    nonce: str | None = None,
    **values: Any,
) -> str:
    return (
        _templates()
        .get_template(template)
        .render(
            title=title,
            signed_in=caller is not None and caller.signed_in,
            signed_in_as=(caller.name or "") if caller is not None else "",
            here=here,
            nonce=nonce,
            **values,
        )
    )


@functools.cache
def favicon() -> bytes:
    """The platform's icon, an SVG served at /favicon.svg (every page links to it)."""
    return files("pasture.web").joinpath("static", "favicon.svg").read_bytes()


def signin_page(
    error: str | None = None, name: str = "", *, app: str = "", next_path: str = ""
) -> str:
    """The sign-in form; with `app`, signing in goes on to that app's own origin, and with
    `next_path` alone to that page of this origin."""
    return _render(
        "signin.html", "Sign in · pasture", error=error, name=name, app=app, next_path=next_path
    )


def consent_page(
    asking_client: str,
    client_uri: str | None,
    redirect_host: str,
    request: str,
    asks_to_write: bool,
    spaces: Sequence[str],
    caller: Caller,
) -> str:
    """An OAuth client asks to act as the signed-in person: what, where; approve or deny."""
    return _render(
        "consent.html",
        f"{asking_client} asks · pasture",
        caller,
        asking_client=asking_client,
        client_uri=client_uri,
        redirect_host=redirect_host,
        request=request,
        asks_to_write=asks_to_write,
        spaces=spaces,
    )


def tokens_page(
    caller: Caller,
    tokens: Sequence[Mapping[str, Any]],
    spaces: Sequence[str],
    made: str | None = None,
    problem: str | None = None,
) -> str:
    """A person's tokens and OAuth grants: make one (its secret shown once), revoke any."""
    shown = [{k: str(v) if v is not None else None for k, v in t.items()} for t in tokens]
    return _render(
        "tokens.html",
        "Tokens · pasture",
        caller,
        "/tokens",
        tokens=shown,
        spaces=spaces,
        made=made,
        problem=problem,
    )


def audit_page(
    caller: Caller,
    app: str | None,
    records: Sequence[Mapping[str, Any]],
    since: str | None = None,
    *,
    done: str | None = None,
    problem: str | None = None,
    apps: Sequence[str] = (),
    whole: bool | None = None,
    filters: Mapping[str, str] | None = None,
    older: str | None = None,
) -> str:
    """An app's recorded calls, for its space's owners (`whole`), or the person's own: who,
    by which door and token or client, what ran, how it went, and an Undo for each call
    that may have changed data; newest first, a page at a time. `apps` are the apps the
    filter offers; `filters` what the page was asked for (person, door, outcome, since,
    until); `older` the cursor of the next page. `done`/`problem`: how an undo went."""
    whole = app is not None if whole is None else whole
    title = (
        f"Audit of {app}" if app and whole else (f"Your calls in {app}" if app else "Your calls")
    )
    asked = {"person": "", "door": "", "outcome": "", "since": since or "", "until": ""}
    asked.update({k: v for k, v in (filters or {}).items() if k in asked and v})
    heads = ["when (UTC)", "who", "door", "via", *([] if app else ["app"])]
    heads += ["what", "args", "outcome", "ms"]
    rows = []
    for r in records:
        what = f"{r['action']} {r['command']}" if r.get("command") else str(r["action"])
        cells = [str(r["at"])[:19].replace("T", " "), r.get("name") or "nobody"]
        cells += [r.get("door") or "—", r.get("via") or "—"]
        cells += [] if app else [r.get("app") or "—"]
        cells += [what, r.get("args") or "", str(r["outcome"]), f"{float(r['ms']):.1f}"]
        rows.append({"cells": list(zip(heads, map(str, cells), strict=True)), "undo": _undo(r)})
    kept = {"app": app or "", **asked}
    query = {k: v for k, v in kept.items() if v}
    return _render(
        "audit.html",
        f"{title} · pasture",
        caller,
        "/audit",
        heading=title,
        app=app,
        apps=apps if not app or app in apps else [*apps, app],
        whole=whole,
        shown=asked,
        heads=heads,
        records=rows,
        done=done,
        problem=problem,
        older="/audit?" + urlencode({**query, "before": older}) if older else None,
        newest=("/audit?" + urlencode(query)) if filters and filters.get("before") else None,
        size=AUDIT_PAGE,
    )


def _undo(record: Mapping[str, Any]) -> str | None:
    """The call an Undo puts back: one that went through and may have changed data (the
    server says whether the caller may, and whether it changed anything)."""
    call = record.get("call")
    if not call or record.get("outcome") != "ok" or record.get("action") not in CHANGES:
        return None
    return str(call)


def tools_page(
    caller: Caller, app: str | None, entries: Sequence[Mapping[str, Any]], said: str
) -> str:
    """The Tools tab: every command of the person's apps (or of one), as `/api/tools`,
    MCP's `commands` and `pasture inspect` list them, one table per app. `said` is the
    listing's sentence, shown when there is nothing to list."""
    by_app: dict[str, list[Mapping[str, Any]]] = {}
    for entry in entries:
        by_app.setdefault(str(entry.get("at", "")), []).append(entry)
    apps = [
        (at, str(listed[0].get("title") or at), [_tool_row(e) for e in listed])
        for at, listed in by_app.items()
    ]
    title = f"Tools of {app}" if app else "Tools"
    return _render(
        "tools.html",
        f"{title} · pasture",
        caller,
        "/tools",
        heading=title,
        apps=apps,
        said=said,
        heads=["tool", "title", "what it does", "kind", "arguments", "view"],
        json_at="/api/tools" + (f"?app={app}" if app else ""),
    )


def _tool_row(entry: Mapping[str, Any]) -> dict[str, str]:
    return {
        "name": str(entry.get("name", "")),
        "title": str(entry.get("commandTitle") or ""),
        "description": str(entry.get("description") or ""),
        "kind": kind_of(entry),
        "args": ", ".join(arguments_of(entry)) or "none",
        "view": str(entry.get("view") or ""),
    }


def data_page(
    caller: Caller,
    app: str | None,
    *,
    apps: Sequence[str] = (),
    kinds: Sequence[str] = (),
    kind: str | None = None,
    columns: Sequence[str] = (),
    rows: Sequence[Mapping[str, Any]] = (),
    filter: str = "",
    more: str | None = None,
    said: str = "",
    entity: Mapping[str, Any] | None = None,
    problem: str | None = None,
    types: Mapping[str, Mapping[str, str]] | None = None,
    done: str | None = None,
    undo: str | None = None,
    sort: str = "",
) -> str:
    """The data browser: the apps the person reads; an app's kinds; a kind's rows as a table
    of its columns, narrowed by a filter of the grammar, a page at a time (`more`: the next
    page's address), with a form to add a row; or one entity's whole row, with a form to
    change each of its kinds' columns and one to delete it. `types` are each kind's
    columns' types; `done` how a write went, `undo` the call its Undo puts back."""
    types = types or {}
    shown = [
        {
            "eid": str(r.get("entity", {}).get("eid", "")),
            "cells": [(c, _value(r.get(kind or "", {}).get(c))) for c in columns],
        }
        for r in rows
    ]
    whole = None
    if entity is not None:
        parts = [
            (name, [(c, _value(v)) for c, v in value.items()])
            for name, value in entity.items()
            if isinstance(value, Mapping) and name != "entity"
        ]
        eid = str(entity.get("entity", {}).get("eid", ""))
        edits = [
            (name, [_input(c, t, (entity.get(name) or {}).get(c)) for c, t in types[name].items()])
            for name in kinds
            if isinstance(entity.get(name), Mapping) and name in types
        ]
        whole = {"eid": eid, "kind": entity.get("kind"), "components": parts, "edits": edits}
    # each column's heading sorts by it: fewest first, then (clicked again) most first
    sorting = [
        {
            "name": c,
            "sorted": "ascending" if sort == c else "descending" if sort == f"-{c}" else "",
            "href": "/data?"
            + urlencode(
                {
                    "app": app or "",
                    "kind": kind or "",
                    "filter": filter,
                    "sort": c if sort != c else f"-{c}",
                }
            ),
        }
        for c in columns
    ]
    heading = f"Data of {app}" if app else "Data"
    if app and kind and entity is None:
        heading = f"{kind} in {app}"
    return _render(
        "data.html",
        f"{heading} · pasture",
        caller,
        "/data",
        heading=heading,
        app=app,
        apps=apps,
        kinds=kinds,
        kind=kind,
        columns=columns,
        rows=shown,
        filter=filter,
        sorting=sorting,
        more=more,
        said=said,
        entity=whole,
        problem=problem,
        adding=[_input(c, t, None) for c, t in types.get(kind or "", {}).items()],
        done=done,
        undo=undo,
    )


def _input(column: str, kind: str, value: Any) -> dict[str, Any]:
    """A column as a form's field: its input by the column's type, holding `value` as the
    store has it (a reference by its id, to be handed back as it is)."""
    field: dict[str, Any] = {"name": column, "kind": kind, "step": ""}
    field.update(type={"bool": "checkbox", "number": "number", "url": "url"}.get(kind, "text"))
    if kind == "number":
        field["step"] = "any"
    if isinstance(value, Mapping):
        value = value.get("eid")
    field["checked"] = value is True
    field["value"] = "" if value is None or isinstance(value, bool) else str(value)
    field["placeholder"] = TIME_FORMAT if kind == "time" else ""
    return field


def _value(value: Any) -> str:
    """A column's value as a cell shows it: a reference by its name, nothing as empty."""
    if value is None:
        return ""
    if isinstance(value, Mapping) and "eid" in value:
        return str(value.get("name") or value["eid"])
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def message_page(
    title: str, sentence: str, sign_in: str | None = None, *, session: bool = False
) -> str:
    """A short page with a sentence; `sign_in` is where a signed-out visitor signs in. With
    `session` (the visitor holds a session on this origin) its header has the navigation
    and the sign-out."""
    return (
        _templates()
        .get_template("message.html")
        .render(
            title=f"{title} · pasture",
            signed_in=session,
            signed_in_as="",
            here="",
            nonce=None,
            heading=title,
            sentence=sentence,
            sign_in=sign_in,
        )
    )


def signed_out_dashboard() -> str:
    return _render("signed_out.html", "pasture")


def dashboard(
    caller: Caller,
    apps: Sequence[AppInfo],
    commands: Mapping[str, Sequence[Mapping[str, Any]]],
    nonce: str,
    problems: Mapping[str, str] | None = None,
    opens: Mapping[str, str] | None = None,
    owned: Collection[str] = (),
) -> str:
    """The signed-in person's spaces, apps and commands, each command with a form to try it.

    `opens` is where each app's link goes, by `space/app` (its page, or the hop that
    signs the visitor in to its own origin). The apps of the spaces in `owned` link to
    their audit.
    """
    spaces: dict[str, list[dict[str, Any]]] = {}
    for app in sorted(apps, key=lambda a: (a.space, a.slug)):
        path = f"/{app.space}/{app.slug}/"
        spaces.setdefault(app.space, []).append(
            {
                "at": app.at,
                "title": app.title or app.slug,
                "opens": (opens or {}).get(app.at, path),
                "access": app.access,
                "version": app.version,
                "code": app.code,
                "audit": app.space in owned,
                "problem": (problems or {}).get(app.at),
                "commands": [_command(path + "api/command", e) for e in commands.get(app.at, ())],
            }
        )
    return _render("dashboard.html", "pasture", caller, "/", nonce, spaces=list(spaces.items()))


def _command(api: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    schema = entry.get("input")
    props: Mapping[str, Any] = {}
    required: set[str] = set()
    if isinstance(schema, Mapping):
        found = schema.get("properties")
        props = found if isinstance(found, Mapping) else {}
        required = {str(r) for r in schema.get("required", []) if isinstance(r, str)}
    titled = entry.get("commandTitle")
    return {
        "name": str(entry.get("name", "")),
        "api": api,
        "title": titled if isinstance(titled, str) else "",
        "description": str(entry.get("description", "")),
        "kind": "reads" if entry.get("readOnly") else "writes",
        "hard": bool(entry.get("consequential")),
        "fields": [_field(arg, prop, arg in required) for arg, prop in props.items()],
    }


def _field(arg: str, prop: Any, required: bool) -> dict[str, Any]:
    """What `fields.html` draws for one argument: its input's type, step, hint, placeholder."""
    prop = prop if isinstance(prop, Mapping) else {}
    kind = prop.get("type")
    hint = prop.get("description") if isinstance(prop.get("description"), str) else ""
    field: dict[str, Any] = {"name": arg, "required": required, "hint": hint}
    field.update(type="text", step="", placeholder="")
    if kind == "boolean":
        field["type"] = "checkbox"
    elif kind in ("number", "integer"):
        field.update(type="number", step="1" if kind == "integer" else "any")
    elif type_of_property(dict(prop)) == "time":
        field.update(placeholder=TIME_FORMAT, hint=hint or f"a time: {TIME_FORMAT}")
    elif prop.get("format") == "uri":
        field["type"] = "url"
    return field


__all__ = [
    "dashboard",
    "data_page",
    "favicon",
    "message_page",
    "signed_out_dashboard",
    "signin_page",
    "tools_page",
]
