"""Tables read and written whatever they hold: every table a database has is copied, with
its columns as the database describes them, so a table nobody here knows of comes along.

A column has a neutral kind — `int`, `real`, `numeric`, `bool`, `text` or `bytes` — worked
out from SQLite's declared type (its affinity rules) or PostgreSQL's `data_type`. Rows
are read from SQLite with SELECT, from PostgreSQL as COPY text (`copy_out`, read back by
`copy_rows`), and written with INSERT into SQLite or COPY into PostgreSQL, into the
columns both sides have. What a database makes for itself is not copied: SQLite's
full-text tables (`doc_fts` and its shadows, filled again by the triggers on `c_doc`),
PostgreSQL's generated columns (`c_doc._fts`); the numbers of an identity column
are copied, and its sequence moved past them.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

INT, REAL, NUMERIC, BOOL, TEXT, BYTES = "int", "real", "numeric", "bool", "text", "bytes"


@dataclass(frozen=True)
class Shape:
    """A table's name and its columns, each `(name, kind)`."""

    name: str
    columns: tuple[tuple[str, str], ...]
    ordered_by: str | None = None  # what keeps the rows' order (SQLite's rowid, an identity)

    @property
    def names(self) -> list[str]:
        return [c for c, _ in self.columns]

    def as_data(self) -> dict[str, Any]:
        return {"name": self.name, "columns": [list(c) for c in self.columns]}

    @staticmethod
    def from_data(data: Any) -> Shape:
        return Shape(str(data["name"]), tuple((str(c), str(k)) for c, k in data["columns"]))


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# -- SQLite ------------------------------------------------------------------------------


def sqlite_kind(declared: str) -> str:
    """A column's kind from its declared type, by SQLite's own affinity rules."""
    t = declared.upper()
    if "INT" in t:
        return INT
    if any(word in t for word in ("CHAR", "CLOB", "TEXT")):
        return TEXT
    if not t or "BLOB" in t:
        return BYTES
    if any(word in t for word in ("REAL", "FLOA", "DOUB")):
        return REAL
    return NUMERIC


_SQLITE_TYPE = {INT: "INTEGER", REAL: "REAL", NUMERIC: "NUMERIC", BOOL: "INTEGER", TEXT: "TEXT"}


def sqlite_shapes(conn: sqlite3.Connection) -> list[Shape]:
    """Every table of the file but SQLite's own and full-text ones (with their shadows)."""
    found = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name"
    ).fetchall()
    virtual = [str(n) for n, sql in found if str(sql or "").upper().startswith("CREATE VIRTUAL")]
    shapes: list[Shape] = []
    for name, sql in found:
        name = str(name)
        if name.startswith("sqlite_") or name in virtual:
            continue
        if any(name.startswith(v + "_") for v in virtual):
            continue
        columns = tuple(
            (str(r[1]), sqlite_kind(str(r[2] or "")))
            for r in conn.execute(f"PRAGMA table_xinfo({q(name)})")
            if int(r[6]) == 0  # not a generated column
        )
        rowid = "WITHOUT ROWID" not in str(sql or "").upper()
        shapes.append(Shape(name, columns, "rowid" if rowid else None))
    return shapes


def sqlite_rows(conn: sqlite3.Connection, shape: Shape) -> Iterator[tuple[Any, ...]]:
    order = f" ORDER BY {shape.ordered_by}" if shape.ordered_by else ""
    cols = ", ".join(q(c) for c in shape.names)
    yield from conn.execute(f"SELECT {cols} FROM {q(shape.name)}{order}")


def sqlite_load(
    conn: sqlite3.Connection, shape: Shape, rows: Iterable[Sequence[Any]], *, keep: str = ""
) -> int:
    """`rows` (in `shape`'s columns) put in place of the table's own, into the columns both
    have; a table the file lacks is made. `keep`: a WHERE naming rows left as they are."""
    have = {
        str(r[1]): sqlite_kind(str(r[2] or ""))
        for r in conn.execute(f"PRAGMA table_info({q(shape.name)})")
    }
    if not have:
        cols = ", ".join(f"{q(c)} {_SQLITE_TYPE.get(k, '')}".strip() for c, k in shape.columns)
        conn.execute(f"CREATE TABLE {q(shape.name)} ({cols})")
        have = dict(shape.columns)
    both = [i for i, (c, _) in enumerate(shape.columns) if c in have]
    conn.execute(f"DELETE FROM {q(shape.name)}" + (f" WHERE NOT ({keep})" if keep else ""))
    names = ", ".join(q(shape.columns[i][0]) for i in both)
    marks = ", ".join("?" * len(both))
    verb = "INSERT OR REPLACE" if keep else "INSERT"
    statement = f"{verb} INTO {q(shape.name)} ({names}) VALUES ({marks})"
    count = 0

    def picked() -> Iterator[list[Any]]:
        nonlocal count
        for row in rows:
            count += 1
            yield [row[i] for i in both]

    conn.executemany(statement, picked())
    return count


