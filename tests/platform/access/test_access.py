"""Who may do what: every role against every access, through every way in (DESIGN §5).

One app per access in the space `club`, whose owner is ada, with bo an editor
and cy a viewer; di belongs to a space of her own only; nobody is signed out.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.club import RUNS
from pasture.caller import NOBODY, Caller
from pasture.errors import Forbidden, NotFound, Refused
from pasture.platform.service import Service

ACCESSES = ("private", "public", "open")
WHO = ("owner", "editor", "viewer", "stranger", "nobody")
VIEWER_WRITES = "you can read this app but not change it — its owner can make you an editor"


@pytest.fixture(scope="module")
def club(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, dict[str, Caller]]]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PASTURE_USER", "ada")
        service = Service(tmp_path_factory.mktemp("home"))
        ada = service.local_owner()
        people = {
            "owner": ada,
            "editor": service.people.new_user(ada, "bo"),
            "viewer": service.people.new_user(ada, "cy"),
            "stranger": service.people.new_user(ada, "di"),
            "nobody": NOBODY,
        }
        service.spaces.new_space(ada, "club")
        service.add_member(ada, "club", "bo", "editor")
        service.add_member(ada, "club", "cy", "viewer")
        for access in ACCESSES:
            service.deploy(ada, RUNS, space="club", app=access, access=access)  # type: ignore[arg-type]
        yield service, people
        service.close()


RUN = {"who": "Ada", "miles": 5, "at": "2026-09-01"}
BUNDLE = {"entity": {"eid": "$r"}, "jog": {"who": "Bo", "miles": 3}}

Door = Callable[[Service, Caller, str], Any]
DOORS: dict[str, Door] = {
    "page": lambda s, c, a: s.pages.page(c, "club", a, ""),
    "read": lambda s, c, a: s.graph.query(c, f"club/{a}", ".jog!", via_web=True),
    "write": lambda s, c, a: s.apply(c, f"club/{a}", BUNDLE, via_web=True),
    "read command": lambda s, c, a: s.run_command(c, "leaderboard", {}, f"club/{a}", via_web=True),
    "write command": lambda s, c, a: s.run_command(c, "log_run", RUN, f"club/{a}", via_web=True),
}
READS = ("page", "read", "read command")


def expected(who: str, access: str, door: str) -> str:
    """ok, hidden (NotFound, as if there were no such app) or refused (Forbidden/sign in)."""
    if who in ("owner", "editor"):
        return "ok"
    if who == "viewer":
        return "ok" if door in READS or access == "open" else "refused"
    if access == "private":
        return "hidden"
    return "ok" if door in READS or access == "open" else "refused"


def outcome(run: Callable[[], Any]) -> tuple[str, str]:
    try:
        run()
    except NotFound as e:
        return "hidden", e.sentence
    except Refused as e:
        return "refused", e.sentence
    return "ok", ""


CELLS = [(w, a, d) for w in WHO for a in ACCESSES for d in DOORS]


@pytest.mark.parametrize(("who", "access", "door"), CELLS)
def test_access_matrix(
    club: tuple[Service, dict[str, Caller]], who: str, access: str, door: str
) -> None:
    service, people = club
    got, sentence = outcome(lambda: DOORS[door](service, people[who], access))
    assert got == expected(who, access, door), sentence
    if got == "hidden":
        assert sentence == f"no app club/{access}"
    if got == "refused" and who != "nobody":
        assert sentence == VIEWER_WRITES
    if got == "refused" and who == "nobody":
        assert sentence.startswith("sign in to change club/")


@pytest.mark.parametrize("access", ACCESSES)
@pytest.mark.parametrize("who", WHO)
def test_by_command_only_members_reach_an_app(
    club: tuple[Service, dict[str, Caller]], who: str, access: str
) -> None:
    service, people = club
    caller = people[who]
    member = who in ("owner", "editor", "viewer")
    got, sentence = outcome(lambda: service.graph.query(caller, f"club/{access}", ".jog!"))
    assert got == ("ok" if member else "hidden" if who == "stranger" else "refused"), sentence
    listed = {e["at"] for e in service.listing.list_commands(caller).data["commands"]}
    assert (f"club/{access}" in listed) == member
    if who == "stranger":
        assert sentence.startswith(f"no app club/{access} — ")
    if who == "nobody":
        assert "sign in" in sentence


def test_a_viewer_running_a_write_command_hears_the_specs_sentence(
    club: tuple[Service, dict[str, Caller]],
) -> None:
    service, people = club
    with pytest.raises(Forbidden) as refused:
        service.run_command(people["viewer"], "log_run", RUN, "club/public")
    assert refused.value.sentence == VIEWER_WRITES


def _in_another_process(home: Path, code: str) -> None:
    """`code` run against the same data by a process of its own, as a second server would."""
    script = "from pasture.platform.service import Service\n"
    script += f"svc = Service({str(home)!r})\nada = svc.local_owner()\n"
    script += textwrap.dedent(code)
    env = {**os.environ, "PASTURE_USER": "ada"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()


@pytest.mark.processes
def test_a_server_running_sees_members_changed_by_another_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASTURE_USER", "ada")
    service = Service(tmp_path / "home")
    try:
        ada = service.local_owner()
        bo = service.people.new_user(ada, "bo")
        service.deploy(ada, RUNS)
        with pytest.raises(NotFound) as missing:
            service.run_command(bo, "leaderboard", {})
        assert "you have no apps yet" in missing.value.sentence
        assert service.gate.list_apps(bo) == []

        _in_another_process(service.home, 'svc.add_member(ada, "ada", "bo", "viewer")')
        assert [app.at for app in service.gate.list_apps(bo)] == ["ada/runs"]
        assert service.spaces.role(bo, "ada") == "viewer"
        assert service.run_command(bo, "leaderboard", {}).data["rows"] == []
        with pytest.raises(Forbidden) as refused:
            service.run_command(bo, "log_run", RUN)
        assert refused.value.sentence == VIEWER_WRITES

        _in_another_process(service.home, 'svc.add_member(ada, "ada", "bo", "editor")')
        assert service.run_command(bo, "log_run", RUN).text.startswith("log_run: wrote 1 entity")
        rows = service.run_command(bo, "leaderboard", {}).data["rows"]
        assert [r["jog"]["miles"] for r in rows] == [5]
    finally:
        service.close()
