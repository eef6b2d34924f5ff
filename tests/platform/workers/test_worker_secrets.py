"""An app's secrets reach only the calls the server hands them to.

The server sends them with the call of an action, or of a command registered with
`app.register` (code that has no kind, and may reach outside), and with no other: not to
a query's or a mutation's call, not to a suggestion, not to the process as it sets up.
The worker process is another person's code, so this is tried from inside it by any
means: its code looks through every object Python holds (`gc`) for the secret's value,
at import and in each call, in one process that has served an action just before.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.code_apps import code_app, deploy
from pasture.caller import Caller
from pasture.platform.service import Limits, Service
from pasture.platform.workers.dispatch import Version

# Every call goes to one process, so what one call was given the next could find.
LIMITS = Limits(time=120, cpu=60, processes=1, setup=120, suggest=60)

WORKER = """
import gc

from pasture import action, mutation, query, string


def holds(reversed_value):
    # Whether any object this process holds is the value (compared reversed, so that the
    # search itself never makes the value it looks for).
    n = len(reversed_value)

    def same(x):
        return type(x) is str and len(x) == n and x[::-1] == reversed_value

    for held in gc.get_objects():
        for inner in gc.get_referents(held):
            if same(inner):
                return True
            if type(inner) in (dict, tuple, list):
                items = list(inner.items()) if type(inner) is dict else [(x, None) for x in inner]
                if any(same(k) or same(v) for k, v in items):
                    return True
    return False


# Everything this process held once it had imported this, kept: a value given it before
# its first call would be among them.
AT_IMPORT = [x for held in gc.get_objects() for x in gc.get_referents(held) if type(x) is str]


def found(args):
    rev = args["rev"]
    return {
        "holds": holds(rev),
        "at_import": any(len(x) == len(rev) and x[::-1] == rev for x in AT_IMPORT),
    }


ARGS = {"rev": string()}


@query(tool={"description": "Look for the value", "args": ARGS})
def look_query(ctx, args):
    return {"text": "looked", "data": found(args)}


@mutation(tool={"description": "Look for the value", "args": ARGS})
def look_mutation(ctx, args):
    return {"text": "looked", "data": found(args)}


@action(tool={"description": "Use the key", "args": ARGS})
def use_key(ctx, args):
    return {"text": "used", "data": {**found(args), "key": len(ctx.secrets.get("KEY", ""))}}


def registered(args, ctx):
    return {"text": "looked", "data": {**found(args), "key": len(ctx.secrets.get("KEY", ""))}}


def suggest(argument, partial):
    return ["holds" if holds(partial) else "clean"]


def setup(app):
    register_notes(app)
    app.register(
        "box look",
        description="Look, as a registered command",
        input={"type": "object", "properties": {"rev": {"type": "string"}}},
        annotations={"readOnly": True},
        run=registered,
        suggest=suggest,
    )
"""


@pytest.fixture
def keyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Service, str]]:
    """A Service whose app `box` has the secret KEY; and KEY's value."""
    monkeypatch.setenv("PASTURE_USER", "ada")
    service = Service(tmp_path / "home", limits=LIMITS)
    owner = service.local_owner()
    deploy(service, owner, code_app(tmp_path, "box", WORKER))
    value = f"s3cret-{secrets.token_hex(12)}"
    service.secrets.set(owner, "box", "KEY", value)
    yield service, value
    service.close()


def _look(service: Service, who: Caller, name: str, value: str) -> dict[str, object]:
    return dict(service.run_command(who, name, {"rev": value[::-1]}, app="ada/box").data)


def test_only_an_action_s_call_and_a_registered_command_s_hold_the_app_s_secrets(
    keyed: tuple[Service, str],
) -> None:
    service, value = keyed
    owner = service.local_owner()
    nothing = {"holds": False, "at_import": False}
    # Setting up, a query and a mutation: nowhere in the process.
    assert _look(service, owner, "look_query", value) == nothing
    assert _look(service, owner, "look_mutation", value) == nothing
    # An action's call has them, as ctx.secrets; so does a command registered with app.register.
    assert _look(service, owner, "use_key", value) == {**nothing, "holds": True, "key": len(value)}
    assert _look(service, owner, "box_look", value) == {**nothing, "holds": True, "key": len(value)}
    # And once its call has ended, the process holds them no more: the next query, in the
    # same process, finds nothing.
    assert _look(service, owner, "look_query", value) == nothing
    assert _look(service, owner, "look_mutation", value) == nothing
    # Its pages call the handlers the same way: the action has them, the query not.
    page = service.call_handler(owner, "ada/box", "use_key", {"rev": value[::-1]})
    assert page.data["holds"] is True and page.data["key"] == len(value)
    page = service.call_handler(owner, "ada/box", "look_query", {"rev": value[::-1]})
    assert page.data["holds"] is False
    # A suggestion (Tab completion) is given none.
    box = service.catalog.version_of("ada", "box", 1)
    assert isinstance(box, Version)
    assert service.catalog.workers.suggest(box, "box look", "rev", value[::-1]) == ["clean"]
