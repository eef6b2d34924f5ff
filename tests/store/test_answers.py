"""The line and the data a query's answer is said with, whichever door asked."""

from pasture.store.answers import answer_data, answer_text
from pasture.store.pages import Rows


def test_rows_are_counted_and_carried_under_rows() -> None:
    rows = [{"kind": "jog", "entity": {"eid": "a"}}]
    assert answer_text(".jog!", rows, "ada/runs") == "1 row in ada/runs"
    assert answer_text(".jog!", [], "ada/runs") == "0 rows in ada/runs"
    assert answer_data(rows) == {"rows": rows}


def test_an_aggregate_says_its_number_and_is_carried_as_it_is() -> None:
    assert answer_text(".jog!&.count!", {"count": 4}, "ada/runs") == "4 entities in ada/runs"
    assert answer_text(".count!", {"count": 1}, "ada/runs") == "1 entity in ada/runs"
    assert answer_data({"count": 4}) == {"count": 4}
    tally = {"tally": {"Ada": 2, "Bo": 1}}
    assert answer_text(".jog!&.tally=jog.who", tally, "ada/runs") == (
        "tally of jog.who in ada/runs: Ada 2, Bo 1"
    )
    assert answer_data(tally) == tally
    assert (
        answer_text(".tally=jog.who", {"tally": {}}, "a/b") == "tally of jog.who in a/b: no values"
    )
    assert answer_text(".distinct=recipe.vegan", {"distinct": [False, True]}, "a/b") == (
        "2 distinct recipe.vegan in a/b: false, true"
    )
    assert (
        answer_text(".distinct=jog.miles", {"distinct": []}, "a/b") == "0 distinct jog.miles in a/b"
    )


def test_the_first_aggregate_names_the_column() -> None:
    assert answer_text(".distinct=jog.at&.tally=jog.who", {"distinct": ["x"]}, "a/b") == (
        "1 distinct jog.at in a/b: x"
    )


def test_a_long_answer_names_twenty_values_and_counts_the_rest() -> None:
    values = [f"v{i:02}" for i in range(25)]
    said = answer_text(".distinct=jog.who", {"distinct": values}, "a/b")
    assert said == "25 distinct jog.who in a/b: " + ", ".join(values[:20]) + ", and 5 more"
    odd = answer_text(".tally=jog.who", {"tally": {"a\nb" + "x" * 60: 1}}, "a/b")
    assert "\n" not in odd and "a\\nb" in odd and "…" in odd


def test_a_page_cut_short_says_how_to_read_on() -> None:
    page = Rows([{"kind": "jog", "entity": {"eid": "e1"}}], "WyJh")
    said = "1 row in ada/runs, and more follow — the next page is "
    assert answer_text(".jog!", page, "ada/runs") == said + "the same filter with &after=WyJh"
    # a second after= is refused: the new cursor takes the old one's place
    assert answer_text(".jog!&after=WyJ6", page, "ada/runs") == (
        said + "the same filter with after=WyJh in place of its after="
    )
    # a command's caller never wrote the filter: they call the command again
    assert answer_text(".jog!&after=WyJ6", page, "ada/runs", after="after") == (
        said + "the same command with after=WyJh"
    )
    assert answer_data(page) == {"rows": list(page), "more": True, "cursor": "WyJh"}
