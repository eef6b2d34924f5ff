"""Which Host and Origin a request may name: this server's own, and nothing else.

Every route checks the Host header (`_Door` in `pasture.web.app`), not only
`/mcp`: a page on another name that resolves here — DNS rebinding — gets 421
and nothing is done. The names are the public URL's (`--public-url`), and any
loopback name and port when the server is bound to loopback; a server bound to
one address answers to that address too. With an apps domain, each app's own
origin — one label under that domain, on the same port — is this server's too.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from mcp.server.transport_security import TransportSecuritySettings

_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


@dataclass(frozen=True)
class Hosts:
    """The Host and Origin values this server answers; `name:*` stands for any port."""

    hosts: tuple[str, ...]
    origins: tuple[str, ...]
    apps: str | None = None  # `.apps.example.org:8000`: what an app origin's Host ends with

    @classmethod
    def of(cls, public_url: str, bind_host: str, apps_domain: str | None = None) -> Hosts:
        public = urlsplit(public_url)
        hosts: list[str] = []
        origins: list[str] = []
        if public.hostname:
            netloc = public.netloc.rsplit("@", 1)[-1].lower()
            hosts.append(netloc)
            origins.append(f"{public.scheme}://{netloc}")
            if public.port is None:
                # A client may spell the default port out.
                default = 443 if public.scheme == "https" else 80
                hosts.append(f"{netloc}:{default}")
                origins.append(f"{public.scheme}://{netloc}:{default}")
        loopback = bind_host in _LOOPBACK or bind_host.startswith("127.")
        if loopback or (public.hostname or "") in _LOOPBACK:
            for name in ("127.0.0.1", "localhost", "[::1]"):
                hosts += [name, f"{name}:*"]
                origins += [
                    f"http://{name}",
                    f"http://{name}:*",
                    f"https://{name}",
                    f"https://{name}:*",
                ]
        if bind_host not in ("0.0.0.0", "::", "") and not loopback:
            # Bound to one address: a client may reach it by that address too.
            hosts += [bind_host, f"{bind_host}:*"]
        apps = None
        if apps_domain:
            apps = f".{apps_domain.lower()}" + (f":{public.port}" if public.port else "")
        return cls(tuple(dict.fromkeys(hosts)), tuple(dict.fromkeys(origins)), apps)

    def allows(self, host: str | None) -> bool:
        """Whether a request's Host header names this server."""
        if not host:
            return False
        host = host.strip().lower()
        if host in self.hosts:
            return True
        if self.apps is not None and host.endswith(self.apps):
            label = host[: -len(self.apps)]
            return bool(label) and "." not in label and ":" not in label
        return any(
            pattern.endswith(":*")
            and host.startswith(pattern[:-1])
            and host[len(pattern) - 1 :].isdigit()
            for pattern in self.hosts
        )

    def settings(self) -> TransportSecuritySettings:
        """The same names, as the MCP SDK's own check of `/mcp` takes them."""
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=list(self.hosts),
            allowed_origins=list(self.origins),
        )
