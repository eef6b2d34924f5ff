"""Deploy: check everything first, install a new version; a crash leaves the last good one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers.club import RUNS
from pasture.caller import Caller
from pasture.errors import DeployRefused, NotFound, UsageError
from pasture.long_calls import LongCall, Progress
from pasture.platform.service import Service

REPORT = (
    "deployed ada/runs v{n}: http://127.0.0.1:8000/ada/runs/\ncommands: log_run, leaderboard, since"
)


def copy_runs(tmp_path: Path) -> Path:
    target = tmp_path / "src" / "runs"
    shutil.copytree(RUNS, target)
    return target


def add_longest(folder: Path) -> None:
    tools = json.loads((folder / "tools.json").read_text())
    tools["longest"] = {
        "description": "Runs over a distance",
        "input": {"miles": "number"},
        "query": ".jog.miles>=$miles",
    }
    (folder / "tools.json").write_text(json.dumps(tools))


def test_deploy_reports_the_version_address_and_commands(service: Service, ada: Caller) -> None:
    assert service.deploy(ada, RUNS).text == REPORT.format(n=1)
    assert service.deploy(ada, RUNS).text == REPORT.format(n=2)
    [app] = service.gate.list_apps(ada)
    assert (app.at, app.version, app.title, app.access) == ("ada/runs", 2, "Run club", "public")
    assert app.views == ["leaderboard.html"]


def test_title_and_name_can_be_given(service: Service, ada: Caller) -> None:
    result = service.deploy(ada, RUNS, app="club-runs", title="Tuesday runs", access="open")
    assert result.text.startswith("deployed ada/club-runs v1: http://127.0.0.1:8000/ada/club-runs/")
    info = service.gate.app_info(ada, "club-runs")
    assert (info.title, info.access) == ("Tuesday runs", "open")


def test_a_refused_deploy_names_every_problem_and_the_old_version_keeps_serving(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    folder = copy_runs(tmp_path)
    service.deploy(ada, folder)
    service.run_command(ada, "log_run", {"who": "Ada", "miles": 5, "at": "2026-09-01"})

    tools = json.loads((folder / "tools.json").read_text())
    tools["bad"] = {"description": "Bad", "input": {}, "query": ".jog!", "screen": 1}
    (folder / "tools.json").write_text(json.dumps(tools))
    (folder / "worker.py").write_text("x = 1\ndef broken(:\n    pass\n")

    with pytest.raises(DeployRefused) as refused:
        service.deploy(ada, folder)
    message = str(refused.value)
    assert "tools.json: " in message and "screen" in message
    assert "worker.py: line 2: " in message

    assert service.gate.app_info(ada, "runs").version == 1
    assert not (service.home / "apps" / "ada" / "runs" / "v2").exists()
    board = service.run_command(ada, "leaderboard", {})
    assert [r["jog"]["who"] for r in board.data["rows"]] == ["Ada"]
    assert "bad" not in service.gate.app_info(ada, "runs").commands


def test_a_worker_that_does_not_import_is_refused(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    folder = copy_runs(tmp_path)
    (folder / "worker.py").write_text("import no_such_module_here\n")
    with pytest.raises(DeployRefused) as refused:
        service.deploy(ada, folder)
    assert "worker.py: line 1: ModuleNotFoundError: No module named 'no_such_module_here'" in str(
        refused.value
    )
    with pytest.raises(NotFound):
        service.gate.app_info(ada, "runs")


@pytest.mark.processes
def test_a_deploy_killed_before_the_switch_leaves_the_last_good_version(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    folder = copy_runs(tmp_path)
    service.deploy(ada, folder)
    service.run_command(ada, "log_run", {"who": "Ada", "miles": 5, "at": "2026-09-01"})
    add_longest(folder)

    # A second process deploys, and is killed once the files are written, before the switch.
    script = textwrap.dedent(
        f"""
        import os, signal
        from pasture.platform.apps.lifecycle import Apps
        from pasture.platform.service import Service

        def killed(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)

        Apps._switch_version = killed
        svc = Service({str(service.home)!r})
        svc.deploy(svc.local_owner(), {str(folder)!r})
        """
    )
    env = {**os.environ, "PASTURE_USER": "ada"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=120)
    assert done.returncode == -9, done.stderr.decode()
    assert (service.home / "apps" / "ada" / "runs" / "v2" / "tools.json").exists()

    for svc in (service, Service(service.home)):
        info = svc.gate.app_info(ada, "runs")
        assert info.version == 1
        assert info.commands == ["log_run", "leaderboard", "since"]
        rows = svc.run_command(ada, "leaderboard", {}).data["rows"]
        assert [r["jog"]["miles"] for r in rows] == [5]
        assert b"longest" not in svc.apps.files(ada, "runs", "tools.json").text.encode()

    # The next deploy sweeps what the killed one left and takes its number.
    assert service.deploy(ada, folder).text.startswith("deployed ada/runs v2:")
    assert "longest" in service.gate.app_info(ada, "runs").commands


def test_rollback_makes_an_earlier_version_serve(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    folder = copy_runs(tmp_path)
    service.deploy(ada, folder)
    add_longest(folder)
    service.deploy(ada, folder)
    assert "longest" in service.gate.app_info(ada, "runs").commands
    heard: list[Progress] = []  # a watching door (a terminal's bar) is told what it does
    result = service.rollback(
        ada, "ada/runs", 1, long_call=LongCall(heard.append, most_per_second=1e9)
    )
    assert [(p.done, p.total, p.message) for p in heard] == [
        (0, None, "rolling back ada/runs to v1")
    ]
    assert result.text.startswith("ada/runs is back at v1: http://127.0.0.1:8000/ada/runs/")
    assert service.gate.app_info(ada, "runs").commands == ["log_run", "leaderboard", "since"]
    with pytest.raises(NotFound) as missing:
        service.rollback(ada, "ada/runs", 7)
    assert str(missing.value) == "ada/runs has no v7 — it has v1, v2"


def test_files_read_the_source_back(service: Service, ada: Caller) -> None:
    service.deploy(ada, RUNS)
    listing = service.apps.files(ada, "ada/runs")
    assert listing.data["files"] == sorted(p.name for p in RUNS.iterdir())
    assert service.apps.files(ada, "runs", "tools.json").text == (RUNS / "tools.json").read_text()
    with pytest.raises(UsageError) as refused:
        service.apps.files(ada, "runs", "../../platform.db")
    assert refused.value.sentence == (
        "../../platform.db is not a file of the app — a path never names . or .. — a path is "
        "relative to the app's folder, like style.css or img/logo.png"
    )
    with pytest.raises(UsageError, match="//etc/passwd is not a file of the app — it is absolute"):
        service.apps.files(ada, "runs", "//etc/passwd")
    with pytest.raises(NotFound):
        service.apps.files(ada, "runs", "nothing.json")


def test_pages_hide_the_source_and_carry_a_base(service: Service, ada: Caller) -> None:
    service.deploy(ada, RUNS)
    index = service.pages.page(ada, "ada", "runs", "")
    assert index.media_type == "text/html; charset=utf-8"
    assert b'<base href="http://127.0.0.1:8000/ada/runs/">' in index.body
    assert service.pages.page(ada, "ada", "runs", "style.css").media_type.startswith("text/css")
    for source in ("tools.json", "vocab.json", "worker.py", "nothing.html"):
        with pytest.raises(NotFound):
            service.pages.page(ada, "ada", "runs", source)


def test_a_view_is_readable_by_its_uri(service: Service, ada: Caller) -> None:
    service.deploy(ada, RUNS)
    [(uri, info)] = service.pages.views(ada)
    assert uri == "ui://ada/runs/leaderboard.html" and info.at == "ada/runs"
    page = service.pages.view(ada, uri)
    assert page.media_type == "text/html;profile=mcp-app"
    with pytest.raises(NotFound) as missing:
        service.pages.view(ada, "ui://ada/runs/index.html")
    assert str(missing.value) == "no resource ui://ada/runs/index.html"


def test_a_server_running_sees_a_deploy_made_by_another_process(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    folder = copy_runs(tmp_path)
    service.deploy(ada, folder)
    service.run_command(ada, "leaderboard", {})

    vocab = json.loads((folder / "vocab.json").read_text())
    vocab["$defs"]["shoe"] = {"properties": {"brand": {"type": "string"}}}
    (folder / "vocab.json").write_text(json.dumps(vocab))
    tools = json.loads((folder / "tools.json").read_text())
    tools["add_shoe"] = {
        "description": "Add a pair of shoes",
        "input": {"brand": "text"},
        "apply": {"entity": {"eid": "$s"}, "shoe": {"brand": "$brand"}},
    }
    (folder / "tools.json").write_text(json.dumps(tools))
    other = Service(service.home)
    assert other.deploy(ada, folder).text.startswith("deployed ada/runs v2:")
    other.close()

    assert "add_shoe" in service.gate.app_info(ada, "runs").commands
    service.run_command(ada, "add_shoe", {"brand": "Hoka"})
    [row] = service.graph.query(ada, "runs", ".shoe!").data["rows"]
    assert row["shoe"]["brand"] == "Hoka"


def test_files_given_as_a_mapping_deploy_under_space_and_slug(
    service: Service, ada: Caller
) -> None:
    files = {p.name: p.read_bytes() for p in RUNS.iterdir()}
    result = service.deploy(ada, files, app="ada/club")
    assert result.text.startswith("deployed ada/club v1: http://127.0.0.1:8000/ada/club/")
    with pytest.raises(DeployRefused) as refused:
        service.deploy(ada, {"../escape.html": "x", "index.html": "<title>T</title>"}, app="x")
    assert "../escape.html" in str(refused.value)


def test_an_app_is_at_most_a_thousand_files_and_64_mb(service: Service, ada: Caller) -> None:
    """Every file of a deploy is written, synced and kept: 50,000 empty ones took 24 s, and
    on PostgreSQL held every platform write meanwhile. Past the bounds nothing is written."""
    many = {f"f{n}.txt": "" for n in range(1_001)}
    with pytest.raises(DeployRefused) as refused:
        service.deploy(ada, {"index.html": "<title>x</title>", **many}, app="many")
    assert str(refused.value) == (
        "an app is at most 1,000 files, and this one is 1,002 — leave out what its pages do not use"
    )
    big = {"index.html": "<title>x</title>", "video.bin": "x" * (64 * 1024 * 1024 + 1)}
    with pytest.raises(DeployRefused) as refused:
        service.deploy(ada, big, app="big")
    assert str(refused.value) == (
        "an app is at most 64 MB, and this one is 67,108,881 bytes — keep large media "
        "elsewhere and link to it"
    )
    assert [a.at for a in service.gate.list_apps(ada)] == []
    assert not (service.home / "apps" / "ada" / "many").exists()
    fits = {f"f{n}.txt": "" for n in range(999)}
    service.deploy(ada, {"index.html": "<title>x</title>", **fits}, app="fits")


WORKER_JS = (
    "{name}: pasture runs an app's code from worker.py, in Python, and never runs {name} — "
    'write its commands in worker.py (the guide\'s "Commands written as code", /docs.md), or '
    "give a script of the app's pages another name"
)


def test_an_app_carrying_code_for_another_platform_is_refused_and_nothing_installed(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    """A worker.js (or .mjs, .ts) beside index.html would deploy with its code never run."""
    code = "export default { register(app) { app.register('cart add', {}) } }\n"
    files = {p.name: p.read_bytes() for p in RUNS.iterdir()}
    for name in ("worker.js", "worker.mjs", "worker.ts", "Worker.JS"):
        with pytest.raises(DeployRefused) as refused:
            service.deploy(ada, {**files, name: code}, app="cart")
        assert str(refused.value) == WORKER_JS.format(name=name)
    with pytest.raises(NotFound):
        service.gate.app_info(ada, "cart")
    assert not (service.home / "apps" / "ada" / "cart").exists()

    # Said beside every other problem, and the version before keeps serving.
    folder = copy_runs(tmp_path)
    service.deploy(ada, folder)
    (folder / "worker.js").write_text(code)
    (folder / "tools.json").write_text("{")
    with pytest.raises(DeployRefused) as refused:
        service.deploy(ada, folder)
    assert refused.value.problems[0] == WORKER_JS.format(name="worker.js")
    assert refused.value.problems[1].startswith("tools.json: ")
    assert service.gate.app_info(ada, "runs").version == 1
    assert not (service.home / "apps" / "ada" / "runs" / "v2").exists()

    # A page's own script of that name in a folder of its pages is a page, as before.
    (folder / "worker.js").unlink()
    shutil.copy(RUNS / "tools.json", folder / "tools.json")
    (folder / "js").mkdir()
    (folder / "js" / "worker.js").write_text("onmessage = (e) => postMessage(e.data);\n")
    assert service.deploy(ada, folder).text == REPORT.format(n=2)
