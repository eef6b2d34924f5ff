"""The connector's fixed tool list: the same nine tools, in the same order, for everyone.

A directory may snapshot `tools/list` once and serve that snapshot forever, so
nothing here depends on who is asking or on what anybody deployed. What an app
can do reaches an agent through `commands` and `command`, never as a tool of
its own.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import mcp_types as types

_APP = {
    "type": "string",
    "description": (
        "The app, by its slug (`runs`), or `space/app` (`club/runs`) where two of your spaces "
        "have an app of that name. `app_list` lists them."
    ),
}

_FILE_TEXT = {"type": "string", "description": "The whole text of the file."}

CONFIRM_PROPERTY: dict[str, Any] = {
    "type": "boolean",
    "description": (
        "`true` only once the person you act for has said yes to this very call of a command "
        "that is hard to undo — never on your own. Without it such a command is not run where "
        "your client cannot ask them."
    ),
}
"""The person's yes, carried by a call where nothing could ask them (`pasture.asking`)."""


def _object(
    properties: dict[str, Any] | None = None, required: list[str] | None = None
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = required
    return schema


# -- what each tool answers: its structuredContent, which its text carries as JSON too -------
_TEXT: dict[str, Any] = {"type": "string"}
_TEXTS: dict[str, Any] = {"type": "array", "items": _TEXT}
_WHOLE: dict[str, Any] = {"type": "integer"}
_AT = {"type": "string", "description": "The app, `space/slug`."}
_VERSION = {"type": "integer", "description": "The app's version now serving."}

_ROW: dict[str, Any] = {
    "type": "object",
    "description": (
        "One entity: `entity.eid`, its `kind`, and each component the filter named, as "
        "`{column: value}` (a reference read back as `{eid, name}`; a column nothing wrote "
        "is null)."
    ),
    "properties": {
        "entity": {"type": "object", "properties": {"eid": _TEXT}, "required": ["eid"]},
        "kind": {"type": ["string", "null"]},
    },
    "required": ["entity"],
}

_READ: dict[str, Any] = {
    "rows": {"type": "array", "items": _ROW, "description": "The rows: one page at most."},
    "more": {"type": "boolean", "description": "Rows follow that this answer does not hold."},
    "cursor": {
        "type": ["string", "null"],
        "description": "Where the next page begins: the same filter with `&after=<cursor>`.",
    },
    "count": {**_WHOLE, "description": "`.count!`: how many entities match."},
    "tally": {
        "type": "object",
        "additionalProperties": _WHOLE,
        "description": "`.tally=comp.col`: how many rows hold each value.",
    },
    "distinct": {"type": "array", "description": "`.distinct=comp.col`: the values there are."},
}

_WROTE: dict[str, Any] = {
    "entities": {**_TEXTS, "description": "The eid of every entity written, in order."},
    "aliases": {
        "type": "object",
        "additionalProperties": _TEXT,
        "description": 'Each `$name` of the bundles and the eid it made: {"$run": "4f3c…"}.',
    },
}

_APP_DATA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "at": _AT,
        "space": _TEXT,
        "slug": _TEXT,
        "title": _TEXT,
        "access": {"type": "string", "enum": ["private", "public", "open"]},
        "version": _WHOLE,
        "url": {"type": "string", "description": "Where its pages are served."},
        "commands": {**_TEXTS, "description": "Its commands' names."},
        "views": {**_TEXTS, "description": "Its pages a command's answer is drawn in."},
        "code": {"type": "boolean", "description": "It carries worker.py."},
    },
    "required": ["at", "space", "slug", "title", "access", "version", "url", "commands"],
}

_LISTED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "at": _AT,
        "name": {"type": "string", "description": "What `command` takes as `name`."},
        "title": {"type": "string", "description": "The app's title."},
        "description": _TEXT,
        "readOnly": {"type": "boolean"},
        "input": {"type": "object", "description": "The JSON Schema of its `args`."},
        "view": {"type": "string", "description": "A `ui://` resource to draw it in."},
        "commandTitle": _TEXT,
        "consequential": {"type": "boolean", "description": "Hard to undo: ask first."},
        "output": {"type": "object"},
        "examples": {"type": "array"},
        "seeAlso": _TEXTS,
    },
    "required": ["at", "name", "title", "description", "readOnly", "input"],
}

