"""What a hostile caller sends the store, on both backends: one refusal sentence, nothing written.

Whole numbers past 64 bits, lone UTF-16 surrogates, NUL, very long values for
`~=` and full text, reference walks hundreds of hops long, filters of thousands
of predicates or values: each is refused before a database sees it, with the
same sentence on SQLite and PostgreSQL, and a refused write leaves no row.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import ADA, AnyStore

from pasture.errors import Refused
from pasture.store.grammar import MAX_PREDICATES, MAX_VALUES
from pasture.store.sql import MAX_HOPS, MAX_SEARCH
from pasture.store.vocab import Vocabulary

BIG = 2**70
RANGE = "between -9223372036854775808 and 9223372036854775807 — write a larger one as a decimal"
HALF = "half of a UTF-16 surrogate pair and not a character — send text as whole characters"


def _count(store: AnyStore) -> int:
    answer = store.query(".count!", ADA)
    assert isinstance(answer, dict)
    return int(answer["count"])


def _refused(
    store: AnyStore, sentence: str, *, query: str | None = None, write: Any = None
) -> None:
    before = _count(store)
    with pytest.raises(Refused) as refusal:
        if query is not None:
            store.query(query, ADA)
        else:
            store.apply(write, ADA)
    assert refusal.value.sentence == sentence
    assert _count(store) == before


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        (f".jog.miles>{BIG}", f"jog.miles is a number {RANGE}, like 1.2e21"),
        (f".jog.miles=1..{BIG}", f"jog.miles is a number {RANGE}, like 1.2e21"),
        (f".jog.miles=1,-{BIG}", f"jog.miles is a number {RANGE}, like 1.2e21"),
        (".jog.who=\ud800", f"jog.who holds \\ud800, {HALF}"),
        (".jog.who~=a\udfff", f"jog.who holds \\udfff, {HALF}"),
        (".recipe.coach=\ud800", f"recipe.coach holds \\ud800, {HALF}"),
        ("id=\ud800", f"the eid in id= holds \\ud800, {HALF}"),
        ("run \ud800", f"the search holds \\ud800, {HALF}"),
        (
            ".jog.who~=" + "a" * (MAX_SEARCH + 1),
            f"~= looks for at most {MAX_SEARCH} characters in jog.who — "
            "look for a shorter part of it",
        ),
        (
            "a" * (MAX_SEARCH + 1),
            f"a full-text search looks for at most {MAX_SEARCH} characters of words — "
            "search for fewer words",
        ),
        (
            ".recipe.coach" * 300 + ".recipe.cuisine=x",
            f".recipe.coach… walks 300 references, and a filter walks at most {MAX_HOPS} — "
            "like .comment.target.doc.title~=word, which walks one",
        ),
        (
            "&".join(f".jog.miles>{i}" for i in range(MAX_PREDICATES + 1)),
            f"a filter joins at most {MAX_PREDICATES} predicates with & — "
            "ask for the rest in another query",
        ),
        (
            ".jog.miles=" + ",".join(str(i) for i in range(MAX_VALUES + 1)),
            f"a list of values holds at most {MAX_VALUES}, like .jog.miles=a,b — "
            "ask for the rest in another query",
        ),
        (
            ".jog.at>9999-12-31T23:59:59-23:59",
            "9999-12-31T23:59:59-23:59 is outside the years 1 to 9999 in UTC — write a time "
            "within them",
        ),
        (
            f".comments>={BIG}",
            f".comments>={BIG} counts entities: a whole number of at most 18 digits, "
            "like .comments>=2",
        ),
    ],
)
def test_a_filter_past_what_the_store_serves_is_refused_alike(
    store: AnyStore, text: str, sentence: str
) -> None:
    _refused(store, sentence, query=text)


def test_the_largest_whole_numbers_are_kept_and_found(store: AnyStore) -> None:
    store.apply([{"jog": {"miles": 2**63 - 1}}, {"jog": {"miles": -(2**63)}}], ADA)
    found = store.query(f".jog.miles>={2**63 - 1}", ADA)
    # (PostgreSQL keeps numbers as doubles: as close to it as a double comes)
    assert [float(r["jog"]["miles"]) for r in found] == [float(2**63 - 1)]
    assert store.query(".jog.miles>1e300", ADA) == []  # a decimal past them reads fine


@pytest.mark.parametrize(
    ("write", "sentence"),
    [
        ({"jog": {"miles": BIG}}, f"jog.miles is a number {RANGE}, like 1.2e21"),
        ({"jog": {"miles": 2**63}}, f"jog.miles is a number {RANGE}, like 1.2e21"),
        ({"jog": {"miles": str(-BIG)}}, f"jog.miles is a number {RANGE}, like 1.2e21"),
        ({"jog": {"who": "\ud800"}}, f"jog.who holds \\ud800, {HALF}"),
        ({"jog": {"who": float("nan")}}, "jog.who is text"),
        ({"jog": {"who": 10**5000}}, "jog.who is text"),
        (
            {"jog": {"at": "9999-12-31T23:59:59-23:59"}},
            "jog.at is a time, like 2026-09-01 or 2026-09-01T10:00:00Z",
        ),
        ({"entity": {"eid": "\udc00"}, "jog": {"who": "x"}}, f"entity.eid holds \\udc00, {HALF}"),
        (
            {"jog": {"who": "x"}, "edges": [{"type": "\ud800", "child": "$a"}]},
            f"an edge's type holds \\ud800, {HALF}",
        ),
        (
            {"entity": {"eid": "$" + "a" * 200}, "jog": {"who": "x"}},
            "entity.eid: $" + "a" * 78 + "… is too long for an alias — an alias is at most "
            "100 characters, like $run",
        ),
        (
            {"entity": {"eid": "x" * 100_000}, "jog": {"who": "x"}},
            "no entity " + "x" * 79 + "… in this app — it is not an eid or an alias here; "
            "query for it and use its eid",
        ),
    ],
)
def test_a_write_of_what_no_database_keeps_is_refused_writing_nothing(
    store: AnyStore, write: Any, sentence: str
) -> None:
    _refused(store, sentence, write=[{"jog": {"who": "first"}}, write])


def test_postgresql_refuses_text_longer_than_an_index_keeps(store: AnyStore, backend: str) -> None:
    long = "".join(chr(0x4E00 + (i * 7) % 20_000) for i in range(1_000))  # 3,000 bytes
    write = [{"jog": {"who": "first"}}, {"alias": {"name": long}}]
    if backend == "sqlite":
        store.apply(write, ADA)
        assert store.query(f".alias.name={long}", ADA)[0]["alias"]["name"] == long
    else:
        _refused(
            store,
            "alias.name is 3000 bytes long, more than this app's PostgreSQL store indexes "
            "(2600) — keep it shorter; long text belongs in doc.body",
            write=write,
        )
    body = "a long body " * 10_000  # doc.body has no such index: both keep it
    store.apply({"doc": {"title": "long", "body": body}}, ADA)
    assert store.query(".doc.title=long&.doc?", ADA)[0]["doc"]["body"] == body


def test_star_over_more_components_than_one_select_joins_is_refused(store: AnyStore) -> None:
    many = {f"c{i}": {"properties": {"v": {"type": "string"}}} for i in range(70)}
    store.declare({"$defs": many})
    assert isinstance(store.vocabulary, Vocabulary)
    _refused(
        store,
        "* reads all 74 components of this app, more than one filter reads at once "
        "(60 tables) — name the components you need, like .jog!&.doc?",
        query="*",
    )
    assert store.query(".c1!&.c2?", ADA) == []


# -- generated: anything at all is rows or a refusal -----------------------------------------

hostile = st.sampled_from(
    [BIG, -BIG, 2**63, float("inf"), float("nan"), "\ud800", "a\x00", "x" * 3_000, "%ED%A0%80"]
)
text = st.text(max_size=8) | hostile.map(str)
value: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | text | hostile,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(text, inner, max_size=2),
    max_leaves=4,
)
paths = st.sampled_from(
    [".jog.who", ".jog.miles", ".jog.at", ".recipe.coach", ".recipe.vegan", ".doc.title"]
) | st.integers(1, 300).map(lambda n: ".recipe.coach" * n + ".recipe.cuisine")
predicate = (
    st.builds(
        lambda p, op, v: f"{p}{op}{v}",
        paths,
        st.sampled_from(["=", "!=", "~=", "<", ">=", "=>"]),
        text | st.integers().map(str) | st.floats().map(str),
    )
    | text
)
filters = st.lists(predicate, min_size=1, max_size=4).map("&".join)
bundles = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "entity": st.fixed_dictionaries({"eid": text | hostile}),
            "jog": st.dictionaries(st.sampled_from(["who", "miles", "at"]) | text, value),
            "recipe": st.dictionaries(st.sampled_from(["serves", "coach", "vegan"]), value),
            "alias": st.fixed_dictionaries({"name": value}),
            "edges": st.lists(st.fixed_dictionaries({"type": text, "child": text})),
        },
    ),
    min_size=1,
    max_size=3,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(line=filters, write=bundles)
def test_any_filter_or_write_is_served_or_refused_and_a_refusal_writes_nothing(
    store: AnyStore, line: str, write: list[dict[str, Any]]
) -> None:
    try:
        store.query(line, ADA)
    except Refused as refused:
        assert refused.sentence.strip()
    before = _count(store)
    try:
        store.apply(write, ADA)
    except Refused as refused:
        assert refused.sentence.strip()
        assert _count(store) == before
