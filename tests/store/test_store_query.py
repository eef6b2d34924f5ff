"""Reads: every form of the filter grammar against a real store, and every refusal."""

from datetime import UTC, datetime

import pytest
from club_store import ADA_REF, agg, q, whos
from club_store import club as club  # the fixture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import ADA, AnyStore, Clock

from pasture.errors import Refused
from pasture.store import Vocabulary, check_filter
from pasture.store.sql import compile_filter


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


# -- what one filter may cost -----------------------------------------------------------


def test_a_list_of_times_is_at_most_fifty_and_any_of_them_matches(club: AnyStore) -> None:
    """Each time is a range, and a database plans a list of ranges in time that grows with
    its square: a thousand took seconds. Fifty are served; more are refused with the way to
    ask for a stretch instead."""
    days = [f"2026-08-{d:02d}" for d in range(1, 31)] + [f"2026-09-{d:02d}" for d in range(1, 21)]
    assert len(days) == 50
    listed = {r["jog"]["at"][:10] for r in q(club, ".jog.at=" + ",".join(days))}
    assert listed == {r["jog"]["at"][:10] for r in q(club, ".jog.at>=2026-08-01&.jog!")}
    with pytest.raises(Refused) as refused:
        club.query(".jog.at=" + ",".join([*days, "2026-09-21"]), ADA)
    assert refused.value.sentence == (
        "jog.at is one of at most 50 times in one list — ask for a stretch instead, like "
        ".jog.at>=2026-09-01&.jog.at<2026-10-01"
    )


def test_a_filter_is_at_most_64000_characters(club: AnyStore) -> None:
    names = ",".join(f"runner-{n:050d}" for n in range(999))  # a list as long as lists go
    assert len(names) > 57_000
    assert q(club, f".jog.who={names}") == []
    long = ".jog.who=" + "x" * 64_000
    with pytest.raises(Refused) as refused:
        club.query(long, ADA)
    assert refused.value.sentence == (
        "a filter is at most 64,000 characters, and this one is 64,009 — ask for less at "
        "once, and the rest in another query"
    )
