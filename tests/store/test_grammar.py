"""The filter grammar: every form, every refusal, and hypothesis over any text."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pasture.errors import Refused
from pasture.store.grammar import (
    COUNT_OPERATORS,
    OPERATORS,
    format_filter,
    parse,
    percent_encode_value,
)
from pasture.store.syntax import (
    After,
    Compare,
    Count,
    Distinct,
    Empty,
    Every,
    Filter,
    Has,
    Id,
    Lacks,
    Limit,
    Maybe,
    Plural,
    Predicate,
    Present,
    Range,
    Reach,
    Sort,
    Tally,
    Words,
)


def one(text: str) -> Predicate:
    """The single predicate a line reads as."""
    predicates = parse(text).predicates
    assert len(predicates) == 1, predicates
    return predicates[0]


def refusal(text: str) -> str:
    with pytest.raises(Refused) as caught:
        parse(text)
    return caught.value.sentence


# -- the forms ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "predicate"),
    [
        (".jog!", Has("jog")),
        (".jog=", Lacks("jog")),
        (".doc?", Maybe("doc")),
        ("*", Every()),
        (".jog.miles=5", Compare(("jog", "miles"), "=", ("5",))),
        (".jog.miles!=5", Compare(("jog", "miles"), "!=", ("5",))),
        (".doc.title~=run", Compare(("doc", "title"), "~=", ("run",))),
        (".jog.miles<5", Compare(("jog", "miles"), "<", ("5",))),
        (".jog.miles<=5", Compare(("jog", "miles"), "<=", ("5",))),
        (".jog.miles>5", Compare(("jog", "miles"), ">", ("5",))),
        (".jog.miles>=5.5", Compare(("jog", "miles"), ">=", ("5.5",))),
        (".jog.who=Ada,Grace", Compare(("jog", "who"), "=", ("Ada", "Grace"))),
        (".jog.who!=Ada,Grace", Compare(("jog", "who"), "!=", ("Ada", "Grace"))),
        (".jog.miles=20..35", Range(("jog", "miles"), "20", "35", include_high=True)),
        (".jog.miles=20...35", Range(("jog", "miles"), "20", "35", include_high=False)),
        (".jog.miles=1.5..2.5", Range(("jog", "miles"), "1.5", "2.5", include_high=True)),
        (
            ".created.at=2026-09-01..2026-09-30",
            Range(("created", "at"), "2026-09-01", "2026-09-30", include_high=True),
        ),
        (".doc.title=", Empty(("doc", "title"))),
        (".doc.title~=", Present(("doc", "title"))),
        ('.doc.title="a & b"', Compare(("doc", "title"), "=", ("a & b",))),
        ('.doc.title="a, b",c', Compare(("doc", "title"), "=", ("a, b", "c"))),
        ('.doc.title="say \\"hi\\""', Compare(("doc", "title"), "=", ('say "hi"',))),
        ('.doc.title="20..35"', Compare(("doc", "title"), "=", ("20..35",))),
        ('.doc.title="  spaced  "', Compare(("doc", "title"), "=", ("  spaced  ",))),
        ('.doc.title=""', Compare(("doc", "title"), "=", ("",))),
        (
            ".comment.target.doc.title~=x",
            Compare(("comment", "target", "doc", "title"), "~=", ("x",)),
        ),
        (".comment.target.doc?", Reach(("comment", "target", "doc"), required=False)),
        (".comment.target.doc!", Reach(("comment", "target", "doc"), required=True)),
        (".a.b.c.d.e?", Reach(("a", "b", "c", "d", "e"), required=False)),
        (".count!", Count()),
        (".tally=jog.who", Tally(("jog", "who"))),
        (".tally=.jog.who", Tally(("jog", "who"))),
        (".tally=comment.target.doc.title", Tally(("comment", "target", "doc", "title"))),
        (".distinct=jog.who", Distinct(("jog", "who"))),
        (".distinct = .jog.who", Distinct(("jog", "who"))),
        (".comments>=2", Plural("comments", ">=", 2)),
        (".comments=0", Plural("comments", "=", 0)),
        (".jog=3", Plural("jog", "=", 3)),
        (".comments!=1", Plural("comments", "!=", 1)),
        ("limit=20", Limit(20)),
        ("limit=007", Limit(7)),
        ("sort=jog.miles", Sort(((("jog", "miles"), False),))),
        ("sort=-jog.miles,jog.who", Sort(((("jog", "miles"), True), (("jog", "who"), False)))),
        ("sort = -.jog.miles", Sort(((("jog", "miles"), True),))),
        ("after=WyI4YzQ", After("WyI4YzQ")),
        (".limit=20", Limit(20)),
        (".limit = 5", Limit(5)),
        ("id=4f3c2a1b0c9d8e7f", Id("4f3c2a1b0c9d8e7f")),
        ('id="4f3c 2a"', Id("4f3c 2a")),
        ("hello", Words("hello")),
        ("hello world", Words("hello world")),
        ('"a & b"', Words("a & b")),
        ('hello "big world"', Words('hello "big world"')),
        ("example.com", Words("example.com")),
        ("  padded  ", Words("padded")),
    ],
)
def test_each_form_reads_as_its_predicate(text: str, predicate: Predicate) -> None:
    assert one(text) == predicate


def test_predicates_are_joined_by_ampersand_in_the_order_written() -> None:
    assert parse(".jog!&.doc?&.jog.miles>=5&limit=20") == Filter(
        (Has("jog"), Maybe("doc"), Compare(("jog", "miles"), ">=", ("5",)), Limit(20))
    )


def test_a_leading_question_mark_and_empty_segments_are_ignored() -> None:
    assert parse("?.jog!&&.doc?&") == Filter((Has("jog"), Maybe("doc")))
    assert parse("") == Filter(())
    assert parse("&& & ") == Filter(())
    assert parse(" .jog! & .doc? ") == Filter((Has("jog"), Maybe("doc")))


def test_values_are_percent_decoded_after_the_line_is_split() -> None:
    assert one(".doc.title=Tom%20%26%20Jerry") == Compare(("doc", "title"), "=", ("Tom & Jerry",))
    assert one(".doc.title=a%2Cb") == Compare(("doc", "title"), "=", ("a,b",))
    assert one(".doc.title=1%2E%2E5") == Compare(("doc", "title"), "=", ("1..5",))
    assert one('.doc.title="100%25"') == Compare(("doc", "title"), "=", ("100%",))
    assert one("a+b%26c") == Words("a+b&c")  # a plus stays a plus


def test_spaces_around_an_operator_are_allowed() -> None:
    assert one(".jog.miles >= 5") == Compare(("jog", "miles"), ">=", ("5",))
    assert one(".jog !") == Has("jog")


def test_a_quoted_value_may_hold_the_separators() -> None:
    assert parse('.doc.title="a & b"&.jog!') == Filter(
        (Compare(("doc", "title"), "=", ("a & b",)), Has("jog"))
    )


def test_words_that_decode_to_nothing_are_left_out() -> None:
    assert parse("%20&.jog!") == Filter((Has("jog"),))


# -- refusals ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        (".recipe!.doc!", "join filters with &: .recipe!&.doc!"),
        (".jog!.doc?.created.at>=2026", "join filters with &: .jog!&.doc?&.created.at>=2026"),
        (".jog=.doc!", "join filters with &: .jog=&.doc!"),
        ("*.jog!", "join filters with &: *&.jog!"),
        (
            ".jog!!",
            "nothing may follow .jog! in one filter: remove ! or join another filter with &",
        ),
        (
            ".jog.miles",
            "say what .jog.miles should be: .jog.miles=5, .jog.miles>=5, "
            "or .jog.miles~= for any value",
        ),
        (
            ".jog.miles!",
            "say what .jog.miles should be: .jog.miles=5, .jog.miles>=5, "
            "or .jog.miles~= for any value",
        ),
        (
            ".jog",
            "say what .jog should be: .jog! to have it, .jog= to lack it, "
            "or .jog? to bring it along",
        ),
        (
            ".Jog!",
            "Jog is not a component name — names are lowercase letters, digits and _, "
            "starting with a letter",
        ),
        (
            ".9x!",
            "9x is not a component name — names are lowercase letters, digits and _, "
            "starting with a letter",
        ),
        (
            ".jog.Miles=5",
            "Miles is not a column name — names are lowercase letters, digits and _, "
            "starting with a letter",
        ),
        (
            "." + "a" * 41 + "!",
            "a" * 41 + " is too long for a component name — names are at most 40 lowercase "
            "letters, digits and _",
        ),
        (
            ".jog.",
            "a name must follow every dot in .jog.: names are lowercase letters, digits "
            "and _, like .jog.miles",
        ),
        ("limit=abc", "limit is a whole number of rows, like limit=20"),
        ("limit=0", "limit is a whole number of rows, like limit=20"),
        ("limit=-3", "limit is a whole number of rows, like limit=20"),
        ("limit=", "limit is a whole number of rows, like limit=20"),
        ("limit>5", "limit is a whole number of rows, like limit=20"),
        ("limit=2.5", "limit is a whole number of rows, like limit=20"),
        (".limit=x", ".limit is a whole number of rows, like .limit=20"),
        (".limit=-1", ".limit is a whole number of rows, like .limit=20"),
        (".limit=0", ".limit is a whole number of rows, like .limit=20"),
        (".limit=", ".limit is a whole number of rows, like .limit=20"),
        (".limit==5", ".limit is a whole number of rows, like .limit=20"),
        (".limit>=5", ".limit is a whole number of rows, like .limit=20"),
        (".limit!", ".limit is a whole number of rows, like .limit=20"),
        (".limit", ".limit is a whole number of rows, like .limit=20"),
        (".limit=5&.jog!&.limit=x", ".limit is a whole number of rows, like .limit=20"),
        (
            '.doc.title="hello',
            'the quote in .doc.title="hello is never closed: end the value with "',
        ),
        ('"a & b', 'the quote in "a & b is never closed: end the value with "'),
        (".jog.miles=>5", "write >= for at least: .jog.miles>=5"),
        (".jog.miles=<5", "write <= for at most: .jog.miles<=5"),
        (".jog.miles==5", "write = for equal to: .jog.miles=5"),
        (".jog.miles<>5", "write != for not equal to: .jog.miles!=5"),
        (".doc.title~run", "write ~= for contains: .doc.title~=run"),
        (".comments=>2", "write >= for at least: .comments>=2"),
        (
            ".jog.miles>>5",
            ">> is not an operator: use one of = != ~= < <= > >=, like .jog.miles>=5",
        ),
        (
            ".jog.miles>=20..35",
            "a range works with = only: write .jog.miles=20..35, "
            "or quote the value if the dots are part of it",
        ),
        (
            ".jog.miles=1..2,5",
            "a range cannot be one of several values: write .jog.miles=1..2 alone, "
            "or quote the value if the dots are part of it",
        ),
        (".jog.miles=20..", "a range needs both ends, like .jog.miles=20..35"),
        (".jog.miles=...35", "a range needs both ends, like .jog.miles=20..35"),
        (".jog.miles>5,6", "any-of works with = and !=: write .jog.miles=5,6"),
        (".doc.title~=a,b", "any-of works with = and !=: write .doc.title=a,b"),
        (".doc.title=a,,b", "a list of values has an empty one: write them like .doc.title=a,b"),
        (".doc.title=a,", "a list of values has an empty one: write them like .doc.title=a,b"),
        (".jog.miles>=", ">= needs a value after it, like .jog.miles>=5"),
        (
            '.doc.title=5"x"',
            'quote the whole value, writing a quote inside it as \\": .doc.title="5\\"x\\""',
        ),
        (
            '.doc.title="a"b',
            'a quoted value ends at its closing quote: write .doc.title="…" with all of the '
            "value inside the quotes",
        ),
        ("id=", "id= names one entity by its eid, like id=4f3c2a1b0c9d8e7f"),
        ("id=%20", "id= names one entity by its eid, like id=4f3c2a1b0c9d8e7f"),
        ("id=a,b", "id= names one entity by its eid, like id=4f3c2a1b0c9d8e7f"),
        ("id>a", "id= names one entity by its eid, like id=4f3c2a1b0c9d8e7f"),
        (
            ".jog=fast",
            ".jog=fast needs a column: write .jog.<column>=fast "
            "(a single name only counts, like .comments>=2)",
        ),
        (
            ".jog~=",
            "~= needs a column: write .jog.<column>~= for any value, or .jog! to have jog",
        ),
        (".tally=", "tally counts rows by one column, like .tally=jog.who"),
        (".tally=jog", "tally counts rows by one column, like .tally=jog.who"),
        (".distinct=", "distinct lists the values of one column, like .distinct=jog.who"),
        (".distinct=jog", "distinct lists the values of one column, like .distinct=jog.who"),
        (".distinct=jog.who x", "distinct lists the values of one column, like .distinct=jog.who"),
        (
            "jog.miles>=5",
            "write .jog.miles>=5 with a dot to filter on jog.miles, "
            'or "jog.miles>=5" in quotes to search for the words',
        ),
        (
            '""',
            "the quoted phrase is empty: put the words to search for between the quotes, "
            "or leave it out",
        ),
    ],
)
def test_a_line_that_cannot_be_read_is_refused_saying_how_to_write_it(
    text: str, sentence: str
) -> None:
    assert refusal(text) == sentence


def test_a_refusal_is_one_sentence_on_one_line() -> None:
    sentence = refusal(".recipe!.doc!")
    assert "\n" not in sentence
    assert not sentence.endswith(".")


# -- any text at all ---------------------------------------------------------

_NAMES = st.sampled_from(
    ["jog", "miles", "doc", "title", "count", "tally", "distinct", "limit", "id", "a"]
)
_PUNCTUATION = st.sampled_from([*'.!=?~<>&,"*', "..", "...", "%", "%2", "%26", "\\", " "])
_GRAMMAR_TEXT = st.lists(
    st.one_of(_NAMES, _PUNCTUATION, st.integers(0, 99).map(str), st.sampled_from(["J", "é"])),
    max_size=24,
).map("".join)


def _parses_or_refuses(text: str) -> None:
    try:
        parsed = parse(text)
    except Refused as refused:
        assert refused.sentence
        assert "\n" not in refused.sentence
        return
    # Whatever reads, reads back the same once written out again.
    assert parse(format_filter(parsed)) == parsed


@given(st.text())
@example("\ud800.jog!")
@example("limit=" + "9" * 5000)
@example('.a.b="\\')
def test_any_text_gives_a_filter_or_a_refusal(text: str) -> None:
    _parses_or_refuses(text)


@given(_GRAMMAR_TEXT)
def test_text_made_of_the_grammar_gives_a_filter_or_a_refusal(text: str) -> None:
    _parses_or_refuses(text)


@given(
    st.lists(st.sampled_from([".jog!", ".doc?", ".jog.miles>=5", "limit=3", "run"])), _PUNCTUATION
)
def test_well_formed_pieces_joined_by_anything_give_a_filter_or_a_refusal(
    pieces: list[str], glue: str
) -> None:
    _parses_or_refuses(glue.join(pieces))


# -- writing a filter back ---------------------------------------------------

_NAME = st.from_regex(r"[a-z][a-z0-9_]{0,39}", fullmatch=True)
# `count`, `tally`, `distinct` and `limit` are the grammar's own words when they stand alone.
_SINGLE = _NAME.filter(lambda name: name not in ("count", "tally", "distinct", "limit"))
_PATH = st.lists(_NAME, min_size=2, max_size=4).map(tuple)
# a reference column's path and the component it points at: an odd number of names
_REACH = st.sampled_from([3, 5]).flatmap(
    lambda n: st.lists(_NAME, min_size=n, max_size=n).map(tuple)
)
_VALUE = st.text()
_SOME = st.text(min_size=1).filter(lambda text: text.strip() != "")
_WHOLE = st.integers(0, 10**18 - 1)

_PREDICATES: st.SearchStrategy[Predicate] = st.one_of(
    st.builds(Has, _SINGLE),
    st.builds(Lacks, _SINGLE),
    st.builds(Maybe, _SINGLE),
    st.just(Every()),
    st.builds(Reach, _REACH, st.booleans()),
    st.builds(Compare, _PATH, st.sampled_from(OPERATORS), st.tuples(_VALUE)),
    st.builds(
        Compare,
        _PATH,
        st.sampled_from(["=", "!="]),
        st.lists(_VALUE, min_size=2, max_size=4).map(tuple),
    ),
    st.builds(Range, _PATH, st.text(min_size=1), st.text(min_size=1), st.booleans()),
    st.builds(Empty, _PATH),
    st.builds(Present, _PATH),
    st.builds(Words, _SOME),
    st.builds(Limit, st.integers(1, 10**18 - 1)),
    st.builds(
        Sort,
        st.lists(
            st.tuples(st.tuples(_NAME, _NAME), st.booleans()),
            min_size=1,
            max_size=5,
            unique_by=lambda key: key[0],
        ).map(tuple),
    ),
    st.builds(After, st.from_regex(r"[A-Za-z0-9_-]{1,60}", fullmatch=True)),
    st.builds(Id, _SOME),
    st.just(Count()),
    st.builds(Tally, _PATH),
    st.builds(Distinct, _PATH),
    st.builds(Plural, _SINGLE, st.sampled_from(COUNT_OPERATORS), _WHOLE),
)


@given(st.lists(_PREDICATES, max_size=6).map(lambda ps: Filter(tuple(ps))))
def test_a_written_filter_reads_back_as_the_same_filter(f: Filter) -> None:
    assert parse(format_filter(f)) == f


@pytest.mark.parametrize(
    ("f", "text"),
    [
        (Filter((Has("jog"), Maybe("doc"), Limit(20))), ".jog!&.doc?&limit=20"),
        (Filter((Compare(("doc", "title"), "=", ("a & b",)),)), '.doc.title="a & b"'),
        (Filter((Compare(("jog", "miles"), ">=", ("5.5",)),)), ".jog.miles>=5.5"),
        (Filter((Range(("jog", "miles"), "20", "35", False),)), ".jog.miles=20...35"),
        (Filter((Words("hello world"),)), "hello world"),
        (Filter((Words("a=b"),)), '"a=b"'),
        (Filter((Compare(("doc", "title"), "=", ('5" & 100%',)),)), '.doc.title="5%22 & 100%25"'),
    ],
)
def test_a_filter_is_written_the_way_a_person_would(f: Filter, text: str) -> None:
    assert format_filter(f) == text


# -- splicing a value into a line --------------------------------------------


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("Ada", "Ada"),
        ("5.5", "5.5"),
        ("2026-09-01T10:00:00Z", "2026-09-01T10:00:00Z"),
        ("Tom & Jerry", "Tom%20%26%20Jerry"),
        ("a,b", "a%2Cb"),
        ('5" screen', "5%22%20screen"),
        ("100%", "100%25"),
        ("20..35", "20%2E%2E35"),
        (".jog!", "%2Ejog%21"),
        ("*", "%2A"),
    ],
)
def test_a_spliced_value_keeps_what_is_readable_and_encodes_the_syntax(
    value: str, encoded: str
) -> None:
    assert percent_encode_value(value) == encoded


@given(st.text(min_size=1))
def test_any_spliced_value_reads_back_as_itself(value: str) -> None:
    line = f".doc!&.doc.title={percent_encode_value(value)}&limit=5"
    assert parse(line) == Filter((Has("doc"), Compare(("doc", "title"), "=", (value,)), Limit(5)))
    quoted = f'.doc.title="{percent_encode_value(value)}"'
    assert one(quoted) == Compare(("doc", "title"), "=", (value,))


@given(st.text(min_size=1), st.text(min_size=1))
def test_spliced_range_ends_read_back_as_themselves(low: str, high: str) -> None:
    line = f".jog.miles={percent_encode_value(low)}..{percent_encode_value(high)}"
    assert one(line) == Range(("jog", "miles"), low, high, include_high=True)


@given(st.text())
def test_spliced_words_read_back_as_the_words(words: str) -> None:
    expected = (Words(words.strip()),) if words.strip() else ()
    assert parse(percent_encode_value(words)) == Filter(expected)
