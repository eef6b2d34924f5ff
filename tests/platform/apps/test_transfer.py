"""`Service.export_app` and `import_app` (`pasture.platform.apps.transfer`): an app moved to
one file and back — between servers, and between SQLite and PostgreSQL — with every version
kept, its current one, and its data equal row by row; refusals (not an owner, a name taken
or held by the trash, a file that is no export or is damaged) say a sentence and write
nothing."""

from __future__ import annotations

import gzip
import io
import itertools
import json
import tarfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.club import RUNS
from helpers.databases import fresh_database, sqlite_only
from pasture.caller import Caller
from pasture.errors import (
    Cancelled,
    Conflict,
    DeployRefused,
    Forbidden,
    NotFound,
    Refused,
    UsageError,
)
from pasture.long_calls import LongCall, Progress
from pasture.platform.apps import versions
from pasture.platform.service import Service
from pasture.store.dump import dump

DIRECTIONS = [("sqlite", "postgres"), ("postgres", "sqlite")]


@pytest.fixture
def services(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[Callable[[str], Service]]:
    """A Service of its own each call: on SQLite files in a home of its own, or on a fresh
    PostgreSQL database; all of them closed at the end."""
    monkeypatch.setenv("PASTURE_USER", "ada")
    made: list[Service] = []

    def make(database: str) -> Service:
        url = fresh_database(request.getfixturevalue("pg_url")) if database == "postgres" else ""
        service = Service(tmp_path / f"home{len(made)}", database_url=url)
        made.append(service)
        return service

    yield make
    for service in made:
        service.close()


def club(service: Service, tmp_path: Path) -> Caller:
    """The run club deployed twice (v2 titled otherwise), with runs by Ada and a coach's
    notes, a secret, and an edge; the machine's owner."""
    ada = service.local_owner()
    service.deploy(ada, RUNS)
    service.deploy(ada, RUNS, title="Tuesday runs", access="private")
    for who, miles in (("Ada", 5), ("Grace", 3.5), ("Ada", 10)):
        service.run_command(ada, "log_run", {"who": who, "miles": miles, "at": "2026-09-01"})
    service.apply(
        ada,
        "runs",
        [
            {"entity": {"eid": "$hill"}, "doc": {"title": "hill repeats", "body": "6 x 400m"}},
            {"alias": {"name": "coach"}, "edges": [{"type": "wrote", "child": "$hill"}]},
        ],
    )
    service.secrets.set(ada, "runs", "STRAVA_KEY", "s3cret")
    return ada


def lines_of(service: Service, at: str) -> list[str]:
    space, _, slug = at.partition("/")
    found: list[str] = []
    dump(service.catalog.store(space, slug), found.append)  # type: ignore[arg-type]
    return found


def versions_of(service: Service, at: str) -> list[tuple[Any, ...]]:
    space, _, slug = at.partition("/")
    rows = service.db.all(
        "SELECT version, title, deployed_at, code, bytes FROM versions "
        "WHERE space = ? AND slug = ? ORDER BY version",
        space,
        slug,
    )
    return [tuple(r[k] for k in ("version", "title", "deployed_at", "code", "bytes")) for r in rows]


def files_of(service: Service, at: str, version: int) -> dict[str, bytes]:
    space, _, slug = at.partition("/")
    return versions.read_version(service.catalog.version_dir(space, slug, version))


@pytest.mark.parametrize(("source", "target"), DIRECTIONS, ids=["-".join(d) for d in DIRECTIONS])
def test_an_app_moves_to_another_database_with_its_versions_and_data_row_by_row(
    services: Callable[[str], Service], tmp_path: Path, source: str, target: str
) -> None:
    src = services(source)
    ada = club(src, tmp_path)
    file = tmp_path / "runs.tar.gz"
    exported = src.export_app(ada, "runs", file)
    assert exported.text == (
        f"exported ada/runs v2 to {file}: 2 versions, 6 entities\n"
        "its secrets are not in the file, only their names (STRAVA_KEY): set them again "
        "where it is imported, with pasture secret set"
    )

    dst = services(target)
    owner = dst.local_owner()
    imported = dst.import_app(owner, file)
    assert imported.text == (
        "imported ada/runs v2: http://127.0.0.1:8000/ada/runs/\n2 versions, 6 entities\n"
        "its secrets were not exported (STRAVA_KEY): set each with "
        "pasture secret set ada/runs NAME"
    )
    [app] = dst.gate.list_apps(owner)
    assert (app.at, app.version, app.title, app.access) == (
        "ada/runs",
        2,
        "Tuesday runs",
        "private",
    )
    assert versions_of(dst, "ada/runs") == versions_of(src, "ada/runs")
    for version in (1, 2):
        assert files_of(dst, "ada/runs", version) == files_of(src, "ada/runs", version)
    # row by row: every eid, stamp, kind, name, component and edge as it was
    assert lines_of(dst, "ada/runs") == lines_of(src, "ada/runs")
    runs = ".jog!&.created!&.updated!"
    assert dst.graph.query(owner, "runs", runs).data == src.graph.query(ada, "runs", runs).data
    assert dst.graph.query(owner, "runs", "hill").data["rows"][0]["doc"]["body"] == "6 x 400m"
    assert dst.secrets.list(owner, "runs").data.get("secrets") in ([], None)

    # and it lives on there: a command, a rollback to the version it had before
    dst.run_command(owner, "log_run", {"who": "Bob", "miles": 2, "at": "2026-09-02"})
    rows = dst.graph.query(owner, "runs", ".jog!").data["rows"]
    assert [r["jog"]["who"] for r in rows] == ["Ada", "Grace", "Ada", "Bob"]
    assert dst.rollback(owner, "runs", 1).data["version"] == 1
    assert dst.gate.app_info(owner, "runs").title == "Run club"
    records = dst.audit(owner, "runs").data["records"]
    assert (records[0]["action"], records[0]["args"]) == ("import", "runs.tar.gz")


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> Iterator[Service]:
    monkeypatch.setenv("PASTURE_USER", "ada")
    svc = Service(tmp_path / "home")
    yield svc
    svc.close()


@pytest.fixture
def exported(service: Service, tmp_path: Path) -> Path:
    club(service, tmp_path)
    file = tmp_path / "runs.tar.gz"
    service.export_app(service.local_owner(), "runs", file)
    return file


def nothing_more(service: Service, slug: str) -> None:
    """No trace of an app `slug` in ada's space: no row, no version, no folder."""
    assert service.db.one("SELECT 1 FROM apps WHERE space = 'ada' AND slug = ?", slug) is None
    assert service.db.one("SELECT 1 FROM versions WHERE space = 'ada' AND slug = ?", slug) is None
    assert not service.catalog.app_dir("ada", slug).exists()


def test_an_import_under_another_name_is_the_same_app(service: Service, exported: Path) -> None:
    ada = service.local_owner()
    with pytest.raises(Conflict) as taken:
        service.import_app(ada, exported)
    assert str(taken.value) == (
        "there is an app ada/runs already — import it under another name with --as NAME, or "
        "into another space with --space SPACE"
    )
    done = service.import_app(ada, exported, slug="runs-copy")
    assert done.data["at"] == "ada/runs-copy"
    assert lines_of(service, "ada/runs-copy") == lines_of(service, "ada/runs")
    with pytest.raises(UsageError):
        service.import_app(ada, exported, slug="Not A Name!")


def test_only_owners_export_and_import(service: Service, exported: Path, tmp_path: Path) -> None:
    ada = service.local_owner()
    bob = service.people.new_user(ada, "bob")
    service.add_member(ada, "ada", "bob", "editor")
    with pytest.raises(Forbidden) as refused:
        service.export_app(bob, "ada/runs", tmp_path / "bob.tar.gz")
    assert str(refused.value) == (
        "only the owners of ada (ada) export its apps — you are editor of ada; ask one of "
        "them to export ada/runs"
    )
    assert not (tmp_path / "bob.tar.gz").exists()
    with pytest.raises(Forbidden) as refused:
        service.import_app(bob, exported, space="ada", slug="theirs")
    assert str(refused.value) == (
        "you are editor of ada; only its owners (ada) import apps into it — import it into a "
        "space of your own"
    )
    nothing_more(service, "theirs")
    cy = service.people.new_user(ada, "cy")
    with pytest.raises(NotFound) as refused:
        service.export_app(cy, "ada/runs", tmp_path / "cy.tar.gz")
    assert (
        str(refused.value)
        == "no app ada/runs — you have no apps yet; deploy one with pasture deploy"
    )
    # into their own space, bob may
    assert service.import_app(bob, exported).data["at"] == "bob/runs"


def test_an_export_is_not_written_over_a_file_there(service: Service, exported: Path) -> None:
    before = exported.read_bytes()
    with pytest.raises(UsageError) as refused:
        service.export_app(service.local_owner(), "runs", exported)
    assert str(refused.value) == (
        f"{exported} is there already — name a file that is not there yet, or remove it"
    )
    assert exported.read_bytes() == before


def test_a_name_the_trash_holds_is_refused(service: Service, exported: Path) -> None:
    ada = service.local_owner()
    service.remove_app(ada, "runs")
    with pytest.raises(Conflict) as refused:
        service.import_app(ada, exported)
    today = datetime.now(UTC).date()
    assert str(refused.value) == (
        f"ada/runs is in the trash (removed by ada on {today}) — pasture trash restore "
        f"ada/runs brings it back; otherwise its name is free again on "
        f"{today + timedelta(days=30)}"
    )
    assert service.gate.list_apps(ada) == []


def rewritten(file: Path, change: Callable[[str, bytes], bytes | None], to: Path) -> Path:
    """The archive again, each member's body as `change(name, body)` makes it (None: left
    out)."""
    with tarfile.open(file) as tar, tarfile.open(to, "w:gz") as out:
        for member in tar.getmembers():
            body = tar.extractfile(member)
            assert body is not None
            changed = change(member.name, body.read())
            if changed is None:
                continue
            member.size = len(changed)
            out.addfile(member, io.BytesIO(changed))
    return to


def manifest_with(**app: Any) -> Callable[[str, bytes], bytes | None]:
    def change(name: str, body: bytes) -> bytes | None:
        if name != "manifest.json":
            return body
        manifest = json.loads(body)
        manifest["app"].update(app)
        return json.dumps(manifest).encode()

    return change


def test_a_file_that_is_no_export_or_is_damaged_says_every_problem_and_writes_nothing(
    service: Service, exported: Path, tmp_path: Path
) -> None:
    ada = service.local_owner()
    again = "export the app again with pasture app export"

    def refused(file: Path, slug: str = "copy") -> str:
        with pytest.raises(DeployRefused) as said:
            service.import_app(ada, file, slug=slug)
        nothing_more(service, slug)
        return str(said.value)

    text = tmp_path / "notes.txt"
    text.write_text("not an archive")
    assert refused(text) == (
        "notes.txt cannot be imported: it is not an app export (a tar archive with "
        f"manifest.json); {again}"
    )
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(exported.read_bytes()[: exported.stat().st_size // 2])
    assert refused(cut) == (
        f"cut.tar.gz cannot be imported: it is cut short or damaged: it is no whole archive; "
        f"{again}"
    )
    wrong = rewritten(exported, manifest_with(access="secret", version=7), tmp_path / "w.tar.gz")
    assert refused(wrong) == (
        "w.tar.gz cannot be imported: the app's access is not private, public or open; "
        f"its current version, 7, is not one it lists; {again}"
    )

    def damaged(name: str, body: bytes) -> bytes | None:
        if name == "versions/v1/index.html":
            return None  # a file gone
        if name == "data.jsonl":
            lines = body.decode().splitlines(keepends=True)
            lines[1] = '{"eid": 5}\n'
            return "".join(lines).encode()
        return body

    broken = rewritten(exported, damaged, tmp_path / "broken.tar.gz")
    assert refused(broken) == (
        "broken.tar.gz cannot be imported: v1 lacks index.html; data line 2: its eid is not "
        f"text; {again}"
    )
    none = rewritten(exported, lambda n, b: None if n == "manifest.json" else b, tmp_path / "n")
    assert refused(none) == (
        f"n cannot be imported: it is not an app export: it holds no manifest.json; {again}"
    )
    with pytest.raises(NotFound) as gone:
        service.import_app(ada, tmp_path / "nowhere.tar.gz")
    assert str(gone.value) == (
        f"no file {tmp_path / 'nowhere.tar.gz'} — name the file pasture app export wrote"
    )
    assert [a.at for a in service.gate.list_apps(ada)] == ["ada/runs"]


def test_an_export_reads_as_a_person_would(service: Service, exported: Path) -> None:
    with tarfile.open(exported) as tar:
        names = tar.getnames()
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
        data = tar.extractfile("data.jsonl").read().decode().splitlines()  # type: ignore[union-attr]
    assert names[0] == "manifest.json" and names[-1] == "data.jsonl"
    assert "versions/v1/index.html" in names and "versions/v2/tools.json" in names
    assert manifest["format"] == "pasture app export" and manifest["format_version"] == 1
    assert manifest["app"] == {
        "space": "ada",
        "slug": "runs",
        "title": "Tuesday runs",
        "access": "private",
        "version": 2,
    }
    assert [v["version"] for v in manifest["versions"]] == [1, 2]
    assert manifest["secrets"] == ["STRAVA_KEY"]
    assert "s3cret" not in exported.read_bytes().decode("latin-1")
    assert manifest["store"]["entities"] == len(data) == 6
    runs = [json.loads(line) for line in data if '"jog"' in line]
    assert [r["components"]["jog"]["miles"] for r in runs] == [5, 3.5, 10]
    assert {r["created"]["by"] for r in runs} == {service.local_owner().eid}


def test_an_import_that_fails_after_its_data_is_written_leaves_no_half_app(
    service: Service, exported: Path
) -> None:
    """A version's folder cannot be made (a file is where it goes): the data written is taken
    away again, and the same import goes once the way is clear."""
    ada = service.local_owner()
    in_the_way = service.catalog.app_dir("ada", "copy") / "v2"
    in_the_way.parent.mkdir(parents=True)
    in_the_way.write_text("not a folder")
    with pytest.raises(OSError):  # what the disk said: the version's folder cannot be put there
        service.import_app(ada, exported, slug="copy")
    assert service.db.one("SELECT 1 FROM apps WHERE slug = 'copy'") is None
    assert service.db.one("SELECT 1 FROM versions WHERE slug = 'copy'") is None
    assert lines_of(service, "ada/copy") == []
    assert not (in_the_way.parent / "v1").exists()
    in_the_way.unlink()
    assert service.import_app(ada, exported, slug="copy").data["entities"] == 6
    assert lines_of(service, "ada/copy") == lines_of(service, "ada/runs")


def test_a_version_past_an_app_s_bounds_is_not_read(
    service: Service, exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(versions, "MAX_BYTES", 1000)  # a smaller bound, so a test file is past it

    def bigger(name: str, body: bytes) -> bytes | None:
        return body + b" " * 2000 if name == "versions/v1/index.html" else body

    big = rewritten(exported, bigger, tmp_path / "big.tar.gz")
    with pytest.raises(DeployRefused) as refused:
        service.import_app(service.local_owner(), big, slug="big")
    assert "v1 is more than an app may be: at most 1,000 files and 0 MB" in str(refused.value)
    nothing_more(service, "big")


_SLUGS = itertools.count()


@sqlite_only("how a file is read is the same on both: the import checks it before any database")
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_file_damaged_anywhere_is_refused_whole_or_imported_whole(
    service: Service, exported: Path, tmp_path: Path, data: st.DataObject
) -> None:
    """Bytes changed or cut anywhere in the archive (unpacked, so no checksum of gzip's
    catches it first): the import is refused with a sentence and leaves nothing, or it
    imports the app whole."""
    plain = gzip.decompress(exported.read_bytes())
    body = bytearray(plain)
    if data.draw(st.booleans(), label="cut"):
        body = body[: data.draw(st.integers(0, len(body) - 1), label="at")]
    else:
        for _ in range(data.draw(st.integers(1, 4), label="changes")):
            at = data.draw(st.integers(0, len(body) - 1), label="at")
            body[at] = data.draw(st.integers(0, 255), label="byte")
    file = tmp_path / "damaged.tar"
    file.write_bytes(bytes(body))
    slug = f"copy{next(_SLUGS)}"  # a name no example took before
    ada = service.local_owner()
    try:
        done = service.import_app(ada, file, slug=slug)
    except Refused as e:
        assert e.sentence.startswith("damaged.tar cannot be imported: ") or isinstance(
            e, Conflict | UsageError
        ), e.sentence
        nothing_more(service, slug)
        return
    at = done.data["at"]
    assert service.gate.app_info(ada, at).version == done.data["version"]
    assert len(lines_of(service, at)) == done.data["entities"]


def test_how_far_each_has_come_is_told_and_a_stop_keeps_nothing(
    service: Service, tmp_path: Path
) -> None:
    ada = club(service, tmp_path)
    heard: list[Progress] = []
    watch = LongCall(heard.append, most_per_second=1e9)
    file = tmp_path / "runs.tar.gz"
    service.export_app(ada, "runs", file, long_call=watch)
    assert [p.as_data() for p in heard] == [
        {"done": 6, "total": 6, "message": "exporting ada/runs: 6 of 6 entities"}
    ]
    heard.clear()
    service.import_app(
        ada, file, slug="copy", long_call=LongCall(heard.append, most_per_second=1e9)
    )
    assert [(p.done, p.total, p.message) for p in heard] == [
        (6, 12, "checking runs.tar.gz: 6 of 6 entities"),
        (12, 12, "importing ada/copy: 6 of 6 entities"),
    ]
    stopped = LongCall()
    stopped.cancel()
    with pytest.raises(Cancelled) as said:
        service.import_app(ada, file, slug="stopped", long_call=stopped)
    assert str(said.value) == "checking runs.tar.gz was stopped — nothing of it was kept"
    nothing_more(service, "stopped")
    with pytest.raises(Cancelled):
        service.export_app(ada, "runs", tmp_path / "stopped.tar.gz", long_call=stopped)
    assert list(tmp_path.glob("*stopped*")) == []


def test_an_imported_app_s_history_starts_at_its_import(service: Service, exported: Path) -> None:
    """Its journal is fresh: a call made after the import is undone exactly, and what the
    import brought stays."""
    ada = service.local_owner()
    service.import_app(ada, exported, slug="copy")
    brought = lines_of(service, "ada/copy")
    service.run_command(ada, "log_run", {"who": "Bob", "miles": 2, "at": "2026-09-02"}, "copy")
    [record] = [r for r in service.audit(ada, "copy").data["records"] if r["command"] == "log_run"]
    service.undo(ada, record["call"], "copy")
    after = lines_of(service, "ada/copy")
    bob = [line for line in after if '"Bob"' in line]
    assert bob == [] and [line for line in after if '"jog"' in line] == [
        line for line in brought if '"jog"' in line
    ]
