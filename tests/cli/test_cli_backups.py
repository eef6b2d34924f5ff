"""`pasture backup` and `pasture restore` at the command line: what each says, and each
refusal whole, with nothing written — someone not the server's owner, a target that holds a
server already, a backup whose secrets come without their key, a file that is no backup."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

from helpers.command_line import PastureMain
from helpers.databases import fresh_database
from pasture.platform.service import Service

OWNER_ONLY = "only the server's owner backs up the whole server — ask them\n"


@pytest.fixture
def pasture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PastureMain:
    monkeypatch.setenv("PASTURE_USER", "ada")  # the machine's owner, here as at the command line
    return PastureMain(tmp_path / "home")


def a_server(home: Path, url: str = "") -> None:
    with Service(home, database_url=url or None) as service:
        owner = service.local_owner()
        service.deploy(owner, {"index.html": "<title>Runs</title>", "vocab.json": "{}"}, app="runs")
        service.secrets.set(owner, "ada/runs", "API_KEY", "s3cret")


def everything(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def test_a_backup_says_where_it_is_and_what_keeps_its_secrets(
    pasture: PastureMain, tmp_path: Path
) -> None:
    a_server(pasture.home)
    archive = tmp_path / "all.tar"
    done = pasture("backup", str(archive))
    assert done.returncode == 0, done.stderr
    key = pasture.home / "backup.key"
    assert done.stdout.startswith(f"backed up the server to {archive} (")
    assert done.stdout.endswith(
        f"1 app, 2 files, 1 secret sealed) — keep {key} safe apart from it: a restore needs "
        "it for the secrets\n"
    )
    assert os.stat(key).st_mode & 0o777 == 0o600
    with tarfile.open(archive) as tar:
        assert "manifest.json" in tar.getnames()
        held = b"".join(
            tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        )
    assert b"s3cret" not in held  # sealed, as the key is not in it either
    assert key.read_bytes().strip() not in held

    target = tmp_path / "restored"
    back = PastureMain(target)("restore", str(archive), "--key", str(key))
    assert back.returncode == 0, back.stderr
    assert back.stdout.startswith("restored the backup of ")
    assert back.stdout.endswith(f"into {target}: 1 app — serve it with pasture serve\n")
    with Service(target) as restored:
        assert restored.catalog.secrets("ada", "runs") == {"API_KEY": "s3cret"}


def test_only_the_servers_owner_backs_up(pasture: PastureMain, tmp_path: Path) -> None:
    a_server(pasture.home)
    with Service(pasture.home) as service:
        owner = service.local_owner()
        service.people.new_user(owner, "bob")
        token = service.new_token(owner, "bob's", user="bob")
    archive = tmp_path / "all.tar"
    refused = pasture("backup", str(archive), "--token", token)
    assert (refused.returncode, refused.stdout, refused.stderr) == (1, "", OWNER_ONLY)
    assert not archive.exists()  # nor a part of one and not list(tmp_path.glob(".all.tar*"))


def test_a_restore_into_a_data_directory_that_holds_a_server_is_refused(
    pasture: PastureMain, tmp_path: Path
) -> None:
    a_server(pasture.home)
    archive = tmp_path / "all.tar"
    assert pasture("backup", str(archive)).returncode == 0
    other = tmp_path / "other"
    a_server(other)
    before = everything(other)
    refused = PastureMain(other)("restore", str(archive), "--without-secrets")
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        1,
        "",
        f"{other} already holds a server's data (platform.db, apps) — restore into an empty "
        "data directory: give a new one with --home\n",
    )
    assert everything(other) == before


@pytest.mark.postgres
def test_a_restore_into_a_database_that_holds_a_server_is_refused(
    pasture: PastureMain, tmp_path: Path, pg_url: str
) -> None:
    a_server(pasture.home)
    archive = tmp_path / "all.tar"
    assert pasture("backup", str(archive)).returncode == 0
    url = fresh_database(pg_url)
    a_server(tmp_path / "pg-home", url)
    fresh = PastureMain(tmp_path / "fresh")
    refused = fresh("restore", str(archive), "--database", url, "--without-secrets")
    where = url.split("@", 1)[1].split("/", 1)[0]
    assert (refused.returncode, refused.stderr) == (
        1,
        f"that database on the PostgreSQL server at {where} already holds a pasture server's "
        "tables — restore into an empty database: make a new one (createdb) and give it "
        "with --database\n",
    )
    assert everything(tmp_path / "fresh") == []


def test_secrets_need_the_key_they_were_sealed_with(pasture: PastureMain, tmp_path: Path) -> None:
    a_server(pasture.home)
    archive = tmp_path / "all.tar"
    assert pasture("backup", str(archive)).returncode == 0
    target = PastureMain(tmp_path / "restored")
    no_key = target("restore", str(archive))
    assert (no_key.returncode, no_key.stderr) == (
        2,
        "this backup holds 1 secret of apps, sealed with the backup key of the server it was "
        "taken from — give that key with --key FILE (its data directory's backup.key), or "
        "restore all else with --without-secrets\n",
    )
    wrong = tmp_path / "wrong.key"
    wrong.write_bytes(b"A" * 43 + b"=\n")
    refused = target("restore", str(archive), "--key", str(wrong))
    assert (refused.returncode, refused.stderr) == (
        1,
        f"{wrong} is not the key this backup's secrets were sealed with — give the backup.key "
        "of the data directory it was taken from\n",
    )
    assert everything(tmp_path / "restored") == []
    left = target("restore", str(archive), "--without-secrets")
    assert left.returncode == 0, left.stderr
    assert "its 1 secret was left out" in left.stdout
    with Service(tmp_path / "restored") as restored:
        assert restored.catalog.secrets("ada", "runs") == {}


def test_a_file_that_is_no_backup_is_refused(pasture: PastureMain, tmp_path: Path) -> None:
    other = tmp_path / "notes.tar"
    with tarfile.open(other, "w") as tar:
        tar.add(__file__, arcname="notes.py")
    for path in (other, tmp_path / "missing.tar"):
        refused = pasture("restore", str(path))
        said = (
            f"{path} is not a pasture backup — give a file pasture backup made\n"
            if path.exists()
            else f"there is no file {path} — give the archive pasture backup made\n"
        )
        assert (refused.returncode, refused.stderr) == (2, said)
    assert not pasture.home.exists() or everything(pasture.home) == []
