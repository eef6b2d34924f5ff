"""`pasture.metrics` counts nothing, and imports no prometheus_client, until a server turns it
on: a verb of the command line runs a command, writes and reads, and never loads it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

WITHOUT_METRICS = """
import sys
from pathlib import Path
from pasture import metrics
from pasture.platform import Service

home = Path(sys.argv[1])
(home / "app").mkdir(parents=True)
(home / "app" / "index.html").write_text("<title>notes</title>")
(home / "app" / "vocab.json").write_text(
    '{"$defs": {"note": {"properties": {"text": {"type": "string"}}}}}'
)
with Service(home / "data") as service:
    owner = service.local_owner()
    service.deploy(owner, home / "app", app="notes")
    service.apply(owner, "notes", {"note": {"text": "hi"}})
    assert service.graph.query(owner, "notes", ".note!").data["rows"]
    metrics.worker_started("ada/notes")
    with metrics.database("app", "read"):
        pass
assert not metrics.counting()
assert "prometheus_client" not in sys.modules, "prometheus_client was imported"
print("ok")
"""


@pytest.mark.processes
def test_nothing_is_counted_or_imported_until_counting_starts(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_METRICS, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PASTURE_USER": "ada", "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr
