"""Reads: every form of the filter grammar against a real store, and every refusal."""

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import ADA, BOB, AnyStore, Clock

from pasture.errors import Refused
from pasture.store import Vocabulary, check_filter
from pasture.store.sql import compile_filter


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


def refused(store: AnyStore, text: str) -> str:
    with pytest.raises(Refused) as e:
        store.query(text, ADA)
    sentence = str(e.value)
    assert "SELECT" not in sentence and "sqlite" not in sentence.lower()
    # the same sentence without a database, as a deploy checks a query template
    with pytest.raises(Refused) as e2:
        check_filter(text, store.vocabulary)
    assert str(e2.value) == sentence
    return sentence


def test_has_lists_oldest_first_with_only_named_components(club: AnyStore) -> None:
    rows = q(club, ".jog!")
    assert [r["jog"]["who"] for r in rows] == ["Ada", "Bob", "Cy", "ada lovelace"]
    assert all(set(r) == {"kind", "entity", "jog"} for r in rows)
    assert rows[1]["jog"] == {"who": "Bob", "miles": 12.5, "at": "2026-09-03"}


def test_lacks_and_maybe(club: AnyStore) -> None:
    assert whos(club, ".jog!&.doc=") == ["Bob", "ada lovelace"]
    rows = q(club, ".jog!&.doc?")
    assert [r["doc"] is None for r in rows] == [False, True, False, True]
    assert rows[0]["doc"] == {"title": "Morning run", "body": "foggy by the river"}


def test_every_component(club: AnyStore) -> None:
    (row,) = [r for r in q(club, ".starred!&*")]
    assert set(row) == {"kind", "entity", "jog", "starred", "created", "updated"}
    assert row["kind"] == "jog"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (".jog.miles>5", ["Bob", "Cy"]),
        (".jog.miles>=5", ["Ada", "Bob", "Cy"]),
        (".jog.miles<5", ["ada lovelace"]),
        (".jog.miles<=5", ["Ada", "ada lovelace"]),
        (".jog.miles=12.5", ["Bob"]),
        (".jog.who=Ada", ["Ada"]),
        (".jog.who~=ada", ["Ada", "ada lovelace"]),
        (".jog.who=Ada,Cy", ["Ada", "Cy"]),
        (".jog!&.jog.who!=Ada,Cy", ["Bob", "ada lovelace"]),
        (".jog.miles=3..12.5", ["Ada", "Bob", "ada lovelace"]),
        (".jog.miles=3...12.5", ["Ada", "ada lovelace"]),
        (".jog!&.jog.at=", ["Cy", "ada lovelace"]),
        (".jog.at~=", ["Ada", "Bob"]),
        (".jog.at>=2026-09-02", ["Bob"]),
        (".jog!&.jog.who!=Ada", ["Bob", "Cy", "ada lovelace"]),
        ('.jog.who="ada lovelace"', ["ada lovelace"]),
        (".jog!&limit=2", ["Cy", "ada lovelace"]),
    ],
)
def test_column_comparisons(club: AnyStore, text: str, expected: list[str]) -> None:
    assert whos(club, text) == expected


def test_limit_and_dot_limit_are_the_same_window(club: AnyStore) -> None:
    assert whos(club, ".jog!&.limit=2") == whos(club, ".jog!&limit=2") == ["Cy", "ada lovelace"]
    assert whos(club, ".limit=1&.jog!") == ["ada lovelace"]
    assert whos(club, ".jog!&limit=3&.limit=3") == ["Bob", "Cy", "ada lovelace"]
    for bad in ("limit=x", "limit=-1", "limit=0", "limit="):
        assert refused(club, f".jog!&{bad}") == "limit is a whole number of rows, like limit=20"
    for bad in (".limit=x", ".limit=-1", ".limit=0", ".limit="):
        assert refused(club, f".jog!&{bad}") == ".limit is a whole number of rows, like .limit=20"
    assert "limit is written twice" in refused(club, ".jog!&limit=2&.limit=3")


def test_not_equal_also_matches_a_row_lacking_the_column(club: AnyStore) -> None:
    rows = q(club, ".recipe.cuisine!=greek")
    kinds = {r["kind"] for r in rows}
    assert "jog" in kinds and "recipe" in kinds
    assert all(r["recipe"] is None for r in rows if r["kind"] != "recipe")


def test_bools_urls_and_quoted_values(club: AnyStore) -> None:
    assert len(q(club, ".recipe.vegan=true")) == 1
    assert q(club, ".recipe.vegan=false") == []
    (row,) = q(club, '.doc.title="Curry & rice"&.recipe!')
    assert row["recipe"]["vegan"] is True


def test_words_are_full_text_ranked_best_first(club: AnyStore) -> None:
    rows = q(club, "river&.doc!")
    assert [r["doc"]["title"] for r in rows] == ["Long run", "Morning run"]
    assert [r["kind"] for r in q(club, "foggy")] == ["jog"]
    assert q(club, '"by the river"&.jog!')[0]["jog"]["who"] == "Ada"
    assert q(club, "nothinglikethis") == []


def test_words_alone_answer_whole_entities_best_first(club: AnyStore) -> None:
    rows = q(club, "river")
    assert [r["doc"]["title"] for r in rows] == ["Long run", "Morning run"]
    long_run, morning = rows
    assert set(long_run) == {"kind", "entity", "doc", "jog", "created", "updated"}
    assert long_run["jog"] == {"who": "Cy", "miles": 20, "at": None}
    assert set(morning) == {"kind", "entity", "doc", "jog", "alias", "created", "updated"}
    assert morning["alias"] == {"name": "first"}
    assert morning["created"]["by"] == ADA_REF
    (pace,) = q(club, '"nice pace"')
    assert pace["comment"]["target"]["name"] == "first"
    # an absence names no component either; naming one is the ordinary rule again
    assert [set(r) for r in q(club, "river&.alias=")] == [set(long_run)]
    assert [set(r) for r in q(club, "river&.doc!")] == [{"kind", "entity", "doc"}] * 2
    assert [set(r) for r in q(club, "river&.jog.miles>10")] == [{"kind", "entity", "jog"}]


def test_id_alone_answers_the_whole_entity(club: AnyStore) -> None:
    first = q(club, ".jog!")[0]["entity"]["eid"]
    (row,) = q(club, f"id={first}")
    assert set(row) == {"kind", "entity", "doc", "jog", "alias", "created", "updated"}
    assert row["jog"] == {"who": "Ada", "miles": 5, "at": "2026-09-01"}
    assert row == q(club, f"id={first}&*")[0]
    assert set(q(club, f"id={first}&.doc?")[0]) == {"kind", "entity", "doc"}


def test_id_and_created_by_read_back_a_name(club: AnyStore) -> None:
    first = q(club, ".jog!")[0]["entity"]["eid"]
    (row,) = q(club, f"id={first}&.created!")
    assert row["created"]["by"] == {"eid": ADA.eid, "name": "Ada"}
    assert whos(club, ".jog!&.created.by=Bob") == ["Cy", "ada lovelace"]
    assert whos(club, f".jog!&.created.by={BOB.eid}") == ["Cy", "ada lovelace"]


def test_references_read_back_the_targets_name(club: AnyStore) -> None:
    (row,) = q(club, ".comment!")
    assert row["comment"]["target"]["name"] == "first"  # its alias.name, before its doc.title
    club.apply({"entity": {"eid": row["comment"]["target"]["eid"]}, "alias": None}, ADA)
    (row,) = q(club, ".comment!")
    assert row["comment"]["target"]["name"] == "Morning run"


