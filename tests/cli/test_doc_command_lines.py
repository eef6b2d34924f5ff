"""Every command line the README and the guide show is true.

Each `pasture …` written as code in their text names a verb and options there are.
Each `pasture …` line in their code blocks is one of two things:

- a synopsis (`pasture deploy DIR [--space S]`, placeholders in capitals, `[…]`, `a|b`):
  its verb exists, and so does each option it shows, for that verb;
- an example (`pasture app remove club/runs`): it parses, and it is run here — in the
  order the guide tells its story, on a data directory made for it — and does what the
  text beside it says; or, where it cannot run here (a PostgreSQL server named `db`, a
  server that serves until stopped), it is listed in `NOT_RUN` with the reason.

A line added to the docs that is neither checked nor listed fails
`test_every_example_is_run_or_said_why_not`.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.club import RUNS
from helpers.command_line import PastureMain
from pasture.cli import build_parser
from pasture.cli._shells import _verbs

ROOT = Path(__file__).resolve().parents[2]
DOCS = {"README.md": ROOT / "README.md", "docs/guide.md": ROOT / "docs" / "guide.md"}
_PLACEHOLDER = re.compile(r"^[A-Z][A-Z_/]*[A-Z]$|^[A-Z]$")


@dataclass(frozen=True)
class Line:
    doc: str
    number: int
    shown: str  # the command as the docs show it, without what is said beside it
    words: tuple[str, ...]  # after `pasture`
    stdin: str | None  # what `printf … |` or `echo … |` pipes into it
    after: str  # the block's next line (an example's output, where one is shown)

    @property
    def synopsis(self) -> bool:
        return any(
            "[" in w or ("|" in w and not w.startswith(".")) or _PLACEHOLDER.match(w)
            for w in self.words
        ) or any(w.startswith("<") for w in self.words)


def _cut(line: str) -> str:
    """The command without what the docs say beside it: two spaces or `#` outside quotes."""
    quote: str | None = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif line.startswith("  ", i) or line.startswith(" #", i) or line.startswith(" > ", i):
            return line[:i]
    return line


def _lines() -> Iterator[Line]:
    for doc, path in DOCS.items():
        lines = path.read_text().split("\n")
        fenced = False
        for number, raw in enumerate(lines, 1):
            if raw.startswith("```"):
                fenced = not fenced
                continue
            if not (fenced or raw.startswith("    ")):
                continue
            text = raw.strip().removeprefix("$ ")
            if text.startswith("podman run"):  # a container's options, not pasture's
                continue
            text = text.removeprefix("podman exec pasture ")
            stdin = None
            if "| pasture " in text:
                feed, _, text = text.partition("| ")
                stdin = feed
            while re.match(r"^[A-Z_]+=\S+ ", text):  # VAR=value before the command
                text = text.split(" ", 1)[1]
            found = re.match(r"^(?:\S*/)?pasture(?=\s)", text)
            if found is None or text.startswith("pasture import"):
                continue
            shown = _cut(text).strip()
            words = tuple(shlex.split(shown))[1:]
            after = lines[number].strip() if number < len(lines) else ""
            yield Line(doc, number, shown, words, stdin, after)


LINES = list(_lines())
SYNOPSES = [line for line in LINES if line.synopsis]
EXAMPLES = [line for line in LINES if not line.synopsis]


def _id(line: Line) -> str:
    return f"{line.doc}:{line.number}"


# -- synopses -------------------------------------------------------------------------
VERBS = _verbs(build_parser())
TOP_OPTIONS = {"--home", "--database", "--version", "--help"}


@pytest.mark.parametrize("line", SYNOPSES, ids=_id)
def test_a_synopsis_names_a_verb_and_options_there_are(line: Line) -> None:
    words = [w for w in line.words if w not in ("[--home", "DIR]")]  # `pasture [--home DIR]`
    verb = next(w for w in words if not w.startswith("[") and not w.startswith("-"))
    assert verb in VERBS, f"{line.shown}: pasture has no verb {verb}"
    rest = words[words.index(verb) + 1 :]
    sub = ""
    if VERBS[verb].subs and rest and rest[0].strip("[]") in VERBS[verb].subs:
        sub = rest[0].strip("[]")
    options = set(VERBS[verb].options[sub]) | TOP_OPTIONS
    for word in re.findall(r"--[a-z-]+", " ".join(words)):
        assert word in options, f"{line.shown}: {verb} {sub} has no option {word}".strip()


def _inline() -> Iterator[tuple[str, str]]:
    """`pasture …` in the docs' running text, as code: each its doc and the span."""
    for doc, path in DOCS.items():
        text = path.read_text().replace("\n", " ")
        for found in re.finditer(r"`((?:\.venv/bin/)?pasture [^`]+)`", text):
            span = found.group(1)
            if not re.fullmatch(r"\S*pasture \d+\.\d+\.\d+", span):  # --version's answer
                yield doc, span


