"""`pasture console`: piped lines as a script sends them, Tab completion, and a real terminal."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import needs
from helpers.club import CART, RUNS, TODOS
from helpers.command_line import pasture_main as pasture
from pasture.platform.service import Service


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    assert pasture(home, "deploy", str(RUNS)).returncode == 0
    return home


def _json_after(text: str, marker: str) -> Any:
    """The JSON document printed right after the line `marker`."""
    start = text.index(marker + "\n") + len(marker) + 1
    return json.JSONDecoder().raw_decode(text[start:])[0]


# -- piped: a script drives it -------------------------------------------------
def test_piped_lines_run_as_the_command_line_runs_them(home: Path) -> None:
    script = "\n".join(
        [
            "log_run Ada 5 2026-09-01",
            'log_run --who="Bo Brown" --miles=3 --at=2026-09-02',
            "leaderboard",
            "log_run Ada lots 2026-09-01",
            "status",
            "leaderboard --json",
            "add_run Ada",
            "exit",
            "log_run Cy 1 2026-09-03",
        ]
    )
    done = pasture(home, "console", input=script + "\n")

    out, err = done.stdout, done.stderr
    assert out.count("log_run: wrote 1 entity in ada/runs: $run=") == 2
    assert "leaderboard: 2 rows in ada/runs" in out
    assert "Bo Brown" in out and "jog.miles" in out  # the rows as a table
    # The refusal is its sentence, and the lines after it still run.
    assert "miles is a number" in err
    assert "ada/runs v1 — Run club — 2 entities, 3 commands, public" in out
    rows = _json_after(out, "ada/runs v1 — Run club — 2 entities, 3 commands, public")["rows"]
    assert [(r["jog"]["who"], r["jog"]["miles"]) for r in rows] == [("Ada", 5), ("Bo Brown", 3)]
    assert (
        "no command add_run — your apps offer ada/runs: log_run, leaderboard, since. "
        "commands lists them with their arguments." in err
    )
    # exit leaves: the line after it never runs.
    assert "Cy" not in out
    assert pasture(home, "status").stdout.startswith("ada/runs v1 — Run club — 2 entities")
    # The exit code is the last refusal's (no command: 1), and no traceback anywhere.
    assert done.returncode == 1
    assert "Traceback" not in out + err


def test_help_lists_the_commands_by_app_and_one_command_s_arguments(home: Path) -> None:
    done = pasture(home, "console", input="help\nhelp log_run\nhelp nothing_here\nhelp apps\n")
    lines = done.stdout.splitlines()
    assert lines[:2] == [
        "## ada/runs",
        "log_run(who, miles, at) — Log a run for the club leaderboard — Run club, "
        "an app at 127.0.0.1:8000/ada/runs/",
    ]
    assert any(line.startswith("help NAME shows a command's arguments") for line in lines)
    assert "log_run(who, miles, at) — Log a run for the club leaderboard — Run club, ada/runs" in (
        lines
    )
    arguments = {line.split()[0]: line.split()[1:3] for line in lines if line[:1] == " "}
    assert arguments["who"] == ["text", "required"]
    assert arguments["miles"] == ["number", "required"]
    assert arguments["at"] == ["time", "required"]
    assert "log_run WHO MILES AT   or   log_run --who=… --miles=… --at=…" in lines
    assert lines[-1] == "apps — every app in your spaces (a word of the console)"
    assert done.stderr.startswith("no command nothing_here — your apps offer ada/runs:")
    assert done.returncode == 1


def _section(lines: list[str], heading: str) -> list[str]:
    """The indented lines under one heading of a man page."""
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return [line.strip() for line in lines[start:end]]


def test_man_shows_a_command_s_whole_page(home: Path) -> None:
    assert pasture(home, "deploy", str(CART)).returncode == 0
    assert pasture(home, "deploy", str(TODOS)).returncode == 0
    done = pasture(home, "console", input="man cart add\n")
    lines = done.stdout.splitlines()
    assert lines[:2] == [
        "cart add — Add to the cart",
        "  Add a product to the cart, or more of one already in it",
    ]
    assert _section(lines, "ABOUT")[:3] == [
        "provider: cart",
        "app: Cart (ada/cart)",
        "it changes things",
    ]
    assert _section(lines, "ARGUMENTS") == [
        "sku — text, required",
        "The product code, e.g. V60-02",
        "at most 40 characters; matches the pattern ^[A-Za-z0-9][A-Za-z0-9-]*$",
        "qty — whole number, optional, default 1",
        "at least 1; at most 99",
    ]
    assert _section(lines, "USAGE") == ["cart add SKU QTY", "cart add --sku=… --qty=…"]
    assert _section(lines, "EXAMPLES") == ["cart add V60-02 --qty=2"]
    assert _section(lines, "SEE ALSO") == ["cart remove, cart status"]

    # A handler's page: its kind, and it is hard to undo; an example made from its arguments.
    done = pasture(home, "console", input="man clear_done\nman set_todo_done\n")
    lines = done.stdout.splitlines()
    assert "  provider: a mutation in ada/todos's worker.py" in lines
    assert any(line.startswith("  it is hard to undo: you are asked") for line in lines)
    assert "  set_todo_done TODO_ID true" in lines

    # help points to man; man without a name, or a name nobody has, is a sentence.
    done = pasture(home, "console", input="help cart add\nman\nman nothing_here\n")
    assert "man cart add shows its whole page" in done.stdout.splitlines()
    assert "man takes a command's name: man log_run — help lists them" in done.stderr
    assert "no command nothing_here" in done.stderr and "Traceback" not in done.stderr
    listed = json.loads(pasture(home, "console", input="man cart add --json\n").stdout)
    assert listed["name"] == "cart_add" and listed["commandTitle"] == "Add to the cart"


def test_builtins_commands_apps_and_json(home: Path) -> None:
    done = pasture(home, "console", input="commands --json\napps\nstatus --json\nstatus now\n")
    listing = json.loads(done.stdout[: done.stdout.index("\n}\n") + 3])
    assert [c["name"] for c in listing["commands"]] == ["log_run", "leaderboard", "since"]
    assert "ada/runs" in done.stdout and "Run club" in done.stdout and "public" in done.stdout
    assert '"entities": 0' in done.stdout
    assert "status takes only --json, not now" in done.stderr
    assert done.returncode == 2


def test_a_quote_left_open_and_an_empty_line_are_not_the_end(home: Path) -> None:
    done = pasture(home, "console", input='log_run "Ada 5\n\n# a comment\nleaderboard\n')
    assert "a quote on this line is not closed" in done.stderr
    assert "leaderboard: 0 rows in ada/runs" in done.stdout


def test_json_for_every_line_and_a_token_s_person(home: Path) -> None:
    token = json.loads(pasture(home, "token", "new", "--json").stdout)["token"]
    done = pasture(home, "console", "--json", "--token", token, input="log_run Ada 5 2026-09-01\n")
    assert list(json.loads(done.stdout)) == ["entities", "aliases"]
    wrong = pasture(home, "console", "--token", "pst_wrong", input="status\n")
    assert wrong.returncode == 1
    assert "that token is not one this server gave out" in wrong.stderr


# -- a real terminal -------------------------------------------------------------


class Pane:
    """One tmux pane on a server of its own, running a command in an 100×30 terminal."""

    def __init__(self, socket: Path, command: str) -> None:
        tmux = needs.program("tmux", "tmux", "the console's tests at a real terminal")
        self.base = [tmux, "-S", str(socket)]
        subprocess.run(
            [*self.base, "new-session", "-d", "-x", "100", "-y", "30", command], check=True
        )

    def send(self, *keys: str) -> None:
        subprocess.run([*self.base, "send-keys", "-t", "0", *keys], check=True)

    def screen(self) -> str:
        done = subprocess.run(
            [*self.base, "capture-pane", "-p", "-t", "0"], capture_output=True, text=True
        )
        return done.stdout

    def wait_for(self, text: str) -> str:
        """The screen once it shows `text` (a deadline only so a broken console cannot hang)."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"the terminal never showed {text!r}; it shows:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True)


