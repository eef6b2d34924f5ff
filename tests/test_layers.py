"""The layer rule, as scripts/layers.py reads it: no door (cli, web, mcp) imports the store
or commands, and no layer imports one above it — checked on the whole of src/pasture."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "layers.py"


def layers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("layers", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_src_keeps_the_layer_rule() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout
    assert done.stdout.strip() == "the layer rule holds"


def test_the_rule_names_each_kind_of_break() -> None:
    rule = layers()
    assert rule.breaks("web", "store") == "a door (web) imports store"
    assert rule.breaks("cli", "commands") == "a door (cli) imports commands"
    assert rule.breaks("store", "platform") == "store imports platform, a layer above it"
    assert rule.breaks("ground", "commands") == "ground imports commands, a layer above it"
    # What may be: downward, a door starting another, the public API naming anything.
    assert rule.breaks("platform", "store") is None
    assert rule.breaks("cli", "web") is None
    assert rule.breaks("api", "commands") is None
    assert rule.layer_of("pasture.result") == "ground"
    assert rule.layer_of("pasture.store.sql") == "store"
    assert rule.layer_of("pasture") == "api"
    assert rule.layer_of("mcp.server") is None


def test_a_registry_names_its_door_only_inside_the_function_that_serves_it() -> None:
    rule = layers()
    door = ("pasture.commands.registry", "pasture.mcp._registry_server")
    assert rule.excused(*door, lazy=True)
    assert not rule.excused(*door, lazy=False)
    assert not rule.excused("pasture.commands.model", "pasture.mcp._registry_server", lazy=True)
    registry = rule.SRC / "commands" / "registry.py"
    named = {(module, lazy) for _, module, lazy in rule.imports_of(registry)}
    assert ("pasture.mcp._registry_server", True) in named
    assert ("pasture.commands.model", False) in named
