"""Walks, `?`, `!` and reverse plurals answer what a plain Python reading of the graph does.

The property: on a small random graph (entities with a jog, a doc, a note or a
comment pointing anywhere in it, some of them tombstoned, so a reference may
name nothing), a random filter of walks one and two references deep, `!`,
`?`, `=` (empty), `~=`, `!=`, any-of lists, ranges, components had and lacked,
reverse plurals with every operator, and words, answers exactly the entities
(in creation order, where it searches for no words) that the evaluation below
picks out — and `.count!` counts them. A walk whose far side a predicate needs
is an inner join in the SQL and one that `!=`, `=` or `?` reads stays an outer
one; this is what says the two mean the same. A reference in a row reads back
as `{eid, name}` whether a walk from it read the name or the names were read
apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import ADA, RUNS, AnyStore

Graph = dict[str, dict[str, dict[str, Any]]]  # live eid -> component -> column -> value
Test = Callable[[Graph, str], bool]

VOCAB = {
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
WHO = ["a", "A", "b", "ab"]
MILES = [1, 2, 3]
COMPONENTS = ["jog", "doc", "note", "comment"]
# the reference paths a walk starts from, one or two references deep
VIA = [
    (),
    ("note", "target"),
    ("comment", "target"),
    ("note", "target", "note", "target"),
    ("comment", "target", "note", "target"),
]


def reach(graph: Graph, eid: str, path: tuple[str, ...]) -> Any:
    """The value at the end of `path` from entity `eid`, walking each reference; None
    where a component, a value or the entity a reference names is not there."""
    value: Any = eid
    for i in range(0, len(path), 2):
        comps = graph.get(value) if isinstance(value, str) else None
        if comps is None or path[i] not in comps:
            return None
        value = comps[path[i]].get(path[i + 1])
    return value


def pointing(graph: Graph, eid: str, comp: str) -> int:
    return sum(1 for c in graph.values() if comp in c and c[comp].get("target") == eid)


COUNT_OPS: dict[str, Callable[[int, int], bool]] = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


@st.composite
def predicates(draw: st.DrawFn) -> tuple[str, Test]:
    """One predicate as filter text, and what it means of an entity in a graph."""
    form = draw(st.sampled_from(["has", "column", "reach", "plural", "words"]))
    if form == "words":  # each doc's title is its own word
        word = f"t{draw(st.integers(0, 9))}"
        return word, lambda g, e: g[e].get("doc", {}).get("title") == word
    if form == "has":
        comp = draw(st.sampled_from(["jog", "doc", "note"]))
        mark = draw(st.sampled_from(["!", "?", "="]))
        if mark == "!":
            return f".{comp}!", lambda g, e: comp in g[e]
        if mark == "=":
            return f".{comp}=", lambda g, e: comp not in g[e]
        return f".{comp}?", lambda g, e: True
    if form == "reach":
        via = draw(st.sampled_from(VIA[1:]))
        comp = draw(st.sampled_from(["jog", "doc", "note"]))
        required = draw(st.booleans())
        text = "." + ".".join((*via, comp)) + ("!" if required else "?")

        def reaches(g: Graph, e: str) -> bool:
            far = reach(g, e, via)
            return not required or (far in g and comp in g[far])

        return text, reaches
    if form == "plural":
        word, comp = draw(st.sampled_from([("notes", "note"), ("comments", "comment")]))
        op = draw(st.sampled_from(list(COUNT_OPS)))
        n = draw(st.integers(0, 3))
        return f".{word}{op}{n}", lambda g, e: COUNT_OPS[op](pointing(g, e, comp), n)
    via = draw(st.sampled_from(VIA))
    column = draw(st.sampled_from(["who", "miles"]))
    path = (*via, "jog", column)
    shown = "." + ".".join(path)
    if column == "who":
        op = draw(st.sampled_from(["=", "!=", "~=", "empty", "present"]))
    else:
        op = draw(st.sampled_from(["=", "!=", "<", ">=", "range", "empty", "present"]))
    if op == "empty":
        return f"{shown}=", lambda g, e: reach(g, e, path) is None
    if op == "present":
        return f"{shown}~=", lambda g, e: reach(g, e, path) is not None
    if op == "range":
        low, high = draw(st.sampled_from([(1, 2), (2, 3)]))
        whole = draw(st.booleans())

        def within(g: Graph, e: str) -> bool:
            v = reach(g, e, path)
            return v is not None and low <= v and (v <= high if whole else v < high)

        return f"{shown}={low}{'..' if whole else '...'}{high}", within
    pool: list[Any] = WHO if column == "who" else MILES
    if op in ("=", "!="):
        values = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2, unique=True))
        text = f"{shown}{op}{','.join(str(v) for v in values)}"
        if op == "=":
            return text, lambda g, e: reach(g, e, path) in values
        return text, lambda g, e: reach(g, e, path) not in values
    value = draw(st.sampled_from(pool))
    if op == "~=":

        def contains(g: Graph, e: str) -> bool:
            v = reach(g, e, path)
            return v is not None and str(value).lower() in v.lower()

        return f"{shown}~={value}", contains
    compare = COUNT_OPS[op]
    return (
        f"{shown}{op}{value}",
        lambda g, e: (v := reach(g, e, path)) is not None and compare(v, value),
    )


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[dict[str, Any]], set[int]]:
    """Bundles of up to 10 entities, each reference naming one of them, and which of them
    are then tombstoned."""
    n = draw(st.integers(1, 10))
    bundles: list[dict[str, Any]] = []
    for i in range(n):
        b: dict[str, Any] = {"entity": {"eid": f"$e{i}"}}
        for comp in draw(st.lists(st.sampled_from(COMPONENTS), unique=True, max_size=3)):
            if comp == "jog":
                b["jog"] = {
                    "who": draw(st.none() | st.sampled_from(WHO)),
                    "miles": draw(st.none() | st.sampled_from(MILES)),
                }
            elif comp == "doc":
                b["doc"] = {"title": f"t{i}"}
            else:
                target = draw(st.none() | st.integers(0, n - 1).map(lambda t: f"$e{t}"))
                b[comp] = {"target": target}
        if len(b) == 1:
            b["doc"] = {"title": f"t{i}"}
        bundles.append(b)
    gone = draw(st.sets(st.integers(0, n - 1), max_size=2))
    return bundles, gone


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    made=graphs(),
    base=st.sampled_from(["jog", "doc", "note", "comment"]),
    more=st.lists(predicates(), min_size=1, max_size=3),
)
def test_walks_and_plurals_answer_what_python_would(
    store: AnyStore,
    made: tuple[list[dict[str, Any]], set[int]],
    base: str,
    more: list[tuple[str, Test]],
) -> None:
    store.declare(VOCAB)
    # the last example's entities go: what is left of them is nothing a filter here finds
    for comp in COMPONENTS:
        rows = store.query(f".{comp}!", ADA)
        assert isinstance(rows, list)
        if rows:
            store.apply([{"entity": r["entity"], "tombstone": {}} for r in rows], ADA)
    bundles, gone = made
    applied = store.apply(bundles, ADA)
    eids = applied.entities
    if gone:
        store.apply([{"entity": {"eid": eids[i]}, "tombstone": {}} for i in sorted(gone)], ADA)
    graph: Graph = {}
    for i, b in enumerate(bundles):
        if i in gone:
            continue
        comps: dict[str, dict[str, Any]] = {}
        for comp, columns in b.items():
            if comp == "entity":
                continue
            comps[comp] = {
                col: applied.aliases[v] if isinstance(v, str) and v.startswith("$") else v
                for col, v in columns.items()
            }
        graph[eids[i]] = comps

    text = "&".join([f".{base}!", *(t for t, _ in more)])
    expected = [
        e for e in eids if e in graph and base in graph[e] and all(m(graph, e) for _, m in more)
    ]
    rows = store.query(text, ADA)
    assert isinstance(rows, list)
    found = [r["entity"]["eid"] for r in rows]
    if any(not t.startswith(".") for t, _ in more):
        found, expected = sorted(found), sorted(expected)  # a search: the best match first
    assert found == expected, text
    for r in rows:  # a reference reads back as the entity it names, walked or not
        for comp in ("note", "comment"):
            if r.get(comp) is None:
                continue
            ref = r[comp]["target"]
            far = graph[r["entity"]["eid"]][comp]["target"]
            assert (ref or {}).get("eid") == far, text
            if far in graph:
                assert ref.get("name") == graph[far].get("doc", {}).get("title"), text
            for brought, columns in (("jog", ("who", "miles", "at")), ("doc", ("title", "body"))):
                if brought in (ref or {}):  # what a walk brings from the far side
                    there = graph.get(far, {}).get(brought)
                    want = None if there is None else {c: there.get(c) for c in columns}
                    assert ref[brought] == want, text
    assert store.query(f"{text}&.count!", ADA) == {"count": len(expected)}, text


def test_a_walk_brings_the_far_side_whether_it_must_reach_it_or_not(store: AnyStore) -> None:
    store.declare(VOCAB)
    made = store.apply(
        [
            {"entity": {"eid": "$run"}, "jog": {"who": "a", "miles": 2}, "doc": {"title": "t"}},
            {"entity": {"eid": "$on"}, "note": {"target": "$run", "text": "x"}},
            {"entity": {"eid": "$off"}, "note": {"target": "$on", "text": "y"}},
        ],
        ADA,
    )
    run = made.aliases["$run"]
    jog = {"who": "a", "miles": 2, "at": None}
    target = {"eid": run, "name": "t", "jog": jog}
    for text in (".note.target.jog.who=a", ".note!&.note.target.jog!", ".note.target.jog.miles>1"):
        rows = store.query(text, ADA)
        assert isinstance(rows, list)
        assert [r["note"]["target"] for r in rows] == [target], text
    rows = store.query(".note!&.note.target.jog?", ADA)
    assert isinstance(rows, list)
    assert [r["note"]["target"].get("jog") for r in rows] == [jog, None]
