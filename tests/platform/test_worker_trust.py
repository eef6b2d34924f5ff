"""Who may run code: the spaces the server's owner trusts. Apps' secrets, seen by their code."""

from __future__ import annotations

from pathlib import Path

import pytest
from code_apps import code_app, deploy

from helpers.club import CART, RUNS
from helpers.processes import pasture
from pasture.caller import Caller
from pasture.errors import DeployRefused, Forbidden, NotFound, UsageError
from pasture.platform.service import Service

SECRETS = """
def show(args, ctx):
    return {"text": "shown", "data": dict(ctx.secrets)}


def setup(app):
    register_notes(app)
    app.register("box secrets", description="Show", annotations={"readOnly": True}, run=show)
"""

UNTRUSTED_BOB = (
    "worker.py: this app runs code, and bob is not trusted to run code — only the server's "
    "owner can trust a space, with pasture space trust bob — without worker.py it deploys as "
    "it is"
)


@pytest.fixture
def bob(service: Service, ada: Caller) -> Caller:
    return service.new_user(ada, "bob")


# -- trust -------------------------------------------------------------------------------------
def test_the_owner_s_own_space_runs_code_from_the_start(service: Service, ada: Caller) -> None:
    deploy(service, ada, CART)
    assert service.run_command(ada, "cart_add", {"sku": "V60-02"}).text.startswith("Added 1")
    with pytest.raises(UsageError, match="ada is the server owner's own space"):
        service.trust_space(ada, "ada", False)


def test_a_deploy_with_code_into_an_untrusted_space_is_refused_and_installs_nothing(
    service: Service, ada: Caller, bob: Caller, tmp_path: Path
) -> None:
    with pytest.raises(DeployRefused) as refused:
        service.deploy(bob, CART)
    assert refused.value.sentence == UNTRUSTED_BOB
    with pytest.raises(NotFound):
        service.app_info(bob, "cart")
    # The same app without worker.py: pages, vocab and declared commands need no trust.
    plain = tmp_path / "plain"
    plain.mkdir()
    for name in ("index.html", "vocab.json"):
        (plain / name).write_bytes((CART / name).read_bytes())
    assert service.deploy(bob, plain).text.startswith("deployed bob/plain v1")
    assert service.app_info(bob, "plain").code is False


def test_only_the_server_s_owner_trusts_a_space(service: Service, ada: Caller, bob: Caller) -> None:
    with pytest.raises(Forbidden) as refused:
        service.trust_space(bob, "bob")
    assert refused.value.sentence == (
        "only the server's owner trusts a space to run code — ask them"
    )
    with pytest.raises(NotFound, match="no space nowhere"):
        service.trust_space(ada, "nowhere")


def test_trusting_lets_code_run_and_untrusting_stops_it(
    service: Service, ada: Caller, bob: Caller
) -> None:
    trusted = service.trust_space(ada, "bob")
    assert trusted.text.startswith("bob is trusted: apps deployed to it may carry worker.py")
    assert trusted.data["trusted"] is True
    deploy(service, bob, CART)
    service.deploy(bob, RUNS)
    assert service.run_command(bob, "cart_add", {"sku": "A-1"}).data == {"sku": "A-1", "qty": 1}
    untrusted = service.trust_space(ada, "bob", False)
    assert untrusted.text.startswith("bob is no longer trusted: its apps' code does not run")
    with pytest.raises(Forbidden) as refused:
        service.run_command(bob, "cart_add", {"sku": "A-1"})
    assert refused.value.sentence == (
        "cart add runs code, and bob is not trusted to run code — only the server's owner can "
        "trust a space, with pasture space trust bob"
    )
    # What is not code goes on: its data, its declared commands, the other apps.
    assert service.query(bob, "cart", ".line!").text == "1 row in bob/cart"
    assert service.run_command(bob, "leaderboard", {}).text == "leaderboard: 0 rows in bob/runs"
    with pytest.raises(DeployRefused, match="bob is not trusted to run code"):
        service.deploy(bob, CART)
    service.trust_space(ada, "bob")
    assert service.run_command(bob, "cart_add", {"sku": "A-1"}).data["qty"] == 2


def test_listings_say_which_apps_run_code(service: Service, ada: Caller) -> None:
    deploy(service, ada, CART)
    deploy(service, ada, RUNS)
    apps = {a.at: a for a in service.list_apps(ada)}
    assert apps["ada/cart"].code and apps["ada/cart"].as_data()["code"] is True
    assert not apps["ada/runs"].code and apps["ada/runs"].as_data()["code"] is False
    lines = service.status(ada).text.splitlines()
    assert lines[0] == "ada/cart v1 — Cart — 0 entities, 4 commands, public, runs code"
    assert "ada/runs v1 — Run club — 0 entities, 3 commands, public" in lines


# -- secrets -------------------------------------------------------------------------------------
def test_a_secret_reaches_its_app_s_code_and_nothing_else(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    deploy(service, ada, code_app(tmp_path, "box", SECRETS))
    other = code_app(tmp_path, "other", SECRETS.replace("box secrets", "other secrets"))
    deploy(service, ada, other)
    assert service.set_secret(ada, "box", "API_KEY", "s3cret-value").text == (
        "API_KEY is set for ada/box: its code reads it as ctx.secrets['API_KEY']"
    )
    assert service.run_command(ada, "box_secrets", {}).data == {"API_KEY": "s3cret-value"}
    assert service.run_command(ada, "other_secrets", {}).data == {}
    # Changed, the next call sees the new value: the app's processes start afresh.
    service.set_secret(ada, "box", "API_KEY", "rotated")
    assert service.run_command(ada, "box_secrets", {}).data == {"API_KEY": "rotated"}
    # Listed by name, never by value; nowhere among the app's files or listings.
    listed = service.secrets(ada, "box")
    assert listed.text.splitlines()[0] == "ada/box: 1 secret"
    assert listed.text.splitlines()[1].startswith("API_KEY  set ")
    assert [s["name"] for s in listed.data["secrets"]] == ["API_KEY"]
    for shown in (
        listed,
        service.files(ada, "box"),
        service.list_commands(ada),
        service.status(ada),
    ):
        assert "rotated" not in shown.text and "rotated" not in repr(shown.data)
    assert service.remove_secret(ada, "box", "API_KEY").text == "API_KEY is gone from ada/box"
    assert service.run_command(ada, "box_secrets", {}).data == {}
    assert service.secrets(ada, "box").text == (
        "ada/box has no secrets — pasture secret set box NAME sets one"
    )


def test_secrets_are_for_those_who_deploy_the_app(
    service: Service, ada: Caller, bob: Caller, tmp_path: Path
) -> None:
    deploy(service, ada, code_app(tmp_path, "box", SECRETS))
    service.add_member(ada, "ada", "bob", "viewer")
    for attempt in (
        lambda: service.set_secret(bob, "ada/box", "API_KEY", "x"),
        lambda: service.secrets(bob, "ada/box"),
        lambda: service.remove_secret(bob, "ada/box", "API_KEY"),
    ):
        with pytest.raises(Forbidden) as refused:
            attempt()
        assert refused.value.sentence == (
            "you can use ada/box but not see or change its secrets — its space's owner can make "
            "you an editor"
        )
    with pytest.raises(UsageError, match="a secret's name is letters, digits and _"):
        service.set_secret(ada, "box", "api key", "x")
    with pytest.raises(UsageError, match="give API_KEY a value on standard input"):
        service.set_secret(ada, "box", "API_KEY", "")
    with pytest.raises(NotFound, match="ada/box has no secret NOPE"):
        service.remove_secret(ada, "box", "NOPE")


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
