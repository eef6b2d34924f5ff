"""Where an app's pages are served, so that no page can act with a visitor's session elsewhere.

Two ways, chosen per server:

- **An origin of its own** (`pasture serve --apps-domain DOMAIN`): each app at
  `<app>--<space>.DOMAIN` (the server's port kept), one DNS label — shortened
  with a hash where that would be longer than 63 characters or where a name
  holds `--` itself. The dashboard, sign-in and `/mcp` stay on the main
  origin. A visitor signs in to an app's origin through the main one: a
  one-time code exchanged for a cookie that only that origin holds.
- **Sandboxed** (no apps domain): pages stay at `/<space>/<app>/` on the main
  origin, served with a CSP `sandbox` that gives them an opaque origin, so
  the browser sends them no cookie of the server's; what they fetch carries a
  pass for that one app, in the `<base href>` the page was served with
  (`/<space>/<app>/~<pass>/`).

`pasture serve` on loopback and `make run` use `localhost` unless told another
domain (any `*.localhost` name reaches loopback in a browser with no setup);
`--apps-domain none` keeps pages sandboxed (`SANDBOXED_PAGES` says what that costs).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

LABEL = 63  # the longest DNS label
PASS_MARK = "~"  # a path segment `~<pass>` carries a page's pass (sandboxed pages)

# What a sandboxed page may do: run its scripts and forms, open what it links to — in an
# opaque origin of its own, with no access to the server's cookies or storage.
SANDBOX = "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads"

SANDBOXED_PAGES = (
    "apps' pages are sandboxed (no apps domain): each has an opaque origin, so it offers "
    "no WebMCP tools to a browser's agent and keeps no cookie or storage of its own — "
    "--apps-domain DOMAIN (localhost on one machine) gives each app an origin of its own"
)
"""What a sandboxed page cannot do, and how to have it: said by `pasture serve` as it
starts without an apps domain, and by a sandboxed page's WebMCP module."""

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")


def on_loopback(url: str) -> bool:
    """Whether an address is this machine's alone (`127.x`, `localhost`, `::1`): where any
    `*.localhost` name reaches the server in a browser with no setup."""
    name = (urlsplit(url).hostname or "").lower()
    return name in LOOPBACK_NAMES or name.startswith("127.") or name.endswith(".localhost")


@dataclass(frozen=True)
class Origins:
    """The main origin (`base_url`) and, when set, the domain apps get origins under."""

    base_url: str
    apps_domain: str | None = None

    @property
    def sandboxed(self) -> bool:
        """Pages share the main origin, sandboxed (no apps domain)."""
        return not self.apps_domain

    def label(self, space: str, slug: str) -> str:
        """The one DNS label an app's origin starts with."""
        plain = f"{slug}--{space}"
        # A DNS label ends in a letter or digit: a space named `team-` has a hashed one.
        if "--" not in slug and "--" not in space and len(plain) <= LABEL and plain[-1] != "-":
            return plain
        digest = hashlib.sha256(f"{space}/{slug}".encode()).hexdigest()[:10]
        # No `--` in a hashed label, where every plain one has it: another app's plain
        # label can never be this one (`notes-my--team-…` is `notes-my` of `team-…`).
        head = re.sub("-+", "-", f"{slug[:24].strip('-')}-{space[:24].strip('-')}")
        return f"{head}-{digest}"

    def origin(self, space: str, slug: str) -> str:
        """`http://runs--ada.localhost:8000`: the app's own origin (with an apps domain)."""
        main = urlsplit(self.base_url)
        port = f":{main.port}" if main.port else ""
        return f"{main.scheme}://{self.label(space, slug)}.{self.apps_domain}{port}"

    def url(self, space: str, slug: str) -> str:
        """The app's address, ending in `/`."""
        if self.apps_domain:
            return f"{self.origin(space, slug)}/"
        return f"{self.base_url}/{space}/{slug}/"

    def label_of(self, host: str | None) -> str | None:
        """The app label a Host header names under the apps domain, or None."""
        if not self.apps_domain or not host:
            return None
        name = host.strip().lower()
        if name.startswith("["):
            return None
        name = name.rsplit(":", 1)[0] if ":" in name else name
        suffix = "." + self.apps_domain.lower()
        if not name.endswith(suffix):
            return None
        label = name[: -len(suffix)]
        if not label or "." in label or len(label) > LABEL:
            return None
        return label


def apps_domain_of(text: str | None) -> str | None:
    """An `--apps-domain` value as a bare domain (no scheme, port or dots at its ends)."""
    if not text:
        return None
    name = text.strip().lower()
    if "://" in name:
        name = urlsplit(name).hostname or ""
    return name.strip(".") or None