def test_each_row_reads_back_its_own_references(club: AnyStore) -> None:
    made = club.apply(
        [
            {"entity": {"eid": "$c2"}, "comment": {"target": "$r"}},
            {"entity": {"eid": "$r"}, "doc": {"title": "Hill repeats"}},
            {"comment": {"target": "$gone"}},
            {"entity": {"eid": "$gone"}, "doc": {"title": "Gone soon"}},
            {"comment": {"target": "$bare"}},
            {"entity": {"eid": "$bare"}, "jog": {"miles": 1}},
        ],
        BOB,
    )
    gone = made.aliases["$gone"]
    club.apply({"entity": {"eid": gone}, "tombstone": {}}, BOB)
    rows = q(club, ".comment!&.created!")
    assert [(r["comment"]["target"], r["created"]["by"]) for r in rows] == [
        ({"eid": rows[0]["comment"]["target"]["eid"], "name": "first"}, ADA_REF),
        ({"eid": made.aliases["$r"], "name": "Hill repeats"}, BOB_REF),
        ({"eid": gone}, BOB_REF),  # a reference to a tombstoned entity keeps its eid
        ({"eid": made.aliases["$bare"]}, BOB_REF),
    ]
    assert [r["comment"]["target"]["eid"] for r in q(club, ".comment!&limit=2")] == [
        gone,
        made.aliases["$bare"],
    ]


def test_count_answers_one_number(club: AnyStore) -> None:
    assert agg(club, ".jog!&.count!") == {"count": 4}
    assert agg(club, ".jog.miles>5&.count!") == {"count": 2}
    assert agg(club, ".count!&.jog.who=nobody") == {"count": 0}
    assert agg(club, "river&.count!") == {"count": 2}
    # a window shapes rows: an aggregate counts every match
    assert agg(club, ".jog!&.count!&limit=2") == {"count": 4}
    assert agg(club, ".jog!&.count!&.limit=1") == {"count": 4}


def test_the_bylines_persons_are_no_things_of_the_app(club: AnyStore) -> None:
    # Six things were written; Ada and Bob are kept as persons only for created.by.
    assert agg(club, ".count!") == {"count": 6}
    assert len(q(club, ".created!")) == 6
    assert len(q(club, "*")) == 6
    assert {r["person"]["name"] for r in q(club, ".person!")} == {"Ada", "Bob"}
    assert agg(club, ".person!&.count!") == {"count": 2}
    # An app's own entity that carries a person too is one of its things.
    club.apply({"person": {"name": "Cy"}, "jog": {"who": "Cy", "miles": 1}}, ADA)
    assert agg(club, ".count!") == {"count": 7}


def test_tally_counts_rows_by_each_value_most_first(club: AnyStore) -> None:
    club.apply({"jog": {"who": "Bob", "miles": 5}}, BOB)
    assert agg(club, ".tally=jog.who") == {
        "tally": {"Bob": 2, "Ada": 1, "Cy": 1, "ada lovelace": 1}
    }
    assert list(agg(club, ".tally=jog.who")["tally"]) == ["Bob", "Ada", "Cy", "ada lovelace"]
    assert agg(club, ".jog.miles<=5&.tally=jog.who") == {
        "tally": {"Ada": 1, "Bob": 1, "ada lovelace": 1}
    }
    # numbers and bools are keys as JSON writes them; a row without the value is not counted
    assert agg(club, ".tally=jog.miles") == {"tally": {"5": 2, "3": 1, "12.5": 1, "20": 1}}
    assert agg(club, ".tally=recipe.vegan") == {"tally": {"true": 1}}
    assert agg(club, ".tally=jog.at") == {"tally": {"2026-09-01": 1, "2026-09-03": 1}}
    # a reference is tallied by eid
    assert agg(club, ".jog!&.tally=created.by") == {"tally": {BOB.eid: 3, ADA.eid: 2}}
    assert agg(club, ".tally=comment.target.doc.title") == {"tally": {"Morning run": 1}}
    assert agg(club, ".jog.who=nobody&.tally=jog.who") == {"tally": {}}


def test_distinct_lists_a_columns_values_sorted(club: AnyStore) -> None:
    club.apply({"jog": {"who": "Ada", "miles": 5}}, BOB)
    assert agg(club, ".distinct=jog.who") == {"distinct": ["Ada", "Bob", "Cy", "ada lovelace"]}
    assert agg(club, ".distinct=jog.miles") == {"distinct": [3, 5, 12.5, 20]}
    assert agg(club, ".jog.miles>=5&.distinct=jog.who") == {"distinct": ["Ada", "Bob", "Cy"]}
    assert agg(club, ".distinct=recipe.vegan") == {"distinct": [True]}
    assert agg(club, ".distinct=created.by") == {"distinct": sorted([ADA.eid, BOB.eid])}
    assert agg(club, ".distinct=jog.at&limit=1") == {"distinct": ["2026-09-01", "2026-09-03"]}
    assert agg(club, ".jog.who=nobody&.distinct=jog.who") == {"distinct": []}


def test_the_first_aggregate_in_a_filter_answers(club: AnyStore) -> None:
    assert agg(club, ".jog!&.count!&.tally=jog.who") == {"count": 4}
    assert agg(club, ".distinct=recipe.cuisine&.count!") == {"distinct": ["thai"]}
    assert agg(club, ".tally=recipe.cuisine&.distinct=jog.who&.count!") == {"tally": {"thai": 1}}
    # the names of one that does not answer are still checked
    assert "no column pace" in refused(club, ".count!&.tally=jog.pace")


def test_walking_a_reference(club: AnyStore) -> None:
    (row,) = q(club, ".comment.target.doc.title~=morning")
    assert row["comment"]["target"]["name"] == "first"
    assert q(club, ".comment.target.doc.title~=long") == []
    assert q(club, ".comment.target.jog.miles>=5")[0]["kind"] == "comment"


def test_a_walked_reference_brings_what_the_filter_names_there(club: AnyStore) -> None:
    morning = {"title": "Morning run", "body": "foggy by the river"}
    (row,) = q(club, ".comment!&.comment.target.doc?")
    first = row["comment"]["target"]["eid"]
    assert row == {
        "kind": "comment",
        "entity": row["entity"],
        "comment": {"target": {"eid": first, "name": "first", "doc": morning}},
    }
    # a predicate through a reference names what it reaches, too
    (row,) = q(club, ".comment.target.doc.title~=morning")
    assert row["comment"]["target"]["doc"] == morning
    (row,) = q(club, ".comment.target.jog.miles>=5&.comment.target.doc?")
    assert row["comment"]["target"]["jog"] == {"who": "Ada", "miles": 5, "at": "2026-09-01"}
    assert row["comment"]["target"]["doc"] == morning
    # the platform's stamps, and a reference on the far side walked again
    (row,) = q(club, ".comment!&.comment.target.created.by.person?")
    target = row["comment"]["target"]
    assert target["created"]["by"] == {**ADA_REF, "person": {"name": "Ada"}}
    assert target["created"]["at"].startswith("20")
    assert set(target) == {"eid", "name", "created"}


def test_what_a_reference_points_at_may_lack_what_is_asked(club: AnyStore) -> None:
    made = club.apply(
        [
            {"comment": {"target": "$bare"}},
            {"entity": {"eid": "$bare"}, "jog": {"miles": 1}},
            {"comment": {"target": "$gone"}},
            {"entity": {"eid": "$gone"}, "doc": {"title": "Gone soon"}},
        ],
        BOB,
    )
    gone = made.aliases["$gone"]
    club.apply({"entity": {"eid": gone}, "tombstone": {}}, BOB)  # nothing there now
    rows = q(club, ".comment!&.comment.target.doc?")
    assert [r["comment"]["target"].get("doc") for r in rows] == [
        {"title": "Morning run", "body": "foggy by the river"},
        None,
        None,
    ]
    assert rows[2]["comment"]["target"] == {"eid": gone, "doc": None}
    # `!` asks for it there
    (only,) = q(club, ".comment.target.doc!")
    assert only["comment"]["target"]["name"] == "first"
    assert len(q(club, ".comment.target.jog!")) == 2


def test_reverse_plurals(club: AnyStore) -> None:
    assert whos(club, ".jog!&.comments>=1") == ["Ada"]
    assert whos(club, ".jog!&.comments=0") == ["Bob", "Cy", "ada lovelace"]


