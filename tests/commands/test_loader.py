"""Reading tools.json or tools.yml: one file, parsed, refused with its line when it is broken."""

from __future__ import annotations

import pytest

from helpers.club import EXAMPLES
from pasture.commands import load_commands
from pasture.errors import DeployRefused
from pasture.store.vocab import Vocabulary

YML = b"""\
log_run:
  description: Log a run for the club leaderboard
  input: {who: text, miles: number, at: time}
  apply:
    entity: {eid: $run}
    doc: {title: Run by $who}
    jog: {who: $who, miles: $miles, at: $at}
board:
  description: Runs since the club began
  input:
  query: .jog!&.created.at>=2026-09-01
"""


def refusal(files: dict[str, bytes], runs: Vocabulary) -> str:
    with pytest.raises(DeployRefused) as caught:
        load_commands(files, runs, "yourname/runs")
    return str(caught.value)


def test_the_run_club_ships_whole() -> None:
    folder = EXAMPLES / "runs"
    files = {p.name: p.read_bytes() for p in folder.iterdir()}
    import json

    vocabulary = Vocabulary.from_json(json.loads(files["vocab.json"]))
    found = load_commands(files, vocabulary, "yourname/runs")
    assert [c.signature() for c in found] == [
        "log_run(who, miles, at)",
        "leaderboard()",
        "since(since)",
    ]
    assert [c.view for c in found] == [None, "leaderboard.html", "leaderboard.html"]
    assert found[0].listing("yourname/runs", "Run club") == {
        "at": "yourname/runs",
        "name": "log_run",
        "title": "Run club",
        "description": "Log a run for the club leaderboard",
        "readOnly": False,
        "input": {
            "type": "object",
            "properties": {
                "who": {"type": "string"},
                "miles": {"type": "number"},
                "at": {
                    "type": "string",
                    "anyOf": [{"format": "date"}, {"format": "date-time"}],
                    "description": "a time: 2026-09-01 or 2026-09-01T10:00:00Z",
                },
            },
            "required": ["who", "miles", "at"],
        },
    }
    assert b"<title>Run club</title>" in files["index.html"]
    assert b"./api/client.js" in files["index.html"]
    assert (EXAMPLES / "recipes" / "index.html").read_text().count("<title>Recipes</title>") == 1


def test_tools_yml_reads_the_same(runs: Vocabulary) -> None:
    found = load_commands({"tools.yml": YML}, runs, "yourname/runs")
    assert [c.name for c in found] == ["log_run", "board", "add_jog", "find_jog"]
    # A date YAML would read as a date stays the text written.
    assert found[1].action == {"query": ".jog!&.created.at>=2026-09-01"}


def test_no_file_no_declared_commands(runs: Vocabulary) -> None:
    found = load_commands({"index.html": b""}, runs, "yourname/runs")
    assert [c.name for c in found] == ["add_jog", "find_jog"]


def test_both_files_at_once_is_refused(runs: Vocabulary) -> None:
    assert refusal({"tools.json": b"{}", "tools.yml": b""}, runs) == (
        "tools.yml: tools.json is here too — an app declares its commands in one file; delete one"
    )


def test_broken_json_names_its_line(runs: Vocabulary) -> None:
    files = {"tools.json": b'{ "log_run": {\n  "description": "Log",\n  "input": {},, }\n}'}
    assert refusal(files, runs) == (
        "tools.json: line 3, column 15 is not JSON: expecting property name enclosed in"
        " double quotes"
    )


def test_broken_yaml_names_its_line(runs: Vocabulary) -> None:
    files = {"tools.yml": b"log_run:\n  input: [who\n  query: x\n"}
    assert refusal(files, runs).startswith("tools.yml: line 3, column 8 is not YAML: ")


def test_a_key_written_twice_is_refused(runs: Vocabulary) -> None:
    files = {"tools.json": b'{"a": {}, "a": {}}'}
    assert refusal(files, runs) == "tools.json: a is written twice in one object — keep one of them"


@pytest.mark.parametrize("body", [b"[]", b'"log_run"', b"5"])
def test_the_file_is_an_object_of_commands(runs: Vocabulary, body: bytes) -> None:
    assert refusal({"tools.json": body}, runs) == (
        'tools.json: the file is an object of commands keyed by name, like {"log_run": {…}}'
    )


def test_the_file_is_utf8(runs: Vocabulary) -> None:
    assert refusal({"tools.json": b'{"\xff": 1}'}, runs) == (
        "tools.json: the file is not UTF-8 text — save it as UTF-8"
    )
