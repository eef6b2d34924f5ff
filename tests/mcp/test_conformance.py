"""The official MCP conformance suite against pasture's `/mcp`, for both revisions it knows.

A real `pasture serve` on loopback with the run club deployed, reached through a
loopback proxy that adds the bearer (the suite has no option for a header:
`helpers.bearer_proxy`). Every scenario the revision scores passes — logging/setLevel,
the caching hints of every list its prompts' too, prompts/list of the person's apps —
but those that call the suite's own fixtures: tools, resources and prompts it names,
which a server passes only by serving them. The connector's tool list is fixed (the same
nine tools for every caller, docs/guide.md) and its prompts are the caller's apps, so it
serves none of them; a registry served on its own carries them all
(`test_registry_conformance.py`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.bearer_proxy import bearer_proxy
from helpers.club import RUNS
from helpers.conformance import REVISIONS, run_suite
from helpers.processes import Pasture, running_server

# The suite comes from npm; pasture runs as a server of its own.
pytestmark = [pytest.mark.npm, pytest.mark.processes]

# Scenarios that call what the suite names and a server serves only by carrying it.
FIXTURES = {
    # tools of the suite's own, by name
    "tools-call-simple-text": "the tool test_simple_text",
    "tools-call-image": "the tool test_image_content",
    "tools-call-audio": "the tool test_audio_content",
    "tools-call-embedded-resource": "the tool test_embedded_resource",
    "tools-call-mixed-content": "the tool test_multiple_content_types",
    "tools-call-with-logging": "the tool test_tool_with_logging",
    "tools-call-error": "the tool test_error_handling",
    "tools-call-with-progress": "the tool test_tool_with_progress",
    "tools-call-sampling": "the tool test_sampling",
    "tools-call-elicitation": "the tool test_elicitation",
    "elicitation-sep1034-defaults": "the tool test_elicitation_sep1034_defaults",
    "elicitation-sep1330-enums": "the tool test_elicitation_sep1330_enums",
    "json-schema-2020-12": "the tool json_schema_2020_12_tool",
    "server-sse-polling": "the tool test_reconnection",
    "server-stateless": "the tools test_missing_capability and test_trigger_tool_change",
    "input-required-result-basic-elicitation": "the tool test_input_required_result_elicitation",
    "input-required-result-basic-sampling": "the tool test_input_required_result_sampling",
    "input-required-result-basic-list-roots": "the tool test_input_required_result_list_roots",
    "input-required-result-request-state": "the tool test_input_required_result_request_state",
    "input-required-result-multiple-input-requests": (
        "the tool test_input_required_result_multiple_inputs"
    ),
    "input-required-result-multi-round": "the tool test_input_required_result_multi_round",
    "input-required-result-non-tool-request": "the prompt test_input_required_result_prompt",
    "input-required-result-result-type": "the tool test_input_required_result_elicitation",
    "input-required-result-tampered-state": "the tool test_input_required_result_tampered_state",
    "input-required-result-capability-check": "the tool test_input_required_result_capabilities",
    # resources of the suite's own
    "resources-read-text": "the resource test://static-text",
    "resources-read-binary": "the resource test://static-binary",
    "resources-templates-read": "the resource template test://template/{id}/data",
    "resources-subscribe": "the resource test://watched-resource",
    "resources-unsubscribe": "the resource test://watched-resource",
    # prompts of the suite's own; the connector's are the caller's apps (ada_runs)
    "prompts-get-simple": "the prompt test_simple_prompt",
    "prompts-get-with-args": "the prompt test_prompt_with_arguments",
    "prompts-get-embedded-resource": "the prompt test_prompt_with_embedded_resource",
    "prompts-get-with-image": "the prompt test_prompt_with_image",
    "completion-complete": "the prompt test_prompt_with_arguments, completed",
}


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_scenario_without_fixtures_passes(tmp_path: Path, revision: str) -> None:
    home = tmp_path / "home"
    pasture = Pasture(home, PASTURE_USER="ada")
    deployed = pasture("deploy", str(RUNS), "--app", "runs")
    assert deployed.returncode == 0, deployed.stderr
    token = pasture("token", "new").stdout.split()[0]
    with running_server(home, PASTURE_USER="ada") as url, bearer_proxy(url, token) as proxy:
        run = run_suite(f"{proxy}/mcp", revision, tmp_path / "out")

    ours = [s for s in run.scored if s not in FIXTURES]
    assert len(ours) >= 5, run.printed  # the suite ran what it scores, and most need none
    # What the connector once did not offer is scored as any other scenario is.
    assert "prompts-list" in ours, run.printed
    assert ("logging-set-level" if revision == "2025-11-25" else "caching") in ours, run.printed
    wrong = {scenario: run.failed(scenario) for scenario in ours if run.failed(scenario)}
    assert wrong == {}, run.printed
