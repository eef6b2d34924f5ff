"""The connector's prompts: one for each app the caller can reach, saying what it does.

A client offers a server's prompts as the person's own slash commands (`/pasture:ada_runs`).
Each of the caller's apps is one prompt, named `<space>_<slug>` (a space or a slug holds
no `_`, so the name says which app it is), whose one message tells the agent what the
app is, where it lives and what each of its commands does — the listing `commands` gives
for that app (`Listing.list_commands`) — and how to run them. Its one argument, `task`
(what the person wants done there), optional, is folded into the message.

`prompts/list` is the apps of the caller's own spaces (`Gate.list_apps`), never another
person's, whatever their access. `prompts/get` of a name that is no app of theirs is
refused with the gate's own sentence, the one every door gives for an app out of reach;
a name of no app at all, with one naming the prompts there are. `completion/complete`
of `task` offers the app's command names that begin with what is typed.
"""

from __future__ import annotations

import mcp_types as types

from pasture.caller import Caller
from pasture.errors import NotFound, UsageError
from pasture.platform import AppInfo, Service

TASK = "task"
MOST = 100  # the values one completion carries at most (the protocol's bound)
TASK_MOST = 4000  # characters of `task` a message carries at most


def prompt_name(info: AppInfo) -> str:
    """`ada/runs` → `ada_runs`: a name a client may offer as a slash command."""
    return f"{info.space}_{info.slug}"


def _app_of(name: str) -> str | None:
    space, underscore, slug = name.partition("_")
    return f"{space}/{slug}" if underscore and space and slug and "_" not in slug else None


def _prompt(info: AppInfo) -> types.Prompt:
    return types.Prompt(
        name=prompt_name(info),
        title=f"{info.title} ({info.at})",
        description=(
            f"Work in {info.title}, your app {info.at}: the agent is told what it is and "
            "what each of its commands does, and what you want done there."
        ),
        arguments=[
            types.PromptArgument(
                name=TASK,
                description=f"What you want done in {info.title}, e.g. what to log or to read.",
                required=False,
            )
        ],
    )


def listed(service: Service, caller: Caller) -> types.ListPromptsResult:
    """The prompts of the caller's own apps, in the order of their names."""
    apps = sorted(service.gate.list_apps(caller), key=prompt_name)
    return types.ListPromptsResult(prompts=[_prompt(info) for info in apps])


def _found(service: Service, caller: Caller, name: str) -> AppInfo:
    """The app a prompt's name names, as the caller reaches it; refused as the gate refuses."""
    at = _app_of(name)
    if at is None:
        names = ", ".join(prompt_name(info) for info in service.gate.list_apps(caller))
        raise NotFound(
            f"no prompt {name} — each of your apps is a prompt named space_app"
            + (f": {names}" if names else ", and you have none yet")
        )
    return service.gate.app_info(caller, at)  # the gate's refusal, as every door says it


def got(
    service: Service, caller: Caller, name: str, arguments: dict[str, str] | None
) -> types.GetPromptResult:
    """The prompt's message: the app, its commands as `commands` lists them, the task."""
    arguments = arguments or {}
    unknown = sorted(set(arguments) - {TASK})
    if unknown:
        raise UsageError(f"{name} takes one argument, {TASK}: not {', '.join(unknown)}")
    info = _found(service, caller, name)
    listing = service.listing.list_commands(caller, info.at)
    task = (arguments.get(TASK) or "").strip()[:TASK_MOST]
    lines = [
        f"You are helping the person with {info.title}, their app {info.at} on pasture "
        f"(its pages are at {info.url}).",
        "",
        "What it offers, as the `commands` tool lists it:",
        "",
        listing.text,
        "",
        f"Run one with the `command` tool: its `name` as listed, its arguments in `args`, and "
        f'`app` "{info.at}". `graph_schema` and `graph_query` with the same `app` describe and '
        "read its data. A command listed as hard to undo runs only once the person says yes.",
        "",
        f"What the person wants done there: {task}"
        if task
        else "Ask the person what they want done there, then do it with its commands.",
    ]
    return types.GetPromptResult(
        description=f"{info.title} ({info.at}) and its commands",
        messages=[
            types.PromptMessage(
                role="user", content=types.TextContent(type="text", text="\n".join(lines))
            )
        ],
    )


def completed(
    service: Service, caller: Caller, ref: types.PromptReference, argument: str, typed: str
) -> types.Completion:
    """The app's command names beginning with what is typed: what `task` may be about."""
    info = _found(service, caller, ref.name)
    if argument != TASK:
        raise NotFound(f"the prompt {ref.name} has no argument {argument} — its one is {TASK}")
    start = typed.casefold()
    values = sorted(c for c in info.commands if c.casefold().startswith(start))
    return types.Completion(values=values[:MOST], total=len(values), has_more=len(values) > MOST)


__all__ = ["TASK", "completed", "got", "listed", "prompt_name"]
