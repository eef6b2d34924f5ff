"""A registry's resources and prompts as MCP answers, for a registry served on its own.

`resources/list` is its plain resources, `resources/templates/list` its templates (an
address with `{name}` parts), and `resources/read` reads either: text as `text`, bytes
as a base64 `blob`, of the type the resource says. An address that is none of them is
`Invalid params` naming it (`data: {uri}`), never an empty answer. `prompts/list` and
`prompts/get` are its prompts, each message a part of `pasture.content`;
`completion/complete` asks a prompt's or a template's own `suggest`, and completes to
nothing where it has none. A door, it knows them only by their shape (`pasture.served`).
"""

from __future__ import annotations

import base64
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from pasture.client_asks import CannotAsk, ClientAsks, InputRequired
from pasture.errors import NotFound, PastureError
from pasture.mcp._tool_results import part_of
from pasture.served import ServedPrompt, ServedRegistry, ServedResource

MOST = 100  # values one completion carries at most (the protocol's bound)


def _invalid(sentence: str, **data: Any) -> MCPError:
    return MCPError(code=types.INVALID_PARAMS, message=sentence, data=data or None)


def listed_resources(registry: ServedRegistry) -> types.ListResourcesResult:
    return types.ListResourcesResult(
        resources=[
            types.Resource(
                uri=r.uri,
                name=r.name,
                title=r.title,
                description=r.description,
                mime_type=r.mime_type,
            )
            for r in registry.resources()
            if not r.is_template
        ]
    )


def listed_templates(registry: ServedRegistry) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(
        resource_templates=[
            types.ResourceTemplate(
                uri_template=r.uri,
                name=r.name,
                title=r.title,
                description=r.description,
                mime_type=r.mime_type,
            )
            for r in registry.resources()
            if r.is_template
        ]
    )


def read(registry: ServedRegistry, uri: str) -> types.ReadResourceResult:
    """What `uri` reads; `Invalid params` naming it when it is no resource here."""
    try:
        found, value = registry.read(uri)
    except NotFound as missing:
        raise _invalid(missing.sentence, uri=uri) from None
    except PastureError as refused:
        raise _invalid(refused.sentence, uri=uri) from None
    contents: types.TextResourceContents | types.BlobResourceContents
    if isinstance(value, bytes):
        blob = base64.b64encode(value).decode("ascii")
        contents = types.BlobResourceContents(uri=uri, mime_type=found.mime_type, blob=blob)
    else:
        contents = types.TextResourceContents(uri=uri, mime_type=found.mime_type, text=value)
    return types.ReadResourceResult(contents=[contents])


def known(registry: ServedRegistry, uri: str) -> None:
    """Nothing, when `uri` is one of the registry's resources; `Invalid params` when not."""
    read(registry, uri)


def listed_prompts(registry: ServedRegistry) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=[_prompt(p) for p in registry.prompts()])


def _prompt(found: ServedPrompt) -> types.Prompt:
    return types.Prompt(
        name=found.name,
        title=found.title,
        description=found.description,
        arguments=[
            types.PromptArgument(name=key, description=what, required=key not in found.optional)
            for key, what in found.arguments.items()
        ],
    )


def got(
    registry: ServedRegistry,
    params: types.GetPromptRequestParams,
    client: ClientAsks | None = None,
) -> types.GetPromptResult:
    """The prompt's messages; `Invalid params` for a prompt or arguments it does not have.
    A prompt that asks its `client` what is not answered yet raises `InputRequired`, and
    one that asks what the client cannot answer, `CannotAsk`."""
    found = registry.get_prompt(params.name)
    if found is None:
        names = ", ".join(p.name for p in registry.prompts()) or "none"
        raise _invalid(f"no prompt {params.name} — the prompts are {names}")
    try:
        messages = found.get(params.arguments or {}, client)
    except (InputRequired, CannotAsk):
        raise
    except PastureError as refused:
        raise _invalid(refused.sentence) from None
    return types.GetPromptResult.model_validate(
        {
            "description": found.description,
            "messages": [{"role": m.role, "content": part_of(m.content)} for m in messages],
        }
    )


def completed(registry: ServedRegistry, params: types.CompleteRequestParams) -> types.Completion:
    """Values for the argument asked about, from its prompt's or template's `suggest`."""
    ref = params.ref
    argument, typed = params.argument.name, params.argument.value
    suggest = None
    if isinstance(ref, types.PromptReference):
        prompt = registry.get_prompt(ref.name)
        if prompt is None or argument not in prompt.arguments:
            raise _invalid(f"no prompt {ref.name} with an argument {argument}")
        suggest = prompt.suggest
    else:
        template = _template(registry, ref.uri)
        if template is None or argument not in template.parts:
            raise _invalid(f"no resource template {ref.uri} with a part {argument}")
        suggest = template.suggest
    values = [str(v) for v in suggest(argument, typed)] if suggest is not None else []
    return types.Completion(values=values[:MOST], total=len(values), has_more=len(values) > MOST)


def _template(registry: ServedRegistry, uri: str) -> ServedResource | None:
    return next((r for r in registry.resources() if r.is_template and r.uri == uri), None)


__all__ = [
    "completed",
    "got",
    "known",
    "listed_prompts",
    "listed_resources",
    "listed_templates",
    "read",
]
