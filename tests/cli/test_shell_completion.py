"""`pasture completion bash|zsh|fish`: scripts a shell accepts, completing the verbs, the
sub-verbs and a verb's options, read by the shells themselves."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from helpers.command_line import PastureMain
from helpers.processes import Pasture
from pasture.cli import verbs


def _script(tmp_path: Path, shell: str) -> Path:
    printed = Pasture(tmp_path / "home")("completion", shell)
    assert printed.returncode == 0, printed.stderr
    assert printed.stderr == ""
    path = tmp_path / f"pasture.{shell}"
    path.write_text(printed.stdout)
    return path


def _bash(script: Path, *words: str) -> list[str]:
    """COMPREPLY for the line `words` with the cursor at the end of the last word."""
    line = " ".join(f"'{w}'" for w in words)
    program = (
        f"source '{script}'; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; "
        '_pasture; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.processes
@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
def test_bash_completes_verbs_sub_verbs_and_options(tmp_path: Path) -> None:
    script = _script(tmp_path, "bash")
    assert _bash(script, "pasture", "de") == ["deploy", "demo"]
    assert _bash(script, "pasture", "--home", "h", "com") == ["commands", "command", "completion"]
    assert _bash(script, "pasture", "member", "") == ["list", "add", "remove"]
    assert _bash(script, "pasture", "token", "new", "--re") == ["--read"]
    assert _bash(script, "pasture", "deploy", "--ti") == ["--title"]
    # every verb of the command line, and each sub-verb, is offered
    tops = _bash(script, "pasture", "")
    assert set(tops) == {v.split()[0] for v in verbs()}
    for verb in verbs():
        if " " in verb:
            top, sub = verb.split()
            assert sub in _bash(script, "pasture", top, ""), verb


@pytest.mark.processes
@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed here")
def test_fish_accepts_the_script_and_completes_with_it(tmp_path: Path) -> None:
    script = _script(tmp_path, "fish")
    checked = subprocess.run(["fish", "-n", str(script)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr

    def complete(line: str) -> list[str]:
        done = subprocess.run(
            ["fish", "--no-config", "-c", f"source '{script}'; complete -C '{line}'"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        return [w.split("\t")[0] for w in done.stdout.splitlines()]

    assert set(complete("pasture de")) == {"deploy", "demo"}
    assert set(complete("pasture member ")) == {"list", "add", "remove"}
    assert "--read" in complete("pasture token new --re")


@pytest.mark.processes
@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed here")
def test_zsh_accepts_the_script(tmp_path: Path) -> None:
    script = _script(tmp_path, "zsh")
    checked = subprocess.run(["zsh", "-n", str(script)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    # sourced after compinit, it is the completion for pasture
    program = f"autoload -U compinit; compinit -u; source '{script}'; print $_comps[pasture]"
    done = subprocess.run(["zsh", "-f", "-c", program], capture_output=True, text=True)
    assert done.stdout.strip() == "_pasture", done.stderr


def test_a_shell_it_does_not_know_is_a_usage_error(tmp_path: Path) -> None:
    asked = PastureMain(tmp_path / "home")("completion", "tcsh")
    assert asked.returncode == 2
    assert "invalid choice: 'tcsh'" in asked.stderr and "Traceback" not in asked.stderr
