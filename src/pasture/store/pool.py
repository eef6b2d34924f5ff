"""Connections to PostgreSQL, made in one place: one pool per database per process.

    with connections(url, unreachable=...).connection("pasture") as conn: ...

Every connection to PostgreSQL — the platform's tables (`pasture.platform.db.postgres_db`)
and each app's store (`postgres.py`) — is taken from a psycopg pool that all of
this process shares for that database, so threads serving calls at once each
take a connection of their own (at most `$PASTURE_DATABASE_CONNECTIONS`, 10
unless it says otherwise), and a hundred open apps hold no more connections
than one. A connection is handed out in autocommit mode with its search_path
set to the schema asked for (set again only when the last one to use it asked
for another); whoever takes it begins and ends any transaction before it goes
back. The pool opens with its first user (`connections`) and closes with its
last (`Connections.release`).

What can go wrong on the way to a server is said here, once: psycopg not
installed (with the command that installs it), an address that is not a
PostgreSQL URL, a server that cannot be reached (in the words of whoever was
connecting). The first connection is made by `connect` before a pool is, so a
bad address is said at once rather than after the pool's retries.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from pasture import faults
from pasture.errors import Refused, Unavailable

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

INSTALL = "pip install 'pasture[postgres]'"
NOT_INSTALLED = (
    f"a PostgreSQL database needs psycopg, which is not installed — install it: {INSTALL}"
)
NOT_A_URL = (
    "the database address is not a PostgreSQL URL — write it like "
    "postgresql://user@host:5432/dbname"
)
SIZE = 10  # connections a process keeps to one database at most, unless the environment says


def psycopg_module() -> Any:
    """psycopg (and its pool), or the sentence that says how to install them."""
    try:
        import psycopg
        import psycopg_pool  # noqa: F401
    except ImportError:
        raise Refused(NOT_INSTALLED) from None
    return psycopg


def where(url: str) -> str:
    """The server and database a URL names, without its user or password, for sentences."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        info = conninfo_to_dict(url)
    except Exception:
        return "the PostgreSQL server"
    host = info.get("host") or "localhost"
    port = info.get("port") or 5432
    return f"the PostgreSQL server at {host}:{port}"


def pool_size() -> int:
    """`$PASTURE_DATABASE_CONNECTIONS`, or 10: how many connections one pool holds at most."""
    try:
        value = int(os.environ.get("PASTURE_DATABASE_CONNECTIONS", SIZE))
    except ValueError:
        return SIZE
    return value if value > 0 else SIZE


def connect(url: str, *, unreachable: str) -> psycopg.Connection[Any]:
    """A connection of its own to the database at `url` (autocommit), or the sentence for why
    not: `unreachable` when the server cannot be reached or refuses who is connecting."""
    driver = psycopg_module()
    try:
        db: psycopg.Connection[Any] = driver.connect(url, autocommit=True)
    except driver.OperationalError:
        raise Unavailable(unreachable) from None
    except driver.ProgrammingError:
        raise Refused(NOT_A_URL) from None
    return db


def _number_loader() -> type[Any]:
    """float8 read back as SQLite's NUMERIC reads: a whole number as an int."""
    from psycopg.adapt import Loader

    class NumberLoader(Loader):
        def load(self, data: Any) -> Any:
            value = float(bytes(data))
            if value.is_integer() and -(2**63) <= value < 2**63:
                return int(value)
            return value

    return NumberLoader


def _connection_class() -> type[Any]:
    """psycopg's connection, remembering which schema its search_path names."""
    import psycopg

    class Connection(psycopg.Connection[Any]):
        schema = ""
        generic = False  # whether plan_cache_mode is force_generic_plan for the session

    return Connection


# plan_cache_mode for a connection's prepared statements, by whether they are to be generic
_PLANS = {True: "force_generic_plan", False: "auto"}


class Connections:
    """The pool of connections this process keeps to one database."""

    def __init__(self, url: str) -> None:
        from psycopg_pool import ConnectionPool

        self.url = url
        self.users = 0  # `connections` and `release` count them, under `_POOLS_LOCK`
        loader = _number_loader()

        def configure(conn: psycopg.Connection[Any]) -> None:
            conn.adapters.register_loader("float8", loader)

        self._pool: ConnectionPool[Any] = ConnectionPool(
            url,
            connection_class=_connection_class(),
            kwargs={"autocommit": True},
            min_size=1,
            max_size=max(pool_size(), 1),
            configure=configure,
            # waiting longer for a connection than a write waits for a lock helps no one
            timeout=faults.busy_seconds(),
            name="pasture",
            open=False,
        )
        # its first connection made before the first call asks for one: a call that found
        # none ready would wait, and the pool would grow by one it did not need
        try:
            self._pool.open(wait=True, timeout=faults.busy_seconds())
        except BaseException:
            self._pool.close()
            raise

    @contextmanager
    def connection(
        self, schema: str, *, generic: bool = False
    ) -> Iterator[psycopg.Connection[Any]]:
        """A connection whose search_path is `schema` (an identifier as SQL writes it), back
        to the pool when the block ends; a transaction still open then is rolled back.
        `generic`: its prepared statements are planned once for any value of their
        parameters (PostgreSQL's generic plan), as a read of `Compiled.generic` wants;
        otherwise as the server decides. Each setting is sent only when it changes."""
        # (getconn and putconn rather than the pool's own block, which would also ask the
        # connection to commit: every user here ends its transactions itself)
        conn = self._pool.getconn()
        try:
            said: list[str] = []
            if conn.schema != schema:
                said.append(f"SET search_path TO {schema}")
            if conn.generic != generic:
                said.append(f"SET plan_cache_mode = {_PLANS[generic]}")
            if said:
                # one round trip for both; a session's settings, outside any transaction
                conn.execute("; ".join(said).encode())
                conn.schema, conn.generic = schema, generic
            yield conn
        finally:
            self._pool.putconn(conn)

    def release(self) -> None:
        """One user is done with the pool; the last closes it."""
        with _POOLS_LOCK:
            self.users -= 1
            if self.users > 0:
                return
            if _POOLS.get(self.url) is self:
                del _POOLS[self.url]
        self._pool.close()


_POOLS: dict[str, Connections] = {}
_POOLS_LOCK = threading.Lock()


def connections(url: str, *, unreachable: str) -> Connections:
    """This process's pool for the database at `url`, opened if it is not open yet (its first
    connection made by `connect`, so a failure is said in the same sentences); `release` it
    when done."""
    with _POOLS_LOCK:
        pool = _POOLS.get(url)
        if pool is None:
            connect(url, unreachable=unreachable).close()
            try:
                pool = _POOLS[url] = Connections(url)
            except psycopg_module().OperationalError:  # the server went meanwhile
                raise Unavailable(unreachable) from None
        pool.users += 1
        return pool


__all__ = [
    "INSTALL",
    "NOT_A_URL",
    "NOT_INSTALLED",
    "Connections",
    "connect",
    "connections",
    "pool_size",
    "psycopg_module",
    "where",
]