SHELF = """
from pasture import Result


def pick(args, ctx):
    return Result(f"picked {args['sku']}", {"sku": args["sku"]})


def skus(key, partial):
    return [{"value": "KAL-185", "description": "Kalita wave"}] if key == "sku" else []


def setup(app):
    app.register(
        "shelf pick",
        description="Pick a product off the shelf",
        input={"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
        positional=["sku"],
        annotations={"readOnly": True},
        run=pick,
        suggest=skus,
    )
"""


@pytest.fixture
def pane(home: Path, tmp_path: Path) -> Iterator[Pane]:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "worker.py").write_text(SHELF)
    assert pasture(home, "deploy", str(shelf)).returncode == 0
    command = shlex.join(
        [
            "env",
            f"PASTURE_HOME={home}",
            "PASTURE_USER=ada",
            sys.executable,
            "-m",
            "pasture",
            "console",
        ]
    )
    pane = Pane(tmp_path / "tmux.sock", command + '; echo "the console left with $?"; sleep 30')
    try:
        yield pane
    finally:
        pane.close()


@pytest.mark.processes
@pytest.mark.terminal
def test_a_person_at_a_terminal(pane: Pane, home: Path) -> None:
    pane.wait_for("ada>")  # a screen's lines end without their spaces
    pane.send("lo", "Tab")
    assert pane.wait_for("ada> log_run").count("ada> log_run") == 1
    pane.send(" Ada 5 2026-09-01", "Enter")
    pane.wait_for("log_run: wrote 1 entity in ada/runs")

    pane.send("log_run Bo x 2026-09-02", "Enter")
    pane.wait_for("miles is a number")

    pane.send("leaderboard", "Enter")
    pane.wait_for("leaderboard: 1 row in ada/runs")
    # The table is drawn after the answer's line: wait for it, not just the line.
    screen = pane.wait_for("jog.miles")
    assert "Ada" in screen.split("leaderboard: 1 row in ada/runs", 1)[1]

    # A code command's words, then a value its suggest hook offers.
    pane.send("shelf p", "Tab")
    pane.wait_for("ada> shelf pick")
    pane.send(" K", "Tab")
    pane.wait_for("ada> shelf pick KAL-185")
    pane.send("Enter")
    pane.wait_for("picked KAL-185")

    # Ctrl-C drops the line being typed; the prompt comes back for the next one.
    pane.send("status half typed", "C-c")
    pane.send("status", "Enter")
    screen = pane.wait_for("ada/runs v1 — Run club — 1 entity")
    assert "status takes only" not in screen

    pane.send("C-d")
    pane.wait_for("the console left with 0")
    history = (home / "console_history").read_text()
    assert "log_run Ada 5 2026-09-01" in history and "leaderboard" in history


