"""The MCP conformance suite's own fixtures as a registry served on its own.

The suite calls tools, resources and prompts by name (`test_simple_text`,
`test://static-text`, `test_simple_prompt`, …) and passes a server only where it
serves them. This is them, written as a program using pasture as a library would:
a `Registry` with commands, resources and prompts, served over streamable HTTP by
`pasture.mcp.serve_registry_http`.

    python tests/conformance_app/fixtures.py PORT
"""

from __future__ import annotations

import base64
import json
import sys
import time
from typing import Any

from pasture import Context, Refused, Registry
from pasture.client_asks import Asking, form
from pasture.client_asks import roots as their_roots
from pasture.client_asks import sampling as ask_model
from pasture.content import Audio, Embedded, Image, Message

# A 1×1 red pixel, and a moment of silence: what the suite asks its fixtures to carry.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = base64.b64decode("UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=")

NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}
# pasture tells a client at most 10 reports of progress a second (pasture.long_calls), so
# the suite's three reports are a little further apart than its ~50 ms.
BETWEEN_REPORTS = 0.12


def fixtures() -> Registry:
    registry = Registry()

    def tool(name: str, description: str, run: Any, **more: Any) -> None:
        registry.register(
            name.replace("_", " "),
            description=description,
            run=run,
            input=more.pop("input", NO_ARGS),
            annotations=more.pop("annotations", {"readOnly": True}),
            **more,
        )

    tool(
        "test_simple_text",
        "Answers with a line of text.",
        lambda args, ctx: "This is a simple text response for testing.",
    )
    tool(
        "test_image_content",
        "Answers with an image.",
        lambda args, ctx: {"content": [Image(PNG, "image/png")]},
    )
    tool(
        "test_audio_content",
        "Answers with a sound.",
        lambda args, ctx: {"content": [Audio(WAV, "audio/wav")]},
    )
    tool(
        "test_embedded_resource",
        "Answers with a resource's contents.",
        lambda args, ctx: {
            "content": [
                Embedded("test://embedded-resource", text="This is an embedded resource content.")
            ]
        },
    )
    tool(
        "test_multiple_content_types",
        "Answers with text, an image and a resource.",
        lambda args, ctx: {
            "text": "Multiple content types test:",
            "content": [
                Image(PNG, "image/png"),
                Embedded(
                    "test://mixed-content-resource",
                    text=json.dumps({"test": "data", "value": 123}),
                    mime_type="application/json",
                ),
            ],
        },
    )

    def error(args: dict[str, Any], ctx: Context) -> None:
        raise Refused("This tool intentionally returns an error for testing")

    tool("test_error_handling", "Always refuses.", error)

    def progress(args: dict[str, Any], ctx: Context) -> str:
        for done in (0, 50, 100):
            if done:
                time.sleep(BETWEEN_REPORTS)
            ctx.progress(done, total=100)
        return "Progress reported: 0, 50 and 100 of 100."

    tool("test_tool_with_progress", "Reports its progress three times.", progress)

    def logging(args: dict[str, Any], ctx: Context) -> str:
        for line in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            ctx.log("info", line)
            time.sleep(0.05)
        return "Logged three lines."

    tool("test_tool_with_logging", "Tells the client's log three lines.", logging)

    # -- asking the client: the person, its model, its roots ------------------------------
    def said(answer: dict[str, Any]) -> str:
        return f"action={answer.get('action')}, content={json.dumps(answer.get('content'))}"

    def text_of(sampled: dict[str, Any]) -> str:
        content = sampled.get("content")
        return str(content.get("text", "")) if isinstance(content, dict) else ""

    def sampling(args: dict[str, Any], ctx: Context) -> str:
        return f"LLM response: {text_of(ctx.sample('answer', args['prompt'], max_tokens=100))}"

    text_input = {
        "type": "object",
        "properties": {"prompt": {"type": "string"}},
        "required": ["prompt"],
    }
    tool("test_sampling", "Asks the client's model.", sampling, input=text_input)

    user = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }

    def elicitation(args: dict[str, Any], ctx: Context) -> str:
        return f"User response: {said(ctx.ask('info', args['message'], user))}"

    message_input = {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    }
    tool("test_elicitation", "Asks the person a form.", elicitation, input=message_input)

    defaults = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {
                "type": "string",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "default": True},
        },
    }
    tool(
        "test_elicitation_sep1034_defaults",
        "Asks the person a form with a default for each field.",
        lambda args, ctx: (
            f"Elicitation completed: {said(ctx.ask('defaults', 'Your details', defaults))}"
        ),
    )
    enums = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
    }
    tool(
        "test_elicitation_sep1330_enums",
        "Asks the person a form of every kind of choice.",
        lambda args, ctx: f"Elicitation completed: {said(ctx.ask('enums', 'Choose', enums))}",
    )
    tool(
        "test_missing_capability",
        "Needs the client's model, which a client may not offer.",
        lambda args, ctx: text_of(ctx.sample("needed", "Say something")),
    )

    name = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}

    def content(answer: dict[str, Any]) -> dict[str, Any]:
        found = answer.get("content")
        return found if isinstance(found, dict) else {}

    tool(
        "test_input_required_result_elicitation",
        "Asks the person's name, then greets them.",
        lambda args, ctx: (
            f"Hello, {content(ctx.ask('user_name', 'What is your name?', name)).get('name')}!"
        ),
    )
    tool(
        "test_input_required_result_sampling",
        "Asks the client's model a question.",
        lambda args, ctx: (
            text_of(
                ctx.sample("capital_question", "What is the capital of France?", max_tokens=100)
            )
            or "no answer"
        ),
    )
    tool(
        "test_input_required_result_list_roots",
        "Names the client's roots.",
        lambda args, ctx: (
            "Roots: " + ", ".join(r.get("uri", "") for r in ctx.roots("client_roots"))
        ),
    )
    ok = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    tool(
        "test_input_required_result_request_state",
        "Asks for a yes, carried across rounds in the request's state.",
        # The state came back sealed as this server sent it, or the call was refused.
        lambda args, ctx: f"state-ok: {said(ctx.ask('confirm', 'Please confirm', ok))}",
    )

    def several(args: dict[str, Any], ctx: Context) -> str:
        answers = ctx.ask_all(
            {
                "user_name": form("What is your name?", name),
                "greeting": ask_model("Generate a greeting", max_tokens=50),
                "client_roots": their_roots(),
            }
        )
        return f"Got {', '.join(sorted(answers))}."

    tool("test_input_required_result_multiple_inputs", "Asks three things at once.", several)

    def rounds(args: dict[str, Any], ctx: Context) -> str:
        first = content(ctx.ask("step1", "Step 1: What is your name?", name))
        color = {
            "type": "object",
            "properties": {"color": {"type": "string"}},
            "required": ["color"],
        }
        second = content(ctx.ask("step2", "Step 2: What is your favorite color?", color))
        return f"{first.get('name')} likes {second.get('color')}."

    tool("test_input_required_result_multi_round", "Asks two things, one after the other.", rounds)
    tool(
        "test_input_required_result_tampered_state",
        "Asks for a yes; a state the client changed is refused.",
        lambda args, ctx: said(ctx.ask("confirm", "Please confirm", ok)),
    )

    def what_it_can(args: dict[str, Any], ctx: Context) -> str:
        asks = {}
        if ctx.can_ask("elicitation"):
            asks["user_name"] = form("What is your name?", name)
        if ctx.can_ask("sampling"):
            asks["greeting"] = ask_model("Generate a greeting", max_tokens=50)
        if not asks:
            return "This client can be asked nothing."
        return f"Got {', '.join(sorted(ctx.ask_all(asks)))}."

    tool(
        "test_input_required_result_capabilities",
        "Asks only what the client said it can answer.",
        what_it_can,
    )

    # -- resources ----------------------------------------------------------------------
    registry.resource(
        "test://static-text",
        lambda params: "This is the content of the static text resource.",
        description="A resource of text.",
        name="static-text",
    )
    registry.resource(
        "test://static-binary",
        lambda params: PNG,
        description="A resource of bytes: an image.",
        name="static-binary",
        mime_type="image/png",
    )
    registry.resource(
        "test://template/{id}/data",
        lambda params: json.dumps(
            {"id": params["id"], "templateTest": True, "data": f"Data for ID: {params['id']}"}
        ),
        description="Data for one id.",
        name="template-data",
        mime_type="application/json",
        suggest=lambda part, typed: [v for v in ("123", "456") if v.startswith(typed)],
    )
    registry.resource(
        "test://watched-resource",
        lambda params: "A resource a client may follow.",
        description="A resource a client may subscribe to.",
        name="watched-resource",
    )

    # -- prompts ------------------------------------------------------------------------
    registry.prompt(
        "test_simple_prompt",
        lambda args: "This is a simple prompt for testing.",
        description="A prompt of one line.",
    )
    registry.prompt(
        "test_prompt_with_arguments",
        lambda args: f"Prompt with arguments: arg1='{args['arg1']}', arg2='{args['arg2']}'",
        description="A prompt of two arguments.",
        arguments={"arg1": "First test argument", "arg2": "Second test argument"},
        suggest=lambda argument, typed: [
            v for v in ("paris", "park", "party") if v.startswith(typed)
        ],
    )
    registry.prompt(
        "test_prompt_with_embedded_resource",
        lambda args: [
            Embedded(args["resourceUri"], text="Embedded resource content for testing."),
            "Please process the embedded resource above.",
        ],
        description="A prompt carrying a resource.",
        arguments={"resourceUri": "URI of the resource to embed"},
    )
    registry.prompt(
        "test_prompt_with_image",
        lambda args: [Message(Image(PNG, "image/png")), "Please analyze the image above."],
        description="A prompt carrying an image.",
    )
    context = {
        "type": "object",
        "properties": {"context": {"type": "string"}},
        "required": ["context"],
    }

    def asking_first(args: dict[str, str], ask: Asking) -> str:
        answer = ask.ask("user_context", "What context should the prompt use?", context)
        return f"A prompt for this context: {json.dumps(answer.get('content'))}"

    registry.prompt(
        "test_input_required_result_prompt",
        asking_first,
        description="A prompt that asks the person first.",
    )
    return registry


if __name__ == "__main__":
    from pasture.mcp import serve_registry_http

    serve_registry_http(fixtures(), "conformance-fixtures", port=int(sys.argv[1]))
