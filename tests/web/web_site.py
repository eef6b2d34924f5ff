"""A real Service in a temporary home, with people, spaces and apps for the web door's tests,
on each platform database (tests/conftest.py's `module_database`).

ada owns the space `ada`; cy is a viewer of it; bob is in no space but his own.
Apps in `ada`: `runs` (public), `secret` (private), `board` (open), `notes`
(public, its commands in tools.yml).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from helpers.club import as_user
from pasture.caller import Caller
from pasture.platform.service import Service
from pasture.web import create_app

BASE = "http://testserver"
PASSWORD = "correct horse battery"

VOCAB = """{"$defs": {"jog": {"properties": {
    "who": {"type": "string"}, "miles": {"type": "number"}}}}}"""

TOOLS = """{
  "log_run": {
    "description": "Log a run for the club leaderboard",
    "input": {"who": "text", "miles": "number"},
    "apply": {"entity": {"eid": "$run"}, "jog": {"who": "$who", "miles": "$miles"}}},
  "leaderboard": {
    "description": "Every run so far",
    "input": {},
    "query": ".jog!&.created!"},
  "plan_run": {
    "description": "Plan a run for later",
    "input": {"who": "text", "when": "time", "race": "bool", "route": "url"},
    "apply": {"entity": {"eid": "$plan"}, "doc": {"title": "$who on $when"}}}
}"""

INDEX = """<!doctype html>
<html><head><meta charset="utf-8"><title>Run club</title>
<link rel="stylesheet" href="style.css"></head>
<body><h1>Runs</h1></body></html>
"""

OWN_BASE = """<!doctype html>
<html><head><base href="https://elsewhere.example/"><title>Own</title></head><body></body></html>
"""

NO_HEAD = "<!doctype html>\n<p>No head here</p>\n"

RUNS = {
    "index.html": INDEX,
    "own.html": OWN_BASE,
    "nohead.html": NO_HEAD,
    "style.css": "h1 { color: green; }\n",
    "sub/index.html": "<html><head><title>Sub</title></head><body>sub</body></html>",
    "vocab.json": VOCAB,
    "tools.json": TOOLS,
    "worker.py": "SECRET_WORKER_MARKER = 1\n",
    # Modules its code may import are source too: a key kept in one is no page's.
    "keys.py": "API_KEY = 'SECRET_WORKER_MARKER'\n",
    "lib/helper.py": "SECRET_WORKER_MARKER = 2\n",
}

NOTES_TOOLS_YML = """\
add_note:
  description: Add a note
  input:
    title: text
  apply:
    entity: {eid: $note}
    doc: {title: $title}
"""


@dataclass
class Site:
    service: Service
    home: Path
    ada: Caller
    bob: Caller
    cy: Caller
    ada_token: str
    bob_token: str
    cy_token: str

    def client(self, token: str | None = None) -> TestClient:
        """A client for the web door; with a token, every request carries it."""
        client = TestClient(create_app(self.service), base_url=BASE, follow_redirects=False)
        if token is not None:
            client.headers["Authorization"] = f"Bearer {token}"
        return client

    def signed_in(self, name: str) -> TestClient:
        """A client that signed in through the form, holding the session cookie."""
        client = self.client()
        answer = client.post("/signin", data={"name": name, "password": PASSWORD})
        assert answer.status_code == 303, answer.text
        return client


def _deploy(service: Service, owner: Caller, files: dict[str, str], app: str, access: str) -> None:
    service.deploy(owner, files, space="ada", app=app, access=access)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, module_database: str) -> Iterator[Site]:
    home = tmp_path_factory.mktemp("home")
    with as_user("ada"):
        service = Service(home, base_url=BASE)
        ada = service.local_owner()
    service.people.set_password(ada, PASSWORD)
    bob = service.people.new_user(ada, "bob", PASSWORD)
    cy = service.people.new_user(ada, "cy", PASSWORD)
    service.add_member(ada, "ada", "cy", "viewer")
    _deploy(service, ada, RUNS, "runs", "public")
    secret = {"index.html": "<html><head><title>Secret</title></head><body>hush</body></html>"}
    _deploy(service, ada, {**secret, "vocab.json": VOCAB, "tools.json": TOOLS}, "secret", "private")
    _deploy(service, ada, {**RUNS, "index.html": INDEX}, "board", "open")
    notes = {
        "index.html": "<html><head></head><body>notes</body></html>",
        "tools.yml": NOTES_TOOLS_YML,
    }
    _deploy(service, ada, notes, "notes", "public")
    yield Site(
        service=service,
        home=home,
        ada=ada,
        bob=bob,
        cy=cy,
        ada_token=service.new_token(ada),
        bob_token=service.new_token(bob),
        cy_token=service.new_token(cy),
    )
    service.close()
