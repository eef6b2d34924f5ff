"""Who is asking, at both HTTP doors of a real `pasture serve`: one reading of the
Authorization header (`pasture.caller.bearer`), and one sentence for a header that is not
`Bearer <token>`, on the web's API and on /mcp alike."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.club import as_user
from helpers.processes import running_server
from pasture.caller import BEARER_SHAPE
from pasture.platform.service import Service

# The server these tests share runs in a process of its own.
pytestmark = pytest.mark.processes

BAD_TOKEN = "that token is not one this server gave out — make one with pasture token new"
# Headers an HTTP client can send: printable ASCII, with spaces and tabs inside (HTTP
# trims them at either end before any server sees the value).
HEADER = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.just("\t")).map(
    lambda text: text.strip(" \t")
)
TOKEN = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=40)
SCHEME = st.sampled_from(["bearer", "Bearer", "BEARER", "beaRER"])
# A well-formed header, written apart from the parser: the scheme in any case, a space,
# then a token; spaces around the token are not part of it.
WELL_FORMED = re.compile(r"\s*bearer (\s*)(\S(?:.*\S)?)\s*", re.IGNORECASE | re.DOTALL)
EXAMPLES = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@dataclass
class Door:
    url: str
    token: str
    client: httpx.Client

    def web(self, header: str) -> tuple[int, str]:
        answer = self.client.get(f"{self.url}/api/tools", headers={"Authorization": header})
        return answer.status_code, answer.json().get("error", "")

    def mcp(self, header: str) -> tuple[int, str]:
        answer = self.client.post(
            f"{self.url}/mcp",
            headers={"Accept": "application/json, text/event-stream", "Authorization": header},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        )
        error = answer.json().get("error") or {}
        return answer.status_code, error.get("message", "")


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Door]:
    home = tmp_path_factory.mktemp("home")
    with as_user("ada"):
        service = Service(home)
        token = service.new_token(service.local_owner())
    service.close()
    with running_server(home) as url, httpx.Client(timeout=30) as client:
        yield Door(url, token, client)


@EXAMPLES
@given(header=HEADER)
def test_a_header_that_is_not_bearer_and_a_token_is_refused_alike_at_both_doors(
    door: Door, header: str
) -> None:
    expected = BAD_TOKEN if WELL_FORMED.fullmatch(header) else BEARER_SHAPE
    assert door.web(header) == (401, expected)
    assert door.mcp(header) == (401, expected)


@EXAMPLES
@given(scheme=SCHEME, token=TOKEN)
def test_bearer_in_any_case_then_a_token_is_read_as_that_token_at_both_doors(
    door: Door, scheme: str, token: str
) -> None:
    assert door.web(f"{scheme} {token}") == (401, BAD_TOKEN)
    assert door.mcp(f"{scheme} {token}") == (401, BAD_TOKEN)


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_a_persons_token_names_them_at_both_doors(door: Door, scheme: str) -> None:
    header = f"{scheme} {door.token}"
    assert door.web(header)[0] == 200
    status, error = door.mcp(header)
    assert (status, error) == (200, "")
