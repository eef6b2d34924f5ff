"""Deploying generated apps: tools.json and tools.yml documents, vocab.json, paths, texts.

`Service.deploy` either installs a new version or refuses with every problem in
one sentence — never anything else — and a refused deploy leaves the app at the
version it had.
"""

from __future__ import annotations

from typing import Any

import pytest
from fuzz_checks import FUZZ, fresh, nothing_logged, sentence_ok
from fuzz_inputs import WEB
from fuzz_site import Site
from hypothesis import event, given, settings
from hypothesis import strategies as st

from pasture.errors import Refused


def _version(site: Site, app: str) -> int | None:
    found = [a.version for a in site.service.gate.list_apps(site.ada) if a.at == f"ada/{app}"]
    return found[0] if found else None


@settings(FUZZ, max_examples=120)
@given(
    files=WEB.app_files | WEB.tools_files,
    access=st.none() | st.sampled_from(["public", "nope"]),
    title=st.none() | st.sampled_from(["Fuzz", "\ud800", "a\x00b", "t" * 300]),
)
def test_any_app_deploys_or_is_refused_leaving_the_version_it_had(
    site: Site,
    caplog: pytest.LogCaptureFixture,
    files: dict[str, Any],
    access: Any,
    title: str | None,
) -> None:
    before = fresh(site, caplog)
    version = _version(site, "fz")
    try:
        result = site.service.deploy(
            site.ada, files, space="ada", app="fz", access=access, title=title
        )
    except Refused as refused:
        event("refused")
        sentence_ok(refused.sentence)
        assert _version(site, "fz") == version, "a refused deploy changed the version"
    else:
        event("deployed")
        assert result.data["version"] == (version or 0) + 1
    nothing_logged(site, caplog)
    assert site.counts() == before


@pytest.mark.parametrize("inside", ["index.html/x", "style.css/a/b"])
def test_a_file_that_is_also_a_folder_is_refused(
    site: Site, caplog: pytest.LogCaptureFixture, inside: str
) -> None:
    fresh(site, caplog)
    files = {"index.html": "<title>x</title>", "style.css": "", inside: "y"}
    with pytest.raises(Refused) as refused:
        site.service.deploy(site.ada, files, space="ada", app="fz-both")
    file = inside.split("/")[0]
    assert refused.value.sentence == (
        f"{file} is a file, so {inside} cannot be a file inside it — rename one of them"
    )
    nothing_logged(site, caplog)
