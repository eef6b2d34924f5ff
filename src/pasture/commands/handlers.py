"""Handlers: an app's `worker.py` written as queries, mutations and actions.

    from pasture import boolean, id, mutation, query

    @query(tool={"description": "List your todos, newest first: id, text and done."})
    def todos(ctx):
        me = ctx.auth.require_identity()
        return ctx.store.query(f".todo.owner={me.user_id}&.todo!")

    @mutation(tool={"description": "Mark one of your todos done or not done. Get todo ids "
                    "from the todos tool.", "args": {"todo_id": id("todo"), "done": boolean()}})
    def set_todo_done(ctx, args):
        ...

    @mutation                       # no tool: the app's own pages call it, no agent sees it
    def add_todo(ctx, args):
        ...

The kind decides what a handler may do. A **query** reads: its store refuses
every write, and as a tool it is marked read-only to every agent. A
**mutation** writes through `ctx.store` as the caller. An **action** may also
reach outside: it alone reads `ctx.secrets` (the network, where the server
allows it, is the worker's as a whole — the kind says what the code means to
do, the sandbox what it can). Whoever calls, `ctx.auth` is who that is — the
person with the tab open, the token's or grant's person, the command line's —
never an argument; and the app's access holds for them as for any call.

Tagging a handler with `tool={"description": …, "args": {…}}` makes it a
command, named as the handler is (`set_todo_done`), on every door: MCP's
`command`, the page's WebMCP tools, the command line and console, and
`./api/command`. Its arguments are built from `string()`, `number()`,
`boolean()` and `id("kind")`, each with `.optional()`; an agent's input is
checked against them before the handler runs, every problem in one sentence.
Every handler, tagged or not, is also the app's own API: its pages call it with
`call(name, args)` from `./api/client.js`, as the signed-in person, and that
input is not checked against `args` (check it in the handler, as always).

This module is imported by the worker process that runs `worker.py`; the
server sees handlers only as what that process reports.
"""

from __future__ import annotations

import functools
import inspect
import json as _json
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, overload

from pasture.caller import Caller
from pasture.commands.model import Context
from pasture.errors import Refused, Unauthorized
from pasture.long_calls import LongCall, progress_of
from pasture.names import LOWER_WORD
from pasture.result import Result

Kind = Literal["query", "mutation", "action"]
KINDS: tuple[Kind, ...] = ("query", "mutation", "action")
TOOL_KEYS = ("description", "args", "title", "consequential")
EID = re.compile(r"[0-9a-f]{16}")


# -- the arguments' builders --------------------------------------------------------------------
@dataclass(frozen=True)
class Arg:
    """One argument of a tool: its type, whether it may be left out, and what a tool may not
    have (`.default()`, `user_id()`, `json_value()`), kept so the deploy can say why."""

    type: str  # string, number, boolean, id, user_id, json
    kind: str | None = None  # for id(kind): the component the entity has
    optional_: bool = False
    default_: Any = None
    has_default: bool = False

    def optional(self) -> Arg:
        """An argument the agent may leave out."""
        return replace(self, optional_=True)

    def default(self, value: Any) -> Arg:
        """A value for when it is left out — not for a tool's args (refused at deploy)."""
        return replace(self, default_=value, has_default=True)

    def schema(self) -> dict[str, Any]:
        """This argument as JSON Schema."""
        if self.type == "id":
            return {
                "type": "string",
                "pattern": f"^{EID.pattern}$",
                "description": f"the id of a row of {self.kind}",
            }
        return {"type": self.type}

    def problem(self, name: str) -> str | None:
        """Why this cannot be a tool's argument, or None."""
        if self.type == "user_id":
            return (
                f"{name}: user_id() is not for a tool's args — the caller comes from ctx.auth, "
                "never from an argument"
            )
        if self.type == "json":
            return (
                f"{name}: json_value() is not for a tool's args — an agent's input must be "
                "checkable: use string(), number(), boolean() or id()"
            )
        if self.has_default:
            return (
                f"{name}: .default() is not for a tool's args — an agent gives every value it "
                "means; make it .optional() and choose the value in the handler"
            )
        if self.type == "id" and not LOWER_WORD.fullmatch(str(self.kind)):
            return f'{name}: id() names a component of this app, like id("todo")'
        return None


