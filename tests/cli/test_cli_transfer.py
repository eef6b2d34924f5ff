"""`pasture app export APP FILE` and `pasture app import FILE`: an app moved through one file
between data directories, from SQLite to PostgreSQL and back, and the refusals said as one
sentence on stderr with nothing written."""

from __future__ import annotations

import io
import json
import shlex
import sys
import tarfile
from pathlib import Path

import pytest
from test_console import Pane

from helpers.club import RUNS
from helpers.command_line import PastureMain
from helpers.databases import fresh_database


def club(pasture: PastureMain, *database: str) -> None:
    assert pasture(*database, "deploy", str(RUNS)).returncode == 0
    for who, miles in (("Ada", "5"), ("Grace", "3")):
        done = pasture(*database, "command", "log_run", who, miles, "2026-09-01")
        assert done.returncode == 0, done.stderr


def rows(pasture: PastureMain, app: str, *database: str) -> list[str]:
    done = pasture(*database, "query", app, ".jog!&.created!&.updated!", "--json")
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_an_app_goes_to_a_file_and_back_under_another_name(tmp_path: Path) -> None:
    pasture = PastureMain(tmp_path / "home")
    club(pasture)
    file = tmp_path / "runs.tar.gz"
    done = pasture("app", "export", "runs", str(file))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"exported ada/runs v1 to {file}: 1 version, 3 entities\n"
    assert done.stderr == ""  # no terminal: no bar

    taken = pasture("app", "import", str(file))
    assert (taken.returncode, taken.stdout) == (1, "")
    assert taken.stderr == (
        "there is an app ada/runs already — import it under another name with --as NAME, "
        "or into another space with --space SPACE\n"
    )
    again = pasture("app", "export", "runs", str(file))
    assert again.returncode == 2
    assert "is there already" in again.stderr

    done = pasture("app", "import", str(file), "--as", "tuesday", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["at"] == "ada/tuesday"
    assert rows(pasture, "tuesday") == rows(pasture, "runs")


def test_sqlite_to_postgresql_and_back(tmp_path: Path, pg_url: str) -> None:
    database = ["--database", fresh_database(pg_url)]
    lite, pg = PastureMain(tmp_path / "lite"), PastureMain(tmp_path / "pg")
    club(lite)
    there = tmp_path / "there.tar.gz"
    assert lite("app", "export", "runs", str(there)).returncode == 0
    done = pg(*database, "app", "import", str(there))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("imported ada/runs v1: ")
    assert rows(pg, "runs", *database) == rows(lite, "runs")

    # a run logged there, and back to a new SQLite home
    assert pg(*database, "command", "log_run", "Bob", "2", "2026-09-02").returncode == 0
    back = tmp_path / "back.tar.gz"
    assert pg(*database, "app", "export", "runs", str(back)).returncode == 0
    home = PastureMain(tmp_path / "again")
    assert home("app", "import", str(back)).returncode == 0
    assert rows(home, "runs") == rows(pg, "runs", *database)
    assert len(rows(home, "runs")) == 3


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"hello", "it is not an app export (a tar archive with manifest.json)"),
        (None, "it is cut short or damaged: it is no whole archive"),
    ],
    ids=["not an archive", "cut short"],
)
def test_a_damaged_file_is_one_sentence_and_no_app(
    tmp_path: Path, body: bytes | None, said: str
) -> None:
    pasture = PastureMain(tmp_path / "home")
    club(pasture)
    file = tmp_path / "runs.tar.gz"
    assert pasture("app", "export", "runs", str(file)).returncode == 0
    whole = file.read_bytes()
    file.write_bytes(body if body is not None else whole[: len(whole) // 2])
    done = pasture("app", "import", str(file), "--as", "copy")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"runs.tar.gz cannot be imported: {said}; export the app again with pasture app export\n"
    )
    listed = json.loads(pasture("app", "list", "--json").stdout)["apps"]
    assert [a["at"] for a in listed] == ["ada/runs"]
    assert not (tmp_path / "home" / "apps" / "ada" / "copy").exists()


def test_the_verbs_say_what_they_take(tmp_path: Path) -> None:
    from helpers.command_line import pasture_main

    home = tmp_path / "home"
    export = pasture_main(home, "app", "export", "--help")
    assert export.returncode == 0 and "APP FILE" in export.stdout
    imports = pasture_main(home, "app", "import", "--help")
    assert "--as SLUG" in imports.stdout and "--space SPACE" in imports.stdout


def big_export(pasture: PastureMain, tmp_path: Path, entities: int) -> Path:
    """The run club's export made big: its one run copied `entities` times over (new eids),
    as an uncompressed tar, which an import reads too."""
    small = tmp_path / "small.tar.gz"
    assert pasture("app", "export", "runs", str(small)).returncode == 0
    big = tmp_path / "big.tar"
    with tarfile.open(small) as tar, tarfile.open(big, "w") as out:
        for member in tar.getmembers():
            body = tar.extractfile(member).read()  # type: ignore[union-attr]
            if member.name == "manifest.json":
                manifest = json.loads(body)
                manifest["store"]["entities"] = entities
                body = json.dumps(manifest).encode()
            elif member.name == "data.jsonl":
                run = json.loads(body.decode().splitlines()[-1])
                lines = (
                    json.dumps({**run, "eid": f"{i:016x}"}, separators=(",", ":")) + "\n"
                    for i in range(entities)
                )
                body = "".join(lines).encode()
            member.size = len(body)
            out.addfile(member, io.BytesIO(body))
    return big


@pytest.mark.processes
@pytest.mark.terminal
def test_a_big_import_draws_its_progress_and_ctrl_c_stops_it_keeping_nothing(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    pasture = PastureMain(home)
    club(pasture)
    big = big_export(pasture, tmp_path, 200_000)
    words = ["app", "import", str(big), "--as", "big"]
    command = shlex.join(
        ["env", f"PASTURE_HOME={home}", "PASTURE_USER=ada", sys.executable, "-m", "pasture", *words]
    )
    pane = Pane(tmp_path / "tmux.sock", command + '; echo "it left with $?"; sleep 30')
    try:
        screen = pane.wait_for(" of 200,000 entities")  # the bar, and how far it has come
        assert "big" in screen and "━" in screen, screen  # rich's bar
        pane.send("C-c")
        screen = pane.wait_for("it left with 130")
        assert "was stopped — nothing of it was kept" in screen
    finally:
        pane.close()
    listed = json.loads(pasture("app", "list", "--json").stdout)["apps"]
    assert [a["at"] for a in listed] == ["ada/runs"]