def test_code_commands_named_in_words_take_typed_text(home: Path) -> None:
    assert pasture(home, "deploy", str(CART)).returncode == 0
    script = "\n".join(
        [
            "cart add V60-02 2",
            "cart_add V60-02",
            "cart add V60-02 zero",
            "help cart add",
            "cart status",
            "cart remove V60-02 --qty=1",
            "cart status --json",
        ]
    )
    done = pasture(home, "console", input=script + "\n")
    lines = done.stdout.splitlines()
    assert lines[:2] == ["Added 2 × V60-02; 2 in the cart.", "Added 1 × V60-02; 3 in the cart."]
    assert "qty is a whole number" in done.stderr
    arguments = {line.split()[0]: line.split()[1:] for line in lines if line[:1] == " "}
    assert arguments["qty"] == ["whole", "number", "default", "1"]
    assert "for example: cart add V60-02 --qty=2" in lines
    assert "see also: cart remove, cart status" in lines
    assert "3 items of 1 product" in lines
    assert "Removed 1 × V60-02; 2 left." in lines
    assert _json_after(done.stdout, "Removed 1 × V60-02; 2 left.") == {
        "count": 2,
        "lines": [{"sku": "V60-02", "qty": 2}],
    }


def test_data_without_text_prints_as_key_value(home: Path, tmp_path: Path) -> None:
    app = tmp_path / "counter"
    app.mkdir()
    (app / "worker.py").write_text(COUNTER)
    assert pasture(home, "deploy", str(app)).returncode == 0, "the counter deploys"
    done = pasture(home, "console", input="counter show yes\n")
    assert done.stdout.splitlines() == [
        "count: 3",
        "loud: true",
        "by:",
        "  ada: 2",
        "  bo: 1",
        "tags: a, b",
    ]


