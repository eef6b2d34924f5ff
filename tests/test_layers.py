"""The layer rule, as scripts/layers.py reads it: no door (cli, web, mcp) imports the store
or commands, and no layer imports one above it — checked on the whole of src/pasture."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "layers.py"


def layers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("layers", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.processes
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


def test_the_doors_stand_in_one_order_and_mcp_names_no_other() -> None:
    rule = layers()
    assert rule.breaks("web", "mcp") is None  # /mcp over HTTP is the web door serving MCP
    assert rule.breaks("mcp", "web") == "mcp imports web, a layer above it"
    assert rule.breaks("web", "cli") == "web imports cli, a layer above it"
    assert rule.breaks("commands", "mcp") == "commands imports mcp, a layer above it"


def test_a_door_takes_the_platform_from_its_own_names() -> None:
    rule = layers()
    assert rule.behind_the_door("pasture.web.app", "pasture.platform") is None
    assert rule.behind_the_door("pasture.cli", "pasture.platform.service") == (
        "a door (cli) reaches inside the platform: take it from pasture.platform"
    )
    # inside the platform, its modules name each other
    assert rule.behind_the_door("pasture.platform.service", "pasture.platform.graph") is None


def test_no_import_comes_back_round_however_long_the_way() -> None:
    rule = layers()
    assert rule.circles(rule.import_graph()) == []


def test_a_circle_is_found_at_any_length() -> None:
    rule = layers()
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}, "f": {"a"}}
    assert rule.circles(graph) == [["a", "b", "c"], ["e"]]
    chain = {str(n): {str(n + 1)} for n in range(5000)}
    chain["5000"] = {"0"}  # a circle longer than Python's own stack is deep
    assert rule.circles(chain) == [sorted(chain)]


def test_an_import_inside_a_function_counts() -> None:
    rule = layers()
    # `serve` imports the web door only when called: a dependency all the same
    opening = rule.SRC / "cli" / "_opening.py"
    assert "def serve(" in opening.read_text()
    assert "pasture.web" in {m for _, m in rule.imports_of(opening, rule.modules())}
