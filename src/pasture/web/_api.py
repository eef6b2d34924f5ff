"""The web door's JSON API: an app's `./api/` and the platform's `/api/tools`, `/api/trash`,
`/api/undo` and `/api/restore`.

Answers of `apply`, `query` and `command` are the Service's `Result` as it is,
`{"text": …, "data": {…}}`; a refusal is raised, and answered as JSON by the
door (`pasture.web._failures`). A command that is hard to undo runs only with
`"confirm": true` in its body, the person's yes (a page asks them first, as
`webmcp.js` does); without it the answer says so (`pasture.asking.unconfirmed`).

A command called by a page's WebMCP tool (`X-Pasture-Door: webmcp`) answers one more
key, `"tool_text"`: the text an MCP tool's answer carries, its sentence and then its data as
compact JSON (`pasture.mcp.text_of`, the one function both doors use), which the tool
hands the browser's agent as its `content`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pasture import jsontext
from pasture.asking import CONFIRM, confirmed
from pasture.caller import Caller
from pasture.errors import NotFound, Refused, TooLarge, Unauthorized
from pasture.platform import SIGN_IN, Service
from pasture.result import Result
from pasture.schema import args_object
from pasture.web import webmcp
from pasture.web._who import came_by
from pasture.web.client import CLIENT_JS
from pasture.web.endpoints import Endpoints
from pasture.web.live import Live
from pasture.web.live_tools import ToolStreams
from pasture.web.query_string import filter_of

MAX_BODY = 8 * 1024 * 1024  # bundles for one transaction, generously (read in _json_body)


class Api(Endpoints):
    """The API's endpoints; each finds its caller, calls the Service, and answers JSON."""

    def __init__(self, service: Service) -> None:
        super().__init__(service)
        self.live = Live(service)  # this server's pages' subscriptions
        self.tool_streams = ToolStreams(service)  # and their WebMCP modules' tools followed

    async def no_api(self, request: Request, space: str, slug: str, path: str) -> Response:
        """An address under ./api/ that is not one of its calls, or not with this method."""
        method = {"api/apply": "POST", "api/command": "POST", "api/call": "POST"}.get(path)
        caller = await self.who.of_api(request)
        await self.call(self.service.gate.web_app, caller, space, slug)
        if method is not None:
            sentence = f"{request.method} is not how {request.url.path} is used — {method} it"
            return JSONResponse({"error": sentence}, status_code=405, headers={"Allow": method})
        # Whatever else is asked for, answer as for a missing file.
        await self.call(self.service.pages.page, caller, space, slug, path)
        raise NotFound(f"no page {path} in {space}/{slug}")

    async def apply(self, request: Request) -> Response:
        at = _at(request)
        caller = await self.who.of_api(request)
        bundles = await _json_body(request, "the bundles, a JSON object or a list of them")
        return _result(await self.call(self.service.apply, caller, at, bundles, via_web=True))

    async def query(self, request: Request) -> Response:
        at = _at(request)
        text = filter_of(request.scope.get("query_string", b""))
        caller = await self.who.of_api(request)
        return _result(await self.call(self.service.graph.query, caller, at, text, via_web=True))

    async def subscribe(self, request: Request) -> Response:
        """`query`'s answer as an event stream, sent again whenever it changes."""
        at = _at(request)
        text = filter_of(request.scope.get("query_string", b""))
        caller = await self.who.of_api(request)

        async def who() -> Caller:  # asked again when who may reach what changes
            return came_by(await self.who.caller(request), request)

        seen = request.headers.get("last-event-id")
        return await self.live.open(caller, who, at, text, seen)

    async def command(self, request: Request) -> Response:
        at = _at(request)
        caller = await self.who.of_api(request)
        name, args, yes = await _name_and_args(request, "command", "log_run")
        result = await self.call_watched(
            request,
            self.service.run_command,
            caller,
            name,
            args,
            app=at,
            via_web=True,
            confirmed=yes,
        )
        if caller.door == "webmcp":
            from pasture.mcp import text_of  # the MCP SDK's types, loaded by the first call

            body = {"text": result.text, "data": result.data, "tool_text": text_of(result)}
            return JSONResponse(body)
        return _result(result)

    async def call_handler(self, request: Request) -> Response:
        at = _at(request)
        caller = await self.who.of_api(request)
        name, args, _ = await _name_and_args(request, "handler", "add_todo")
        result = await self.call_watched(
            request, self.service.call_handler, caller, at, name, args, via_web=True
        )
        return _result(result)

    async def me(self, request: Request) -> Response:
        space, slug = request.path_params["space"], request.path_params["app"]
        caller = await self.who.of_api(request)
        await self.call(self.service.gate.web_app, caller, space, slug)
        if not caller.signed_in:
            return JSONResponse({"eid": None})
        return JSONResponse({"eid": caller.eid, "name": caller.name})

    async def client_js(self, request: Request) -> Response:
        return await self.script(request, CLIENT_JS)

    async def webmcp_js(self, request: Request) -> Response:
        return await self.script(request, webmcp.WEBMCP_JS)

    async def script(self, request: Request, text: str) -> Response:
        """One of pasture's own modules, served under an app the caller reaches."""
        space, slug = request.path_params["space"], request.path_params["app"]
        caller = await self.who.of_api(request)
        await self.call(self.service.gate.web_app, caller, space, slug)
        return Response(
            text,
            media_type="text/javascript; charset=utf-8",
            headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
        )

    async def every_tool(self, request: Request) -> Response:
        """`/api/tools[?app=A]`: the caller's commands across their apps, as MCP's `commands`
        lists them (`pasture inspect --url` reads it)."""
        app = request.query_params.get("app") or None
        caller = await self.who.of_api(request)
        if not caller.signed_in and app is None:
            raise Unauthorized(f"no apps to list — {SIGN_IN}")
        listing = await self.call(self.service.listing.list_commands, caller, app)
        return _commands(listing)

    async def trash(self, request: Request) -> Response:
        """`GET /api/trash`: what the trash holds of the caller's spaces, as `pasture trash`."""
        caller = await self.who.of_api(request)
        return _result(await self.call(self.service.trash.listing, caller))

    async def trash_remove(self, request: Request) -> Response:
        """`POST /api/trash/remove` `{"app": "space/slug"}` or `{"space": name}`: to the trash."""
        caller = await self.who.of_api(request)
        shape = '{"app": "space/slug"} or {"space": "name"}'
        body = await _json_body(request, shape)
        if isinstance(body, dict) and isinstance(body.get("app"), str):
            return _result(await self.call(self.service.remove_app, caller, body["app"]))
        if isinstance(body, dict) and isinstance(body.get("space"), str):
            return _result(await self.call(self.service.remove_space, caller, body["space"]))
        raise Refused(f"send what to remove as {shape}")

    async def trash_restore(self, request: Request) -> Response:
        """`POST /api/trash/restore` `{"name": "space/slug"}` (or a space's name): back."""
        caller = await self.who.of_api(request)
        shape = '{"name": "space/slug"} or {"name": "space"}'
        body = await _json_body(request, shape)
        if not isinstance(body, dict) or not isinstance(body.get("name"), str):
            raise Refused(f"send what to restore as {shape}")
        return _result(await self.call(self.service.restore_from_trash, caller, body["name"]))

    async def undo(self, request: Request) -> Response:
        """`POST /api/undo` `{"call": "3f9a2b1c0d4e"}` (and `"app"` where the audit was off):
        put back what that call changed, as `pasture undo`."""
        caller = await self.who.of_api(request)
        shape = '{"call": "<its id, as the audit shows it>"}'
        body = await _json_body(request, shape)
        if not isinstance(body, dict) or not isinstance(body.get("call"), str):
            raise Refused(f"send the call to undo as {shape}")
        app = body.get("app") if isinstance(body.get("app"), str) else None
        result = await self.call(self.service.undo, caller, body["call"], app, via_web=True)
        return _result(result)

    async def restore(self, request: Request) -> Response:
        """`POST /api/restore` `{"app": "space/slug", "to": "2 hours ago"}`: the app's data
        as it was then, as `pasture app restore`."""
        caller = await self.who.of_api(request)
        shape = '{"app": "space/slug", "to": "2 hours ago"}'
        body = await _json_body(request, shape)
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("app"), str)
            or not isinstance(body.get("to"), str)
        ):
            raise Refused(f"send the app and the moment as {shape}")
        return _result(await self.call(self.service.restore_app, caller, body["app"], body["to"]))

    async def tools(self, request: Request) -> Response:
        at = _at(request)
        caller = await self.who.of_api(request)
        return _commands(
            await self.call(self.service.listing.list_commands, caller, at, via_web=True)
        )

    async def follow_tools(self, request: Request) -> Response:
        """`tools`' answer as an event stream, sent again whenever the app's commands change."""
        at = _at(request)
        caller = await self.who.of_api(request)

        async def who() -> Caller:  # asked again after every change
            return came_by(await self.who.caller(request), request)

        seen = request.headers.get("last-event-id")
        return await self.tool_streams.open(caller, who, at, seen)


