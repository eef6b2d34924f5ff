"""Commands written as code: a `Registry` of Python functions, each with a JSON Schema.

    registry = Registry()
    remove = registry.register(
        "cart add",
        description="Add a product to the cart",
        input={"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
        annotations={},
        run=lambda args, ctx: {"text": f"Added {args['sku']}.", "data": {}},
    )

Every command becomes a `Command(family="code", …)`, listed, checked and run
the same way as a declared one. Its arguments are checked against its schema
before `run` is called (`pasture.schema`): undeclared ones refused, defaults
applied, text a person typed converted. `run(args, ctx)` returns a `Result`,
`{"text", "data"}`, or raises: a `Refused` reaches the caller as its sentence,
anything else as a plain sentence, its traceback kept in the log.

A name is lowercase words, its first one the provider that owns it (`cart`).
Agents see `cart_add`; people may type either. Each provider may have a
read-only `<provider> status` command; a bare `status` runs all of them.
`register` returns the function that removes the command again, and whoever
listens with `on_change` hears of both. Served on its own over MCP, a registry is
the MCP door's to serve (`pasture.mcp.serve_registry(registry)` on stdio,
`pasture.mcp.serve_registry_http(registry)` over HTTP, or
`pasture.mcp.build_registry_server(registry)` for a transport of your own), which
announces `notifications/tools/list_changed` on each change; there it may carry
resources and prompts too (`registry.resource`, `registry.prompt`:
`pasture.commands.resources`), and its commands may ask the caller's client
(`ctx.ask`, `ctx.sample`: `pasture.client_asks`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pasture.asking import CONFIRM
from pasture.caller import NOBODY, Caller
from pasture.client_asks import ClientAsks
from pasture.commands.appstore import AppStore, StoreAsCaller
from pasture.commands.model import Command, Context, Suggest
from pasture.commands.resources import (
    GetPrompt,
    Parts,
    Prompt,
    ReadResource,
    Resource,
    SuggestValues,
    prompt,
    resource,
)
from pasture.content import parts_of
from pasture.errors import DeployRefused, Fault, NotFound, PastureError, Refused, UsageError
from pasture.long_calls import LongCall
from pasture.names import COMMAND_NAME, agent_name
from pasture.result import Result
from pasture.schema import InputSchema, shown

if TYPE_CHECKING:
    from pasture.store.base import Applied, Bundle, Row, Store

logger = logging.getLogger("pasture.commands")

RESERVED_WORDS = ("help", "man", "status", "clear")
# Flags of clients; `app` too, since the command line's --app picks the app and an
# argument of that name could never be given there.
RESERVED_INPUTS = ("help", "json", "wide", "app")
ANNOTATIONS = ("readOnly", "consequential")
NAME_RULE = "lowercase words (a-z, 0-9, _) separated by one space, like cart add"
MAX_NAME = 64  # what MCP clients take as a tool name

CodeRun = Callable[[dict[str, Any], Context], Any]
F = TypeVar("F", bound=Callable[..., Any])

_warned: set[tuple[str, tuple[str, ...]]] = set()


class BadCommand(DeployRefused):
    """A command that cannot be registered: every problem with it in one message."""


class CommandFailed(Fault):
    """A command's own code failed: it raised something that is not a `PastureError` (a
    bug in it), answered with what is not JSON, or went past its limits. A fault, not the
    caller's mistake.

    HTTP's 424 (Failed Dependency): the request depended on the app's code, and that
    failed. Not a 500 — nothing in pasture broke, and the sentence says what did.
    """

    status = 424


class _NoStore(AppStore):
    """The store of a registry used on its own, with no app around it."""

    def _none(self) -> Refused:
        return Refused("this command runs outside any app, so it has no store to use")

    def query(self, filter: str, *, table: str | None = None) -> list[Row]:
        raise self._none()

    def schema(self) -> dict[str, Any]:
        raise self._none()

    def _write(self, bundles: list[Bundle]) -> Applied:
        raise self._none()


NO_STORE: AppStore = _NoStore()


@dataclass(frozen=True)
class CheckedRun:
    """What a code command's `Command.run` is: check the arguments, call the function, answer."""

    name: str
    schema: InputSchema
    function: CodeRun

    def __call__(self, args: Mapping[str, Any], ctx: Context) -> Result:
        return self.run_checked(self.schema.check(args, typed_text=ctx.typed_text), ctx)

    def run_checked(self, checked: dict[str, Any], ctx: Context) -> Result:
        """Call the function with arguments already checked (a worker's come so from the server)."""
        try:
            answer = self.function(checked, ctx)
            if inspect.isawaitable(answer):
                answer = _wait_for(answer)
        except (PastureError, MemoryError):  # a worker process reports running out as its limit
            raise
        except Exception as e:
            logger.exception("command %s failed", self.name)
            raise CommandFailed(
                f"{self.name} failed in its own code ({type(e).__name__}) — nothing about the "
                "request was wrong as far as pasture can tell; the server's log has the details"
            ) from None
        return self._result(answer)

    def _result(self, answer: Any) -> Result:
        if isinstance(answer, Result):
            return answer
        if answer is None:
            return Result("done", {})
        if isinstance(answer, str):
            return Result(answer, {})
        if isinstance(answer, Mapping) and set(answer) <= {"text", "data", "content"}:
            text, data = answer.get("text", ""), answer.get("data", {})
            if data is None:
                data = {}
            try:
                content = parts_of(answer.get("content", []), f"{self.name}'s content")
            except UsageError:
                content = None
            if isinstance(text, str) and isinstance(data, Mapping) and content is not None:
                return Result(text, dict(data), content)
        logger.error("command %s returned %r, not {text, data}", self.name, answer)
        raise CommandFailed(
            f"{self.name} answered with something other than text and data — its code "
            "returns a Result or {'text': …, 'data': {…}, 'content': [parts]?}; the server's "
            "log has what it returned"
        )


