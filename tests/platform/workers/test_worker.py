"""An app's worker.py: its code commands deployed, listed and run beside the declared ones.

Through the Service, the MCP connector (the `command` tool, in memory) and the
command line (a real process), with the cart from examples/cart.
"""

from __future__ import annotations

import json
import queue
import shutil
import textwrap
import threading
from pathlib import Path

import anyio
import mcp_types as types
import pytest

from helpers.club import CART, RUNS
from helpers.command_line import PastureMain
from helpers.command_line import pasture_main as pasture
from mcp import Client
from pasture.caller import Caller
from pasture.errors import DeployRefused, NotFound, Refused, UsageError
from pasture.mcp import build_server
from pasture.platform import Change
from pasture.platform.service import Service


def app_with_worker(tmp_path: Path, source: str, base: Path = CART) -> Path:
    folder = tmp_path / "src" / base.name
    shutil.copytree(base, folder, dirs_exist_ok=True)
    (folder / "worker.py").write_text(textwrap.dedent(source))
    return folder


def refusal(service: Service, who: Caller, folder: Path) -> str:
    with pytest.raises(DeployRefused) as refused:
        service.deploy(who, folder)
    return str(refused.value)


# -- deploy ------------------------------------------------------------------------------
def test_a_worker_s_commands_are_deployed_and_listed_beside_the_declared_ones(
    service: Service, ada: Caller
) -> None:
    deployed = service.deploy(ada, CART)
    assert deployed.text == (
        "deployed ada/cart v1: http://127.0.0.1:8000/ada/cart/\n"
        "commands: cart_add, cart_remove, cart_clear, cart_status"
    )
    listing = service.listing.list_commands(ada, "cart")
    assert listing.text.splitlines()[1] == (
        "cart_add(sku, qty?) — Add to the cart: Add a product to the cart, or more of one "
        "already in it — Cart, an app at 127.0.0.1:8000/ada/cart/"
    )
    add = listing.data["commands"][0]
    assert (add["name"], add["title"], add["readOnly"]) == ("cart_add", "Cart", False)
    assert add["commandTitle"] == "Add to the cart"
    assert add["input"]["required"] == ["sku"] and add["examples"] == ["cart add V60-02 --qty=2"]
    assert listing.data["commands"][3]["readOnly"] is True


def test_running_through_the_service_checks_the_schema_and_uses_the_app_s_store(
    service: Service, ada: Caller
) -> None:
    service.deploy(ada, CART)
    added = service.run_command(ada, "cart_add", {"sku": "V60-02", "qty": 2})
    assert added.text == "Added 2 × V60-02; 2 in the cart."
    assert service.run_command(ada, "cart add", {"sku": "V60-02"}).data == {
        "sku": "V60-02",
        "qty": 3,
    }
    rows = service.graph.query(ada, "cart", ".line!").data["rows"]
    assert [(r["line"]["sku"], r["line"]["qty"]) for r in rows] == [("V60-02", 3)]
    assert service.run_command(ada, "cart_remove", {"sku": "V60-02"}).text == (
        "Removed V60-02 from the cart."
    )
    with pytest.raises(UsageError) as bad:
        service.run_command(ada, "cart_add", {"sku": "v 60", "qty": 0, "colour": "red"})
    assert bad.value.sentence == (
        "sku matches the pattern ^[A-Za-z0-9][A-Za-z0-9-]*$; qty is at least 1; "
        "colour is not an argument — the arguments are sku, qty"
    )
    with pytest.raises(Refused, match="V60-02 is not in the cart — cart status lists what is"):
        service.run_command(ada, "cart_remove", {"sku": "V60-02"})


def test_typed_text_is_converted_only_when_a_person_typed_it(service: Service, ada: Caller) -> None:
    service.deploy(ada, CART)
    typed = service.run_command(ada, "cart_add", {"sku": "A-1", "qty": "2"}, typed_text=True)
    assert typed.data == {"sku": "A-1", "qty": 2}
    with pytest.raises(UsageError, match="qty is a whole number"):
        service.run_command(ada, "cart_add", {"sku": "A-1", "qty": "2"})


