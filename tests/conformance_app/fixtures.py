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

from pasture import Refused, Registry
from pasture.commands.model import Context
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
    return registry


if __name__ == "__main__":
    from pasture.mcp import serve_registry_http

    serve_registry_http(fixtures(), "conformance-fixtures", port=int(sys.argv[1]))