async def _awaited(answer: Any) -> Any:
    return await answer


def _wait_for(answer: Any) -> Any:
    """An async command's answer, waited for by a call that is not itself async. Called
    from async code (its loop running in this thread), the command runs on a loop of its
    own in another thread, since this one cannot run a second."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(answer))
    with concurrent.futures.ThreadPoolExecutor(1) as aside:
        return aside.submit(asyncio.run, _awaited(answer)).result()


class Registry:
    """The code commands of one app (or of a program using pasture as a library).

    `caller`, `store` and `at` are what `run` hands a command when the registry
    is used on its own; the platform runs its commands with its own `Context`.
    """

    def __init__(
        self,
        *,
        caller: Caller = NOBODY,
        store: Store | None = None,
        at: str = "",
        log_warnings: bool = True,
    ) -> None:
        self.caller = caller
        self.store = store
        self.at = at
        # What register() warns of (keywords it does not check), each once. A registry
        # used on its own logs them; the platform's keeps them to say at the app's deploy,
        # not again each time a process loads the app.
        self.warnings: list[str] = []
        self._log_warnings = log_warnings
        self._commands: dict[str, Command] = {}  # by agent name, in registration order
        self._listeners: dict[object, Callable[[], None]] = {}
        self._lock = threading.RLock()
        self._parts = Parts()  # resources and prompts, for the registry served on its own

    # -- registering --------------------------------------------------------------------
    def register(
        self,
        name: str,
        *,
        description: str,
        run: CodeRun,
        input: Mapping[str, Any] | None = None,
        annotations: Mapping[str, Any],
        provider: str | None = None,
        title: str | None = None,
        positional: Sequence[str] = (),
        output: Mapping[str, Any] | None = None,
        examples: Sequence[str] = (),
        see_also: Sequence[str] = (),
        suggest: Suggest | None = None,
    ) -> Callable[[], None]:
        """Add a command; returns the function that removes it. BadCommand names every problem."""
        command = self._make(
            name,
            description=description,
            run=run,
            input=input,
            annotations=annotations,
            provider=provider,
            title=title,
            positional=positional,
            output=output,
            examples=examples,
            see_also=see_also,
            suggest=suggest,
        )
        key = command.agent_name
        with self._lock:
            if key in self._commands:
                raise BadCommand(
                    [
                        f"{key} is registered already — call the function its register() "
                        "returned to remove it first"
                    ],
                    prefix=command.name,
                )
            self._commands[key] = command
        self._changed()

        def remove() -> None:
            with self._lock:
                if self._commands.get(key) is not command:
                    return
                del self._commands[key]
            self._changed()

        return remove

    def command(
        self,
        name: str,
        *,
        description: str,
        annotations: Mapping[str, Any],
        input: Mapping[str, Any] | None = None,
        **more: Any,
    ) -> Callable[[F], F]:
        """`@registry.command("cart add", description=…, annotations={})` over `run(args, ctx)`."""

        def decorate(function: F) -> F:
            self.register(
                name,
                description=description,
                run=function,
                input=input,
                annotations=annotations,
                **more,
            )
            return function

        return decorate

    def _make(
        self,
        name: Any,
        *,
        description: Any,
        run: Any,
        input: Any,
        annotations: Any,
        provider: Any,
        title: Any,
        positional: Any,
        output: Any,
        examples: Any,
        see_also: Any,
        suggest: Any,
    ) -> Command:
        problems: list[str] = []
        shown_name = name if isinstance(name, str) else shown(name)
        if not isinstance(name, str) or not COMMAND_NAME.fullmatch(name) or len(name) > MAX_NAME:
            problems.append(
                f"the name is {NAME_RULE}, at most {MAX_NAME} characters"
                + (f" (not {shown(name)})" if isinstance(name, str) else "")
            )
            name = "command"
        words = name.split()
        if words[0] in RESERVED_WORDS:
            problems.append(
                "names starting with help, man, status or clear are refused — those words "
                "belong to clients; start the name with the part of the app that owns it, "
                "like cart status"
            )
        if provider is None:
            provider = words[0]
        elif not isinstance(provider, str) or not COMMAND_NAME.fullmatch(provider):
            problems.append(f"provider is {NAME_RULE}")
            provider = words[0]
        if not isinstance(description, str) or not description.strip() or "\n" in description:
            problems.append("description is one line that says what the command does")
            description = ""
        if not callable(run):
            problems.append("run is a function run(args, ctx) that returns text and data")
        read_only, consequential = self._annotations(annotations, problems)
        if name == f"{provider} status" and not read_only:
            problems.append(
                f"{name} is its provider's status command, so it only reads — "
                'give it annotations={"readOnly": True}'
            )
        schema = InputSchema(
            cast(Mapping[str, Any], input) if isinstance(input, Mapping) else input,
            reserved=RESERVED_INPUTS,
        )
        problems.extend(f"input: {p}" for p in schema.problems)
        if consequential and CONFIRM in schema.properties:
            problems.append(
                f"input: {CONFIRM} is the person's yes to a command that is hard to undo, sent "
                "beside its arguments — call this argument something else"
            )
        positional = self._names(positional, "positional", problems)
        for arg in positional:
            if arg not in schema.properties:
                problems.append(f"positional names {arg}, which is not an input property")
        if len(set(positional)) != len(positional):
            problems.append("positional names an argument twice")
        if output is not None and not isinstance(output, Mapping):
            problems.append('output is a JSON Schema of the data, like {"type": "object", …}')
            output = None
        if title is not None and (not isinstance(title, str) or not title.strip()):
            problems.append("title is a short name for people")
            title = None
        examples = self._names(examples, "examples", problems)
        see_also = self._names(see_also, "see_also", problems)
        if suggest is not None and not callable(suggest):
            problems.append("suggest is a function suggest(argument, partial) → values")
            suggest = None
        if problems:
            raise BadCommand(problems, prefix=shown_name)
        if schema.unchecked:
            warning = (
                f"{name}: input keywords {', '.join(schema.unchecked)} are not checked "
                "before run() — check them in run()"
            )
            if warning not in self.warnings:
                self.warnings.append(warning)
            found = (name, tuple(schema.unchecked))
            if self._log_warnings and found not in _warned:
                _warned.add(found)
                logger.warning("%s", warning)
        listed = dict(schema.written)
        listed.setdefault("type", "object")
        listed.setdefault("properties", {})
        listed["additionalProperties"] = False  # what the checking does, told to agents
        return Command(
            name=name,
            description=description.strip(),
            input=listed,
            read_only=read_only,
            run=CheckedRun(name, schema, run),
            family="code",
            positional=tuple(positional),
            provider=provider,
            consequential=consequential,
            title=title,
            output=dict(output) if output is not None else None,
            examples=tuple(examples),
            see_also=tuple(see_also),
            suggest=suggest,
        )

    @staticmethod
    def _annotations(annotations: Any, problems: list[str]) -> tuple[bool, bool]:
        if not isinstance(annotations, Mapping):
            problems.append(
                'annotations are required: {"readOnly": True} if it changes nothing, '
                '{"consequential": True} if it is hard to undo, {} for an ordinary change'
            )
            return False, False
        unknown = [str(k) for k in annotations if k not in ANNOTATIONS]
        if unknown:
            problems.append(
                f"annotations know readOnly and consequential, not {', '.join(unknown)}"
            )
        flags = []
        for key in ANNOTATIONS:
            value = annotations.get(key, False)
            if not isinstance(value, bool):
                problems.append(f"annotations' {key} is true or false")
                value = False
            flags.append(value)
        read_only, consequential = flags
        if read_only and consequential:
            problems.append(
                "a readOnly command changes nothing, so it is not consequential — keep one"
            )
        return read_only, consequential

    @staticmethod
    def _names(value: Any, what: str, problems: list[str]) -> list[str]:
        if isinstance(value, str) or not isinstance(value, Iterable):
            problems.append(f"{what} is a list of text")
            return []
        found = list(value)
        if not all(isinstance(v, str) for v in found):
            problems.append(f"{what} is a list of text")
            return []
        return found

    # -- resources and prompts, served on its own ---------------------------------------
    def resource(
        self,
        uri: str,
        read: ReadResource,
        *,
        description: str,
        name: str | None = None,
        title: str | None = None,
        mime_type: str = "text/plain",
        suggest: SuggestValues | None = None,
    ) -> Resource:
        """Add a resource (`{name}` parts in `uri` make it a template): `read(params)`
        returns its text or bytes (`pasture.commands.resources`)."""
        found = resource(
            uri,
            read,
            description=description,
            name=name,
            title=title,
            mime_type=mime_type,
            suggest=suggest,
        )
        with self._lock:
            self._parts.add_resource(found)
        return found

    def prompt(
        self,
        name: str,
        get: GetPrompt,
        *,
        description: str,
        arguments: Mapping[str, str] | None = None,
        optional: Sequence[str] = (),
        title: str | None = None,
        suggest: SuggestValues | None = None,
    ) -> Prompt:
        """Add a prompt: `get(args)` returns its messages (`pasture.commands.resources`)."""
        found = prompt(
            name,
            get,
            description=description,
            arguments=arguments,
            optional=optional,
            title=title,
            suggest=suggest,
        )
        with self._lock:
            self._parts.add_prompt(found)
        return found

    def resources(self) -> list[Resource]:
        """Every resource and template, in the order they were added."""
        with self._lock:
            return list(self._parts.resources.values())

    def prompts(self) -> list[Prompt]:
        """Every prompt, in the order they were added."""
        with self._lock:
            return list(self._parts.prompts.values())

    def read(self, uri: str) -> tuple[Resource, str | bytes]:
        """The resource at `uri` and what it reads; NotFound when there is none."""
        with self._lock:
            found, params = self._parts.find(uri)
        return found, found.read(params)

    def get_prompt(self, name: str) -> Prompt | None:
        """A prompt by either name."""
        with self._lock:
            return self._parts.prompts.get(agent_name(name))

    # -- what is here -----------------------------------------------------------------
    def commands(self) -> list[Command]:
        """Every command, in the order they were registered."""
        with self._lock:
            return list(self._commands.values())

    def get(self, name: str) -> Command | None:
        """A command by either name: `cart add` or `cart_add`."""
        with self._lock:
            return self._commands.get(agent_name(name))

    def providers(self) -> list[str]:
        """Every provider, in the order their first command was registered."""
        return list(dict.fromkeys(c.provider or c.name.split()[0] for c in self.commands()))

    def status_commands(self) -> list[Command]:
        """Each provider's `<provider> status` command, where it has one."""
        return [c for c in self.commands() if c.name == f"{c.provider} status" and c.read_only]

    # -- running --------------------------------------------------------------------------
    def context(
        self,
        *,
        caller: Caller | None = None,
        typed_text: bool = False,
        command: Command | None = None,
        long_call: LongCall | None = None,
        client: ClientAsks | None = None,
    ) -> Context:
        """What a command of this registry runs with: the registry's store, as the caller,
        and the call as its door watches it (`long_call`: `ctx.progress`, `ctx.cancelled`).

        A read-only `command` gets a store that refuses writes.
        """
        caller = caller or self.caller
        read_only = command.name if command is not None and command.read_only else None
        store = (
            NO_STORE
            if self.store is None
            else StoreAsCaller(self.store, caller, read_only=read_only)
        )
        ctx = Context(caller, store, self.at, typed_text=typed_text)
        if long_call is not None:
            ctx = replace(ctx, long_call=long_call)
        if client is not None:
            ctx = replace(ctx, client=client)
        return ctx

    def run(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        ctx: Context | None = None,
        typed_text: bool = False,
        long_call: LongCall | None = None,
        client: ClientAsks | None = None,
    ) -> Result:
        """Run a command by either name (a bare `status` runs every provider's status);
        `long_call`, where a door watches the call (its progress told, a stop asked for),
        and `client`, where it can ask the caller's client (`pasture.client_asks`)."""
        if name.strip() == "status":
            if args:
                raise UsageError("status takes no arguments — it shows every provider's state")
            commands = self.status_commands()
            return run_status(
                commands,
                lambda c: (
                    ctx or self.context(typed_text=typed_text, command=c, long_call=long_call)
                ),
            )
        command = self.get(name)
        if command is None:
            names = ", ".join(c.agent_name for c in self.commands()) or "none yet"
            raise NotFound(f"no command {agent_name(name)} — the commands are {names}")
        ctx = ctx or self.context(
            typed_text=typed_text, command=command, long_call=long_call, client=client
        )
        return command.run(args or {}, ctx)

    # -- hearing of changes -------------------------------------------------------------
    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener()` after every register and remove; returns the unsubscriber."""
        token = object()
        with self._lock:
            self._listeners[token] = listener

        def stop() -> None:
            with self._lock:
                self._listeners.pop(token, None)

        return stop

    def _changed(self) -> None:
        with self._lock:
            listeners = list(self._listeners.values())
        for listener in listeners:
            try:
                listener()
            except Exception:  # one listener's bug must not undo a registration
                logger.exception("a registry listener failed")


def run_status(commands: Sequence[Command], context: Callable[[Command], Context]) -> Result:
    """Every provider's status: one line each, the data by provider.

    `context(command)` is what each one runs with. A status command that refuses
    or fails shows its sentence on its line; the others still answer.
    """
    lines: list[str] = []
    data: dict[str, Any] = {}
    for command in commands:
        provider = command.provider or command.name.split()[0]
        try:
            result = command.run({}, context(command))
        except PastureError as refused:  # a refusal, or its code failing
            lines.append(f"{provider}: {refused.sentence}")
            data[provider] = {"error": refused.sentence}
            continue
        line = result.text.strip().splitlines()[0] if result.text.strip() else "ok"
        lines.append(f"{provider}: {line}")
        data[provider] = result.data
    if not lines:
        return Result("no provider has a status command", {})
    return Result("\n".join(lines), data)


__all__ = [
    "ANNOTATIONS",
    "NO_STORE",
    "RESERVED_INPUTS",
    "RESERVED_WORDS",
    "BadCommand",
    "CommandFailed",
    "Registry",
    "run_status",
]