@pytest.mark.parametrize(("doc", "span"), list(_inline()))
def test_a_command_in_the_text_names_a_verb_and_options_there_are(doc: str, span: str) -> None:
    words = [w for w in span.split()[1:] if w not in ("[--home", "DIR]")]
    verb = next((w for w in words if not w.startswith(("-", "["))), None)
    if verb is None:  # `pasture --help`, `pasture --version`
        assert set(words) <= TOP_OPTIONS, f"{doc}: {span}"
        return
    assert verb in VERBS, f"{doc}: {span}: pasture has no verb {verb}"
    rest = words[words.index(verb) + 1 :]
    sub = ""
    if VERBS[verb].subs and rest and rest[0].strip("[]") in VERBS[verb].subs:
        sub = rest[0].strip("[]")
    if verb == "command":  # what follows the name is the app's command's own arguments
        rest = rest[:1]
    options = set(VERBS[verb].options[sub]) | TOP_OPTIONS
    for word in re.findall(r"--[a-z-]+", " ".join([verb, *rest])):
        assert word in options, f"{doc}: {span}: {verb} {sub} has no option {word}"


# -- examples -------------------------------------------------------------------------
NOT_RUN = {
    "pasture serve --database postgresql://pasture@db:5432/pasture": (
        "a PostgreSQL server named db, and it serves until stopped"
    ),
    "pasture deploy myapp/": "its PostgreSQL server named db (PASTURE_DATABASE_URL)",
    "pasture serve --backup-every 1d --backup-keep 7 --backup-dir /srv/backups": (
        "it serves until stopped (tests/platform/backups run the schedule)"
    ),
}


@pytest.mark.parametrize("line", EXAMPLES, ids=_id)
def test_every_example_parses(line: Line) -> None:
    build_parser().parse_args(list(line.words))  # argparse exits on a line it cannot read


