"""`pasture space list`, `member list` and `user list`: who is where, as a person at the
command line sees it — as the machine's owner, or as another person by their token."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.club import RUNS
from helpers.command_line import PastureMain


@pytest.fixture
def pasture(tmp_path: Path) -> PastureMain:
    pasture = PastureMain(tmp_path / "home")
    for step in (
        ("user", "new", "bo"),
        ("user", "new", "cy", "--password", "correct horse"),
        ("space", "new", "club"),
        ("member", "add", "club", "bo", "editor"),
        ("member", "add", "club", "cy", "viewer"),
        ("deploy", str(RUNS), "--space", "club"),
    ):
        done = pasture(*step)
        assert done.returncode == 0, done.stderr
    return pasture


def _token(pasture: PastureMain, user: str) -> str:
    made = pasture("token", "new", "--user", user, "--json")
    return str(json.loads(made.stdout)["token"])


def test_space_list_shows_your_spaces_your_role_and_apps(pasture: PastureMain) -> None:
    listed = pasture("space", "list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "ada is in 2 spaces:",
        "ada   owner, 0 apps, runs code",
        "club  owner, 1 app",
    ]
    theirs = json.loads(pasture("space", "list", "--json", "--token", _token(pasture, "bo")).stdout)
    assert theirs == {
        "spaces": [
            {"space": "bo", "role": "owner", "trusted": False, "apps": 0},
            {"space": "club", "role": "editor", "trusted": False, "apps": 1},
        ]
    }
    assert pasture("app", "remove", "club/runs").returncode == 0  # in the trash: not counted
    assert "club  owner, 0 apps" in pasture("space", "list").stdout


def test_member_list_shows_a_spaces_people_and_roles(pasture: PastureMain) -> None:
    listed = pasture("member", "list", "club")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "club has 3 members:",
        "ada  owner",
        "bo   editor",
        "cy   viewer",
    ]
    as_viewer = pasture("member", "list", "club", "--json", "--token", _token(pasture, "cy"))
    assert json.loads(as_viewer.stdout)["members"][2] == {"user": "cy", "role": "viewer"}
    outside = pasture("member", "list", "ada", "--token", _token(pasture, "bo"))
    assert outside.returncode != 0
    assert outside.stderr.strip() == (
        "no space ada of yours — pasture space list shows the spaces you are in"
    )


def test_user_list_is_the_servers_owners_and_says_who_to_ask(pasture: PastureMain) -> None:
    listed = pasture("user", "list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "3 people on this server:",
        "ada  space ada, the server's owner, no web password yet",
        "bo   space bo, no web password yet",
        "cy   space cy",
    ]
    data = json.loads(pasture("user", "list", "--json").stdout)["users"]
    assert [(u["name"], u["owner"], u["password"]) for u in data] == [
        ("ada", True, False),
        ("bo", False, False),
        ("cy", False, True),
    ]
    refused = pasture("user", "list", "--token", _token(pasture, "bo"))
    assert refused.returncode != 0 and refused.stdout == ""
    assert refused.stderr.strip() == (
        "only the server's owner (ada) lists the people on it — ask them; "
        "pasture member list SPACE shows who is in a space of yours"
    )
    assert "Traceback" not in refused.stderr


@pytest.mark.processes
def test_the_lists_on_postgresql(pg_url: str, tmp_path: Path) -> None:
    from helpers.databases import fresh_database

    pasture = PastureMain(tmp_path / "home", PASTURE_DATABASE_URL=fresh_database(pg_url))
    for step in (("user", "new", "bo"), ("space", "new", "club"), ("deploy", str(RUNS))):
        assert pasture(*step).returncode == 0
    assert pasture("member", "add", "club", "bo", "viewer").returncode == 0
    spaces = json.loads(pasture("space", "list", "--json").stdout)["spaces"]
    assert [(s["space"], s["apps"]) for s in spaces] == [("ada", 1), ("club", 0)]
    members = json.loads(pasture("member", "list", "club", "--json").stdout)["members"]
    assert members == [{"user": "ada", "role": "owner"}, {"user": "bo", "role": "viewer"}]
    users = json.loads(pasture("user", "list", "--json").stdout)["users"]
    assert [(u["name"], u["owner"], u["password"]) for u in users] == [
        ("ada", True, False),
        ("bo", False, False),
    ]


def test_user_new_refuses_a_short_password_and_adds_nobody(pasture: PastureMain) -> None:
    refused = pasture("user", "new", "di", "--password", "short")
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.strip() == "a password is at least 8 characters long"
    assert "di" not in pasture("user", "list").stdout


def test_app_set_changes_the_title_and_access_as_the_listing_then_shows(
    pasture: PastureMain,
) -> None:
    done = pasture("app", "set", "club/runs", "--title", "Tuesday runs", "--access", "private")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "club/runs: its title is Tuesday runs and its access is private (only the members of "
        "its space see it)"
    )
    assert "club/runs v1 — Tuesday runs — " in pasture("status").stdout
    # a viewer's token: refused, with who can, and nothing changed
    viewer = _token(pasture, "cy")
    refused = pasture("app", "set", "club/runs", "--access", "open", "--token", viewer)
    assert refused.returncode != 0
    assert refused.stderr.strip() == (
        "you can use club/runs but not change its settings — its space's owners can make you "
        "an editor of club"
    )
    assert ", private" in pasture("status").stdout
