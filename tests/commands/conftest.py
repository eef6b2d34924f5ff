"""Shared pieces for the declared-commands tests: the run club as the spec writes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pasture.commands import load_commands
from pasture.commands.model import Command
from pasture.store.vocab import Vocabulary

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

RUNS_VOCAB: dict[str, Any] = {
    "$defs": {
        "jog": {
            "properties": {
                "who": {"type": "string"},
                "miles": {"type": "number"},
                "at": {"type": "string", "format": "date-time"},
            }
        }
    }
}


@pytest.fixture
def runs() -> Vocabulary:
    return Vocabulary.from_json(RUNS_VOCAB)


def tools(doc: Any, *pages: str) -> dict[str, bytes]:
    """An app's files: index.html, the given pages, and tools.json holding `doc`."""
    files = {"index.html": b"<title>Run club</title>"}
    files.update({page: b"<!doctype html>" for page in pages})
    files["tools.json"] = json.dumps(doc).encode()
    return files


def load(doc: Any, vocabulary: Vocabulary, *pages: str) -> dict[str, Command]:
    return {c.name: c for c in load_commands(tools(doc, *pages), vocabulary, "yourname/runs")}
