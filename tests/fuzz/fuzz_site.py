"""A real Service for the fuzz suite: the run club, the cart, and an app whose code answers badly.

All in ada's own space, public, which is trusted to run code:

- `runs`: examples/runs (declared commands: log_run, leaderboard, since)
- `cart`: examples/cart (code commands in worker.py: cart add, remove, clear, status)
- `wild`: a worker.py whose one command, `answer KIND`, answers with what is not JSON
  (a set, NaN, a lone surrogate, 500 levels of lists, bytes, an object, a loop, …)
  or writes a message of its own onto the socket the server reads
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from helpers.club import EXAMPLES, as_user
from pasture.caller import Caller
from pasture.platform.access.limits import Rates
from pasture.platform.service import Service

BASE = "http://testserver"
APPS = ("runs", "cart", "wild", "todos")

WILD_WORKER = """
import math
import os
import sys


def answer(args, ctx):
    kind = args["kind"]
    if kind == "set":
        return {"text": "a set", "data": {"v": {1, 2}}}
    if kind == "nan":
        return {"text": "nan", "data": {"v": math.nan}}
    if kind == "infinity":
        return {"text": "infinity", "data": {"v": math.inf}}
    if kind == "surrogate":
        return {"text": "half \\ud800 a character", "data": {}}
    if kind == "deep":
        value = 1
        for _ in range(500):
            value = [value]
        return {"text": "deep", "data": {"v": value}}
    if kind == "bytes":
        return {"text": "bytes", "data": {"v": b"\\xff"}}
    if kind == "object":
        return object()
    if kind == "text_number":
        return {"text": 5, "data": {}}
    if kind == "huge_int":
        return {"text": "huge", "data": {"v": 10**5000}}
    if kind == "loop":
        loop = []
        loop.append(loop)
        return {"text": "loop", "data": {"v": loop}}
    if kind == "big_int":
        return {"text": "big", "data": {"v": 2**70}}
    if kind.startswith("raw"):
        # a message of its own, straight onto the socket the server reads
        body = {
            "raw_nan": b'{"result": {"text": "x", "data": {"v": NaN}}}',
            "raw_surrogate": b'{"result": {"text": "\\\\ud800", "data": {}}}',
            "raw_deep": b'{"result": {"text": "x", "data": ' + b"[" * 3000 + b"]" * 3000 + b"}}",
            "raw_garbage": b"\\xff\\xfe not json",
        }.get(kind, b"[]")
        os.write(int(sys.argv[-1]), len(body).to_bytes(4, "big") + body)
        return {"text": "wrote", "data": {}}
    return {"text": "ok", "data": {"kind": kind}}


def setup(app):
    app.register(
        "answer",
        description="Answer with what KIND names, JSON or not",
        input={
            "type": "object",
            "properties": {"kind": {"type": "string"}},
            "required": ["kind"],
        },
        positional=["kind"],
        annotations={},
        run=answer,
    )
"""


@dataclass
class Site:
    service: Service
    home: Path
    ada: Caller
    token: str
    errors: list[logging.LogRecord] = field(default_factory=list)

    def count(self, app: str) -> int:
        """How many entities the app's store holds (persons included)."""
        return int(self.service.graph.query(self.ada, f"ada/{app}", ".count!").data["count"])

    def counts(self) -> dict[str, int]:
        return {app: self.count(app) for app in APPS}


class _Errors(logging.Handler):
    """Every ERROR-level record anything in pasture logs (the door's traceback of a bug)."""

    def __init__(self, into: list[logging.LogRecord]) -> None:
        super().__init__(logging.ERROR)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record)


def open_site(home: Path) -> Iterator[Site]:
    with as_user("ada"):
        # Thousands of inputs a minute from one token: the limits are not what is fuzzed here.
        service = Service(home, base_url=BASE, rates=Rates(caller=None, address=None))
        ada = service.local_owner()
    service.trust_space(ada, "ada")
    service.deploy(ada, EXAMPLES / "runs", space="ada", app="runs", access="public")
    service.deploy(ada, EXAMPLES / "cart", space="ada", app="cart", access="public")
    wild = {"index.html": "<title>Wild</title>", "worker.py": WILD_WORKER}
    service.deploy(ada, wild, space="ada", app="wild", access="public")
    service.deploy(ada, EXAMPLES / "todos", space="ada", app="todos", access="open")
    site = Site(service, home, ada, service.new_token(ada))
    handler = _Errors(site.errors)
    logger = logging.getLogger("pasture")
    logger.addHandler(handler)
    try:
        yield site
    finally:
        logger.removeHandler(handler)
        service.close()