COUNTER = """
from pasture import Result


def show(args, ctx):
    data = {"count": 3, "loud": args["loud"], "by": {"ada": 2, "bo": 1}, "tags": ["a", "b"]}
    return Result("", data)


def setup(app):
    app.register(
        "counter show",
        description="The count, by whom",
        input={"type": "object", "properties": {"loud": {"type": "boolean"}}},
        positional=["loud"],
        annotations={"readOnly": True},
        run=show,
    )
"""


def test_a_name_two_apps_share_is_said_with_app(home: Path) -> None:
    assert pasture(home, "space", "new", "club").returncode == 0
    assert pasture(home, "deploy", str(RUNS), "--space", "club").returncode == 0
    script = "log_run Ada 5 2026-09-01\nlog_run Ada 5 2026-09-01 --app club/runs\n"
    done = pasture(home, "console", input=script)
    assert "log_run is a command of ada/runs and club/runs — say which app" in done.stderr
    assert "log_run: wrote 1 entity in club/runs" in done.stdout


# -- a command that is hard to undo ------------------------------------------------
# With nobody at a terminal to ask, the sentence every door says, with --yes for confirm.
UNCONFIRMED = (
    "cart clear is hard to undo, so it was not run: it would run Empty the cart (cart clear) "
    "on ada/cart with no arguments. Ask your person whether to run it, and only once they say "
    "yes run it again with --yes."
)


def test_a_consequential_command_piped_runs_only_with_yes(home: Path) -> None:
    assert pasture(home, "deploy", str(CART)).returncode == 0
    done = pasture(home, "console", input="cart add V60-02 2\ncart clear\ncart status\n")
    assert UNCONFIRMED in done.stderr
    assert "2 items of 1 product" in done.stdout.splitlines()  # nothing was taken out
    assert done.returncode == 1

    done = pasture(home, "console", input="cart clear --yes\ncart status\n")
    assert done.stdout.splitlines() == [
        "Emptied the cart: 1 product taken out.",
        "the cart is empty",
    ]
    assert done.returncode == 0


def test_pasture_command_refuses_a_consequential_command_without_yes(home: Path) -> None:
    assert pasture(home, "deploy", str(CART)).returncode == 0
    assert pasture(home, "command", "cart_add", "V60-02").returncode == 0
    refused = pasture(home, "command", "cart_clear")
    assert refused.stderr.strip() == UNCONFIRMED
    assert refused.returncode == 1
    named = pasture(home, "command", "cart_clear", "--note=é x")  # what it was given, said
    assert named.stderr.strip() == UNCONFIRMED.replace("with no arguments", 'with note "é x"')
    # the text for people, then what no line of text could carry: the lines, as a table
    status = pasture(home, "command", "cart_status").stdout.splitlines()
    assert status[:2] == ["1 item of 1 product", "lines:"]
    assert [cell.strip() for cell in status[-1].split("│")] == ["V60-02", "1"]

    done = pasture(home, "command", "cart_clear", "--yes")
    assert done.stdout.strip() == "Emptied the cart: 1 product taken out."
    assert pasture(home, "command", "cart_status").stdout.strip() == "the cart is empty"


