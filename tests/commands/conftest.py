"""Shared pieces for the declared-commands tests: the run club as the spec writes it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from helpers.club import RUNS_VOCAB
from pasture.commands import load_commands
from pasture.commands.model import Command
from pasture.store.vocab import Vocabulary


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
