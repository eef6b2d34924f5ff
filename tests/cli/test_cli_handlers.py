"""examples/todos at the command line: its tools are commands a person types, with text
converted to their types (`--done=yes`), as the person at the terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.club import CART, TODOS
from helpers.command_line import PastureMain
from pasture.platform.service import Service


@pytest.fixture
def pasture(tmp_path: Path) -> PastureMain:
    return PastureMain(tmp_path / "home")


def test_a_person_lists_and_marks_their_todos(
    pasture: PastureMain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deployed = pasture("deploy", str(TODOS))
    assert deployed.returncode == 0, deployed.stderr
    assert deployed.stdout.splitlines()[1] == "commands: todos, set_todo_done, clear_done"
    monkeypatch.setenv("PASTURE_USER", "ada")
    service = Service(tmp_path / "home")  # the page adds a todo (add_todo is no command)
    todo = service.call_handler(service.local_owner(), "todos", "add_todo", {"text": "call mum"})
    service.close()
    eid = todo.data["result"]["id"]

    marked = pasture("command", "set_todo_done", f"--todo_id={eid}", "--done=yes")
    assert marked.returncode == 0, marked.stderr
    listed = pasture("command", "todos", "--json")
    [todo] = json.loads(listed.stdout)["result"]
    assert (todo["id"], todo["text"], todo["done"]) == (eid, "call mum", True)
    hidden = pasture("command", "add_todo", "--text=more")
    assert hidden.returncode != 0 and hidden.stderr.startswith("no command add_todo")
    assert "Traceback" not in hidden.stderr


def test_a_command_of_several_words_runs_unquoted(pasture: PastureMain) -> None:
    deployed = pasture("deploy", str(CART))
    assert deployed.returncode == 0, deployed.stderr
    added = pasture("command", "cart", "add", "V60-02", "2")
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == "Added 2 × V60-02; 2 in the cart."
    # Quoted, joined by _, or with named arguments: the same command.
    for words in (["cart add", "V60-02"], ["cart_add", "V60-02"], ["cart", "add", "--sku=V60-02"]):
        again = pasture("command", *words)
        assert again.returncode == 0, again.stderr
    status = pasture("command", "cart", "status", "--json")
    assert json.loads(status.stdout) == {"count": 5, "lines": [{"sku": "V60-02", "qty": 5}]}
    # Words that name no command are the first word's, refused with what there is.
    unknown = pasture("command", "cart", "empty", "now")
    assert unknown.returncode != 0 and unknown.stderr.startswith("no command cart ")
    assert "cart_add" in unknown.stderr and "Traceback" not in unknown.stderr