def string() -> Arg:
    """Text."""
    return Arg("string")


def number() -> Arg:
    """A number."""
    return Arg("number")


def boolean() -> Arg:
    """True or false."""
    return Arg("boolean")


def id(kind: str) -> Arg:  # the document's own name for it, though Python has an id()
    """The id of an entity of this app that has the component `kind`."""
    return Arg("id", kind)


def user_id() -> Arg:
    """A person's id: for an app's own data, never a tool's argument (refused at deploy)."""
    return Arg("user_id")


def json_value() -> Arg:
    """Any JSON: for an app's own data, never a tool's argument (refused at deploy). The
    document's `json()`; named so as not to hide Python's `json` module."""
    return Arg("json")


# -- who is calling -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Identity:
    """A signed-in person: `user_id` (their eid) and `name`."""

    user_id: str
    name: str


class Auth:
    """`ctx.auth`: whoever is calling, never an argument."""

    def __init__(self, caller: Caller, handler: str) -> None:
        self._caller = caller
        self._handler = handler

    @property
    def identity(self) -> Identity | None:
        """The person calling, or None when nobody is signed in."""
        caller = self._caller
        if caller.eid is None:
            return None
        return Identity(caller.eid, caller.name or "")

    def require_identity(self) -> Identity:
        """The person calling; refused with a sentence when nobody is signed in."""
        identity = self.identity
        if identity is None:
            raise Unauthorized(
                f"sign in to use {self._handler} — it acts for the person who is signed in"
            )
        return identity


class _NoSecrets(Mapping[str, str]):
    """`ctx.secrets` of a query or mutation: only an action reaches outside."""

    def __init__(self, handler: str, kind: str) -> None:
        self._handler = handler
        self._kind = kind

    def _refused(self) -> Refused:
        return Refused(
            f"{self._handler} is a {self._kind}, and only an action reads ctx.secrets — make it "
            "an action to reach outside"
        )

    def __getitem__(self, key: str) -> str:
        raise self._refused()

    def __iter__(self) -> Any:
        raise self._refused()

    def __len__(self) -> int:
        raise self._refused()


@dataclass
class HandlerContext:
    """What a handler is called with: `auth`, `db` (the app's tables, `pasture.commands.
    app_db`) and `store` (the same store as bundles and filters), both as the caller and
    read-only for a query; `at` (the app, `space/app`), `secrets` (an action's only), an
    action's `run_mutation`, and for a call that takes a while `progress()` and
    `cancelled` (`pasture.long_calls`)."""

    auth: Auth
    store: Any
    at: str
    secrets: Mapping[str, str]
    caller: Caller
    kind: Kind = "mutation"
    name: str = ""
    long_call: LongCall = field(default_factory=LongCall)

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Say how far the call has come: `done` of `total` (None: not known), and a line
        for people; shown where the door can, a few times a second at most."""
        self.long_call.report(progress_of(done, total, message))

    @property
    def cancelled(self) -> bool:
        """Whether the caller asked the call to stop: look now and then, and stop."""
        return self.long_call.cancelled

    @functools.cached_property
    def db(self) -> Any:
        """The app's tables: `ctx.db.todos.get(id)`, `.insert({...})`, `.with_index(…)`."""
        from pasture.commands.app_db import Database

        return Database(self.store)

    def run_mutation(self, name: str, args: Mapping[str, Any] | None = None) -> Any:
        """Run the mutation `name` of this app as one transaction of its own, kept only when
        it answers with JSON, and give back what it answered (an action's alone: a
        mutation's writes are one transaction already, and a query writes nothing)."""
        if self.kind != "action":
            raise Refused(
                f"{self.name} is a {self.kind}, and only an action runs mutations with "
                "ctx.run_mutation — call the function itself"
            )
        handler = next((h for h in declared() if h.name == name and h.kind == "mutation"), None)
        if handler is None:
            raise Refused(f"{str(name)[:60]} is not a mutation of this app")
        inner = HandlerContext(
            auth=Auth(self.caller, handler.name),
            store=self.store,
            at=self.at,
            secrets=_NoSecrets(handler.name, "mutation"),
            caller=self.caller,
            kind="mutation",
            name=handler.name,
            long_call=self.long_call,
        )
        self.store.begin(by_code=True)
        kept = False
        try:
            answer = (
                handler.function(inner, dict(args or {}))
                if handler.takes_args
                else handler.function(inner)
            )
            try:
                _json.dumps(answer)
            except (TypeError, ValueError):
                raise Refused(
                    f"{handler.name} answered with something that is not JSON "
                    f"({type(answer).__name__}), so nothing it wrote was kept"
                ) from None
            kept = True
        finally:
            self.store.end(keep=kept, by_code=True)
        return answer