def test_time_phrases(store: AnyStore, clock: Clock) -> None:
    clock.now = datetime(2026, 9, 10, 14, 30, tzinfo=UTC)  # every stamp and phrase reads it
    store.apply({"jog": {"who": "now", "at": clock.now.isoformat()}}, ADA)
    store.apply({"jog": {"who": "old", "at": "2001-01-01"}}, ADA)
    assert whos(store, ".jog.at>=yesterday") == ["now"]
    assert whos(store, ".jog.at<3-days-ago") == ["old"]
    assert [r["jog"]["who"] for r in q(store, ".jog!&.created.at>=today")] == ["now", "old"]


def test_declared_columns_nothing_wrote_are_null(club: AnyStore) -> None:
    assert q(club, ".jog.who=Cy")[0]["jog"]["at"] is None


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        (".loan!", "loan is not a component of this app — declare it in vocab.json"),
        (".recipe.serves>many", "recipe.serves is a number"),
        (".jog.pace>3", "jog has no column pace — its columns are who, miles, at"),
        (".recipe.vegan=maybe", "recipe.vegan is true or false"),
        (".recipe.vegan>true", "compare it with = or !="),
        (".jog.miles~=5", "~= is for text"),
        (".jog.at>tuesday", "jog.at is a time"),
        (".comment.target>x", "is a reference"),
        (".jog.who.doc.title=x", "jog.who is not a reference"),
        (
            ".jog.who.doc?",
            "jog.who is not a reference, so .jog.who.doc? brings nothing from it — bring what "
            "a reference points at, like .comment.target.doc?",
        ),
        (".comment.target.loan?", "loan is not a component of this app"),
        (".comment.target.doc=", "or bring what it points at like .comment.target.doc?"),
        (".runs>=2", "no component with one reference column is called runs"),
        (".tally=jog.pace", "jog has no column pace"),
        (".distinct=loan.x", "loan is not a component of this app"),
        (".distinct=jog.who.doc.title", "jog.who is not a reference"),
        (".created=", "every entity has created"),
        ("limit=2&limit=3", "limit is written twice"),
    ],
)
def test_refusals_say_how_to_write_it(club: AnyStore, text: str, sentence: str) -> None:
    assert sentence in refused(club, text)


def test_the_grammars_own_refusals_come_through(club: AnyStore) -> None:
    assert "&" in refused(club, ".recipe!.doc!")


def test_check_filter_lets_template_variables_through() -> None:
    vocab = Vocabulary.from_json({"$defs": {"jog": {"properties": {"miles": {"type": "number"}}}}})
    check_filter(".jog.miles>=$miles&.created.at>=$since&limit=20", vocab)
    with pytest.raises(Refused, match="loan"):
        check_filter(".loan!&.jog.miles>=$miles", vocab)


def test_no_value_is_ever_spliced_into_sql(club: AnyStore) -> None:
    compiled = compile_filter(".jog.who='; DROP TABLE entity; --&river", club.vocabulary)
    assert "DROP" not in compiled.sql
    assert "river" not in compiled.sql
    assert q(club, ".jog.who='; DROP TABLE entity; --") == []
    assert len(q(club, ".jog!")) == 4


TOKENS = [*".!=?*~<>&,\"'%$ -_0123456789abcdejgimlostwy:TZ", "jog", "miles", "doc", "who"]
TOKENS += ["limit", "id", "count", "tally", "distinct", "recipe", "vegan", "created", "comments"]
TOKENS += [".created.at", "at", "today", "3-days-ago", "last-week", "in-2-days", "9am", "now"]
TOKENS += ["2026-09-01", "T10:00", "comment", "target", "by", "person"]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(TOKENS), max_size=25).map("".join) | st.text(max_size=30))
def test_any_filter_gives_rows_or_a_refusal(club: AnyStore, text: str) -> None:
    try:
        rows = club.query(text, ADA)
    except Refused as e:
        assert str(e)
    else:
        assert isinstance(rows, list) or set(rows) <= {"count", "tally", "distinct"}
