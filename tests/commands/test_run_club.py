"""End to end on a real SQLite store: the run club, and the recipe box's generated commands."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.club import EXAMPLES
from pasture.caller import Caller
from pasture.commands import load_commands
from pasture.commands.appstore import StoreAsCaller
from pasture.commands.model import Command, Context
from pasture.errors import Refused, UsageError
from pasture.result import Result
from pasture.store import SqliteStore, Vocabulary, open_store

ADA = Caller("a1a1a1a1a1a1a1a1", "Ada")
BOB = Caller("b0b0b0b0b0b0b0b0", "Bob")


def app(folder: Path, at: str, path: Path) -> tuple[SqliteStore, dict[str, Command]]:
    files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    doc = json.loads(files["vocab.json"])
    store = open_store(path)
    store.declare(doc)
    commands = load_commands(files, Vocabulary.from_json(doc), at)
    return store, {c.name: c for c in commands}


@pytest.fixture
def club(tmp_path: Path) -> Iterator[tuple[SqliteStore, dict[str, Command]]]:
    store, commands = app(EXAMPLES / "runs", "yourname/runs", tmp_path / "runs.db")
    yield store, commands
    store.close()


def run(
    commands: dict[str, Command], store: SqliteStore, name: str, caller: Caller, **args: Any
) -> Result:
    return commands[name].run(args, Context(caller, StoreAsCaller(store, caller), "yourname/runs"))


def test_logging_a_run_writes_it_as_the_caller(
    club: tuple[SqliteStore, dict[str, Command]],
) -> None:
    store, commands = club
    result = run(
        commands, store, "log_run", ADA, who="Ada", miles="5", at="2026-09-01", shoes="red"
    )
    eid = result.data["entities"][0]
    assert result.text == f"log_run: wrote 1 entity in yourname/runs: $run={eid}"
    assert result.data == {"entities": [eid], "aliases": {"$run": eid}}

    rows = store.query(f"id={eid}&.jog!&.doc?", ADA)
    assert rows[0]["jog"] == {"who": "Ada", "miles": 5, "at": "2026-09-01"}
    assert rows[0]["doc"]["title"] == "Run by Ada"


def test_the_leaderboard_names_who_logged_each_run(
    club: tuple[SqliteStore, dict[str, Command]],
) -> None:
    store, commands = club
    run(commands, store, "log_run", ADA, who="Ada", miles=5, at="2026-09-01")
    run(commands, store, "log_run", BOB, who="Bob", miles="3.5", at="2026-09-02T07:30:00Z")
    board = run(commands, store, "leaderboard", BOB)
    assert board.text == "leaderboard: 2 rows in yourname/runs"
    rows = board.data["rows"]
    assert [r["jog"]["miles"] for r in rows] == [5, 3.5]
    assert [r["created"]["by"] for r in rows] == [
        {"eid": ADA.eid, "name": "Ada"},
        {"eid": BOB.eid, "name": "Bob"},
    ]
    assert board.data == {"rows": store.query(".jog!&.created!", BOB)}
    assert commands["leaderboard"].read_only and commands["leaderboard"].view == "leaderboard.html"


def test_since_reads_runs_logged_since_a_date(club: tuple[SqliteStore, dict[str, Command]]) -> None:
    store, commands = club
    run(commands, store, "log_run", ADA, who="Ada", miles=5, at="2026-09-01")
    assert run(commands, store, "since", ADA, since="2000-01-01").text == (
        "since: 1 row in yourname/runs"
    )
    assert run(commands, store, "since", ADA, since="2999-01-01").data == {"rows": []}
    with pytest.raises(UsageError, match=r"^since is a time, like 2026-09-01"):
        run(commands, store, "since", ADA, since="last tuesday")


def test_a_refusal_writes_nothing(club: tuple[SqliteStore, dict[str, Command]]) -> None:
    store, commands = club
    with pytest.raises(UsageError) as caught:
        run(commands, store, "log_run", ADA, miles="many", at="2026-09-01")
    assert str(caught.value) == "who is required; miles is a number"
    assert store.query(".jog!", ADA) == []


def test_two_entities_in_one_call_and_a_patch_by_eid(tmp_path: Path) -> None:
    doc = {
        "$defs": {"jog": {"properties": {"who": {"type": "string"}, "miles": {"type": "number"}}}}
    }
    tools = {
        "log_with_note": {
            "description": "Log a run and a note about how it felt",
            "input": {"who": "text", "miles": "number", "note": "text"},
            "apply": [
                {"entity": {"eid": "$run"}, "jog": {"who": "$who", "miles": "$miles"}},
                {
                    "entity": {"eid": "$said"},
                    "doc": {"body": "$note"},
                    "comment": {"target": "$run"},
                },
            ],
        },
        "fix_miles": {
            "description": "Correct the miles of a run",
            "input": {"run": "text", "miles": "number"},
            "apply": {"entity": {"eid": "$run"}, "jog": {"miles": "$miles"}},
        },
        "drop_run": {
            "description": "Delete a run somebody logged by mistake",
            "input": {"run": "text"},
            "apply": {"entity": {"eid": "$run"}, "tombstone": {}},
        },
    }
    files = {"index.html": b"", "tools.json": json.dumps(tools).encode()}
    with open_store(tmp_path / "s.db") as store:
        store.declare(doc)
        commands = {c.name: c for c in load_commands(files, Vocabulary.from_json(doc), "ada/runs")}
        ctx = Context(ADA, StoreAsCaller(store, ADA), "ada/runs")
        wrote = commands["log_with_note"].run({"who": "Ada", "miles": 5, "note": "easy"}, ctx)
        run_eid, said = wrote.data["aliases"]["$run"], wrote.data["aliases"]["$said"]
        assert wrote.text == (
            f"log_with_note: wrote 2 entities in ada/runs: $run={run_eid}, $said={said}"
        )
        note = store.query(f"id={said}&.comment!&.doc!", ADA)[0]
        assert note["comment"]["target"]["eid"] == run_eid

        patched = commands["fix_miles"].run({"run": run_eid, "miles": "6"}, ctx)
        assert patched.text == f"fix_miles: wrote 1 entity in ada/runs: {run_eid}"
        assert store.query(f"id={run_eid}&.jog!", ADA)[0]["jog"] == {"who": "Ada", "miles": 6}

        commands["drop_run"].run({"run": run_eid}, ctx)
        assert store.query(".jog!", ADA) == []


def test_the_recipe_box_through_its_generated_commands(tmp_path: Path) -> None:
    store, commands = app(EXAMPLES / "recipes", "yourname/recipes", tmp_path / "r.db")
    with store:
        ctx = Context(ADA, StoreAsCaller(store, ADA), "yourname/recipes")
        soup = commands["add_recipe"].run(
            {
                "title": "Green curry",
                "body": "coconut, basil",
                "alias": "curry",
                "serves": "4",
                "cuisine": "thai",
            },
            ctx,
        )
        assert soup.text.startswith("add_recipe: wrote 1 entity in yourname/recipes: $recipe=")
        commands["add_recipe"].run({"title": "Toast"}, ctx)

        every = commands["find_recipe"].run({}, ctx)
        assert every.text == "find_recipe: 2 rows in yourname/recipes"
        toast = every.data["rows"][1]
        assert toast["doc"]["title"] == "Toast" and toast["recipe"] == {
            "serves": None,
            "cuisine": None,
        }

        found = commands["find_recipe"].run({"words": "coconut", "serves": "4"}, ctx)
        assert [r["doc"]["title"] for r in found.data["rows"]] == ["Green curry"]
        assert found.data["rows"][0]["alias"] == {"name": "curry"}
        assert commands["find_recipe"].run({"cuisine": "lao"}, ctx).text == (
            "find_recipe: 0 rows in yourname/recipes"
        )
        assert len(commands["find_recipe"].run({"limit": 1}, ctx).data["rows"]) == 1


def test_a_refusal_from_the_store_comes_back_as_its_sentence(tmp_path: Path) -> None:
    store, _ = app(EXAMPLES / "recipes", "yourname/recipes", tmp_path / "r.db")
    tools = {
        "fix": {
            "description": "Retitle a recipe",
            "input": {"recipe": "text", "title": "text"},
            "apply": {"entity": {"eid": "$recipe"}, "doc": {"title": "$title"}},
        }
    }
    doc = json.loads((EXAMPLES / "recipes" / "vocab.json").read_text())
    fix = load_commands(
        {"tools.json": json.dumps(tools).encode()}, Vocabulary.from_json(doc), "a/b"
    )[0]
    with store, pytest.raises(Refused) as caught:
        fix.run(
            {"recipe": "nobody-by-that-name", "title": "x"},
            Context(ADA, StoreAsCaller(store, ADA), "a/b"),
        )
    assert str(caught.value) == (
        "no entity nobody-by-that-name in this app — it is not an eid or an alias here;"
        " query for it and use its eid"
    )


arguments = st.dictionaries(
    st.sampled_from(["who", "miles", "at", "extra"]),
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["5", "2026-09-01", "2026-09-01T10:00:00Z", "true", " 7 "])
    | st.lists(st.integers(), max_size=2),
    max_size=4,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(args=arguments)
def test_random_arguments_are_written_whole_or_not_at_all(
    club: tuple[SqliteStore, dict[str, Command]], args: dict[str, Any]
) -> None:
    store, commands = club
    before = store.query(".jog!&.doc?", ADA)
    try:
        result = commands["log_run"].run(
            args, Context(ADA, StoreAsCaller(store, ADA), "yourname/runs")
        )
    except Refused:
        assert store.query(".jog!&.doc?", ADA) == before
        return
    eid = result.data["aliases"]["$run"]
    row = store.query(f"id={eid}&.jog!", ADA)[0]["jog"]
    assert row["miles"] == float(str(args["miles"]).strip())
    assert isinstance(row["who"], str) and isinstance(row["at"], str)
    assert len(store.query(".jog!", ADA)) == len(before) + 1


def test_an_argument_where_an_entity_goes_never_mints_a_new_one(tmp_path: Path) -> None:
    # drop_run's $run and note_on's $target stand where an entity goes: bound by
    # an argument, they name an entity that is there, so "$x" is refused, not minted.
    tools = {
        "drop_run": {
            "description": "Delete a run somebody logged by mistake",
            "input": {"run": "text"},
            "apply": {"entity": {"eid": "$run"}, "tombstone": {}},
        },
        "note_on": {
            "description": "Say something about a run",
            "input": {"target": "text", "note": "text"},
            "apply": {
                "entity": {"eid": "$said"},
                "doc": {"body": "$note"},
                "comment": {"target": "$target"},
            },
        },
    }
    folder = tmp_path / "runs"
    folder.mkdir()
    for page in (EXAMPLES / "runs").iterdir():
        (folder / page.name).write_bytes(page.read_bytes())
    club_tools = json.loads((EXAMPLES / "runs" / "tools.json").read_text())
    (folder / "tools.json").write_text(json.dumps({**club_tools, **tools}))
    store, commands = app(folder, "yourname/runs", tmp_path / "runs.db")
    try:
        with pytest.raises(UsageError) as refused:
            run(commands, store, "drop_run", ADA, run="$x")
        assert str(refused.value) == (
            "run names an entity that is there already: its eid or its alias name, not $x"
        )
        with pytest.raises(UsageError):
            run(commands, store, "note_on", ADA, target="$run", note="fast")
        assert store.query(".count!", ADA) == {"count": 0}

        logged = run(commands, store, "log_run", ADA, who="Ada", miles=5, at="2026-09-01")
        eid = logged.data["entities"][0]
        run(commands, store, "note_on", ADA, target=eid, note="fast")
        assert store.query(".comments>=1&.jog!", ADA)[0]["entity"] == {"eid": eid}
    finally:
        store.close()


def test_each_value_of_a_call_is_converted_once(
    club: tuple[SqliteStore, dict[str, Command]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """log_run converts its three arguments (its refusals name them) and the store
    converts only the title they were spliced into: no value is converted twice."""
    import pasture.commands.declared as declared
    import pasture.store.bundles as bundles
    from pasture import values

    converted: list[tuple[str, str]] = []

    def counting(where: str) -> Any:
        def convert(name: str, kind: values.ValueType, value: Any) -> Any:
            converted.append((where, name))
            return values.convert(name, kind, value)

        return convert

    monkeypatch.setattr(declared, "convert", counting("command"))
    monkeypatch.setattr(bundles, "convert", counting("store"))
    store, commands = club
    run(commands, store, "log_run", ADA, who="Ada", miles="5", at="2026-09-01T12:00:00+02:00")
    assert sorted(converted) == [
        ("command", "at"),
        ("command", "miles"),
        ("command", "who"),
        ("store", "doc.title"),
    ]
    row = store.query(".jog!&.doc?", ADA)[0]
    assert row["jog"] == {"who": "Ada", "miles": 5, "at": "2026-09-01T10:00:00Z"}
    assert row["doc"]["title"] == "Run by Ada"
