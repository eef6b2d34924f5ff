"""Who is asking, as the ground describes it: the one reading of `Authorization: Bearer <token>`."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pasture.caller import BEARER_SHAPE, bearer
from pasture.errors import BadToken, Unauthorized

TOKEN = st.text(st.characters(codec="ascii", categories=["L", "N", "P", "S"]), min_size=1)
SCHEME = st.sampled_from(["bearer", "Bearer", "BEARER", "bEaReR"])
# What a well-formed header is, written apart from the parser: the scheme in any case, a
# space, then a token (spaces around it are not part of it).
WELL_FORMED = re.compile(r"\s*bearer (\s*)(\S(?:.*\S)?)\s*", re.IGNORECASE | re.DOTALL)


def test_no_header_is_no_token() -> None:
    assert bearer(None) is None


@given(SCHEME, TOKEN)
def test_bearer_and_a_token_in_any_case_is_the_token(scheme: str, token: str) -> None:
    assert bearer(f"{scheme} {token}") == token
    assert bearer(f"  {scheme}  {token} ") == token


@given(st.text())
def test_anything_else_is_refused_with_the_one_sentence(header: str) -> None:
    shaped = WELL_FORMED.fullmatch(header)
    if shaped is not None:
        assert bearer(header) == shaped.group(2)
        return
    with pytest.raises(BadToken) as refused:
        bearer(header)
    assert refused.value.sentence == BEARER_SHAPE


@pytest.mark.parametrize("header", ["", "Bearer", "Bearer ", "Basic YWRhOnB3", "Token abc"])
def test_the_usual_mistakes_are_a_401(header: str) -> None:
    with pytest.raises(Unauthorized, match="the Authorization header is `Bearer <token>`"):
        bearer(header)
