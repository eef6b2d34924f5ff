"""The files an operator runs pasture with (`deploy/`): the systemd unit and the Containerfile.

The unit is checked by systemd itself (`systemd-analyze verify`) where that is installed,
with its ExecStart pointed at this checkout's `pasture`. The Containerfile is parsed as a
builder reads it — each instruction a known one, each COPY's source in the repository,
the command `pasture serve` on every address — and both command lines are read by
pasture's own parser, so an option that is gone or misspelt fails here, not at a boot.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import needs
from pasture.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
UNIT = ROOT / "deploy" / "pasture.service"
CONTAINERFILE = ROOT / "deploy" / "Containerfile"
INSTALLED_AT = "/opt/pasture/bin/pasture"  # where the unit says pasture is installed

INSTRUCTIONS = {
    "ADD",
    "ARG",
    "CMD",
    "COPY",
    "ENTRYPOINT",
    "ENV",
    "EXPOSE",
    "FROM",
    "HEALTHCHECK",
    "LABEL",
    "ONBUILD",
    "RUN",
    "SHELL",
    "STOPSIGNAL",
    "USER",
    "VOLUME",
    "WORKDIR",
}


def instructions(text: str) -> list[tuple[str, str]]:
    """A Containerfile's instructions, each with its arguments: comments dropped, lines
    ending in a backslash joined to the next."""
    found: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        word, _, rest = whole.partition(" ")
        found.append((word, rest.strip()))
    assert not pending, "the last instruction ends in a backslash"
    return found


def unit_sections(text: str) -> dict[str, dict[str, list[str]]]:
    """A unit file's sections and their keys (a key may be given more than once)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith(("#", ";"))):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = (pending + line).strip(), ""
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        assert current is not None, f"{line!r} comes before any section"
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def serve_options(command: list[str]) -> object:
    """`pasture serve …` as pasture's own parser reads it (it exits on a bad option)."""
    assert command[:2] == ["pasture", "serve"], command
    args = build_parser().parse_args(command[1:])
    assert args.verb == "serve"
    return args


def test_the_unit_runs_pasture_serve_with_options_pasture_knows() -> None:
    sections = unit_sections(UNIT.read_text())
    service = sections["Service"]
    (start,) = service["ExecStart"]
    command = shlex.split(start)
    assert command[0] == INSTALLED_AT
    args = serve_options(["pasture", *command[1:]])
    assert getattr(args, "public_url", None) == "https://pasture.example.org"
    assert getattr(args, "trust_proxy", None) == ["127.0.0.1"]
    assert getattr(args, "log_format", None) == "json"
    assert service["User"] == ["pasture"] and service["StateDirectory"] == ["pasture"]
    assert "PASTURE_HOME=/var/lib/pasture" in service["Environment"]
    # bubblewrap must still make its namespaces under the unit's confinement
    assert "RestrictNamespaces" not in service and "PrivateUsers" not in service
    assert sections["Install"]["WantedBy"] == ["multi-user.target"]


@pytest.mark.processes
def test_systemd_finds_nothing_wrong_with_the_unit(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        needs.missing("checking the unit needs systemd-analyze", needs.apt("systemd"))
    here = Path(sys.executable).with_name("pasture")
    if not here.exists():
        pytest.skip(f"this checkout's pasture is not installed next to {sys.executable}")
    unit = tmp_path / "pasture.service"
    unit.write_text(UNIT.read_text().replace(INSTALLED_AT, str(here)))
    done = subprocess.run(
        [str(analyze), "verify", str(unit)], capture_output=True, text=True, timeout=120
    )
    said = [line for line in (done.stdout + done.stderr).splitlines() if "pasture" in line]
    assert done.returncode == 0 and said == [], done.stdout + done.stderr


def test_the_containerfile_builds_from_the_repository_and_serves_on_every_address() -> None:
    steps = instructions(CONTAINERFILE.read_text())
    words = [word for word, _ in steps]
    assert set(words) <= INSTRUCTIONS, set(words) - INSTRUCTIONS
    assert words[0] == "FROM"
    for word, rest in steps:
        if word == "COPY":
            *sources, _ = shlex.split(rest)
            for source in sources:
                assert not source.startswith("--"), f"COPY {rest}: from another stage?"
                assert (ROOT / source).exists(), f"COPY {source}: not in the repository"
    runs = " ".join(rest for word, rest in steps if word == "RUN")
    assert "apt-get install" in runs and "bubblewrap" in runs
    assert "pip install" in runs and "'.[postgres]'" in runs  # this checkout, as copied in
    (volume,) = [json.loads(rest) for word, rest in steps if word == "VOLUME"]
    env = " ".join(rest for word, rest in steps if word == "ENV")
    assert f"PASTURE_HOME={volume[0]}" in env  # the data directory is the volume
    (cmd,) = [json.loads(rest) for word, rest in steps if word == "CMD"]
    args = serve_options(cmd)
    assert getattr(args, "host", None) == "0.0.0.0"
    assert [rest for word, rest in steps if word == "EXPOSE"] == [str(getattr(args, "port", 0))]
    (health,) = [rest for word, rest in steps if word == "HEALTHCHECK"]
    assert "/healthz" in health
