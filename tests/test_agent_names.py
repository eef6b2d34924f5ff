"""The one way a command's name becomes the name agents see."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pasture.names import agent_name

WORD = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)


def test_agent_names_join_words_with_underscores() -> None:
    assert agent_name("cart add") == "cart_add"
    assert agent_name("log_run") == "log_run"
    assert agent_name(" cart add ") == "cart_add"


@given(st.lists(WORD, min_size=1, max_size=4))
def test_a_name_and_its_agent_name_find_the_same_command(words: list[str]) -> None:
    joined = "_".join(words)
    assert agent_name(" ".join(words)) == joined
    assert agent_name(joined) == joined
