"""A row's kind read the same way whatever finds it: a full-text search, a listing, a
reference walked — also after a later write or a new vocabulary changes the kind."""

from store_fixtures import ADA, RUNS, AnyStore


def kinds(store: AnyStore, filter: str) -> list[str]:
    return [row["kind"] for row in store.query(filter, ADA)]


def test_a_search_lists_an_entity_as_its_kind_after_a_write_changes_it(store: AnyStore) -> None:
    eid = store.apply({"entity": {"eid": "$n"}, "doc": {"title": "Hill repeats"}}, ADA).aliases[
        "$n"
    ]
    assert kinds(store, "hill") == kinds(store, f"id={eid}") == ["doc"]
    store.apply({"entity": {"eid": eid}, "jog": {"miles": 4}}, ADA)
    assert kinds(store, "hill") == kinds(store, f"id={eid}") == ["jog"]
    store.apply({"entity": {"eid": eid}, "jog": None}, ADA)
    assert kinds(store, "hill") == ["doc"]


def test_a_search_lists_the_kinds_a_new_vocabulary_gives(store: AnyStore) -> None:
    store.apply({"jog": {"miles": 3}, "recipe": {"serves": 2}, "doc": {"title": "Both"}}, ADA)
    assert kinds(store, "both") == kinds(store, ".doc!") == ["jog"]
    reordered = {"$defs": {"recipe": RUNS["$defs"]["recipe"], "jog": RUNS["$defs"]["jog"]}}
    store.declare(reordered)
    assert kinds(store, "both") == kinds(store, ".doc!") == ["recipe"]