_COMPONENT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "columns": {
            "type": "object",
            "additionalProperties": _TEXT,
            "description": "Each column and its type.",
        },
        "details": {
            "type": "object",
            "additionalProperties": {"type": "object"},
            "description": "Each column: its type, whether required, its default, whom it names.",
        },
        "indexes": {"type": "object", "additionalProperties": _TEXTS},
        "kind": {"type": "boolean"},
        "platform": {"type": "boolean"},
        "writable": {"type": "boolean"},
    },
    "required": ["columns"],
}

OUTPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    "commands": _object({"commands": {"type": "array", "items": _LISTED}}, ["commands"]),
    "command": {
        "type": "object",
        "description": (
            "The command's data, as the command answers it: a read's `rows` (with `more` and "
            "`cursor` when cut short) or its aggregate (`count`, `tally`, `distinct`); a "
            "write's `entities` and `aliases`; a handler's `result`; a code command's own "
            "object. The tool's text carries it too, after its sentence."
        ),
        "properties": {
            **{k: {"description": v.get("description", "")} for k, v in _READ.items()},
            **{k: {"description": v["description"]} for k, v in _WROTE.items()},
            "result": {"description": "What a handler answered: its rows, its id, its JSON."},
        },
    },
    "status": _object(
        {
            "apps": {
                "type": "array",
                "items": {
                    **_APP_DATA,
                    "properties": {
                        **_APP_DATA["properties"],
                        "entities": {**_WHOLE, "description": "How many entities it stores."},
                        "status": {
                            "type": "object",
                            "description": "What its providers' status commands answered.",
                        },
                    },
                    "required": [*_APP_DATA["required"], "entities"],
                },
            }
        },
        ["apps"],
    ),
    "graph_schema": _object(
        {
            "components": {"type": "object", "additionalProperties": _COMPONENT},
            "tools": {
                "type": "boolean",
                "description": "Whether its kinds have add_/find_ commands of their own.",
            },
        },
        ["components"],
    ),
    "graph_query": {
        **_object(_READ),
        "anyOf": [{"required": [key]} for key in ("rows", "count", "tally", "distinct")],
    },
    "graph_apply": _object(_WROTE, ["entities", "aliases"]),
    "app_list": _object({"apps": {"type": "array", "items": _APP_DATA}}, ["apps"]),
    "app_files": {
        **_object(
            {
                "at": _AT,
                "version": _VERSION,
                "files": {**_TEXTS, "description": "Without `path`: every file's path."},
                "path": {"type": "string", "description": "With `path`: the file read."},
                "text": {"type": "string", "description": "With `path`: its whole text."},
            },
            ["at", "version"],
        ),
        "anyOf": [{"required": ["files"]}, {"required": ["path", "text"]}],
    },
    "app_deploy": _object(
        {
            "at": _AT,
            "version": _VERSION,
            "url": {"type": "string", "description": "Where its pages are served."},
            "title": _TEXT,
            "commands": {**_TEXTS, "description": "Its commands' names."},
        },
        ["at", "version", "url", "title", "commands"],
    ),
}
"""Each tool's `outputSchema`: what its `structuredContent` holds (a refusal has none)."""


def tool(
    name: str,
    title: str | None,
    description: str,
    input_schema: dict[str, Any],
    *,
    read_only: bool,
    destructive: bool = False,
    idempotent: bool | None = None,
    output_schema: dict[str, Any] | None = None,
) -> types.Tool:
    """A tool as agents see it: what it is called, says, takes, answers (`output_schema`:
    its `structuredContent`), and does to the world."""
    return types.Tool(
        name=name,
        title=title,
        description=description,
        input_schema=input_schema,
        output_schema=output_schema,
        annotations=types.ToolAnnotations(
            title=title,
            read_only_hint=read_only,
            destructive_hint=None if read_only else destructive,
            idempotent_hint=idempotent,
            open_world_hint=False,
        ),
    )


