"""Only a person signed in themselves makes or ends sign-ins (`Caller.themselves`).

A token, an agent's OAuth grant and a page's pass each carry what the person gave them:
a scope, and a life that ends when it is revoked. Were any of them to make a session, a
pass, a sign-in link or a token, or approve an agent, what it made would hold all of
the person's rights and outlive it; were it to list or end tokens, a read-only one could
end the person's others. So every one of them, of every scope, is refused every one of
those — with one sentence, and nothing made — while the person themselves (a session,
the machine's owner at its command line) may.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from helpers.club import RUNS
from helpers.oauth_flow import approved
from pasture.caller import Caller
from pasture.errors import Forbidden
from pasture.platform.service import Service


def _grant_caller(service: Service, person: Caller, *, writes: bool) -> Caller:
    """The caller an agent's OAuth access token names."""
    tokens = approved(service, person, f"agent-{'w' if writes else 'r'}", writes=writes)
    return service.caller_for_token(tokens.access_token)


def _credentials(service: Service, ada: Caller) -> dict[str, Caller]:
    """Every way in that the person made, of every scope."""
    service.deploy(ada, RUNS, app="runs")
    page_pass = service.new_pass(ada, "ada", "runs", service.new_session(ada))
    return {
        "a token that reads and writes everywhere": service.caller_for_token(
            service.new_token(ada, "full")
        ),
        "a read-only token": service.caller_for_token(
            service.new_token(ada, "reader", writes=False)
        ),
        "a token for one space": service.caller_for_token(
            service.new_token(ada, "one space", spaces=["ada"])
        ),
        "an agent's grant to write": _grant_caller(service, ada, writes=True),
        "an agent's grant to read": _grant_caller(service, ada, writes=False),
        "a page's pass": service.passes.who(page_pass, "ada", "runs"),
    }


def _derivations(service: Service) -> dict[str, Callable[[Caller], object]]:
    """Every way of making or ending a sign-in, and of reading what there are."""
    return {
        "make a token": lambda c: service.new_token(c, "more"),
        "see your tokens and grants": lambda c: service.tokens(c),
        "end a token or a grant": lambda c: service.revoke_token(c, "0" * 12),
        "sign a browser in": lambda c: service.new_session(c),
        "make a sign-in link": lambda c: service.sign_in_link(c),
        "open an app's pages as you": lambda c: service.new_pass(c, "ada", "runs", None),
    }


def test_nothing_the_person_made_makes_or_ends_a_sign_in(service: Service, ada: Caller) -> None:
    credentials = _credentials(service, ada)
    before = service.tokens(ada).data["tokens"]
    for how, caller in credentials.items():
        assert caller.signed_in and not caller.themselves, how
        for doing, attempt in _derivations(service).items():
            with pytest.raises(Forbidden) as refused:
                attempt(caller)
            assert refused.value.sentence == (
                f"only you, signed in yourself (with your password, or at this machine's "
                f"command line), can {doing} — not a token, an agent or a page"
            ), (how, doing)
    # Nothing was made, and nothing ended: every one of them still signs in.
    assert service.tokens(ada).data["tokens"] == before
    for how, caller in credentials.items():
        if how != "a page's pass":
            assert service.graph.query(caller, "ada/runs", ".jog!").text == "0 rows in ada/runs"


def test_the_person_themselves_may(service: Service, ada: Caller) -> None:
    service.deploy(ada, RUNS, app="runs")
    signed_in = service.people.caller_for_session(service.new_session(ada))
    for person in (ada, signed_in):  # at the command line, and in a browser
        assert person.themselves
        made = service.new_token(person, "laptop")
        assert service.caller_for_token(made).name == "ada"
        listed = service.tokens(person).data["tokens"]
        service.revoke_token(person, listed[-1]["id"])
        assert service.sign_in_link(person) and service.new_session(person)
        assert service.new_pass(person, "ada", "runs", None)