def test_declared_commands_keep_their_own_rules(service: Service, ada: Caller) -> None:
    service.deploy(ada, RUNS)
    args = {"who": "Ada", "miles": "5", "at": "2026-09-01"}
    assert service.run_command(ada, "log_run", args).data["entities"]
    assert service.run_command(ada, "log_run", args, typed_text=True).data["entities"]


def test_status_shows_each_provider_s_line_under_its_app(service: Service, ada: Caller) -> None:
    service.deploy(ada, CART)
    service.deploy(ada, RUNS)
    service.run_command(ada, "cart_add", {"sku": "V60-02", "qty": 2})
    status = service.listing.status(ada)
    assert status.text.splitlines() == [
        "ada/cart v1 — Cart — 1 entity, 4 commands, public, runs code",
        "  cart: 2 items of 1 product",
        "ada/runs v1 — Run club — 0 entities, 3 commands, public",
    ]
    cart = status.data["apps"][0]
    assert cart["status"] == {"cart": {"count": 2, "lines": [{"sku": "V60-02", "qty": 2}]}}
    assert "status" not in status.data["apps"][1]


def test_a_worker_without_setup_registers_nothing(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    folder = app_with_worker(tmp_path, "HELPER = 1\n")
    assert service.deploy(ada, folder).data["commands"] == []


# -- a broken worker -----------------------------------------------------------------------
def test_every_registration_problem_comes_back_in_one_message(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    folder = app_with_worker(
        tmp_path,
        """
        def run(args, ctx):
            return None

        def setup(app):
            app.register("help me", description="Help", annotations={}, run=run)
            app.register(
                "cart add",
                description="Add",
                input={"type": "object", "properties": {"qty": {"type": "integr"}}},
                annotations={},
                run=run,
            )
            app.register("cart wide", description="Wide", annotations={"readonly": True}, run=run)
            app.register("cart go", description="Go", run=run)
            app.register("cart fine", description="Fine", annotations={}, run=run)
        """,
    )
    assert refusal(service, ada, folder) == (
        "worker.py: help me: names starting with help, man, status or clear are refused — "
        "those words belong to clients; start the name with the part of the app that owns it, "
        "like cart status; "
        "worker.py: cart add: input: qty's type is one of string, integer, number, boolean, "
        "array, object, null, or a list of them; "
        "worker.py: cart wide: annotations know readOnly and consequential, not readonly; "
        'worker.py: cart go: annotations are required: {"readOnly": True} if it changes '
        'nothing, {"consequential": True} if it is hard to undo, {} for an ordinary change'
    )
    with pytest.raises(NotFound):
        service.gate.app_info(ada, "cart")


def test_a_setup_that_raises_names_its_line(service: Service, ada: Caller, tmp_path: Path) -> None:
    folder = app_with_worker(
        tmp_path,
        """
        def setup(app):
            prices = {}
            return prices["V60-02"]
        """,
    )
    assert refusal(service, ada, folder) == "worker.py: line 4: KeyError: 'V60-02'"
    folder = app_with_worker(tmp_path, "setup = 3\n")
    assert refusal(service, ada, folder) == (
        "worker.py: setup is a function setup(app) that registers the app's commands on app"
    )


def test_a_code_command_named_like_a_declared_one_is_refused(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    folder = app_with_worker(
        tmp_path,
        """
        def setup(app):
            app.register("log run", description="Log", annotations={}, run=lambda a, c: None)
        """,
        base=RUNS,
    )
    assert refusal(service, ada, folder) == (
        "worker.py: log_run is a command of tools.json or vocab.json already — give one of "
        "them another name"
    )


def test_a_broken_worker_leaves_the_serving_version_as_it_was(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    service.deploy(ada, CART)
    service.run_command(ada, "cart_add", {"sku": "V60-02"})
    folder = app_with_worker(tmp_path, "import no_such_module_here\n")
    assert refusal(service, ada, folder) == (
        "worker.py: line 1: ModuleNotFoundError: No module named 'no_such_module_here'"
    )
    folder = app_with_worker(tmp_path, "import sys\nsys.modules.clear()\nraise SystemExit(3)\n")
    assert "worker.py: " in refusal(service, ada, folder)
    assert service.gate.app_info(ada, "cart").version == 1
    assert service.run_command(ada, "cart_status", {}).text == "1 item of 1 product"


def test_a_new_version_and_another_process_load_the_worker_afresh(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    service.deploy(ada, CART)
    folder = app_with_worker(
        tmp_path,
        (CART / "worker.py").read_text().replace("Added {qty}", "Put {qty}"),
    )
    service.deploy(ada, folder)
    assert service.run_command(ada, "cart_add", {"sku": "A"}).text.startswith("Put 1 × A")
    again = Service(service.home)
    try:
        owner = again.local_owner()
        assert (
            again.run_command(owner, "cart_add", {"sku": "A"}).text == "Put 1 × A; 2 in the cart."
        )
        again.rollback(owner, "cart", 1)
        assert again.run_command(owner, "cart_add", {"sku": "A"}).text == (
            "Added 1 × A; 3 in the cart."
        )
    finally:
        again.close()


# A shop whose closing command is registered by opening it.
SHOP = """
import time

def setup(app):
    def open_shop(args, ctx):
        app.register(
            "shop close", description="Close the shop", annotations={},
            run=lambda a, c: {"text": "closed", "data": {}},
        )
        return {"text": "open", "data": {}}

    def slow(args, ctx):
        time.sleep(0.5)
        return {"text": "slow", "data": {}}

    app.register("shop open", description="Open the shop", annotations={}, run=open_shop)
    app.register("shop slow", description="Slow", annotations={}, run=slow)
"""


def test_a_command_a_worker_registers_later_joins_the_app(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    service.deploy(ada, app_with_worker(tmp_path, SHOP))
    assert service.gate.app_info(ada, "cart").commands == ["shop_open", "shop_slow"]
    service.run_command(ada, "shop_open", {})
    assert service.gate.app_info(ada, "cart").commands == ["shop_open", "shop_slow", "shop_close"]
    assert service.run_command(ada, "shop close", {}).text == "closed"


def test_a_command_a_worker_registers_or_removes_is_told_on_the_bus(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    """So that an open page's WebMCP tools follow it (`pasture.web.live_tools`)."""
    service.deploy(ada, app_with_worker(tmp_path, SHOP))
    heard: queue.Queue[Change] = queue.Queue()
    stop = service.bus.listen(heard.put)
    try:
        service.run_command(ada, "shop_open", {})
        assert heard.get(timeout=60) == Change("commands", "ada", "cart")
        service.run_command(ada, "shop_slow", {})  # the commands stay as they are: nothing
        with pytest.raises(queue.Empty):
            heard.get(timeout=0.5)
    finally:
        stop()


def test_a_command_registered_later_stays_while_calls_come_at_once(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    """The app's registry is then the state of the process it moved in: every later call
    goes to that process, so no second process, started from setup() alone, replaces it."""
    service.deploy(ada, app_with_worker(tmp_path, SHOP))
    service.run_command(ada, "shop_open", {})
    at_once = [
        threading.Thread(target=lambda: service.run_command(ada, "shop_slow", {})) for _ in range(3)
    ]
    for thread in at_once:
        thread.start()
    for thread in at_once:
        thread.join()
    assert service.gate.app_info(ada, "cart").commands == ["shop_open", "shop_slow", "shop_close"]
    for _ in range(3):
        assert service.run_command(ada, "shop close", {}).text == "closed"


def test_worker_py_is_never_served(service: Service, ada: Caller) -> None:
    service.deploy(ada, CART)
    with pytest.raises(NotFound):
        service.pages.page(ada, "ada", "cart", "worker.py")


# -- MCP -------------------------------------------------------------------------------------
def test_the_command_tool_runs_a_code_command_with_typed_values(
    service: Service, ada: Caller
) -> None:
    service.deploy(ada, CART)

    async def talk(client: Client) -> list[types.CallToolResult]:
        return [
            await client.call_tool("command", {"name": "cart_add", "args": {"sku": "V60-02"}}),
            await client.call_tool(
                "command", {"name": "cart_add", "args": {"sku": "V60-02", "qty": "2"}}
            ),
            await client.call_tool("status", {}),
        ]

    async def main() -> list[types.CallToolResult]:
        async with Client(build_server(service, lambda: ada), mode="legacy") as client:
            return await talk(client)

    added, typed, status = anyio.run(main)
    assert not added.is_error and added.structured_content == {"sku": "V60-02", "qty": 1}
    assert isinstance(added.content[0], types.TextContent)
    assert added.content[0].text == 'Added 1 × V60-02; 1 in the cart.\n{"sku":"V60-02","qty":1}'
    assert typed.is_error and isinstance(typed.content[0], types.TextContent)
    assert typed.content[0].text == "qty is a whole number"
    assert isinstance(status.content[0], types.TextContent)
    assert "  cart: 1 item of 1 product" in status.content[0].text.splitlines()


# -- the command line ------------------------------------------------------------------------
def test_the_command_line_converts_what_a_person_types(tmp_path: Path) -> None:
    home = tmp_path / "home"
    deployed = pasture(home, "deploy", str(CART))
    assert deployed.returncode == 0, deployed.stderr
    positional = pasture(home, "command", "cart_add", "V60-02", "2")
    assert (positional.returncode, positional.stdout) == (0, "Added 2 × V60-02; 2 in the cart.\n")
    named = pasture(home, "command", "cart add", "--sku=V60-02", "--qty=3", "--json")
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout) == {"sku": "V60-02", "qty": 5}
    empty = pasture(home, "command", "cart_add", "--sku=FILTER-1", "--qty=")
    assert empty.stdout == "Added 1 × FILTER-1; 1 in the cart.\n"
    bad = pasture(home, "command", "cart_add", "V60-02", "two")
    assert (bad.returncode, bad.stderr) == (2, "qty is a whole number\n")
    status = pasture(home, "status")
    assert "  cart: 6 items of 2 products" in status.stdout.splitlines()


def test_a_broken_worker_is_refused_at_the_command_line(tmp_path: Path) -> None:
    folder = app_with_worker(
        tmp_path,
        """
        def setup(app):
            app.register("clear all", description="Clear", annotations={}, run=print)
        """,
    )
    done = pasture(tmp_path / "home", "deploy", str(folder))
    assert done.returncode == 1
    assert done.stderr.startswith("worker.py: clear all: names starting with help, man, status")


def test_a_relative_home_runs_code_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--home data` or `PASTURE_HOME=data`, relative to where the command line stands: the
    worker's sandbox is given its folders whole, so its code runs as with any other home."""
    monkeypatch.chdir(tmp_path)
    by_env = PastureMain(Path("data"))
    assert by_env("deploy", str(CART)).returncode == 0
    added = by_env("command", "cart_add", "V60-02", "2")
    assert (added.returncode, added.stdout, added.stderr) == (
        0,
        "Added 2 × V60-02; 2 in the cart.\n",
        "",
    )
    by_option = PastureMain(tmp_path / "unused")
    added = by_option("--home", "data", "command", "cart_add", "V60-02")
    assert (added.returncode, added.stdout) == (0, "Added 1 × V60-02; 3 in the cart.\n")
    assert (tmp_path / "data" / "platform.db").exists()
    assert not (tmp_path / "unused").exists()