def _result(result: Result) -> Response:
    return JSONResponse({"text": result.text, "data": result.data})


def _commands(listing: Result) -> Response:
    return JSONResponse(
        {"commands": listing.data.get("commands", [])}, headers={"Cache-Control": "no-cache"}
    )


def _at(request: Request) -> str:
    return f"{request.path_params['space']}/{request.path_params['app']}"


async def _name_and_args(
    request: Request, what: str, example: str
) -> tuple[str, Mapping[str, Any], bool]:
    """A body `{"name": …, "args": {…}}` (a command's or a handler's), and whether it says
    the person's yes (`"confirm": true`); refused otherwise."""
    shape = f'{{"name": "{example}", "args": {{…}}}}'
    body = await _json_body(request, shape)
    if not isinstance(body, dict) or not isinstance(body.get("name"), str):
        raise Refused(f"send the {what} as {shape}")
    args = body.get("args")
    yes = confirmed(body.get(CONFIRM))
    return body["name"], {} if args is None else args_object(args, what), yes


async def _json_body(request: Request, what: str) -> Any:
    """The body as JSON, read strictly (`pasture.jsontext`); 413 over `MAX_BODY`."""
    too_large = TooLarge(
        f"the body is larger than {MAX_BODY // (1024 * 1024)} MB, the most one call takes "
        "— send less at a time, like fewer bundles in each apply"
    )
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise too_large
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            raise too_large
    return jsontext.loads(bytes(raw), "the body", what)


__all__ = ["MAX_BODY", "Api"]
