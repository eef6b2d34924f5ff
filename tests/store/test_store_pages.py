"""Ordered, paged reads: `sort=` orders rows, no answer holds more than a page, and `after=`
reads on from the cursor a page gave, on every backend.

The property: whatever the rows and whatever the order asked for, reading page after page
by cursor gives every row once, in that order — ascending with an empty value first,
descending with it last, ties in creation order (newest first when the last column
descends).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import ADA, AnyStore

from pasture.errors import Refused
from pasture.store.answers import answer_data, answer_text
from pasture.store.pages import Rows

COLUMNS = {"serves": "number", "cuisine": "text", "vegan": "bool"}
_values = {
    "serves": st.none() | st.integers(-3, 3),
    "cuisine": st.none() | st.sampled_from(["a", "b", "B", "é", "日本", "a b"]),
    "vegan": st.none() | st.booleans(),
}
_recipe = st.fixed_dictionaries({name: strategy for name, strategy in _values.items()})
_keys = st.lists(
    st.tuples(st.sampled_from(sorted(COLUMNS)), st.booleans()),
    max_size=3,
    unique_by=lambda key: key[0],
)


def _write(store: AnyStore, recipes: list[dict[str, Any]]) -> list[str]:
    """A fresh set of recipes, the old ones gone: their eids in creation order."""
    page, store.max_rows = store.max_rows, None
    old = store.query(".recipe!", ADA)
    if old:
        store.apply([{"entity": r["entity"], "tombstone": {}} for r in old], ADA)
    store.max_rows = page
    eids: list[str] = []
    for recipe in recipes:  # one at a time: each a step later in creation
        written = {k: v for k, v in recipe.items() if v is not None}
        eids.append(store.apply({"recipe": written}, ADA).entities[0])
    return eids


def _expected(
    eids: list[str], recipes: list[dict[str, Any]], keys: list[tuple[str, bool]]
) -> list[str]:
    """The order the store promises, worked out here: creation first, then each column's
    order from the last to the first, each sort stable."""
    rows = list(zip(eids, recipes, strict=True))
    if keys and keys[-1][1]:
        rows.reverse()  # tied in every column: the newest first when the last descends
    for column, down in reversed(keys):

        def key(row: tuple[str, dict[str, Any]], column: str = column) -> tuple[int, Any]:
            value = row[1][column]
            return (0, 0) if value is None else (1, value)  # empty before every value

        rows.sort(key=key, reverse=down)
    return [eid for eid, _ in rows]


def _all_pages(store: AnyStore, filter: str) -> tuple[list[str], int]:
    """Every row a filter answers, page by page; and how many pages it took."""
    seen: list[str] = []
    answer = store.query(filter, ADA)
    pages = 1
    while True:
        assert isinstance(answer, Rows)
        assert len(answer) <= 3
        seen += [row["entity"]["eid"] for row in answer]
        if answer.cursor is None:
            return seen, pages
        answer = store.query(f"{filter}&after={answer.cursor}", ADA)
        pages += 1


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(recipes=st.lists(_recipe, max_size=10), keys=_keys)
def test_page_after_page_reads_every_row_once_in_the_order_asked(
    store: AnyStore, recipes: list[dict[str, Any]], keys: list[tuple[str, bool]]
) -> None:
    store.max_rows = 3
    eids = _write(store, recipes)
    sort = ",".join(("-" if down else "") + f"recipe.{column}" for column, down in keys)
    filter = ".recipe!" + (f"&sort={sort}" if sort else "")
    seen, pages = _all_pages(store, filter)
    assert seen == _expected(eids, recipes, keys)
    assert pages == max(1, -(-len(eids) // 3))


def test_creation_is_an_order_of_its_own(store: AnyStore) -> None:
    store.max_rows = 2
    eids = _write(store, [{"serves": n, "cuisine": None, "vegan": None} for n in range(5)])
    assert _all_pages(store, ".recipe!&sort=-created.at") == (list(reversed(eids)), 3)
    assert _all_pages(store, ".recipe!&sort=created.at") == (eids, 3)
    assert _all_pages(store, ".recipe!") == (eids, 3)  # unsorted: oldest first


def test_an_answer_cut_short_says_so_and_carries_its_cursor(store: AnyStore) -> None:
    store.max_rows = 2
    _write(store, [{"serves": n, "cuisine": "a", "vegan": True} for n in range(3)])
    first = store.query(".recipe!&sort=-recipe.serves", ADA)
    assert isinstance(first, Rows) and first.cursor is not None
    assert answer_text(".recipe!", first, "ada/box") == (
        "2 rows in ada/box, and more follow — the next page is the same filter with "
        f"&after={first.cursor}"
    )
    assert answer_data(first) == {"rows": list(first), "more": True, "cursor": first.cursor}
    last = store.query(f".recipe!&sort=-recipe.serves&after={first.cursor}", ADA)
    assert [r["recipe"]["serves"] for r in last] == [0]
    assert answer_data(last) == {"rows": list(last)}
    assert answer_text(".recipe!", last, "ada/box") == "1 row in ada/box"


@pytest.mark.parametrize(
    ("filter", "sentence"),
    [
        (
            ".recipe!&sort=recipe.serves&after=bm90LWEtY3Vyc29y",
            "after= takes the cursor an answer gave, unchanged — ask again without after= for "
            "the first page",
        ),
        (
            ".recipe!&sort=recipe",
            "sort= orders rows by columns, like sort=jog.miles, or sort=-jog.miles for the "
            "largest first; several are comma-separated, like sort=-jog.miles,jog.who",
        ),
        (
            ".recipe!&sort=recipe.serves,recipe.serves",
            "sort= names recipe.serves twice — name each column once",
        ),
        (
            ".recipe!&sort=recipe.nope",
            "recipe has no column nope — its columns are serves, cuisine, vegan, source, coach",
        ),
        (
            ".recipe!&.count!&after=abc",
            "after= continues a page of rows, and an aggregate answers one value for every "
            "match — leave out after=",
        ),
        (
            "pasta&sort=recipe.serves",
            "a search for words answers the best matches first — leave out sort=, or search "
            "with a column instead, like .doc.title~=word",
        ),
        (
            ".recipe!&limit=2&after=abc",
            "limit= without sort= is the newest rows, one window, and has no page after it — "
            "say sort= (like sort=-created.at for the newest first) to read on with after=",
        ),
        (
            ".recipe!&sort=recipe.serves&limit=5",
            "limit is at most 3 rows, the most one answer holds here — read on page by page: "
            "each answer cut short gives the after= of the next",
        ),
        (
            ".recipe!&after=a%26b",
            "after= continues from the cursor an answer gave, like after=<its cursor>",
        ),
    ],
)
def test_what_cannot_be_paged_is_refused_saying_how(
    store: AnyStore, filter: str, sentence: str
) -> None:
    store.max_rows = 3
    with pytest.raises(Refused) as refused:
        store.query(filter, ADA)
    assert refused.value.sentence == sentence


def test_a_cursor_continues_only_the_order_it_came_from(store: AnyStore) -> None:
    store.max_rows = 1
    _write(store, [{"serves": n, "cuisine": "a", "vegan": None} for n in range(2)])
    page = store.query(".recipe!&sort=recipe.serves", ADA)
    assert isinstance(page, Rows) and page.cursor is not None
    with pytest.raises(Refused) as refused:
        store.query(f".recipe!&sort=-recipe.cuisine&after={page.cursor}", ADA)
    assert refused.value.sentence == (
        "this cursor continues a read in another order than sort=-recipe.cuisine — ask with the "
        "sort= of the answer that gave it, or without after="
    )


@settings(max_examples=200)
@given(cursor=st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"))
def test_any_cursor_is_a_page_or_the_sentence(cursor: str) -> None:
    from pasture.store.pages import SENTENCE, read_cursor

    try:
        values, position = read_cursor(cursor or "x", "recipe.serves", ["number"])
    except Refused as refused:
        assert refused.sentence.startswith(("after= takes", "this cursor continues"))
        return
    assert len(values) == 1 and isinstance(position, int) and SENTENCE