# -- PostgreSQL --------------------------------------------------------------------------

_PG_KIND = {
    "bigint": INT,
    "integer": INT,
    "smallint": INT,
    "double precision": REAL,
    "real": REAL,
    "numeric": NUMERIC,
    "boolean": BOOL,
    "bytea": BYTES,
}
_PG_TYPE = {
    INT: "BIGINT",
    REAL: "DOUBLE PRECISION",
    NUMERIC: "DOUBLE PRECISION",
    BOOL: "BOOLEAN",
    TEXT: "TEXT",
    BYTES: "BYTEA",
}


def pg_kind(data_type: str) -> str:
    return _PG_KIND.get(data_type, TEXT)


def pg_shapes(conn: Any, schema: str) -> list[Shape]:
    """Every table of `schema`, without the columns PostgreSQL computes (generated ones),
    ordered by an identity column where there is one."""
    rows = conn.execute(
        "SELECT c.table_name, c.column_name, c.data_type, c.is_generated, c.is_identity "
        "FROM information_schema.columns c "
        "JOIN information_schema.tables t ON t.table_schema = c.table_schema "
        "AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE' "
        "WHERE c.table_schema = %s ORDER BY c.table_name, c.ordinal_position",
        (schema,),
    ).fetchall()
    tables: dict[str, list[tuple[str, str]]] = {}
    order: dict[str, str] = {}
    for table, column, data_type, generated, identity in rows:
        tables.setdefault(table, [])
        if identity == "YES":
            order[table] = column
        if generated == "ALWAYS":  # (an identity's numbers are copied: COPY takes them)
            continue
        tables[table].append((column, pg_kind(data_type)))
    return [Shape(t, tuple(cols), order.get(t)) for t, cols in tables.items()]


COPY_BUFFER = 1 << 20  # bytes of COPY text gathered before one write to the archive


def copy_out(conn: Any, schema: str, shape: Shape, out: IO[bytes]) -> None:
    """A table's rows as COPY text, as the table holds them: every row carries its own
    identity's number, so no order is needed to put them back (pg_dump reads them so too).

    The rows are read from libpq itself (psycopg's `pq` binding): psycopg's `Copy` takes a
    generator's round trip for each row, which made a backup spend more time in Python than
    the database took to send it. It is the same exchange `Copy` has with libpq, a row at
    a time without waiting while rows are there, and waiting on the socket (the GIL let go)
    when they are not; what the server says at the end is read, and an error raised."""
    import select

    from psycopg import OperationalError, pq

    cols = ", ".join(q(c) for c in shape.names)
    sql = f"COPY {q(schema)}.{q(shape.name)} ({cols}) TO STDOUT"
    pgconn = conn.pgconn
    pgconn.send_query(sql.encode())
    begun = pgconn.get_result()
    if begun is None or begun.status != pq.ExecStatus.COPY_OUT:
        said = begun.error_message.decode(errors="replace") if begun is not None else ""
        while pgconn.get_result() is not None:
            pass
        raise OperationalError(said or f"COPY of {schema}.{shape.name} did not begin")
    held: list[bytes] = []
    size = 0
    while True:
        nbytes, data = pgconn.get_copy_data(1)
        if nbytes > 0:
            held.append(bytes(data))
            size += nbytes
            if size >= COPY_BUFFER:
                out.write(b"".join(held))
                held, size = [], 0
            continue
        if nbytes == 0:  # nothing there yet: wait for the server
            select.select([pgconn.socket], [], [])
            pgconn.consume_input()
            continue
        break  # -1: the rows are all sent; -2: the connection failed (said below)
    out.write(b"".join(held))
    failed = None
    while (result := pgconn.get_result()) is not None:
        if result.status != pq.ExecStatus.COMMAND_OK:
            failed = result.error_message.decode(errors="replace")
    if failed is not None or nbytes == -2:
        raise OperationalError(failed or pgconn.error_message.decode(errors="replace"))