# -- the handlers -------------------------------------------------------------------------------
@dataclass
class Handler:
    """A function of `worker.py` tagged as a query, mutation or action."""

    kind: Kind
    function: Callable[..., Any]
    tool: Any = None  # {"description", "args", …} when it is a tool
    name: str = ""
    takes_args: bool = False
    args: dict[str, Arg] = field(default_factory=dict)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Still the function, for the worker's own code to call."""
        return self.function(*args, **kwargs)


_declared: list[Handler] = []  # every handler made in this process, in order
_lock = threading.Lock()


def _takes_args(function: Callable[..., Any]) -> bool:
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return True
    positional = [
        p
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in positional)


def _make(kind: Kind, function: Callable[..., Any], tool: Any) -> Handler:
    handler = Handler(
        kind,
        function,
        tool,
        name=getattr(function, "__name__", ""),
        takes_args=_takes_args(function),
    )
    with _lock:
        _declared.append(handler)
    return handler


def _decorator(kind: Kind) -> Any:
    @overload
    def decorate(function: Callable[..., Any], /) -> Handler: ...

    @overload
    def decorate(*, tool: Any = None) -> Callable[[Callable[..., Any]], Handler]: ...

    def decorate(function: Any = None, /, *, tool: Any = None) -> Any:
        if function is not None:
            return _make(kind, function, tool)

        def wrap(inner: Callable[..., Any]) -> Handler:
            return _make(kind, inner, tool)

        return wrap

    decorate.__name__ = kind
    decorate.__doc__ = (
        f"`@{kind}` or `@{kind}(tool={{'description': …, 'args': {{…}}}})` over "
        f"`def name(ctx)` or `def name(ctx, args)`: a {kind} handler."
    )
    return decorate


query = _decorator("query")
mutation = _decorator("mutation")
action = _decorator("action")


def declared() -> list[Handler]:
    """Every handler made in this process so far (the worker's, once it is imported)."""
    with _lock:
        return list(_declared)


# -- checking at deploy -------------------------------------------------------------------------
def check(handlers: list[Handler]) -> list[str]:
    """Every problem with the app's handlers, as deploy sentences; each good tool's `args` are
    filled in on its handler."""
    problems: list[str] = []
    seen: dict[str, Handler] = {}
    for handler in handlers:
        name = handler.name
        if not LOWER_WORD.fullmatch(name or "") or len(name) > 64:
            problems.append(
                f"{name or 'a handler'}: a handler's name is its function's, lowercase with "
                "underscores (a-z, 0-9, _), at most 64 characters"
            )
            continue
        first = seen.get(name)
        if first is not None:
            problems.append(
                f"{name}: two handlers are named {name} (a {first.kind} and a {handler.kind}) "
                "— a handler's name is its command's, so each is one of a kind"
            )
            continue
        seen[name] = handler
        if handler.tool is not None:
            problems.extend(f"{name}: {p}" for p in _tool_problems(handler))
    return problems


