"""Each app's own origin is its own: no two apps share a label, whatever their names.

A label is `slug--space` where that is short and holds no other `--`, else a hashed
one. A person who names a space after another app's hashed label must not get that
app's origin (its visitors' pass cookie, its pages' trust).
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pasture.names import SLUG
from pasture.platform.apps.origins import Origins

ORIGINS = Origins("http://127.0.0.1:8000", "apps.example")

# Names as the rules allow them, with hyphens (and runs of them) made likely.
names = st.from_regex(r"[a-z][a-z0-9-]{0,39}", fullmatch=True) | st.builds(
    lambda a, b, n: f"{a}{'-' * n}{b}"[:40],
    st.from_regex(r"[a-z][a-z0-9]{0,20}", fullmatch=True),
    st.from_regex(r"[a-z0-9][a-z0-9-]{0,20}", fullmatch=True),
    st.integers(1, 3),
)
apps = st.tuples(names, names)


@settings(max_examples=500)
@given(one=apps, other=apps)
def test_two_apps_never_share_a_label(one: tuple[str, str], other: tuple[str, str]) -> None:
    assert SLUG.fullmatch(one[0]) and SLUG.fullmatch(one[1])
    if one != other:
        assert ORIGINS.label(*one) != ORIGINS.label(*other)


@settings(max_examples=300)
@given(app=apps)
def test_a_label_is_a_dns_label_that_leads_back_to_its_app(app: tuple[str, str]) -> None:
    label = ORIGINS.label(*app)
    assert re.fullmatch(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?", label)
    host = f"{label}.apps.example:8000"
    assert ORIGINS.label_of(host) == label


def test_a_space_named_after_a_hashed_label_does_not_take_its_app() -> None:
    victim = ("my--team", "notes")
    hashed = ORIGINS.label(*victim)
    assert "--" not in hashed  # only plain labels have it
    digest = hashed.rpartition("-")[2]
    # The attacker's app whose plain label would have been the victim's hashed one.
    attacker = (f"team-{digest}", "notes-my")
    assert ORIGINS.label(*attacker) != hashed
