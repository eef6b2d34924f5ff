"""The run club the tests use everywhere: the examples' folders, its vocabulary, and acting
as a person of the machine."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
RUNS = EXAMPLES / "runs"
CART = EXAMPLES / "cart"
TODOS = EXAMPLES / "todos"
RECIPES = EXAMPLES / "recipes"

# The run club's one kind, as the spec writes it.
JOG: dict[str, Any] = {
    "properties": {
        "who": {"type": "string"},
        "miles": {"type": "number"},
        "at": {"type": "string", "format": "date-time"},
    }
}
RUNS_VOCAB: dict[str, Any] = {"$defs": {"jog": JOG}}


@contextmanager
def as_user(name: str) -> Iterator[None]:
    """PASTURE_USER is `name` for the block (the machine's owner a new Service makes), and
    what it was after."""
    before = os.environ.get("PASTURE_USER")
    os.environ["PASTURE_USER"] = name
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PASTURE_USER", None)
        else:
            os.environ["PASTURE_USER"] = before
