"""What only the PostgreSQL backend has to show: a refused batch leaves every table of the
app's schema as it was, several stores (processes) share one schema, and the sentences
for a schema name, a server that is not there, and psycopg not installed."""

import re
import subprocess
import sys
import threading
from typing import Any

import psycopg
import pytest
from store_fixtures import ADA, BOB, RUNS, refuse_bad_batches

from helpers import pg_server
from pasture.errors import Conflict, Refused, Unavailable
from pasture.store import fingerprint
from pasture.store.postgres import PostgresStore, open_postgres_store


@pytest.fixture
def schema(pg_url: str) -> str:
    return pg_server.fresh_schema()


def dump(url: str, schema: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table in the schema, each table in a fixed order."""
    with psycopg.connect(url) as db:
        tables = [
            r[0]
            for r in db.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY tablename",
                (schema,),
            )
        ]
        out: dict[str, list[tuple[Any, ...]]] = {}
        for name in tables:
            rows = db.execute(f'SELECT * FROM "{schema}"."{name}"').fetchall()
            out[name] = sorted(rows, key=repr)
        seqs = db.execute(
            "SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = %s", (schema,)
        ).fetchall()
        out["(sequences)"] = sorted(seqs, key=repr)
        return out


def test_a_refused_batch_leaves_every_table_as_it_was(pg_url: str, schema: str) -> None:
    with open_postgres_store(pg_url, schema) as s:
        s.declare(RUNS)
        eid = s.apply({"entity": {"eid": "$r"}, "jog": {"who": "Ada", "miles": 5}}, ADA).aliases[
            "$r"
        ]
        s.apply({"entity": {"eid": eid}, "edges": [{"type": "member", "child": "$club"}]}, ADA)
    before = dump(pg_url, schema)
    assert before["c_jog"] and before["edge"]
    with open_postgres_store(pg_url, schema) as s:
        refuse_bad_batches(s, eid)
        many = [{"jog": {"who": f"r{i}"}, "doc": {"title": f"t{i}"}} for i in range(120)]
        with pytest.raises(Refused):  # enough rows to go by COPY, and the last one refused
            s.apply([*many, {"jog": {"who": "x\x00"}}], BOB)
    assert dump(pg_url, schema) == before


def test_two_stores_on_one_schema_see_each_others_writes_and_vocabulary(
    pg_url: str, schema: str
) -> None:
    one, two = open_postgres_store(pg_url, schema), open_postgres_store(pg_url, schema)
    try:
        one.declare(RUNS)
        two.apply({"jog": {"who": "Ada", "miles": 3}}, ADA)  # learns jog from the schema
        assert [r["jog"]["who"] for r in one.query(".jog!", ADA)] == ["Ada"]
        one.declare(
            {"$defs": {**RUNS["$defs"], "loan": {"properties": {"due": {"type": "string"}}}}}
        )
        two.apply({"loan": {"due": "friday"}}, BOB)
        assert two.query(".loan!", ADA)[0]["loan"] == {"due": "friday"}
        assert one.query(".loan.due=friday&.created!", ADA)[0]["created"]["by"]["name"] == "Bob"
    finally:
        one.close()
        two.close()


def test_writers_in_several_stores_at_once_lose_nothing(pg_url: str, schema: str) -> None:
    with open_postgres_store(pg_url, schema) as s:
        s.declare(RUNS)
        eid = s.apply({"entity": {"eid": "$r"}, "jog": {"miles": 0}}, ADA).aliases["$r"]
    refused: list[str] = []

    def bump(n: int) -> None:
        with open_postgres_store(pg_url, schema) as s:
            for _ in range(n):
                while True:
                    read = s.query(f"id={eid}&.jog!", ADA)[0]["jog"]["miles"]
                    try:
                        s.apply(
                            {
                                "entity": {"eid": eid},
                                "jog": {"miles": read + 1},
                                "$was": {"jog": {"miles": fingerprint(read)}},
                            },
                            ADA,
                        )
                        break
                    except Conflict as e:
                        refused.append(str(e))

    threads = [threading.Thread(target=bump, args=(10,)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open_postgres_store(pg_url, schema) as s:
        assert s.query(f"id={eid}&.jog!", ADA)[0]["jog"]["miles"] == 30
    assert all(r.startswith("jog.miles changed since you read it") for r in refused)


def test_apps_in_their_own_schemas_do_not_meet(pg_url: str) -> None:
    a, b = pg_server.fresh_schema(), pg_server.fresh_schema()
    with open_postgres_store(pg_url, a) as s, open_postgres_store(pg_url, b) as t:
        s.declare(RUNS)
        t.declare(RUNS)
        s.apply({"jog": {"who": "only in a"}}, ADA)
        assert t.query(".jog!", ADA) == []
        assert len(s.query(".jog!", ADA)) == 1


def test_a_bad_schema_name_is_refused_saying_how_to_name_it(pg_url: str) -> None:
    for name in ("Ada", "1runs", 'x"; DROP', "pg_runs", ""):
        with pytest.raises(Refused) as e:
            PostgresStore(pg_url, name)
        assert "like ada_runs" in str(e.value)


def test_a_server_that_is_not_there_is_a_sentence() -> None:
    with pytest.raises(Unavailable) as e:
        open_postgres_store("postgresql://nobody:secret@127.0.0.1:1/nothing", "runs")
    text = str(e.value)
    assert text.startswith("cannot reach the PostgreSQL server at 127.0.0.1:1")
    assert "secret" not in text


@pytest.mark.processes
def test_without_psycopg_the_sentence_names_the_install_command() -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from pasture.errors import Refused\n"
        "from pasture.store.postgres import open_postgres_store\n"
        "try:\n"
        "    open_postgres_store('postgresql://x@127.0.0.1:1/y', 'runs')\n"
        "except Refused as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'pasture[postgres]'" in out.stdout


def test_open_store_takes_a_postgresql_url_and_a_schema(pg_url: str, schema: str) -> None:
    from pasture.store import open_store

    with open_store(pg_url, schema=schema) as s:
        assert isinstance(s, PostgresStore)
        s.declare(RUNS)
        s.apply({"jog": {"who": "Ada"}}, ADA)
        assert s.query(".jog.who=Ada", ADA)[0]["jog"]["who"] == "Ada"
    with pytest.raises(Refused) as e:
        open_store(pg_url)
    assert "schema" in str(e.value)


def _plans(store: PostgresStore, sql: str) -> tuple[int, int]:
    """How many times the connections' prepared statement of `sql` ran on a generic plan, and
    on a plan made for its values (PostgreSQL counts both, each connection its own)."""
    marks = iter(range(1, sql.count("%s") + 1))
    sql = re.sub("%s", lambda _: f"${next(marks)}", sql)  # as psycopg prepares it
    generic = custom = 0
    with store._connection() as conn:  # the pool's one connection
        for g, c in conn.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = %s",
            (sql,),
        ):
            generic, custom = generic + g, custom + c
    return generic, custom


def _read_sql(s: PostgresStore, filter: str) -> str:
    """The statement a read of `filter` runs now: a whole row's leaves out the component
    tables the last read found empty."""
    compiled = s._compile(filter)
    return compiled.variants.get(s._found_empty & set(compiled.checks), compiled).sql


def test_a_walk_by_equalities_and_a_search_are_planned_once_and_a_range_for_its_values(
    pg_url: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A walk whose tests are all equalities, and a search for words, run on one generic
    plan (planning their joins costs more than running them); a walk through a range is
    planned for its values as the server decides; the next read on the same connection is
    planned as the server decides again; and each answers what it answered before."""
    # a pool of its own holding one connection: each read follows the last on it
    monkeypatch.setenv("PASTURE_DATABASE_CONNECTIONS", "1")
    url = pg_url + ("&" if "?" in pg_url else "?") + "application_name=plans"
    vocab = {
        "$defs": {
            **RUNS["$defs"],
            "note": {
                "properties": {
                    "target": {"type": "string", "format": "reference"},
                    "text": {"type": "string"},
                }
            },
        }
    }
    with open_postgres_store(url, schema) as s:
        s.declare(vocab)
        runs = s.apply([{"jog": {"who": f"r{i % 3}", "miles": i}} for i in range(30)], ADA).entities
        s.apply([{"note": {"target": eid, "text": f"n{i}"}} for i, eid in enumerate(runs)], ADA)
        s.apply({"doc": {"title": "hill repeats"}}, ADA)
        by_who, by_miles = ".note.target.jog.who=r1", ".note.target.jog.miles>=20"
        expected = {
            f: sorted(r["note"]["text"] for r in s.query(f, ADA)) for f in (by_who, by_miles)
        }
        assert len(expected[by_who]) == 10 and len(expected[by_miles]) == 10
        for _ in range(12):  # psycopg prepares a statement on its fifth run
            for f in (by_who, by_miles, ".jog.who=r2"):
                found = sorted(
                    r["note"]["text"] if "note" in r else r["jog"]["who"] for r in s.query(f, ADA)
                )
                assert found == expected.get(f, ["r2"] * 10)
        for _ in range(8):  # the first whole read finds which tables are empty; then five
            assert [r["doc"]["title"] for r in s.query("hill", ADA)] == ["hill repeats"]
        for planned_once in (by_who, "hill"):
            generic, custom = _plans(s, _read_sql(s, planned_once))
            assert generic > 0 and custom == 0
        # the server's own way: plans for the first five runs' values, then it weighs them
        _, custom = _plans(s, s._compile(by_miles).sql)
        assert custom >= 5
        with s._connection() as conn:
            assert conn.execute("SHOW plan_cache_mode").fetchone() == ("auto",)
