"""A running command's questions for its client, asked the way the request's revision asks.

`McpClientAsks` is the `ctx.client` a registry served on its own hands its commands
(`pasture.client_asks`):

- **the handshake generation** (2025-11-25 and before): each question goes to the client
  as a request on the call's own channel (`elicitation/create`, `sampling/createMessage`,
  `roots/list`) while the code waits in its thread, and its answer is returned;
- **the newest revision** (2026-07-28): nothing waits on the server. A question not yet
  answered ends the run (`InputRequired`), the call answers `input_required` with it, and
  the client calls again with `inputResponses`; the answers given in earlier rounds come
  back in `requestState`, which the SDK's `RequestStateBoundary` seals as it goes out
  and checks as it comes back (a state the client changed is refused). The code runs
  again from the start, and each question it reaches answered returns at once.

A client is asked only what it said it can be asked (its capabilities: the handshake's,
or the request's `_meta` in the newest); anything else is `CannotAsk`, answered as
MCP's `-32021` naming the capability. A log line (`ctx.log`) goes out as
`notifications/message` at or above the level the client set (`logging/setLevel`, the
handshake generation) or asked for in the request (the newest).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anyio.from_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.jsonrpc import MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from pasture.client_asks import LEVELS, Ask, CannotAsk, InputRequired, Kind, Level

_REQUESTS: dict[Kind, tuple[type[BaseModel], type[BaseModel]]] = {
    "elicitation": (types.ElicitRequest, types.ElicitResult),
    "sampling": (types.CreateMessageRequest, types.CreateMessageResult),
    "roots": (types.ListRootsRequest, types.ListRootsResult),
}
_NEEDED: dict[Kind, types.ClientCapabilities] = {
    "elicitation": types.ClientCapabilities(
        elicitation=types.ElicitationCapability(form=types.FormElicitationCapability())
    ),
    "sampling": types.ClientCapabilities(sampling=types.SamplingCapability()),
    "roots": types.ClientCapabilities(roots=types.RootsCapability()),
}


def _dumped(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, mode="json", exclude_none=True)
    return value


class McpClientAsks:
    """One call's way to its client. Made on the event loop; asked from the call's thread."""

    def __init__(
        self,
        ctx: ServerRequestContext[Any],
        input_responses: Mapping[str, Any] | None,
        request_state: str | None,
        *,
        least: Level | None = None,
    ) -> None:
        self.ctx = ctx
        self.modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        self.least = least  # the least level told, as the client set it (None: every one)
        self.answered: dict[str, Any] = {}
        if request_state:  # unsealed by the SDK: only what this server put there comes back
            try:
                earlier = json.loads(request_state)
            except ValueError:
                earlier = None
            if not isinstance(earlier, dict):
                raise MCPError(code=types.INVALID_PARAMS, message="Invalid or expired requestState")
            self.answered.update(earlier)
        self.answered.update({k: _dumped(v) for k, v in (input_responses or {}).items()})
        self.asked: dict[str, Ask] = {}  # unanswered this round, all of them

    def can_ask(self, kind: Kind) -> bool:
        capabilities = self.ctx.session.client_capabilities
        if capabilities is None:
            return False
        if not self.modern and not self.ctx.session.can_send_request:
            return False  # a channel that carries no request back
        if kind == "elicitation":
            elicitation = capabilities.elicitation
            # A bare `elicitation: {}` (from before modes) means forms; a URL-only one does not.
            return elicitation is not None and (
                elicitation.form is not None or elicitation.url is None
            )
        if kind == "sampling":
            return capabilities.sampling is not None
        return capabilities.roots is not None

    def ask(self, asks: Mapping[str, Ask]) -> dict[str, Any]:
        for ask in asks.values():
            if not self.can_ask(ask.kind):
                raise CannotAsk(ask.kind)
        if self.modern:
            missing = {k: a for k, a in asks.items() if k not in self.answered}
            if missing:
                self.asked.update(missing)
                raise InputRequired(self.asked, self.answered)
            return {k: self.answered[k] for k in asks}
        return {k: anyio.from_thread.run(self._request, a) for k, a in asks.items()}

    async def _request(self, ask: Ask) -> Any:
        request, result = _REQUESTS[ask.kind]
        sent = request.model_validate({"method": ask.method, "params": ask.params})
        metadata = ServerMessageMetadata(related_request_id=self.ctx.request_id)
        said = await self.ctx.session.send_request(sent, result, metadata=metadata)  # type: ignore[arg-type]
        return _dumped(said)

    def log(self, level: Level, message: str) -> None:
        if level not in LEVELS:
            return
        if self.least is not None and LEVELS.index(level) < LEVELS.index(self.least):
            return
        session, related = self.ctx.session, self.ctx.request_id

        async def tell() -> None:
            await session.send_log_message(level, message, related_request_id=related)

        anyio.from_thread.run(tell)


def input_required(needed: InputRequired) -> types.InputRequiredResult:
    """The answer of a round that asked what is not answered yet: the questions, and the
    answers so far as the state to come back with (sealed on its way out by the SDK)."""
    requests: dict[str, Any] = {
        key: _REQUESTS[ask.kind][0].model_validate({"method": ask.method, "params": ask.params})
        for key, ask in needed.asks.items()
    }
    return types.InputRequiredResult(
        input_requests=requests, request_state=json.dumps(needed.answered)
    )


def cannot_ask(refused: CannotAsk) -> MCPError:
    """MCP's own error for a client asked what it did not say it can answer."""
    needed = _NEEDED[refused.kind]
    data = types.MissingRequiredClientCapabilityErrorData(required_capabilities=needed)
    return MCPError(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=refused.sentence,
        data=data.model_dump(by_alias=True, mode="json", exclude_none=True),
    )


__all__ = ["McpClientAsks", "cannot_ask", "input_required"]