def _tool_problems(handler: Handler) -> list[str]:
    tool = handler.tool
    if not isinstance(tool, Mapping):
        return ['tool is {"description": "what it does, what it returns", "args": {…}}']
    problems: list[str] = []
    unknown = [str(k) for k in tool if k not in TOOL_KEYS]
    if unknown:
        problems.append(
            f"tool takes description, args, title and consequential, not {', '.join(unknown)}"
        )
    description = tool.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append(
            "tool needs a description: what it does, what it returns and where its inputs "
            "come from — the agent chooses tools by it"
        )
    args = tool.get("args", {})
    if not isinstance(args, Mapping):
        problems.append('tool\'s args are {"name": string(), …}')
        args = {}
    built: dict[str, Arg] = {}
    for key, arg in args.items():
        if not isinstance(key, str) or not LOWER_WORD.fullmatch(key):
            problems.append(f"args: {key!r} is not a name (lowercase, with underscores)")
        elif not isinstance(arg, Arg):
            problems.append(
                f'args: {key} is built with string(), number(), boolean() or id("kind")'
            )
        elif (why := arg.problem(key)) is not None:
            problems.append(f"args: {why}")
        else:
            built[key] = arg
    if args and not handler.takes_args:
        problems.append(f"it has args, so it is def {handler.name}(ctx, args)")
    if not args and handler.takes_args:
        problems.append(
            f"it has no args, so it is def {handler.name}(ctx) — give the tool args to take some"
        )
    consequential = tool.get("consequential", False)
    if not isinstance(consequential, bool):
        problems.append("tool's consequential is true or false")
    elif consequential and handler.kind == "query":
        problems.append("a query changes nothing, so it is not consequential")
    title = tool.get("title")
    if title is not None and (not isinstance(title, str) or not title.strip()):
        problems.append("tool's title is a short name for people")
    handler.args = built
    return problems


def input_schema(args: Mapping[str, Arg]) -> dict[str, Any]:
    """A tool's args as the JSON Schema its command checks: unknown keys refused."""
    return {
        "type": "object",
        "properties": {name: arg.schema() for name, arg in args.items()},
        "required": [name for name, arg in args.items() if not arg.optional_],
        "additionalProperties": False,
    }


def annotations_of(handler: Handler) -> dict[str, bool]:
    """A tool's annotations: a query only reads; a tool may say it is consequential."""
    if handler.kind == "query":
        return {"readOnly": True}
    tool = handler.tool if isinstance(handler.tool, Mapping) else {}
    return {"consequential": True} if tool.get("consequential") is True else {}


# -- running --------------------------------------------------------------------------------------
def run(handler: Handler, args: Mapping[str, Any] | None, ctx: Context, *, as_tool: bool) -> Result:
    """Call a handler with a context of its kind. As a tool, its `id()` arguments are checked
    first (an entity of this app with that component, that the caller can read)."""
    if as_tool:
        for name, arg in handler.args.items():
            value = (args or {}).get(name)
            if arg.type == "id" and isinstance(value, str):
                _check_id(ctx, name, value, str(arg.kind))
    secrets: Mapping[str, str] = (
        ctx.secrets if handler.kind == "action" else _NoSecrets(handler.name, handler.kind)
    )
    handed = HandlerContext(
        auth=Auth(ctx.caller, handler.name),
        store=ctx.store,
        at=ctx.at,
        secrets=secrets,
        caller=ctx.caller,
        kind=handler.kind,
        name=handler.name,
        long_call=ctx.long_call,
    )
    answer = (
        handler.function(handed, dict(args or {}))
        if handler.takes_args
        else handler.function(handed)
    )
    return result_of(answer)


def _check_id(ctx: Context, name: str, value: str, kind: str) -> None:
    if not EID.fullmatch(value) or not ctx.store.query(f"id={value}&.{kind}!"):
        raise Refused(f"{name} is not the id of a row of {kind} in {ctx.at} that you can read")


def result_of(answer: Any) -> Result:
    """What a handler returned, as an answer: a `Result` or `{text, data}` as it is; any other
    JSON as its text and `{"result": …}` (a query's rows, a mutation's new id)."""
    if isinstance(answer, Result):
        return answer
    if (
        isinstance(answer, Mapping)
        and set(answer) == {"text", "data"}
        and isinstance(answer["text"], str)
        and isinstance(answer["data"], Mapping)
    ):
        return Result(answer["text"], dict(answer["data"]))
    if answer is None:
        return Result("done", {"result": None})
    if isinstance(answer, str):
        return Result(answer, {"result": answer})
    try:
        text = _json.dumps(answer, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):  # not JSON: the worker's reply says of what type
        text = ""
    return Result(text, {"result": answer})


__all__ = [
    "KINDS",
    "Arg",
    "Auth",
    "Handler",
    "HandlerContext",
    "Identity",
    "action",
    "annotations_of",
    "boolean",
    "check",
    "declared",
    "id",
    "input_schema",
    "json_value",
    "mutation",
    "number",
    "query",
    "result_of",
    "run",
    "string",
    "user_id",
]