@pytest.mark.processes
@pytest.mark.terminal
def test_a_person_is_asked_before_a_consequential_command(pane: Pane, home: Path) -> None:
    assert pasture(home, "deploy", str(CART)).returncode == 0
    pane.wait_for("ada>")
    pane.send("cart_add V60-02 2", "Enter")  # the console read its commands before the deploy
    pane.wait_for("2 in the cart")
    pane.send("cart clear", "Enter")
    pane.wait_for("about to run: Empty the cart: cart clear (ada/cart)")
    pane.wait_for("run it? [y/N]")
    pane.send("n", "Enter")
    pane.wait_for("cancelled — nothing was run")
    pane.send("cart status", "Enter")
    pane.wait_for("2 items of 1 product")
    pane.wait_for("V60-02 │ 2")  # its lines, as a table
    pane.send("cart clear", "Enter")
    pane.wait_for("run it? [y/N]\n")  # the second question, below the first answer
    pane.send("y", "Enter")
    pane.wait_for("Emptied the cart: 1 product taken out.")


@pytest.mark.processes
@pytest.mark.terminal
def test_a_person_keeps_their_todos_at_a_terminal(
    pane: Pane, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert pasture(home, "deploy", str(TODOS)).returncode == 0
    monkeypatch.setenv("PASTURE_USER", "ada")
    service = Service(home)  # the page adds a todo: add_todo is the page's, no command
    added = service.call_handler(service.local_owner(), "todos", "add_todo", {"text": "water"})
    service.close()
    eid = added.data["result"]["id"]

    pane.wait_for("ada>")
    pane.send("Enter")  # the console read its commands before the deploy: a new prompt reads
    pane.wait_for("ada>\nada>")  # them, and what is typed before it is drawn may land in the old
    pane.send("tod", "Tab")
    pane.wait_for("ada> todos")
    pane.send("Enter")
    pane.wait_for('"text": "water"')
    # A boolean's values complete; the handler runs as the person at the terminal.
    pane.send(f"set_todo_done {eid} tr", "Tab")
    pane.wait_for(f"ada> set_todo_done {eid} true")
    pane.send("Enter")
    pane.wait_for('"done": true}')
    # The consequential tool asks first, by its title.
    pane.send("clear_done", "Enter")
    pane.wait_for("about to run: Clear done todos: clear_done (ada/todos)")
    pane.send("y", "Enter")
    pane.wait_for("cleared 1 done todo")
    pane.send("man set_todo_done", "Enter")
    pane.wait_for("provider: a mutation in ada/todos's worker.py")
    pane.send("add_todo --text=more", "Enter")
    pane.wait_for("no command add_todo")
    pane.send("C-d")
    pane.wait_for("the console left with 0")


def test_help_lists_code_commands_under_their_provider(home: Path) -> None:
    assert pasture(home, "deploy", str(CART)).returncode == 0
    assert pasture(home, "deploy", str(TODOS)).returncode == 0
    lines = pasture(home, "console", input="help\n").stdout.splitlines()
    # Handlers are an app's own tools: each keeps its own line, as declared commands do.
    todos = lines.index("## ada/todos")
    assert [line.split("(")[0] for line in lines[todos + 1 : todos + 4]] == [
        "todos",
        "set_todo_done",
        "clear_done",
    ]
    cart = lines.index("## ada/cart")
    assert lines[cart + 1] == "cart:"
    assert [line.split("(")[0] for line in lines[cart + 2 : cart + 6]] == [
        "  cart_add",
        "  cart_remove",
        "  cart_clear",
        "  cart_status",
    ]
    assert lines[cart + 2].endswith("— Cart, an app at 127.0.0.1:8000/ada/cart/")
    # Declared commands keep their lines as they were.
    runs = lines.index("## ada/runs")
    assert lines[runs + 1].startswith("log_run(who, miles, at) — Log a run for the club")
    assert [line.split("(")[0] for line in lines[runs + 1 : runs + 4]] == [
        "log_run",
        "leaderboard",
        "since",
    ]
