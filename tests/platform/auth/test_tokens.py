"""A token carries the rights its person chose: read, or read and write; all their spaces, or some.

Every layer holds it to that: the graph, commands declared and written as
code (their worker's writes too), deploys, spaces and secrets. Tokens are
listed without their secret and end at once when revoked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.club import CART, RUNS
from pasture.caller import Caller
from pasture.errors import Forbidden, NotFound, Unauthorized, UsageError
from pasture.platform.nouns import READ_ONLY_GRANT
from pasture.platform.service import Service

RUN = {"who": "Ada", "miles": "5", "at": "2026-09-01"}


@pytest.fixture
def club(service: Service, ada: Caller) -> Service:
    service.deploy(ada, RUNS)
    service.deploy(ada, CART)
    service.spaces.new_space(ada, "club")
    service.deploy(ada, RUNS, space="club")
    return service


def test_a_read_only_token_reads_and_writes_nothing_anywhere(
    club: Service, ada: Caller, tmp_path: Path
) -> None:
    reader = club.caller_for_token(club.new_token(ada, "reader", writes=False))
    assert (reader.eid, reader.writes) == (ada.eid, False)
    assert club.graph.query(reader, "ada/runs", ".jog!").text == "0 rows in ada/runs"
    assert club.run_command(reader, "leaderboard", {}, "ada/runs").text.startswith("leaderboard:")
    assert club.run_command(reader, "cart_status", {}).text == "the cart is empty"
    writes = {
        "log_run": lambda: club.run_command(reader, "log_run", RUN, "ada/runs"),
        "cart_add (code)": lambda: club.run_command(reader, "cart_add", {"sku": "A-1"}),
        "apply": lambda: club.apply(reader, "ada/runs", {"entity": {"eid": "$j"}, "jog": {}}),
        "deploy": lambda: club.deploy(reader, RUNS, app="another"),
        "space": lambda: club.spaces.new_space(reader, "more"),
        "member": lambda: club.add_member(reader, "club", ada.name or "", "viewer"),
        "secret": lambda: club.secrets.set(reader, "cart", "KEY", "value"),
        "rollback": lambda: club.rollback(reader, "ada/runs", 1),
    }
    for what, attempt in writes.items():
        with pytest.raises(Forbidden) as refused:
            attempt()
        assert refused.value.sentence == READ_ONLY_GRANT, what
    assert club.graph.query(ada, "ada/runs", ".jog!").data["rows"] == []
    assert club.graph.query(ada, "ada/cart", ".line!").data["rows"] == []
    # Nor does it make a token of its own (tests/platform/auth/test_themselves.py).
    with pytest.raises(Forbidden, match=r"^only you, signed in yourself"):
        club.new_token(reader, "child")


def test_a_token_for_some_spaces_reaches_only_them(club: Service, ada: Caller) -> None:
    token = club.new_token(ada, "club only", spaces=["club"])
    caller = club.caller_for_token(token)
    assert caller.spaces == frozenset({"club"})
    assert [a.at for a in club.gate.list_apps(caller)] == ["club/runs"]
    assert club.run_command(caller, "log_run", RUN).text.startswith(
        "log_run: wrote 1 entity in club"
    )
    with pytest.raises(NotFound):
        club.graph.query(caller, "ada/runs", ".jog!")
    with pytest.raises(NotFound):
        club.run_command(caller, "cart_status", {})
    with pytest.raises(UsageError, match="nowhere is not a space of ada's"):
        club.new_token(ada, "bad", spaces=["nowhere"])


def test_tokens_are_listed_without_their_secret_and_revoked_at_once(
    club: Service, ada: Caller
) -> None:
    secret = club.new_token(ada, "laptop", writes=False, spaces=["club"])
    club.caller_for_token(secret)  # used once
    listed = club.tokens(ada)
    [entry] = [t for t in listed.data["tokens"] if t["label"] == "laptop"]
    assert entry["scope"] == "reads only, in club"
    assert entry["last_used"] is not None
    assert secret not in listed.text and secret not in repr(listed.data)
    assert f"{entry['id']}  laptop — reads only, in club" in listed.text
    revoked = club.revoke_token(ada, entry["id"])
    assert revoked.text.startswith(f"token {entry['id']} (laptop) is revoked")
    with pytest.raises(Unauthorized):
        club.caller_for_token(secret)
    with pytest.raises(NotFound):
        club.revoke_token(ada, entry["id"])


def test_the_owner_acts_for_anyone_and_nobody_else_does(club: Service, ada: Caller) -> None:
    bo = club.people.new_user(ada, "bo")
    for_bo = club.new_token(ada, "for bo", user="bo")
    assert club.caller_for_token(for_bo).eid == bo.eid
    assert [t["label"] for t in club.tokens(ada, "bo").data["tokens"]] == ["for bo"]
    with pytest.raises(Forbidden, match="only the server's owner acts for another person"):
        club.tokens(bo, "ada")
    with pytest.raises(Forbidden):
        club.new_token(bo, "for ada", user="ada")
    own = club.new_token(bo, "mine")
    assert club.caller_for_token(own).eid == bo.eid
