"""The one tree of errors `pasture.errors` draws: every error class pasture defines is in it,
and a refusal (the caller's to change) is never a fault of the server's."""

from __future__ import annotations

import importlib
import pkgutil

import pasture
from pasture import errors
from pasture.commands.registry import CommandFailed
from pasture.errors import Fault, PastureError, Refused, Unavailable


def _every_module() -> None:
    for found in pkgutil.walk_packages(pasture.__path__, "pasture."):
        if found.name.endswith("__main__"):
            continue
        importlib.import_module(found.name)


def _subclasses(root: type) -> set[type]:
    found: set[type] = set()
    for sub in root.__subclasses__():
        found |= {sub, *_subclasses(sub)}
    return found


def test_every_error_class_of_pasture_is_drawn_in_the_tree() -> None:
    _every_module()
    ours = {c for c in _subclasses(PastureError) if c.__module__.startswith("pasture.")}
    drawn = errors.__doc__ or ""
    assert ours, "no error classes found"
    for kind in ours:
        assert f" {kind.__name__} " in drawn, f"{kind.__module__}.{kind.__name__} is not drawn"


def test_no_refusal_is_a_server_fault() -> None:
    _every_module()
    for kind in _subclasses(Refused):
        assert kind.status < 500, f"{kind.__name__} refuses with {kind.status}"
    assert not issubclass(Fault, Refused) and not issubclass(Refused, Fault)
    assert issubclass(Unavailable, Fault) and issubclass(CommandFailed, Fault)
    assert (Unavailable.status, CommandFailed.status, Fault.status) == (503, 424, 500)


def test_a_fault_carries_its_sentence_as_a_refusal_does() -> None:
    said = Unavailable("the database server is gone — \ud800")
    assert said.sentence == str(said) == "the database server is gone — \\ud800"
    assert said.exit_code == 1
