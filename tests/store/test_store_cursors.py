"""A cursor is text anyone may send: whatever comes as `after=`, on both backends, the store
answers a page or refuses with a sentence — never an error of the database's.

Cursors are made every way a caller could: random text, random bytes in the cursor's own
alphabet, JSON of the cursor's shape holding values of every kind (whole numbers past 64
bits, NUL, lone surrogates, floats past any double), and a real cursor with one character
changed. The words other grammars order and page with are refused naming `sort=` and
`after=`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from store_fixtures import ADA, RUNS, AnyStore

from pasture.errors import Refused
from pasture.store.pages import Rows

ORDER = "recipe.serves,-recipe.cuisine"
FILTER = f".recipe!&sort={ORDER}"
FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# What a refusal of a cursor may say: each names after= and how to go on.
CURSOR_SENTENCES = (
    "after= takes the cursor an answer gave, unchanged — ask again without after= for the "
    "first page",
    "after= continues from the cursor an answer gave, like after=<its cursor>",
    "after= continues from the cursor an answer gave, like after=<its cursor> — this one is "
    "longer than any cursor",
    "this cursor continues a read in another order than sort=recipe.serves,-recipe.cuisine — "
    "ask with the sort= of the answer that gave it, or without after=",
)


def _encoded(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _digest(order: str) -> str:
    return hashlib.sha256(order.encode()).hexdigest()[:8]


_anything = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([2**63, -(2**63) - 1, 2**70, 10**400])
    | st.floats(allow_nan=False)
    | st.text()
    | st.sampled_from(["\x00", "a\x00b", "\ud800", "é", "日本"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)
# JSON of a cursor's own shape: [digest, [values…], position], the digest this order's or not
_shaped = st.tuples(
    st.sampled_from([_digest(ORDER), _digest("recipe.serves"), ""]) | st.text(max_size=9),
    st.lists(_anything, max_size=3),
    _anything,
).map(lambda body: json.dumps(list(body), ensure_ascii=True).encode())
_json_text = st.sampled_from(
    [b"[]", b"{}", b"null", b"1e400", b'["x",[1e400,"a"],1]', b"[" * 5000, b'"\\ud800"']
)
CURSORS = (
    st.text(max_size=80)
    | st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    | st.binary(max_size=120).map(_encoded)
    | _shaped.map(_encoded)
    | _json_text.map(_encoded)
)


def _ask(store: AnyStore, cursor: str) -> None:
    """The filter read on from `cursor`: a page, or a refusal. A cursor in the cursor's own
    alphabet is refused as a cursor; other text may be read as more of the filter (a `&`
    in it begins another predicate, a `"` a quote), and is refused as that."""
    try:
        answer = store.query(f"{FILTER}&after={cursor}", ADA)
    except Refused as refused:
        if re.fullmatch(r"[A-Za-z0-9_-]+", cursor):
            assert refused.sentence in CURSOR_SENTENCES, refused.sentence
        else:
            assert refused.sentence and "Traceback" not in refused.sentence
        return
    assert isinstance(answer, Rows | dict)
    if isinstance(answer, Rows):
        assert len(answer) <= 2


@pytest.fixture
def recipes(store: AnyStore) -> AnyStore:
    store.max_rows = 2
    for serves, cuisine in [(1, "a"), (2, "b"), (2, None), (None, "c"), (3, "a")]:
        written = {"serves": serves, "cuisine": cuisine}
        store.apply({"recipe": {k: v for k, v in written.items() if v is not None}}, ADA)
    return store


@FUZZ
@given(cursor=CURSORS)
@example(cursor=_encoded(json.dumps([_digest(ORDER), [2**70, "a"], 1]).encode()))
@example(cursor=_encoded(json.dumps([_digest(ORDER), [1, "a\x00"], 1]).encode()))
@example(cursor=_encoded(json.dumps([_digest(ORDER), [1, "\ud800"], 1]).encode()))
@example(cursor=_encoded(json.dumps([_digest(ORDER), [1, "a"], 2**70]).encode()))
@example(cursor=_encoded(b'["' + _digest(ORDER).encode() + b'",[1e400,"a"],1]'))
def test_any_cursor_is_a_page_or_a_sentence(recipes: AnyStore, cursor: str) -> None:
    _ask(recipes, cursor)


@FUZZ
@given(at=st.integers(0, 200), to=st.characters(codec="ascii"))
def test_a_real_cursor_changed_anywhere_is_a_page_or_a_sentence(
    recipes: AnyStore, at: int, to: str
) -> None:
    first = recipes.query(FILTER, ADA)
    assert isinstance(first, Rows) and first.cursor is not None
    cursor = first.cursor
    at %= len(cursor)
    _ask(recipes, cursor[:at] + to + cursor[at + 1 :])


def test_the_cursor_of_a_page_still_reads_on_after_rows_change(recipes: AnyStore) -> None:
    first = recipes.query(FILTER, ADA)
    assert isinstance(first, Rows) and first.cursor is not None
    seen = [r["entity"]["eid"] for r in first]
    recipes.apply([{"entity": first[0]["entity"], "tombstone": {}}], ADA)  # a row it showed
    rest: list[Any] = []
    page = recipes.query(f"{FILTER}&after={first.cursor}", ADA)
    while True:
        assert isinstance(page, Rows)
        rest += [r["entity"]["eid"] for r in page]
        if page.cursor is None:
            break
        page = recipes.query(f"{FILTER}&after={page.cursor}", ADA)
    assert len(rest) == 3 and not set(rest) & set(seen)


@pytest.mark.parametrize(
    ("written", "sentence"),
    [
        (
            ".recipe!&.order=similar",
            ".order=similar is not how rows are ordered here — write sort= with a column, like "
            "sort=jog.miles, or sort=-jog.miles for the largest first (a component named order "
            "is filtered by a column, like .order.<column>=similar)",
        ),
        (
            ".recipe!&order=-recipe.serves",
            "order=-recipe.serves is not how rows are ordered here — write sort= with a column, "
            "like sort=jog.miles, or sort=-jog.miles for the largest first",
        ),
        (
            ".recipe!&.sort=recipe.serves",
            ".sort=recipe.serves is not how rows are ordered here — write sort= with a column, "
            "like sort=jog.miles, or sort=-jog.miles for the largest first (a component named "
            "sort is filtered by a column, like .sort.<column>=recipe.serves)",
        ),
        (
            ".recipe!&order_by=recipe.serves",
            "order_by=recipe.serves is not how rows are ordered here — write sort= with a "
            "column, like sort=jog.miles, or sort=-jog.miles for the largest first",
        ),
        (
            ".recipe!&offset=1000",
            "offset=1000 is not how pages are read here — an answer cut short carries a cursor, "
            "and the same filter with after=<that cursor> answers the next page",
        ),
    ],
)
def test_the_words_of_other_grammars_are_refused_naming_sort_and_after(
    store: AnyStore, written: str, sentence: str
) -> None:
    with pytest.raises(Refused) as refused:
        store.query(written, ADA)
    assert refused.value.sentence == sentence


def test_a_component_named_order_is_still_a_component(store: AnyStore) -> None:
    store.declare(
        {"$defs": {**RUNS["$defs"], "order": {"properties": {"total": {"type": "number"}}}}}
    )
    store.apply({"order": {"total": 3}}, ADA)
    rows = store.query(".order!&.order.total>=2", ADA)
    assert [row["order"] for row in rows] == [{"total": 3}]
    with pytest.raises(Refused) as refused:
        store.query(".order=similar", ADA)
    assert refused.value.sentence.endswith("like .order.<column>=similar)")
