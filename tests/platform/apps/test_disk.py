"""An app keeps its newest versions and no more, and a space's apps keep at most its quota.

Deploying needs no trust and a version may be 64 MB: each deploy lets go of the versions
past those kept (rollback reaches the rest), and a deploy that would take a space past
its quota is refused before anything is written, saying what uses the room.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.command_line import PastureMain
from helpers.platform_db import kept
from pasture.caller import Caller
from pasture.errors import DeployRefused, NotFound, UsageError
from pasture.platform.service import Service

KB = 1024


def _files(title: str, size: int = 0) -> dict[str, bytes]:
    return {"index.html": f"<title>{title}</title>".encode(), "blob.bin": b"x" * size}


def _on_disk(service: Service, space: str, slug: str) -> list[str]:
    folder = service.catalog.app_dir(space, slug)
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("v"))


@pytest.fixture
def keeping(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> Service:
    monkeypatch.setenv("PASTURE_USER", "ada")
    service = Service(tmp_path / "home", versions_kept=3, space_quota=1)
    yield service
    service.close()


def test_an_app_keeps_its_newest_versions_and_rollback_reaches_those(keeping: Service) -> None:
    ada = keeping.local_owner()
    for n in range(1, 6):
        assert keeping.deploy(ada, _files(f"Notes {n}"), app="notes").data["version"] == n
    assert _on_disk(keeping, "ada", "notes") == ["v3", "v4", "v5"]
    versions = kept(keeping, "SELECT version FROM versions WHERE slug = 'notes' ORDER BY version")
    assert [v for (v,) in versions] == [3, 4, 5]
    if keeping.database_url:  # PostgreSQL keeps the files too: only the kept versions'
        held = kept(keeping, "SELECT DISTINCT version FROM files WHERE slug = 'notes'")
        assert sorted(v for (v,) in held) == [3, 4, 5]
    with pytest.raises(NotFound) as refused:
        keeping.rollback(ada, "notes", 2)
    assert refused.value.sentence == "ada/notes has no v2 — it has v3, v4, v5"
    assert keeping.rollback(ada, "notes", 3).data["version"] == 3
    assert keeping.gate.app_info(ada, "notes").title == "Notes 3"
    # The next deploy is v6; the newest three are kept, the one rolled back to among them.
    keeping.deploy(ada, _files("Notes 6"), app="notes")
    assert _on_disk(keeping, "ada", "notes") == ["v4", "v5", "v6"]


def test_a_deploy_past_the_space_quota_is_refused_saying_what_uses_the_room(
    keeping: Service,
) -> None:
    ada = keeping.local_owner()
    keeping.deploy(ada, _files("Big", 500 * KB), app="big")
    keeping.deploy(ada, _files("Small", 100 * KB), app="small")
    before = _on_disk(keeping, "ada", "big")
    with pytest.raises(DeployRefused) as refused:
        keeping.deploy(ada, _files("Big again", 500 * KB), app="big")
    assert refused.value.sentence == (
        "this version (0.5 MB) would take ada's apps to 1.1 MB, past the space's 1 MB — it "
        "keeps 0.6 MB now: ada/big 0.5 MB in 1 version, ada/small 0.1 MB in 1 version; "
        "deploy fewer or smaller files, or ask the server's owner for more room (pasture "
        "serve --space-quota, --versions-kept)"
    )
    assert _on_disk(keeping, "ada", "big") == before  # nothing was written
    assert keeping.gate.app_info(ada, "big").version == 1
    # A deploy that lets go of as much as it brings fits: big keeps at most one here.
    one = Service(keeping.home, versions_kept=1, space_quota=1)
    try:
        assert one.deploy(ada, _files("Big again", 500 * KB), app="big").data["version"] == 2
    finally:
        one.close()


def test_a_version_kept_before_its_weight_was_recorded_is_weighed(keeping: Service) -> None:
    ada = keeping.local_owner()
    keeping.deploy(ada, _files("Old", 700 * KB), app="old")
    with keeping.db.transaction() as conn:  # as a database from before weights were kept
        conn.execute("UPDATE versions SET bytes = NULL WHERE slug = 'old'")
    with pytest.raises(DeployRefused, match=r"ada/old 0\.7 MB in 1 version"):
        keeping.deploy(ada, _files("New", 400 * KB), app="new")
    assert [w for (w,) in kept(keeping, "SELECT bytes FROM versions WHERE slug = 'old'")] == [
        700 * KB + len(b"<title>Old</title>")
    ]


@settings(max_examples=20)
@given(
    deploys=st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=9),
    versions_kept=st.integers(1, 4),
)
def test_whatever_is_deployed_each_app_keeps_its_newest_versions(
    tmp_path_factory: pytest.TempPathFactory, deploys: list[str], versions_kept: int
) -> None:
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PASTURE_USER", "ada")
        service = Service(home, versions_kept=versions_kept)
        ada: Caller = service.local_owner()
    try:
        made: dict[str, int] = {}
        for slug in deploys:
            made[slug] = service.deploy(ada, _files(slug), app=slug).data["version"]
        for slug, newest in made.items():
            expected = [f"v{n}" for n in range(max(1, newest - versions_kept + 1), newest + 1)]
            assert sorted(_on_disk(service, "ada", slug), key=lambda v: int(v[1:])) == expected
            assert service.gate.app_info(ada, slug).version == newest
    finally:
        service.close()


def test_a_setting_that_is_not_a_whole_number_from_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as refused:
        Service(tmp_path / "home", versions_kept=0)
    assert refused.value.sentence == (
        "--versions-kept is how many versions of each app are kept: at least 1, not 0"
    )
    pasture = PastureMain(tmp_path / "home")
    done = pasture("status", PASTURE_SPACE_QUOTA="lots")
    assert (done.returncode, done.stderr.strip()) == (
        2,
        "$PASTURE_SPACE_QUOTA is how many megabytes of files a space's apps may keep: a "
        "whole number like 1024, not 'lots'",
    )
