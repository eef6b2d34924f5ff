"""Who may run code: the spaces the server's owner trusts (apps' secrets: test_app_secrets.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.club import CART, RUNS
from helpers.code_apps import deploy
from pasture.caller import Caller
from pasture.errors import DeployRefused, Forbidden, NotFound, UsageError
from pasture.platform.service import Service

UNTRUSTED_BOB = (
    "worker.py: this app runs code, and bob is not trusted to run code — only the server's "
    "owner can trust a space, with pasture space trust bob — without worker.py it deploys as "
    "it is"
)


@pytest.fixture
def bob(service: Service, ada: Caller) -> Caller:
    return service.people.new_user(ada, "bob")


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
        service.gate.app_info(bob, "cart")
    # The same app without worker.py: pages, vocab and declared commands need no trust.
    plain = tmp_path / "plain"
    plain.mkdir()
    for name in ("index.html", "vocab.json"):
        (plain / name).write_bytes((CART / name).read_bytes())
    assert service.deploy(bob, plain).text.startswith("deployed bob/plain v1")
    assert service.gate.app_info(bob, "plain").code is False


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
    assert service.graph.query(bob, "cart", ".line!").text == "1 row in bob/cart"
    assert service.run_command(bob, "leaderboard", {}).text == "leaderboard: 0 rows in bob/runs"
    with pytest.raises(DeployRefused, match="bob is not trusted to run code"):
        service.deploy(bob, CART)
    service.trust_space(ada, "bob")
    assert service.run_command(bob, "cart_add", {"sku": "A-1"}).data["qty"] == 2


def test_listings_say_which_apps_run_code(service: Service, ada: Caller) -> None:
    deploy(service, ada, CART)
    deploy(service, ada, RUNS)
    apps = {a.at: a for a in service.gate.list_apps(ada)}
    assert apps["ada/cart"].code and apps["ada/cart"].as_data()["code"] is True
    assert not apps["ada/runs"].code and apps["ada/runs"].as_data()["code"] is False
    lines = service.listing.status(ada).text.splitlines()
    assert lines[0] == "ada/cart v1 — Cart — 0 entities, 4 commands, public, runs code"
    assert "ada/runs v1 — Run club — 0 entities, 3 commands, public" in lines
