"""The guide and the command line stay in step: every `pasture` verb has a section."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pasture.cli import verbs

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"
HEADINGS = set(re.findall(r"^### `pasture ([a-z ]+)`", GUIDE.read_text(), re.MULTILINE))


@pytest.mark.parametrize("verb", verbs())
def test_every_verb_is_documented(verb: str) -> None:
    assert verb in HEADINGS, f"docs/guide.md has no section ### `pasture {verb}`"


def test_the_guide_documents_no_verb_that_is_gone() -> None:
    assert set(verbs()) >= HEADINGS
