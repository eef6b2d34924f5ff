"""An app's title and access set without a deploy (`Service.change_app`, `pasture app set`,
the settings page's form): by its space's owners and editors, at once for every door and
every server on the same data; refused with a sentence, and nothing changed, for anyone else
and for any title or access that is not one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.club import RUNS
from pasture.caller import NOBODY, Caller
from pasture.errors import Forbidden, NotFound, PastureError, Unauthorized, UsageError
from pasture.platform.nouns import READ_ONLY_GRANT
from pasture.platform.service import Service

PASSWORD = "correct horse battery staple"


@pytest.fixture
def club(service: Service, ada: Caller) -> Iterator[Service]:
    """ada/runs (public, "Run club") at v2; cy an editor of ada's space, vi a viewer, bo
    the owner of her own space only."""
    service.deploy(ada, RUNS, space="ada", app="runs")
    service.deploy(ada, RUNS, space="ada", app="runs", title="Run club, again")
    for name, role in (("cy", "editor"), ("vi", "viewer")):
        service.people.new_user(ada, name, PASSWORD)
        service.add_member(ada, "ada", name, role)  # type: ignore[arg-type]
    service.people.new_user(ada, "bo", PASSWORD)
    yield service


def person(service: Service, name: str) -> Caller:
    found = service.people.by_name(name)
    assert found is not None
    return found


def settled(service: Service) -> tuple[str, str]:
    info = service.catalog.info("ada", "runs")
    return info.title, info.access


def test_an_owner_sets_the_title_and_access_and_every_door_sees_them(
    club: Service, ada: Caller, tmp_path: Path
) -> None:
    said = club.change_app(ada, "runs", title="  Tuesday runs ", access="private")
    assert said.text == (
        "ada/runs: its title is Tuesday runs and its access is private (only the members of "
        "its space see it)"
    )
    assert said.data == {"at": "ada/runs", "title": "Tuesday runs", "access": "private"}
    assert settled(club) == ("Tuesday runs", "private")
    [listed] = club.gate.list_apps(ada)
    assert (listed.title, listed.access, listed.version) == ("Tuesday runs", "private", 2)

    # private: a signed-out visitor no longer reads it on the web, nor does bo
    with pytest.raises(NotFound):
        club.gate.reach(NOBODY, "ada/runs", via_web=True)
    with pytest.raises(NotFound):
        club.gate.reach(person(club, "bo"), "ada/runs", via_web=True)

    # another server on the same data sees it at once
    other = Service(tmp_path / "home")
    try:
        assert settled(other) == ("Tuesday runs", "private")
    finally:
        other.close()

    # the title is the version's: a rollback shows v1's, and back at v2 it is kept
    club.rollback(ada, "ada/runs", 1)
    assert settled(club) == ("Run club", "private")
    club.rollback(ada, "ada/runs", 2)
    assert settled(club) == ("Tuesday runs", "private")

    # an editor may, as they may deploy; one setting leaves the other as it is
    assert club.change_app(person(club, "cy"), "ada/runs", access="open").text == (
        "ada/runs: its access is open (anyone who can reach it reads and changes it)"
    )
    assert settled(club) == ("Tuesday runs", "open")
    club.gate.reach(NOBODY, "ada/runs", via_web=True)


def test_the_audit_tells_what_was_changed_but_never_the_title_typed(
    club: Service, ada: Caller
) -> None:
    club.change_app(ada, "ada/runs", title="Secret plans of the club")
    club.change_app(ada, "ada/runs", access="public")
    records = club.audit(ada, "ada/runs").data["records"]
    sets = [r for r in records if r["action"] == "app set"]
    assert [r["args"] for r in sets] == ["title", "access public"]
    assert all(r["outcome"] == "ok" for r in sets)
    assert "Secret plans" not in repr(records)


REFUSALS = {
    "vi": (
        Forbidden,
        "you can use ada/runs but not change its settings — its space's owners can make you an "
        "editor of ada",
    ),
    "bo": (NotFound, "no app ada/runs — you have no apps yet; deploy one with pasture deploy"),
}


@pytest.mark.parametrize("who", sorted(REFUSALS))
def test_a_viewer_and_another_spaces_owner_change_nothing(club: Service, who: str) -> None:
    kind, sentence = REFUSALS[who]
    before = settled(club)
    with pytest.raises(kind) as refused:
        club.change_app(person(club, who), "ada/runs", title="Mine now", access="open")
    assert refused.value.sentence == sentence
    assert settled(club) == before


def test_a_signed_out_caller_and_a_read_only_token_change_nothing(
    club: Service, ada: Caller
) -> None:
    before = settled(club)
    with pytest.raises(Unauthorized):
        club.change_app(NOBODY, "ada/runs", access="open")
    reader = club.caller_for_token(club.new_token(ada, "reader", writes=False))
    with pytest.raises(Forbidden) as refused:
        club.change_app(reader, "ada/runs", access="open")
    assert refused.value.sentence == READ_ONLY_GRANT
    assert settled(club) == before


def test_asking_for_nothing_is_refused_with_what_to_say(club: Service, ada: Caller) -> None:
    with pytest.raises(UsageError) as refused:
        club.change_app(ada, "ada/runs")
    assert refused.value.sentence == (
        "say what to change: --title T, --access private|public|open, or both"
    )


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    title=st.one_of(st.none(), st.text(max_size=260)),
    access=st.one_of(
        st.none(), st.sampled_from(["private", "public", "open"]), st.text(max_size=30)
    ),
)
def test_any_title_or_access_is_kept_exactly_or_refused_with_nothing_changed(
    club: Service, ada: Caller, title: str | None, access: str | None
) -> None:
    before = settled(club)
    try:
        said = club.change_app(ada, "ada/runs", title=title, access=access)  # type: ignore[arg-type]
    except PastureError as e:
        assert isinstance(e, UsageError), e
        assert e.sentence and "Traceback" not in e.sentence and "\n" not in e.sentence
        assert settled(club) == before
        return
    assert access in (None, "private", "public", "open")
    expected = (
        before[0] if title is None else title.strip(),
        before[1] if access is None else access,
    )
    assert settled(club) == expected
    assert (said.data["title"], said.data["access"]) == expected
