"""`pasture password` with its password piped in, as a script sets it: one line on
standard input, no prompt, and the password it set is the one the sign-in page takes."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from helpers.processes import Pasture, running_server


@pytest.mark.processes
def test_a_password_piped_in_is_set_and_signs_in(tmp_path: Path) -> None:
    home = tmp_path / "home"
    pasture = Pasture(home)  # a process of its own: its standard input a pipe
    piped = pasture("password", input="correct horse\n")
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.startswith("password set for ada: sign in at ")
    assert piped.stderr == ""
    with running_server(home, PASTURE_USER="ada") as url:
        signed = httpx.post(f"{url}/signin", data={"name": "ada", "password": "correct horse"})
        refused = httpx.post(f"{url}/signin", data={"name": "ada", "password": "correct horse\n"})
    assert "pasture_session=" in signed.headers.get("set-cookie", "")
    assert "pasture_session=" not in refused.headers.get("set-cookie", "")


@pytest.mark.processes
def test_nothing_piped_in_is_a_sentence_not_an_eof_error(tmp_path: Path) -> None:
    empty = Pasture(tmp_path / "home")("password", input="")
    assert empty.returncode == 2
    assert empty.stderr.strip() == (
        "no password on standard input — send it as one line (echo … | pasture password), "
        "or give --password"
    )
    short = Pasture(tmp_path / "home")("password", input="short\n")
    assert (short.returncode, short.stderr.strip()) == (
        2,
        "a password is at least 8 characters long",
    )