def _run(
    pasture: PastureMain, line: Line, ran: set[str], *, words: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run an example as shown (or with `words` in place of what the docs stand in for)."""
    ran.add(line.shown)
    stdin = None
    if line.stdin is not None:
        stdin = shlex.split(line.stdin)[-1].encode().decode("unicode_escape")
    done = pasture(*(words or line.words), input=stdin)
    assert done.returncode == 0, f"{line.doc}:{line.number} {line.shown}: {done.stderr}"
    assert "Traceback" not in done.stderr
    return done


def _example(shown: str) -> Line:
    found = [line for line in EXAMPLES if line.shown == shown]
    assert found, f"the docs no longer show {shown}: change this test with them"
    return found[0]


def _the_readmes_terminal_examples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ran: set[str]
) -> None:
    tmp_path.mkdir()
    monkeypatch.chdir(tmp_path)  # its --home .pasture is the folder `make run` fills
    pasture = PastureMain(tmp_path / "elsewhere")
    assert pasture("--home", ".pasture", "deploy", str(RUNS)).returncode == 0
    readme = [line for line in EXAMPLES if line.doc == "README.md"]
    assert [line.shown for line in readme] == [
        ".venv/bin/pasture --home .pasture commands",
        ".venv/bin/pasture --home .pasture command log_run Ada 5 2026-09-01",
        ".venv/bin/pasture --home .pasture command leaderboard",
        ".venv/bin/pasture --home .pasture query runs '.jog!&.jog.miles>=5'",
        ".venv/bin/pasture --home .pasture console",
        ".venv/bin/pasture --home .pasture inspect",
    ]
    listed, logged, board, query, console, inspect = readme
    out = _run(pasture, listed, ran).stdout
    assert out.startswith("## ada/runs\nlog_run(who, miles, at)")
    assert "wrote 1 entity in ada/runs" in _run(pasture, logged, ran).stdout
    assert "Ada" in _run(pasture, board, ran).stdout
    read = _run(pasture, query, ran).stdout  # "read with a filter"
    assert read.startswith("1 row in ada/runs") and "Ada" in read
    # "the same at a prompt": here its input piped, one command a line
    pasture = PastureMain(tmp_path / "elsewhere")
    typed = pasture(*console.words, input="leaderboard\n")
    ran.add(console.shown)
    assert typed.returncode == 0 and "Ada" in typed.stdout, typed.stderr
    tools = _run(pasture, inspect, ran).stdout  # "every tool an agent is offered"
    assert "log_run" in tools and "leaderboard" in tools and "since" in tools


def _the_guides_examples_in_the_order_it_tells_them(tmp_path: Path, ran: set[str]) -> None:
    home = tmp_path / "home"
    pasture = PastureMain(home)
    for step in (("space", "new", "club"), ("deploy", str(RUNS), "--space", "club")):
        assert pasture(*step).returncode == 0
    for who, miles in (("Ada", "5"), ("Bo", "3")):
        logged = pasture("command", "log_run", who, miles, "2026-09-01", "--app", "club/runs")
        assert logged.returncode == 0, logged.stderr

    # `pasture query`: JSON lines, one row a line, shaped as the guide shows
    line = _example("pasture query runs '.jog.miles>=5' --json")
    [row] = [json.loads(x) for x in _run(pasture, line, ran).stdout.splitlines()]
    shown = json.loads(line.after)
    assert set(row) == set(shown) and set(row["jog"]) == set(shown["jog"])
    assert (row["jog"]["who"], row["jog"]["miles"]) == ("Ada", 5)
    # the next page: the same filter with &after= and the cursor a page cut short ends with
    first = pasture("query", "runs", ".jog!&sort=-jog.miles", "--json", PASTURE_MAX_ROWS="1")
    more = json.loads(first.stdout.splitlines()[-1])
    assert more["more"] is True
    line = _example("pasture query runs '.jog!&sort=-jog.miles&after=WyI4…'")
    words = [w.replace("WyI4…", more["cursor"]) for w in line.words]
    nxt = _run(pasture, line, ran, words=words).stdout
    assert "Bo" in nxt and "Ada" not in nxt

    # the console, its input piped: only the results
    line = _example("pasture console")
    said = _run(pasture, line, ran).stdout
    assert "wrote 1 entity in club/runs" in said and "Ada" in said

    # undo and restore
    def runs_now() -> list[str]:
        read = pasture("query", "club/runs", ".jog!", "--json").stdout.splitlines()
        return [json.loads(x)["jog"]["who"] for x in read]

    audit = _run(pasture, _example("pasture audit club/runs"), ran).stdout.splitlines()
    # "each call with its id: … call 3f9a2b1c0d4e"; the newest log_run, the console's
    logged = [
        re.match(r"call ([0-9a-f]{12}) ", head)
        for head, said in itertools.pairwise(audit)
        if "command log_run" in said
    ]
    assert logged and all(logged), audit
    assert runs_now() == ["Ada", "Bo", "Ada"]
    line = _example("pasture undo 3f9a2b1c0d4e")
    newest = logged[-1]
    assert newest is not None
    call = newest.group(1)
    _run(pasture, line, ran, words=["undo", call])  # "what that call changed, put back"
    assert runs_now() == ["Ada", "Bo"]
    line = _example('pasture app restore club/runs --to "2 hours ago"')
    _run(pasture, line, ran)  # "the whole app's data as it was then": before any run
    assert runs_now() == []

    # export and import
    moved = tmp_path / "moved"
    moved.mkdir()
    line = _example("pasture app export club/runs runs.tar.gz")
    _run(pasture, line, ran, words=[*line.words[:-1], str(moved / "runs.tar.gz")])
    assert (moved / "runs.tar.gz").is_file()
    line = _example("pasture app import runs.tar.gz")  # "into your own space, as runs"
    _run(pasture, line, ran, words=[*line.words[:-1], str(moved / "runs.tar.gz")])
    line = _example("pasture app import runs.tar.gz --space club --as tuesday-runs")
    words = [str(moved / w) if w == "runs.tar.gz" else w for w in line.words]
    _run(pasture, line, ran, words=words)
    apps = {a["at"] for a in json.loads(pasture("app", "list", "--json").stdout)["apps"]}
    assert {"ada/runs", "club/runs", "club/tuesday-runs"} <= apps

    # backups: the server's owner's; restored into a new data directory with its key
    line = _example("pasture backup /srv/backups/pasture.tar")
    archive = tmp_path / "backups" / "pasture.tar"
    archive.parent.mkdir()
    _run(pasture, line, ran, words=["backup", str(archive)])
    line = _example("pasture --home /srv/new restore /srv/backups/pasture.tar --key backup.key")
    words = ["--home", str(tmp_path / "new"), "restore", str(archive), "--key"]
    _run(pasture, line, ran, words=[*words, str(home / "backup.key")])
    again = PastureMain(tmp_path / "new")("app", "list", "--json")
    assert {a["at"] for a in json.loads(again.stdout)["apps"]} == apps

    # the trash
    def apps_now() -> set[str]:
        return {a["at"] for a in json.loads(pasture("app", "list", "--json").stdout)["apps"]}

    _run(pasture, _example("pasture app remove club/runs"), ran)
    assert apps_now() == apps - {"club/runs"}
    trash = _run(pasture, _example("pasture trash"), ran).stdout
    # "what is there: what, who removed it, when, when it goes for good"
    assert re.search(r"club/runs +\(app\) +removed by ada 20\d\d-.* goes for good 20", trash)
    _run(pasture, _example("pasture trash restore club/runs"), ran)  # "back as it was"
    assert apps_now() == apps
    _run(pasture, _example("pasture space remove club"), ran)  # "with all its apps"
    assert apps_now() == {"ada/runs"}
    _run(pasture, _example("pasture trash restore club"), ran)  # "with its apps"
    assert apps_now() == apps

    # status: one line per app
    status = _run(pasture, _example("pasture status"), ran).stdout
    assert status.splitlines()[0].startswith("ada/runs v1 — Run club — ")

    # a token, as the container's example makes one
    assert "Authorization: Bearer" in _run(pasture, _example("pasture token new"), ran).stdout

    # completion scripts, printed where the shell looks
    for shell, start in (("bash", "# pasture's"), ("zsh", "#compdef pasture"), ("fish", "#")):
        line = _example(f"pasture completion {shell}")
        assert _run(pasture, line, ran).stdout.startswith(start)


def test_every_example_runs_as_the_docs_say_or_is_said_why_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's examples, then the guide's, each doing what the text says; and every
    example the docs show is one of those, or in NOT_RUN with its reason. (One test, so the
    last check sees what the others ran in whichever process runs it.)"""
    ran: set[str] = set()
    _the_readmes_terminal_examples(tmp_path / "readme", monkeypatch, ran)
    _the_guides_examples_in_the_order_it_tells_them(tmp_path / "guide", ran)
    left = {line.shown for line in EXAMPLES} - ran - set(NOT_RUN)
    assert not left, f"examples in the docs nobody checks — run them here, or say why not: {left}"
    assert not set(NOT_RUN) - {line.shown for line in EXAMPLES}, "NOT_RUN names lines gone"
