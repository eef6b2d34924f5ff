"""Where `pasture serve` puts apps' pages when it is told no domain, and what it says of it.

On an address that is this machine's alone, each app gets an origin of its own under
`localhost` (a browser reaches any `*.localhost` name there with no setup); anywhere
else, or told `--apps-domain none`, pages are sandboxed, and the start says what that
costs a page in the words a sandboxed page's console says it in. In-process: the
browser side is tests/web/test_webmcp_served.py's.
"""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from pasture.cli._opening import apart_line, given_apps_domain, serving_apps_domain
from pasture.platform import SANDBOXED_PAGES, on_loopback
from pasture.platform.apps.origins import Origins


@pytest.mark.parametrize(
    ("url", "alone"),
    [
        ("http://127.0.0.1:8000", True),
        ("http://127.3.2.1:8000", True),
        ("http://localhost:8000", True),
        ("http://pasture.localhost", True),
        ("http://[::1]:8000", True),
        ("http://0.0.0.0:8000", False),
        ("http://192.168.1.20:8000", False),
        ("https://pasture.example.org", False),
        ("http://localhost.example.org", False),
    ],
)
def test_an_address_is_on_loopback_when_it_is_this_machines_alone(url: str, alone: bool) -> None:
    assert on_loopback(url) is alone


def _args(**given: Any) -> argparse.Namespace:
    return argparse.Namespace(apps_domain=given.get("apps_domain"))


@pytest.mark.parametrize(
    ("url", "given", "env", "domain"),
    [
        ("http://127.0.0.1:8000", None, None, "localhost"),
        ("http://localhost:9000", None, None, "localhost"),
        ("http://0.0.0.0:8000", None, None, None),
        ("https://pasture.example.org", None, None, None),
        ("http://127.0.0.1:8000", "apps.example.org", None, "apps.example.org"),
        ("http://127.0.0.1:8000", "none", None, None),
        ("http://127.0.0.1:8000", "None", None, None),
        ("http://127.0.0.1:8000", None, "none", None),
        ("http://127.0.0.1:8000", None, "apps.example.org", "apps.example.org"),
        ("https://pasture.example.org", None, "apps.example.org", "apps.example.org"),
    ],
)
def test_serve_picks_localhost_on_loopback_unless_told(
    monkeypatch: pytest.MonkeyPatch, url: str, given: str | None, env: str | None, domain: str
) -> None:
    if env is None:
        monkeypatch.delenv("PASTURE_APPS_DOMAIN", raising=False)
    else:
        monkeypatch.setenv("PASTURE_APPS_DOMAIN", env)
    args = _args(apps_domain=given)
    serving_apps_domain(args, url)
    assert given_apps_domain(args) == domain


class _Serving:
    """What `apart_line` reads of a Service: where its apps are."""

    def __init__(self, base_url: str, apps_domain: str | None) -> None:
        self.origins = Origins(base_url, apps_domain)


def test_the_start_says_where_apps_pages_are_and_what_sandboxed_costs() -> None:
    def said(base_url: str, domain: str | None) -> str:
        return apart_line(_Serving(base_url, domain))  # type: ignore[arg-type]

    assert said("http://127.0.0.1:8000", "localhost") == (
        "each app on an origin of its own, as http://APP--SPACE.localhost:8000/"
    )
    assert said("https://pasture.example.org", "apps.example.org") == (
        "each app on an origin of its own, as https://APP--SPACE.apps.example.org/"
    )
    plain = said("http://pasture.example.org", "apps.example.org")
    assert plain.startswith("each app on an origin of its own, as http://APP--SPACE.apps")
    assert plain.endswith(
        "(over plain HTTP a browser offers WebMCP only on localhost: serve the apps' "
        "origins over HTTPS for agents in the browser)"
    )
    assert said("http://0.0.0.0:8000", None) == SANDBOXED_PAGES
    assert "no WebMCP tools" in SANDBOXED_PAGES and "--apps-domain" in SANDBOXED_PAGES
