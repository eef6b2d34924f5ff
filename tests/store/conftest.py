"""A real store with the run club's vocabulary, on each backend: a SQLite file, and a
fresh schema on the session's throwaway PostgreSQL server (tests/conftest.py's `pg_url`)."""

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from store_fixtures import RUNS, AnyStore, Clock

from helpers import pg_server
from pasture.store import open_store

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def opener(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, clock: Clock
) -> Callable[[], AnyStore]:
    """Opens this test's store: the same file or schema each time it is called."""
    if backend == "sqlite":
        path = tmp_path / "app.db"
        return lambda: open_store(path, clock=clock)
    from pasture.store.postgres import open_postgres_store

    url = request.getfixturevalue("pg_url")
    schema = pg_server.fresh_schema()
    return lambda: open_postgres_store(url, schema, clock=clock)


@pytest.fixture
def store(opener: Callable[[], AnyStore]) -> Iterator[AnyStore]:
    s = opener()
    s.declare(RUNS)
    yield s
    s.close()
