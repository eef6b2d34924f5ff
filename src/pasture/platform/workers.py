"""An app's `worker.py`: trusted Python that registers the app's code commands.

A worker defines one function, called with the app's registry:

    def setup(app: pasture.Registry) -> None:
        app.register("cart add", description=…, input={…}, annotations={}, run=add)

Its commands are listed, checked and run beside the app's declared ones; a
`run(args, ctx)` gets `ctx.store` (the app's store), `ctx.caller` and `ctx.at`.
A worker without `setup` registers nothing (it may be there for other code).

At deploy the worker is first imported and set up in a process of its own
(`python -m pasture.platform.workers`), so a broken one never touches the
server; every registration problem comes back in the deploy's one message
(`worker.py: cart add: …`). Only a worker that passed is loaded into the
server, from the version's own folder, under a module name of its own.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import sys
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pasture.commands.model import Command
from pasture.commands.registry import BadCommand, Registry
from pasture.errors import DeployRefused

logger = logging.getLogger("pasture.platform")

WORKER = "worker.py"
SETUP_RULE = "setup is a function setup(app) that registers the app's commands on app"


class WorkerRegistry(Registry):
    """An app's registry while its worker sets up: a bad command is noted, the rest go on.

    So a deploy reports every bad registration at once, not only the first.
    """

    def __init__(self, at: str = "") -> None:
        super().__init__(at=at)
        self.problems: list[str] = []

    def register(self, name: str, **fields: Any) -> Callable[[], None]:
        try:
            return super().register(name, **fields)
        except BadCommand as bad:
            self.problems.append(str(bad))
            return _nothing
        except TypeError as e:  # a field missing or misspelt, e.g. no annotations=
            self.problems.append(f"{name}: {_missing(e)}")
            return _nothing


def _nothing() -> None:
    return None


def _missing(e: TypeError) -> str:
    text = str(e)
    if "annotations" in text:
        return (
            'annotations are required: {"readOnly": True} if it changes nothing, '
            '{"consequential": True} if it is hard to undo, {} for an ordinary change'
        )
    if "unexpected keyword argument" in text:
        word = text.rsplit("argument", 1)[-1].strip(" '")
        return (
            f"register() takes no {word} — it takes description, run, input, annotations, "
            "provider, title, positional, output, examples, see_also and suggest"
        )
    if "missing" in text:
        return f"register() {text.split('()', 1)[-1].strip()}"
    return "register() was called with the wrong fields"


def set_up(namespace: Mapping[str, Any], registry: WorkerRegistry, path: str) -> list[str]:
    """Call the worker's `setup(app)`; its problems (and the registry's) as deploy sentences."""
    setup = namespace.get("setup")
    if setup is None:
        return []
    if not callable(setup):
        return [SETUP_RULE]
    try:
        setup(registry)
    except Exception as e:
        return [*registry.problems, _raised(e, path)]
    return list(registry.problems)


def _raised(e: BaseException, path: str) -> str:
    """`line 12: ValueError: …`, the line being the worker's own deepest one."""
    line = ""
    for frame in traceback.extract_tb(e.__traceback__):
        if Path(frame.filename).name == WORKER and frame.filename == path:
            line = f"line {frame.lineno}: "
    return f"{line}{type(e).__name__}: {e}"


def clashes(code: list[str], declared: list[Command]) -> list[str]:
    """A code command named like a declared (or generated) one is refused."""
    taken = {c.agent_name for c in declared}
    return [
        f"{name} is a command of tools.json or vocab.json already — give one of them another name"
        for name in code
        if name in taken
    ]


def load(path: Path, at: str) -> tuple[WorkerRegistry, list[Command]]:
    """Load a worker into this process and set it up; DeployRefused lists every problem."""
    name = f"pasture_worker_{abs(hash((str(path), at))):x}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise DeployRefused([f"{path.name} cannot be loaded"], prefix=WORKER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass in the worker looks its module up here
    registry = WorkerRegistry(at)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        sys.modules.pop(name, None)
        raise DeployRefused([_raised(e, str(path))], prefix=WORKER) from None
    problems = set_up(vars(module), registry, str(path))
    if problems:
        raise DeployRefused(problems, prefix=WORKER)
    return registry, registry.commands()


def _check(path: str, out: str) -> int:
    """The deploy check, run in a process of its own: import, set up, write what was found."""
    import runpy

    registry = WorkerRegistry()
    namespace = runpy.run_path(path)  # an import error ends here, with its traceback
    problems = set_up(namespace, registry, path)
    names = [c.agent_name for c in registry.commands()]
    Path(out).write_text(json.dumps({"problems": problems, "commands": names}))
    return 0


if __name__ == "__main__":
    sys.exit(_check(sys.argv[1], sys.argv[2]))
