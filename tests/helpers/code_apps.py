"""Apps with code for the worker tests: a folder made from a worker.py written in the test."""

from __future__ import annotations

import textwrap
from pathlib import Path

from pasture.caller import Caller
from pasture.platform.service import Access, Service

VOCAB = '{"$defs": {"note": {"properties": {"text": {"type": "string"}}}}}'

# A note written and read back; every test app with code carries these two.
NOTES = """
def note_add(args, ctx):
    applied = ctx.store.apply({"entity": {"eid": "$n"}, "note": {"text": args["text"]}})
    return {"text": "noted", "data": {"eid": applied.entities[0]}}


def note_count(args, ctx):
    return {"text": "counted", "data": {"count": len(ctx.store.query(".note!"))}}


def register_notes(app):
    app.register(
        "note add",
        description="Add a note",
        input={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        annotations={},
        run=note_add,
    )
    app.register(
        "note count", description="Count the notes", annotations={"readOnly": True}, run=note_count
    )
"""


def code_app(tmp_path: Path, name: str, worker: str, *, notes: bool = True) -> Path:
    """A folder with index.html, vocab.json (a `note`) and `worker` as its worker.py.

    With `notes`, the worker also has `note add` and `note count`, and its
    `setup(app)` may call `register_notes(app)`.
    """
    folder = tmp_path / "apps" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.html").write_text(f"<!doctype html><title>{name}</title>\n")
    (folder / "vocab.json").write_text(VOCAB)
    source = textwrap.dedent(worker)
    (folder / "worker.py").write_text((NOTES if notes else "") + source)
    return folder


def deploy(
    service: Service,
    who: Caller,
    folder: Path,
    space: str | None = None,
    access: Access | None = None,
) -> str:
    """Deploy and answer the app's `space/slug`."""
    return str(service.deploy(who, folder, space=space, access=access).data["at"])
