"""A data directory and a PostgreSQL database made by the previous release are upgraded in
place when this one starts on them, with nothing lost.

The previous release's code is taken from this repository's history (`git archive`), and
run in a process of its own to make the data as that release made it: apps and their
versions, rows, people, a member, a token, a trusted space and a secret, the audit. (Its
worker processes would import this release's code, so the app with code is deployed by
this one.) This release then opens the same data and is asked for all of it, and to carry on.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import pytest

from helpers import needs
from pasture.platform.service import Service

REPO = Path(__file__).resolve().parents[3]
# The release before the data changed for hosting for others (versions gained `bytes`; the
# OAuth, limits and worker tables may gain more): move it on when a release ships.
PREVIOUS = "1881381"

MAKE = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from pasture.platform.service import Service

    home, examples = Path(sys.argv[1]), Path(sys.argv[2])
    service = Service(home)
    ada = service.local_owner()
    service.deploy(ada, examples / "runs")
    for who, miles in (("Ada", 5), ("Bo", 3)):
        service.run_command(ada, "log_run", {"who": who, "miles": miles, "at": "2026-09-01"})
    service.deploy(ada, examples / "runs", title="Run club, again")
    bo = service.people.new_user(ada, "bo")
    service.add_member(ada, "ada", "bo", "viewer")
    token = service.new_token(ada, "laptop")
    service.trust_space(ada, "ada")
    service.secrets.set(ada, "runs", "API_KEY", "kept secret")
    service.close()
    print(json.dumps({"token": token}))
    """
)


def _previous_release(into: Path) -> Path:
    """The previous release's `src/` and `examples/`, from this repository's history."""
    git = needs.program("git", "git", "the upgrade test (the previous release's code)")
    archive = into / "previous.tar"
    done = subprocess.run(
        [git, "-C", str(REPO), "archive", "-o", str(archive), PREVIOUS, "src", "examples"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        needs.missing(
            f"the upgrade test needs this repository's history back to {PREVIOUS} "
            f"({done.stderr.strip()})",
            "git fetch --unshallow",
        )
    with tarfile.open(archive) as tar:
        tar.extractall(into / "previous", filter="data")
    return into / "previous"


@pytest.mark.processes
def test_the_previous_releases_data_is_upgraded_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str
) -> None:
    previous = _previous_release(tmp_path)
    home = tmp_path / "home"
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(previous / "src"),  # before this checkout's, which the venv names
        "PASTURE_USER": "ada",
        **({"PASTURE_DATABASE_URL": database} if database else {}),
    }
    made = subprocess.run(
        [sys.executable, "-c", MAKE, str(home), str(previous / "examples")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert made.returncode == 0, made.stderr
    token = json.loads(made.stdout.splitlines()[-1])["token"]

    monkeypatch.setenv("PASTURE_USER", "ada")
    service = Service(home)  # this release, on the same data
    try:
        ada = service.local_owner()
        apps = {a.at: a for a in service.gate.list_apps(ada)}
        assert (apps["ada/runs"].version, apps["ada/runs"].title) == (2, "Run club, again")
        rows = service.graph.query(ada, "runs", ".jog!").data["rows"]
        assert sorted(r["jog"]["who"] for r in rows) == ["Ada", "Bo"]
        assert service.caller_for_token(token).name == "ada"
        bo = service.people.by_name("bo")
        assert bo is not None and service.spaces.role(bo, "ada") == "viewer"
        secrets = service.secrets.list(ada, "runs").data["secrets"]
        assert [s["name"] for s in secrets] == ["API_KEY"]
        assert service.audit(ada, "ada/runs").data["records"]
        assert service.catalog.trusted("ada")  # its code runs, as the old release let it
        service.deploy(ada, REPO / "examples" / "cart")
        assert service.run_command(ada, "cart_add", {"sku": "V60-02", "qty": 2}).data
        # and it carries on: a rollback, a deploy weighed and kept as this release keeps them
        assert service.rollback(ada, "runs", 1).data["version"] == 1
        assert service.deploy(ada, REPO / "examples" / "runs").data["version"] == 3
        assert service.apps.disk.kept("ada")["runs"].keys() == {1, 2, 3}
    finally:
        service.close()