def pg_load(
    conn: Any,
    schema: str,
    shape: Shape,
    rows: Iterable[Sequence[Any]] | None = None,
    raw: IO[bytes] | None = None,
    *,
    keep: str = "",
) -> None:
    """Rows put in place of a table's own, by COPY, into the columns both sides have: COPY
    text passed through as it is (`raw`) where the table takes every column of it, else
    `rows` (or `raw` read) written one by one. A table the database lacks is made."""
    target = f"{q(schema)}.{q(shape.name)}"
    have = {s.name: s for s in pg_shapes(conn, schema)}.get(shape.name)
    if have is None:
        cols = ", ".join(f"{q(c)} {_PG_TYPE[k]}" for c, k in shape.columns)
        conn.execute(f"CREATE TABLE {target} ({cols})")
        have = shape
    kinds = dict(have.columns)
    conn.execute(f"DELETE FROM {target}" + (f" WHERE NOT ({keep})" if keep else ""))
    both = [i for i, (c, _) in enumerate(shape.columns) if c in kinds]
    names = ", ".join(q(shape.columns[i][0]) for i in both)
    same = len(both) == len(shape.columns) and all(kinds[c] == k for c, k in shape.columns)
    with conn.cursor() as cur, cur.copy(f"COPY {target} ({names}) FROM STDIN") as copy:
        if raw is not None and same and not keep:
            while chunk := raw.read(1 << 20):
                copy.write(chunk)
            return
        source = rows if rows is not None else copy_rows(raw or _empty(), shape)
        wanted = [kinds[shape.columns[i][0]] for i in both]
        for row in source:
            copy.write_row([_as(row[i], k) for i, k in zip(both, wanted, strict=True)])


def renumber(conn: Any, schema: str) -> None:
    """Each identity column's next number past the largest there now (rows came with
    theirs)."""
    found = conn.execute(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = %s AND is_identity = 'YES'",
        (schema,),
    ).fetchall()
    for table, column in found:
        conn.execute(
            f"SELECT setval(pg_get_serial_sequence(%s, %s), "
            f"coalesce((SELECT max({q(column)}) FROM {q(schema)}.{q(table)}), 0) + 1, false)",
            (f"{q(schema)}.{q(table)}", column),
        )


def _as(value: Any, kind: str) -> Any:
    """A value as the target column takes it (SQLite keeps a bool as 0 or 1, a whole REAL
    where an integer was declared)."""
    if value is None:
        return None
    if kind == BOOL and not isinstance(value, bool):
        return bool(value)
    if kind == INT and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _empty() -> IO[bytes]:
    import io

    return io.BytesIO(b"")


# -- COPY text, read and written ------------------------------------------------------------

_UNESCAPE = {b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t", b"v": b"\v"}
_ESCAPED = re.compile(rb"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)")


def _unescaped(m: re.Match[bytes]) -> bytes:
    s = m.group(1)
    if s in _UNESCAPE:
        return _UNESCAPE[s]
    if s[:1] == b"x" and len(s) > 1:
        return bytes([int(s[1:], 16)])
    if s[:1].isdigit():
        return bytes([int(s, 8) & 0xFF])
    return s


def _value(field: bytes, kind: str) -> Any:
    if field == b"\\N":
        return None
    if b"\\" in field:
        field = _ESCAPED.sub(_unescaped, field)
    if kind == TEXT:
        return field.decode("utf-8")
    if kind == INT:
        return int(field)
    if kind == REAL:
        return float(field)
    if kind == BOOL:
        return field == b"t"
    if kind == BYTES:
        return bytes.fromhex(field[2:].decode()) if field.startswith(b"\\x") else field
    number = float(field)
    return int(number) if number.is_integer() and b"." not in field else number


def copy_rows(stream: IO[bytes], shape: Shape) -> Iterator[tuple[Any, ...]]:
    """The rows of COPY text, each value as its column's kind reads it."""
    kinds = [k for _, k in shape.columns]
    for line in stream:
        fields = line.rstrip(b"\n").split(b"\t")
        yield tuple(_value(f, k) for f, k in zip(fields, kinds, strict=True))


def _escape(value: Any) -> bytes:
    if value is None:
        return b"\\N"
    if isinstance(value, bool):
        return b"t" if value else b"f"
    if isinstance(value, bytes | bytearray | memoryview):
        return b"\\\\x" + bytes(value).hex().encode()
    text = str(value).encode("utf-8")
    return (text.replace(b"\\", b"\\\\").replace(b"\t", b"\\t").replace(b"\n", b"\\n")).replace(
        b"\r", b"\\r"
    )


def copy_line(values: Sequence[Any]) -> bytes:
    """One row as COPY text writes it."""
    return b"\t".join(_escape(v) for v in values) + b"\n"


__all__ = [
    "Shape",
    "copy_line",
    "copy_out",
    "copy_rows",
    "pg_load",
    "pg_shapes",
    "renumber",
    "sqlite_load",
    "sqlite_rows",
    "sqlite_shapes",
]
