"""Every path from outside is a file of the app's folder, or refused with a sentence naming it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.club import RUNS
from pasture.caller import Caller
from pasture.errors import DeployRefused, NotFound, UsageError
from pasture.platform.apps.paths import BadPath, app_path, inside, shown
from pasture.platform.service import Service

# The pieces hostile paths are made of, in every spelling that has bitten someone.
PIECES = st.sampled_from(
    [
        "..", ".", "", "/", "//", "\\", "C:", "c:\\", "\x00", "\n", "\x7f", "a", "b.html",
        "%2e%2e", "..\\", "...", "~", "\u202e", "\ud800", "x" * 300, " ", ".env", "é",
    ]
)  # fmt: skip
HOSTILE = st.lists(PIECES, min_size=1, max_size=6).flatmap(
    lambda parts: st.sampled_from(["/", "\\", ""]).map(lambda sep: sep.join(parts))
)
ANY_PATH = st.one_of(st.text(max_size=60), HOSTILE)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = tmp_path_factory.mktemp("app") / "v1"
    (made / "img").mkdir(parents=True)
    (made / "index.html").write_text("<title>x</title>")
    os.symlink("/etc", made / "img" / "out")  # a link that leads out, as if planted
    return made


@settings(max_examples=2000, deadline=None)
@given(path=ANY_PATH)
def test_any_path_is_a_file_of_the_folder_or_a_sentence_naming_it(folder: Path, path: str) -> None:
    try:
        target = inside(folder, path)
    except BadPath as refused:
        assert " is not a file of the app — " in refused.sentence
        assert "\x00" not in refused.sentence and "\n" not in refused.sentence
        return
    real = os.path.realpath(target)
    assert os.path.commonpath([os.path.realpath(folder), real]) == os.path.realpath(folder)
    assert app_path(path) == path


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/etc/passwd", "it is absolute"),
        ("//etc/passwd", "it is absolute"),
        ("\\windows\\system.ini", "it is absolute"),
        ("C:/boot.ini", "it is absolute"),
        ("a/../../b", "a path never names . or .."),
        ("./index.html", "a path never names . or .."),
        ("a//b.html", "a path has no empty names"),
        ("img/", "a path has no empty names"),
        ("a\\b.html", "a path has / between its folders, never \\"),
        ("a\x00b.html", "a path has no control characters"),
        (".env", ".env is hidden"),
        ("x" * 256 + ".html", "a name in a path is at most 255 bytes (as UTF-8: é is two)"),
        ("é" * 200 + ".html", "a name in a path is at most 255 bytes (as UTF-8: é is two)"),
        ("a/" * 520, "a path is at most 1024 bytes (as UTF-8: é is two)"),
        ("é/" * 400, "a path is at most 1024 bytes (as UTF-8: é is two)"),
        ("", "a path names a file — it is empty"),
        ("img/out/passwd", "it leads out of its folder"),
    ],
)
def test_each_kind_of_bad_path_has_its_sentence(folder: Path, path: str, why: str) -> None:
    with pytest.raises(BadPath) as refused:
        inside(folder, path)
    assert why in refused.value.sentence
    assert isinstance(refused.value, UsageError)


# -- through the platform ---------------------------------------------------------------------
def test_a_deploy_with_bad_paths_writes_nothing_anywhere(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    planted = tmp_path / "planted.html"
    files = {
        "index.html": "<title>Fine</title>",
        str(planted): "<p>planted</p>",  # an absolute path: the old hole
        "/" + str(planted): "<p>planted twice</p>",
        "../../../planted.html": "<p>up</p>",
        "a\x00.html": "<p>nul</p>",
    }
    with pytest.raises(DeployRefused) as refused:
        service.deploy(ada, files, app="fine")
    sentence = refused.value.sentence
    # a long path is shortened where it is quoted, as every caller's text is
    assert f"{shown(str(planted))} is not a file of the app — it is absolute" in sentence
    assert "../../../planted.html is not a file of the app" in sentence
    assert "a\\x00.html is not a file of the app — a path has no control characters" in sentence
    assert not planted.exists()
    with pytest.raises(NotFound):
        service.gate.app_info(ada, "fine")


def test_app_files_and_pages_read_nothing_outside_the_version(
    service: Service, ada: Caller
) -> None:
    service.deploy(ada, RUNS)
    for path in ("//etc/passwd", "/etc/passwd", "../../platform.db", "..\\..\\platform.db"):
        with pytest.raises(UsageError, match="is not a file of the app"):
            service.apps.files(ada, "runs", path)
        with pytest.raises(UsageError, match="is not a file of the app"):
            service.pages.page(ada, "ada", "runs", path)


def test_deploying_a_folder_refuses_links_that_lead_out_or_nowhere(
    service: Service, ada: Caller, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("the server's own secret")
    folder = tmp_path / "linked"
    folder.mkdir()
    (folder / "index.html").write_text("<title>Linked</title>")
    (folder / "real.css").write_text("p { color: red }")
    os.symlink(outside, folder / "stolen.txt")
    os.symlink(tmp_path / "nothing-here", folder / "dangling.txt")
    os.symlink(tmp_path, folder / "everything")
    os.symlink("real.css", folder / "alias.css")  # inside: its content is the app's
    with pytest.raises(DeployRefused) as refused:
        service.deploy(ada, folder)
    assert refused.value.problems == [
        "everything is a link to a folder — deploy copies files, not links; copy the folder "
        "in instead",
        f"dangling.txt is a link to nothing ({shown(str(tmp_path / 'nothing-here'))}) — remove it",
        f"stolen.txt is a link to {shown(str(outside))}, outside the folder — copy the file in "
        "instead",
    ]
    for link in ("stolen.txt", "dangling.txt", "everything"):
        os.unlink(folder / link)
    service.deploy(ada, folder)
    assert service.apps.files(ada, "linked", "alias.css").text == "p { color: red }"
    assert "the server's own secret" not in repr(service.apps.files(ada, "linked").data)
