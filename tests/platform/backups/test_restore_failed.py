"""A restore that fails part way — a damaged archive, read to its last database — leaves the
target as empty as it found it, on SQLite and on PostgreSQL: a clear sentence, no data
directory or schema half filled, and the same target takes a good backup after."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from backup_data import platform_tables, runs_app, store_tables

from helpers.databases import fresh_database
from pasture.errors import Refused
from pasture.platform import restore_backup
from pasture.platform.service import Service


def _backed_up(home: Path, url: str, archive: Path) -> str:
    with Service(home, database_url=url) as service:
        owner = service.local_owner()
        at = runs_app(service, owner)
        runs_app(service, owner, "laps")  # a second store, restored after the first
        service.apply(owner, at, [{"jog": {"who": "Ada", "miles": 5}}, {"jog": {"who": "Bo"}}])
        service.secrets.set(owner, at, "API_KEY", "s3cret")
        service.backups.take(owner, archive)
    return at


def _damage(archive: Path, into: Path) -> str:
    """A copy of `archive` whose last store's data is garbage of the same size; the file
    of that store (a SQLite archive's) or ''."""
    with tarfile.open(archive) as tar:
        manifest: dict[str, Any] = json.loads(
            tar.extractfile("manifest.json").read()  # type: ignore[union-attr]
        )
        last = [d for d in manifest["databases"] if d.get("app")][-1]
        members = [t["member"] for t in last.get("tables", []) if t["name"] == "entity"]
        member = members[0] if members else last["member"]
        with tarfile.open(into, "w") as out:
            for info in tar.getmembers():
                data = tar.extractfile(info)
                if info.name == member:
                    body = bytes((i * 37 + 11) % 256 for i in range(info.size))
                    out.addfile(info, io.BytesIO(body))
                else:
                    out.addfile(info, data)
    assert len(manifest["databases"]) >= 3  # the platform's and one store come before it
    return str(last.get("path", ""))


def _schemas(url: str) -> list[str]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT schema_name FROM information_schema.schemata "
            "WHERE schema_name = 'pasture' OR schema_name LIKE 'app\\_%'"
        ).fetchall()
    return sorted(r[0] for r in rows)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_restore_that_fails_part_way_leaves_nothing(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    source = request.getfixturevalue("pg_url") if backend == "postgres" else ""
    source_db = fresh_database(source) if source else ""
    good, bad = tmp_path / "good.tar", tmp_path / "bad.tar"
    at = _backed_up(tmp_path / "source", source_db, good)
    store = _damage(good, bad)

    target = tmp_path / "target"
    target_db = fresh_database(source) if source else None
    with pytest.raises(Refused) as refused:
        restore_backup(bad, target, target_db, key_file=tmp_path / "source" / "backup.key")
    assert str(refused.value) == (
        f"{bad} is damaged ("
        + (f"its {store} cannot be read" if not source else "")
        + ("it could not be read to the end" if source else "")
        + ") — nothing was restored; restore another backup"
    )
    # nothing of it is left: no data directory's files, no schema
    assert sorted(p.name for p in target.iterdir()) == []
    if target_db:
        assert _schemas(target_db) == []

    # and the same target takes the good backup
    restore_backup(good, target, target_db, key_file=tmp_path / "source" / "backup.key")
    assert store_tables(target, target_db or "", at) == store_tables(
        tmp_path / "source", source_db, at
    )
    assert (
        platform_tables(target, target_db or "").keys()
        == platform_tables(tmp_path / "source", source_db).keys()
    )
    with Service(target, database_url=target_db or "") as restored:
        rows = restored.graph.query(restored.local_owner(), at, ".jog!").data["rows"]
        assert sorted(r["jog"]["who"] for r in rows) == ["Ada", "Bo"]