TOOLS: tuple[types.Tool, ...] = (
    tool(
        "commands",
        "List the commands of your apps",
        "Every command the apps you can reach offer, grouped by app, each with its arguments "
        "(`?` marks an optional one), what it does, and the app's title and address. Call this "
        "first whenever the person asks for something one of their apps might do — log a run, "
        "add a recipe, read a board — and then run the command with `command`. A command list "
        "is the person's own; never guess a name without it. Give `app` to list one app only.",
        _object({"app": _APP}),
        read_only=True,
        idempotent=True,
        output_schema=OUTPUT_SCHEMAS["commands"],
    ),
    tool(
        "command",
        "Run a command of one of your apps",
        "Run one command that `commands` listed, as the person you act for, and get its answer: "
        "the rows it read or the ids it wrote. Pass its arguments in `args` exactly as "
        "`commands` names them, with the types its input schema gives. Name `app` only "
        "when two of the person's apps have a command of that name. A command whose listing "
        "names a `view` has a page to draw the answer in: read that `ui://` resource to show it. "
        "A command listed as hard to undo (`consequential`) runs only once the person has said "
        "yes to it: where your client can ask them, pasture asks; where it cannot, nothing "
        "runs and the answer says what would have run — then ask your person, and only once "
        "they say yes call `command` again with the same `name` and `args` and `confirm: true`. "
        "Never set `confirm` without their yes.",
        _object(
            {
                "name": {
                    "type": "string",
                    "description": "The command's name as `commands` lists it, e.g. `log_run`.",
                },
                "confirm": CONFIRM_PROPERTY,
                "args": {
                    "type": "object",
                    "description": (
                        'The command\'s own arguments, e.g. {"who": "Ada", "miles": 5}; '
                        "none for a command that takes none."
                    ),
                    "additionalProperties": True,
                },
                "app": _APP,
            },
            ["name"],  # a command of no arguments is called with none
        ),
        read_only=False,
        destructive=True,  # it runs whatever the app offers, `consequential` commands too
        output_schema=OUTPUT_SCHEMAS["command"],
    ),
    tool(
        "status",
        "The state of your apps",
        "One line for every app you can reach: its address, version and access. Reach for it "
        "to see what the person has before changing anything.",
        _object(),
        read_only=True,
        idempotent=True,
        output_schema=OUTPUT_SCHEMAS["status"],
    ),
    tool(
        "graph_schema",
        "What an app's data is made of",
        "Every component an app stores — its own from vocab.json and the platform's (doc, "
        "alias, created, …) — with each column and its type. Read this before `graph_query` "
        "or `graph_apply` on an app, so a filter or a bundle names what is really there.",
        _object({"app": _APP}, ["app"]),
        read_only=True,
        idempotent=True,
        output_schema=OUTPUT_SCHEMAS["graph_schema"],
    ),
    tool(
        "graph_query",
        "Read an app's data with a filter",
        "Read rows from an app with a filter, the same one its pages use: predicates joined by "
        "`&`, e.g. `.jog!&.created!` (every run, with who logged it), `.jog.miles>=5`, "
        "`limit=10`, or bare words for a full-text search. A row carries only the components "
        "the filter names; add `.doc?` to bring titles along. Rows come oldest first; "
        "`sort=-jog.miles,jog.who` orders them by columns (`-` for the largest first, "
        "`sort=-created.at` for the newest). One answer holds at most one page of rows: one "
        "cut short says so and carries `more` and a `cursor`, and the same filter with "
        "`&after=<cursor>` reads the next page. Use a command instead when the app has one "
        "that reads what you need.",
        _object(
            {
                "app": _APP,
                "filter": {
                    "type": "string",
                    "description": (
                        "The filter, e.g. `.jog!&.created!&limit=20` or "
                        "`.jog!&sort=-jog.miles&after=<cursor>`."
                    ),
                },
            },
            ["app", "filter"],
        ),
        read_only=True,
        idempotent=True,
        output_schema=OUTPUT_SCHEMAS["graph_query"],
    ),
    tool(
        "graph_apply",
        "Write to an app's data",
        "Write one bundle or a list of bundles to an app, all or nothing: "
        '`{"entity": {"eid": "$new"}, "doc": {"title": "…"}, "jog": {"who": "Ada", "miles": 5}}` '
        "creates an entity (a `$name` is a new one, reported back with its eid); an existing eid "
        'patches that row; `"tombstone": {}` deletes it. Only components `graph_schema` lists '
        "can be written. Prefer a command when the app has one for the job.",
        _object(
            {
                "app": _APP,
                "bundles": {
                    "type": "array",
                    "description": "The bundles to write (a single bundle object is taken too).",
                    "items": {"type": "object", "additionalProperties": True},
                },
            },
            ["app", "bundles"],
        ),
        read_only=False,
        destructive=True,  # a tombstone deletes
        output_schema=OUTPUT_SCHEMAS["graph_apply"],
    ),
    tool(
        "app_list",
        "List your apps",
        "Every app in every space the person belongs to, with its title, address, access and "
        "the commands it offers. Reach for it to find an app's slug or to see what exists "
        "before deploying a new one.",
        _object(),
        read_only=True,
        idempotent=True,
        output_schema=OUTPUT_SCHEMAS["app_list"],
    ),
    tool(
        "app_files",
        "Read an app's source",
        "Read an app's source back: without `path`, the list of its files; with `path`, that "
        "file's text — tools.json and vocab.json included. Read the files before changing an "
        "app, then send every file back whole with `app_deploy`.",
        _object(
            {
                "app": _APP,
                "path": {
                    "type": "string",
                    "description": "A file of the app, e.g. `index.html` or `tools.json`.",
                },
            },
            ["app"],
        ),
        read_only=True,
        idempotent=True,
        output_schema=OUTPUT_SCHEMAS["app_files"],
    ),
    tool(
        "app_deploy",
        "Deploy an app",
        "Install an app as a new version from its files: `index.html` and its pages, "
        "`vocab.json` for the data it keeps, `tools.json` for commands of its own. The whole app "
        "is checked first and every problem comes back in one message, with nothing installed; "
        "fix them all and deploy again. The answer names the app's address and its commands. "
        "`app` is the slug (new or existing), `space` the space to put it in (your own by "
        "default), `access` private (members only), public (anyone reads) or open (anyone "
        "writes).",
        _object(
            {
                "files": {
                    "type": "object",
                    "description": (
                        'Every file of the app, path to text: {"index.html": "<!doctype html>…"}.'
                    ),
                    "additionalProperties": _FILE_TEXT,
                },
                "app": {"type": "string", "description": "The app's slug, e.g. `runs`."},
                "space": {"type": "string", "description": "The space to deploy into."},
                "access": {
                    "type": "string",
                    "enum": ["private", "public", "open"],
                    "description": "Who may read and write the app.",
                },
                "title": {
                    "type": "string",
                    "description": "The app's title, when index.html has no <title>.",
                },
            },
            ["files"],
        ),
        read_only=False,
        output_schema=OUTPUT_SCHEMAS["app_deploy"],
    ),
)
"""Exactly these, in this order: changing them is a platform release."""

TOOL_NAMES: tuple[str, ...] = tuple(each.name for each in TOOLS)

INPUT_SCHEMAS: dict[str, dict[str, Any]] = {each.name: each.input_schema for each in TOOLS}


def release_of(tools: tuple[types.Tool, ...]) -> str:
    """A short name for one release of the tool list: it changes when any tool does."""
    listed = [each.model_dump(mode="json", by_alias=True, exclude_none=True) for each in tools]
    return hashlib.sha256(json.dumps(listed, sort_keys=True).encode()).hexdigest()[:16]


RELEASE = release_of(TOOLS)
"""This release of the tool list; a client that listed another is told to list again."""

CHANGED = (
    "pasture's tools changed with a new release since you listed them — list them again "
    "(tools/list) before your next call"
)
