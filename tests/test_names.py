"""One pattern per kind of name (pasture.names), each matched whole: a trailing newline
is no part of a name (an anchored `match` once let `ada\\n` through as a space's name)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pasture.errors import DeployRefused, UsageError
from pasture.names import (
    COMMAND_NAME,
    LOWER_WORD,
    SECRET_NAME,
    SLUG,
    USER_NAME,
    WORD,
    check_slug,
    check_space_name,
    check_user_name,
)
from pasture.store.vocab import Vocabulary


def test_a_word_is_lowercase_and_at_most_forty_characters() -> None:
    assert WORD.fullmatch("log_run") and WORD.fullmatch("a" * 40)
    assert not WORD.fullmatch("a" * 41) and LOWER_WORD.fullmatch("a" * 41)
    for bad in ("Jog", "1jog", "_jog", "jog-run", "jog run", "", "jog\n"):
        assert not WORD.fullmatch(bad) and not LOWER_WORD.fullmatch(bad)


def test_a_command_name_is_words_separated_by_one_space() -> None:
    assert COMMAND_NAME.fullmatch("cart add") and COMMAND_NAME.fullmatch("log_run")
    for bad in ("cart  add", " cart", "cart add ", "Cart add", "cart-add"):
        assert not COMMAND_NAME.fullmatch(bad)


def test_the_names_of_people_places_and_secrets() -> None:
    assert SLUG.fullmatch("run-club") and not SLUG.fullmatch("run_club")
    assert not SLUG.fullmatch("a" * 41)
    assert USER_NAME.fullmatch("Ada.L-o_v") and not USER_NAME.fullmatch(".ada")
    assert SECRET_NAME.fullmatch("_STRIPE_KEY2") and not SECRET_NAME.fullmatch("2KEY")
    assert SECRET_NAME.fullmatch("K" * 64) and not SECRET_NAME.fullmatch("K" * 65)


@pytest.mark.parametrize("check", [check_space_name, check_slug, check_user_name])
def test_a_trailing_newline_is_no_part_of_a_name(check: Callable[[str], None]) -> None:
    check("ada")
    with pytest.raises(UsageError):
        check("ada\n")


def test_a_component_or_column_with_a_trailing_newline_is_refused_at_deploy() -> None:
    with pytest.raises(DeployRefused, match="is not a component name"):
        Vocabulary.from_json({"$defs": {"jog\n": {"properties": {"miles": {"type": "number"}}}}})
    with pytest.raises(DeployRefused, match="is not a column name"):
        Vocabulary.from_json({"$defs": {"jog": {"properties": {"miles\n": {"type": "number"}}}}})
