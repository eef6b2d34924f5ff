"""The run club written into a store, and the ways its tests read it."""

from typing import Any

import pytest
from store_fixtures import ADA, BOB, AnyStore


@pytest.fixture
def club(store: AnyStore) -> AnyStore:
    """Four runs, a recipe, a comment on the first run, written by Ada and Bob."""
    store.apply(
        [
            {
                "entity": {"eid": "$r1"},
                "doc": {"title": "Morning run", "body": "foggy by the river"},
                "jog": {"who": "Ada", "miles": 5, "at": "2026-09-01"},
                "alias": {"name": "first"},
            },
            {"entity": {"eid": "$r2"}, "jog": {"who": "Bob", "miles": 12.5, "at": "2026-09-03"}},
            {"entity": {"eid": "$c"}, "doc": {"body": "nice pace"}, "comment": {"target": "$r1"}},
        ],
        ADA,
    )
    store.apply(
        [
            {
                "doc": {"title": "Long run", "body": "river river river"},
                "jog": {"who": "Cy", "miles": 20},
            },
            {"jog": {"who": "ada lovelace", "miles": 3}, "starred": {}},
            {
                "recipe": {"serves": 4, "cuisine": "thai", "vegan": True},
                "doc": {"title": "Curry & rice"},
            },
        ],
        BOB,
    )
    return store


ADA_REF = {"eid": ADA.eid, "name": "Ada"}


BOB_REF = {"eid": BOB.eid, "name": "Bob"}


def q(store: AnyStore, text: str) -> list[dict[str, Any]]:
    rows = store.query(text, ADA)
    assert isinstance(rows, list), rows
    return rows


def agg(store: AnyStore, text: str) -> dict[str, Any]:
    answer = store.query(text, ADA)
    assert isinstance(answer, dict), answer
    return answer


def whos(store: AnyStore, text: str) -> list[str]:
    return [r["jog"]["who"] for r in q(store, text)]
