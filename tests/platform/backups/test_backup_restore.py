"""A backup restored equals its source row by row — every table of every app's store and of
the platform's database, and every version's files — on SQLite and on PostgreSQL, for
stores hypothesis writes; and an archive of either database restores into the other."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from backup_data import platform_tables, runs_app, store_tables, version_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.databases import fresh_database
from pasture.platform import restore_backup
from pasture.platform.service import Service

TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40
)
NUMBER = st.one_of(
    st.integers(-(10**9), 10**9), st.floats(-1e9, 1e9, allow_nan=False).map(lambda x: round(x, 3))
)
JOG = st.fixed_dictionaries(
    {},
    optional={
        "who": TEXT,
        "miles": NUMBER,
        "done": st.booleans(),
        "at": st.just("2026-12-01T09:30:00Z"),
    },
)
DOC = st.fixed_dictionaries(
    {
        "title": TEXT,
        "body": st.text(max_size=300).filter(
            lambda t: "\x00" not in t and not any(0xD800 <= ord(c) <= 0xDFFF for c in t)
        ),
    }
)
NEW = st.one_of(JOG.map(lambda j: {"jog": j}), DOC.map(lambda d: {"doc": d}))


@contextmanager
def server(url: str) -> Iterator[tuple[Service, Path]]:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        service = Service(home, database_url=url)
        try:
            yield service, home
        finally:
            service.close()


def fill(service: Service, data: st.DataObject) -> str:
    owner = service.local_owner()
    at = runs_app(service, owner)
    made = service.apply(owner, at, data.draw(st.lists(NEW, min_size=1, max_size=12))).data
    eids = list(made["entities"])
    picks = st.sampled_from(eids)
    for _ in range(data.draw(st.integers(0, 4))):  # a call each: one bundle an entity
        edge = {"type": data.draw(st.sampled_from(["friend", "club"])), "child": data.draw(picks)}
        service.apply(owner, at, [{"entity": {"eid": data.draw(picks)}, "edges": [edge]}])
    if data.draw(st.booleans()) and len(eids) > 1:
        service.apply(owner, at, [{"entity": {"eid": eids[0]}, "tombstone": {}}])
    service.secrets.set(owner, at, "API_KEY", data.draw(TEXT.filter(bool)))
    return at


def same_server(a: tuple[Path, str], b: tuple[Path, str], at: str) -> None:
    assert common(store_tables(*b, at), store_tables(*a, at))
    assert common(platform_tables(*b), platform_tables(*a))
    assert version_files(b[0]) == version_files(a[0])


def common(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two databases hold the same rows in the columns both have (PostgreSQL keeps
    an edge's order in a column of its own, SQLite in its rowid)."""
    assert sorted(a) == sorted(b)
    for table in a:
        shared = set.intersection(*(set(r) for r in a[table] + b[table])) if a[table] else set()
        assert [{k: r[k] for k in shared} for r in a[table]] == [
            {k: r[k] for k in shared} for r in b[table]
        ], table
    return True


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
@settings(
    max_examples=8,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_restore_equals_its_source_row_by_row(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, data: st.DataObject
) -> None:
    pg = request.getfixturevalue("pg_url") if backend == "postgres" else ""
    source_url = fresh_database(pg) if pg else ""
    with server(source_url) as (service, home):
        at = fill(service, data)
        archive = Path(tempfile.mkdtemp(dir=tmp_path)) / "all.tar"
        said = service.backups.take(service.local_owner(), archive)
        assert said.text.startswith(f"backed up the server to {archive}")
        target_url = fresh_database(pg) if pg else ""
        target = Path(tempfile.mkdtemp(dir=tmp_path)) / "restored"
        restore_backup(archive, target, target_url, key_file=home / "backup.key")
        same_server((home, source_url), (target, target_url), at)
        # and the restored server serves it: the same rows through the store, a search too
        with Service(target, database_url=target_url) as restored:
            owner = restored.local_owner()
            for line in (".jog!", ".doc!", ".jog?&.doc?"):
                assert (
                    restored.graph.query(owner, at, line).data
                    == service.graph.query(service.local_owner(), at, line).data
                )
            assert (
                restored.secrets.list(owner, at).data
                == service.secrets.list(service.local_owner(), at).data
            )


@pytest.mark.postgres
def test_sqlite_to_an_archive_to_postgresql_and_back(tmp_path: Path, pg_url: str) -> None:
    with server("") as (service, home):
        owner = service.local_owner()
        at = runs_app(service, owner)
        service.apply(
            owner,
            at,
            [
                {"jog": {"who": "Ada", "miles": 5, "done": True, "at": "2026-12-01T09:30:00Z"}},
                {"jog": {"who": "Bo", "miles": 2.5, "done": False}},
                {"doc": {"title": "Long run", "body": "ran along the river\tin the rain\n\\ back"}},
            ],
        )
        service.secrets.set(owner, at, "API_KEY", "s3cret\ttab")
        first = tmp_path / "from-sqlite.tar"
        service.backups.take(owner, first)
        key = home / "backup.key"

        on_pg = fresh_database(pg_url)
        pg_home = tmp_path / "pg-home"
        restore_backup(first, pg_home, on_pg, key_file=key)
        same_server((home, ""), (pg_home, on_pg), at)
        with Service(pg_home, database_url=on_pg) as pg:
            pg_owner = pg.local_owner()
            words = pg.graph.query(pg_owner, at, "river").data["rows"]
            assert [r["doc"]["title"] for r in words] == ["Long run"]
            second = tmp_path / "from-postgres.tar"
            pg.backups.take(pg_owner, second)

        back = tmp_path / "back-home"
        restore_backup(second, back, "", key_file=pg_home / "backup.key")
        same_server((home, ""), (back, ""), at)
        with Service(back) as again:
            rows = again.graph.query(again.local_owner(), at, "river").data["rows"]
            assert [r["doc"]["title"] for r in rows] == ["Long run"]
