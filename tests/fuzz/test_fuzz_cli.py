"""The command line under generated hostile arguments, through `pasture.cli.main`.

`pasture command NAME args…`, `pasture query APP FILTER` and `pasture deploy DIR`
either do their work or
exit non-zero with the sentence on stderr: never a traceback, never the line a
bug gets (`pasture: something went wrong`), and a refused command writes nothing.
An argument is bytes, as a shell hands a program them, and reaches `main` as Python
makes `sys.argv` of them (`os.fsdecode`: a byte that is not UTF-8 is a lone surrogate).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from fuzz_checks import FUZZ, fresh
from fuzz_inputs import WEB, command_names, filters, hostile_text
from fuzz_site import Site
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.command_line import pasture_main


def _argument(text: str) -> bytes:
    """What a shell hands a program: bytes (not always UTF-8), never a NUL."""
    return text.replace("\x00", "").encode("utf-8", "surrogatepass") or b"-"


def pasture(
    site: Site, *args: bytes | str, columns: int | None = None
) -> subprocess.CompletedProcess[str]:
    env = {"COLUMNS": str(columns)} if columns is not None else None
    argv = [os.fsdecode(a) if isinstance(a, bytes) else a for a in args]
    return pasture_main(site.home, *argv, env=env)


def _exited_well(done: subprocess.CompletedProcess[str]) -> str:
    err, out = done.stderr, done.stdout
    assert "Traceback" not in err + out, err
    assert "something went wrong" not in err, err
    assert done.returncode in (0, 1, 2), (done.returncode, err)
    if done.returncode:
        assert err.strip(), "a refusal with no sentence on stderr"
    return err


@settings(FUZZ, max_examples=100)
@given(
    name=command_names,
    words=st.lists(hostile_text | filters, max_size=3),
    flags=st.lists(
        st.sampled_from(["--who", "--miles", "--since", "--sku", "--qty", "--x"]), max_size=2
    ),
)
def test_a_command_line_of_any_words_runs_or_says_why_not(
    site: Site,
    caplog: pytest.LogCaptureFixture,
    name: str,
    words: list[str],
    flags: list[str],
) -> None:
    before = fresh(site, caplog)
    args = [_argument(name), *(_argument(w) for w in words)]
    args += [f"{flag}=".encode() + _argument(w) for flag, w in zip(flags, words, strict=False)]
    done = pasture(site, "command", "--yes", *args)
    _exited_well(done)
    if done.returncode:
        assert site.counts() == before


@settings(FUZZ, max_examples=60)
@given(
    app=st.sampled_from(["runs", "ada/runs", "cart", "nope", "ada/"]) | hostile_text,
    text=filters | hostile_text,
    json=st.booleans(),
    columns=st.sampled_from([1, 12, 40, 80, 200]),
)
def test_a_query_of_any_filter_prints_rows_or_says_why_not(
    site: Site,
    caplog: pytest.LogCaptureFixture,
    app: str,
    text: str,
    json: bool,
    columns: int,
) -> None:
    before = fresh(site, caplog)
    args = [*([b"--json"] if json else []), _argument(app), b"--", _argument(text)]
    done = pasture(site, "query", *args, columns=columns)
    _exited_well(done)
    assert site.counts() == before


def _inside(folder: Path, target: Path) -> bool:
    """Whether writing `target` stays in `folder` (an absolute path or `..` would leave it)."""
    try:
        return target.resolve().is_relative_to(folder.resolve()) and target != folder
    except (OSError, ValueError):
        return False


@settings(FUZZ, max_examples=25)
@given(files=WEB.app_files | WEB.tools_files)
def test_deploying_a_folder_of_any_files_installs_or_says_why_not(
    site: Site, tmp_path_factory: pytest.TempPathFactory, files: dict[str, str]
) -> None:
    folder = tmp_path_factory.mktemp("app")
    for path, text in files.items():
        target = folder / path.replace("\x00", "")
        if not _inside(folder, target):
            continue  # /etc/passwd, ../x: a folder cannot hold it, and the tests run as root
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8", "surrogatepass"))
        except (OSError, ValueError):
            continue  # not a name this filesystem keeps: that file is simply not there
    _exited_well(pasture(site, "deploy", str(folder), "--app", "fz-cli", "--space", "ada"))


@pytest.mark.parametrize(
    ("args", "sentence"),
    [
        (
            ["log_run", "Ada", "1180591620717411303424", "2026-09-01"],
            "miles is a number between -9223372036854775808 and 9223372036854775807 — "
            "write a larger one as a decimal, like 1.2e21",
        ),
        (
            ["log_run", b"A\xffda", "5", "2026-09-01"],
            "who holds \\udcff, half of a UTF-16 surrogate pair and not a character — "
            "send text as whole characters",
        ),
    ],
)
def test_the_classes_are_refused_with_the_same_sentence_on_the_command_line(
    site: Site, caplog: pytest.LogCaptureFixture, args: list[str | bytes], sentence: str
) -> None:
    before = fresh(site, caplog)
    done = pasture(site, "command", *args)
    assert done.returncode == 2
    assert _exited_well(done).strip() == sentence
    assert site.counts() == before


def test_a_title_that_is_not_text_is_refused(site: Site, tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<title>x</title>")
    done = pasture(site, "deploy", str(tmp_path), "--app", "fz-cli", "--title", b"\xff")
    assert done.returncode == 2
    assert _exited_well(done).strip() == (
        "the title holds \\udcff, half of a UTF-16 surrogate pair and not a character — "
        "send text as whole characters"
    )
