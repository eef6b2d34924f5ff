"""Over MCP, the person is asked before a command that is hard to undo runs.

A client that says it can ask its person (it declared `elicitation`) is asked, before
`command` runs a `consequential` command, the question `pasture.asking` words:

- on the newest protocol (2026-07-28), the call's first answer is `input_required`
  with that one question, and the client calls again with the person's answer — which
  works on stateless HTTP too, since nothing waits on the server meanwhile;
- on older ones, as an `elicitation/create` request on the call's own channel, where
  that channel can carry one (stdio, a living connection; not stateless HTTP).

Yes runs the command, in the app the person was asked about; no, a question closed
unanswered, or a client that failed to ask answers `CANCELLED`. Where the client cannot
ask, the command is not run unless the call itself carries the person's yes,
`"confirm": true`: the platform refuses it with the sentence that says so
(`pasture.asking.unconfirmed`), and the tool's description tells the agent to ask its
person and only then call again with it. A client that can ask is asked whatever the
call carries.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from pasture.asking import CANCELLED, question
from pasture.caller import Caller
from pasture.errors import PastureError
from pasture.mcp._tool_results import Wire, failed, refusal
from pasture.request_ids import fault_id

if TYPE_CHECKING:  # a registry served on its own asks too, and loads no platform
    from pasture.platform import Resolved, Service

logger = logging.getLogger("pasture.mcp")

# The key of the one question in `input_requests`, and of its answer in `input_responses`.
CONFIRM = "confirm"
# Yes or no is all it asks: a form of no fields, which a client shows with its buttons.
NOTHING_TO_FILL: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class GoAhead:
    """Run the call; `found`, when the command was looked up to ask first, is the one it
    found (in the app the person said yes about): run as it is, not looked up again.
    `confirmed`: the person was asked and said yes; None when nobody could be asked, and
    the call's own `confirm` says whether they said yes."""

    found: Resolved | None = None
    confirmed: bool | None = None


Asked = GoAhead | Wire | types.InputRequiredResult


def can_ask(ctx: ServerRequestContext[Any]) -> bool:
    """Whether this client can put a question to its person now: it declared it asks
    (form elicitation), and the question has a way to go — the newest protocol's
    `input_required`, or a channel that carries a request back (not stateless HTTP)."""
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    # A bare `elicitation: {}` (from before modes) means forms; a URL-only one does not.
    if elicitation is None or (elicitation.form is None and elicitation.url is not None):
        return False
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.session.can_send_request


async def ask(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, asking: str
) -> bool | types.InputRequiredResult:
    """Put `asking` to the person, on a client that `can_ask`: whether they said yes, or
    (on the newest protocol, when the call carries no answer yet) the question to send."""
    said: object
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        said = (params.input_responses or {}).get(CONFIRM)
        if said is None:
            form = types.ElicitRequestFormParams(message=asking, requested_schema=NOTHING_TO_FILL)
            return types.InputRequiredResult(
                input_requests={CONFIRM: types.ElicitRequest(params=form)}
            )
    else:
        try:
            said = await ctx.session.elicit_form(
                asking, NOTHING_TO_FILL, related_request_id=ctx.request_id
            )
        except Exception:
            logger.info("the client could not ask its person: %s", asking)
            said = None
    return isinstance(said, types.ElicitResult) and said.action == "accept"


def looked_up(
    service: Service, caller: Caller, arguments: Mapping[str, Any]
) -> GoAhead | Wire | Resolved:
    """For the connector's `command` call, where the client can ask, in the call's own
    thread (a look-up may wait on the database): go ahead, what to answer instead, or —
    for a command that is hard to undo — the command found, which its person is asked
    about first (`ask_about`) before it runs."""
    name, app = arguments.get("name"), arguments.get("app")
    # From here the client can ask: only its person's answer says yes, never the call.
    if not isinstance(name, str) or not isinstance(app, str | None):
        return GoAhead(confirmed=False)  # the call itself refuses them, in its own words
    try:
        found = service.listing.resolve(caller, name, app)
    except PastureError:
        return GoAhead(confirmed=False)  # unknown, ambiguous, out of reach: the call says so
    except Exception:  # a bug: nothing runs unasked, and no internal goes out
        logger.exception(
            "command %s could not be looked up to ask first (fault %s)", name, fault_id()
        )
        return failed("command")
    if not found.command.consequential:
        return GoAhead(found, confirmed=False)
    return found


async def ask_about(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, found: Resolved
) -> Asked:
    """Ask the person about the command found, hard to undo: go ahead where they said yes."""
    args = (params.arguments or {}).get("args")
    given = args if isinstance(args, Mapping) else None
    command = found.command
    said = await ask(ctx, params, question(command.title, command.agent_name, found.at, given))
    if isinstance(said, types.InputRequiredResult):
        return said
    return GoAhead(found, confirmed=True) if said else refusal(CANCELLED)


__all__ = [
    "CONFIRM",
    "Asked",
    "GoAhead",
    "ask",
    "ask_about",
    "can_ask",
    "looked_up",
]
