"""An app's secrets: set by those who deploy it, seen by its code and by nobody else, and
read by the command line from standard input only."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.code_apps import code_app, deploy
from helpers.command_line import pasture_main as pasture
from pasture.caller import Caller
from pasture.errors import Forbidden, NotFound, UsageError
from pasture.platform.service import Service

SECRETS = """
def show(args, ctx):
    return {"text": "shown", "data": dict(ctx.secrets)}


def setup(app):
    register_notes(app)
    app.register("box secrets", description="Show", annotations={"readOnly": True}, run=show)
"""


@pytest.fixture
def bob(service: Service, ada: Caller) -> Caller:
    return service.people.new_user(ada, "bob")


def test_a_secret_reaches_its_app_s_code_and_nothing_else(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    deploy(service, ada, code_app(tmp_path, "box", SECRETS))
    other = code_app(tmp_path, "other", SECRETS.replace("box secrets", "other secrets"))
    deploy(service, ada, other)
    assert service.secrets.set(ada, "box", "API_KEY", "s3cret-value").text == (
        "API_KEY is set for ada/box: its code reads it as ctx.secrets['API_KEY']"
    )
    assert service.run_command(ada, "box_secrets", {}).data == {"API_KEY": "s3cret-value"}
    assert service.run_command(ada, "other_secrets", {}).data == {}
    # Changed, the next call sees the new value: the app's processes start afresh.
    service.secrets.set(ada, "box", "API_KEY", "rotated")
    assert service.run_command(ada, "box_secrets", {}).data == {"API_KEY": "rotated"}
    # Listed by name, never by value; nowhere among the app's files or listings.
    listed = service.secrets.list(ada, "box")
    assert listed.text.splitlines()[0] == "ada/box: 1 secret"
    assert listed.text.splitlines()[1].startswith("API_KEY  set ")
    assert [s["name"] for s in listed.data["secrets"]] == ["API_KEY"]
    for shown in (
        listed,
        service.apps.files(ada, "box"),
        service.listing.list_commands(ada),
        service.listing.status(ada),
    ):
        assert "rotated" not in shown.text and "rotated" not in repr(shown.data)
    assert service.secrets.remove(ada, "box", "API_KEY").text == "API_KEY is gone from ada/box"
    assert service.run_command(ada, "box_secrets", {}).data == {}
    assert service.secrets.list(ada, "box").text == (
        "ada/box has no secrets — pasture secret set box NAME sets one"
    )


def test_secrets_are_for_those_who_deploy_the_app(
    service: Service, ada: Caller, bob: Caller, tmp_path: Path
) -> None:
    deploy(service, ada, code_app(tmp_path, "box", SECRETS))
    service.add_member(ada, "ada", "bob", "viewer")
    for attempt in (
        lambda: service.secrets.set(bob, "ada/box", "API_KEY", "x"),
        lambda: service.secrets.list(bob, "ada/box"),
        lambda: service.secrets.remove(bob, "ada/box", "API_KEY"),
    ):
        with pytest.raises(Forbidden) as refused:
            attempt()
        assert refused.value.sentence == (
            "you can use ada/box but not see or change its secrets — its space's owner can make "
            "you an editor"
        )
    with pytest.raises(UsageError, match="a secret's name is letters, digits and _"):
        service.secrets.set(ada, "box", "api key", "x")
    with pytest.raises(UsageError, match="give API_KEY a value on standard input"):
        service.secrets.set(ada, "box", "API_KEY", "")
    with pytest.raises(NotFound, match="ada/box has no secret NOPE"):
        service.secrets.remove(ada, "box", "NOPE")


def test_the_command_line_reads_a_secret_from_standard_input_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = code_app(tmp_path, "box", SECRETS)
    assert pasture(home, "deploy", str(folder)).returncode == 0
    set_ = pasture(home, "secret", "set", "box", "API_KEY", input="from-stdin\n")
    assert set_.returncode == 0, set_.stderr
    assert "from-stdin" not in set_.stdout
    # A value given as an argument would be in the shell's history: there is no such form.
    as_argument = pasture(home, "secret", "set", "box", "API_KEY", "in-the-open")
    assert as_argument.returncode == 2 and "unrecognized arguments" in as_argument.stderr
    listed = pasture(home, "secret", "list", "box")
    assert listed.stdout.splitlines()[0] == "ada/box: 1 secret"
    assert "from-stdin" not in listed.stdout
    shown = pasture(home, "command", "box_secrets", "--json")
    assert shown.stdout.strip() == '{\n  "API_KEY": "from-stdin"\n}'
    gone = pasture(home, "secret", "rm", "box", "API_KEY")
    assert gone.stdout == "API_KEY is gone from ada/box\n"
    untrust = pasture(home, "space", "untrust", "ada")
    assert untrust.returncode == 2
    assert untrust.stderr.startswith("ada is the server owner's own space")
