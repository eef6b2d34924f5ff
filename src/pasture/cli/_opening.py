"""What every verb of the command line shares: the data directory, the Service its options
open, the server's log, serving, and running a verb with its refusal printed.

`pasture.cli` (the verbs), `pasture.cli._demo` and each process of `pasture serve
--workers` (`pasture.cli._serve_processes`) use these; none of them imports another.
Every module but argparse, os and sys is imported inside the function that needs it,
so `pasture --help` starts fast.
"""

from __future__ import annotations

import argparse
import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs `pasture --help` a millisecond
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from pasture.platform import Rates, Service
    from pasture.web.serving import Server as WebServer

DEFAULT_HOME = "~/.local/share/pasture"


def home_of(args: argparse.Namespace) -> Path:
    """The data directory: --home, else $PASTURE_HOME, else ~/.local/share/pasture."""
    from pathlib import Path

    home = args.home or os.environ.get("PASTURE_HOME") or DEFAULT_HOME
    # Whole from the start: a worker's sandbox is given its folders by name, and a
    # relative one means nothing from where bubblewrap stands.
    return Path(home).expanduser().absolute()


# The Services a verb opened, closed by `run` when the verb is done: whatever it started
# (worker processes, the bus's listener, what the audit still has to write) ends with it.
_opened: list[Service] = []


SERVED = "served.json"
"""The file in the data directory where `serve` keeps the address it serves at."""

DEFAULT_URL = "http://127.0.0.1:8000"


def keep_served(service: Service, home: Path) -> None:
    """Keep, in the data directory, the address this server is reached at and its apps'
    domain, so that every verb run on the same data names the server's own addresses (a
    deploy's, a sign-in link's, an app's in `commands`), not 127.0.0.1:8000. Best done:
    a data directory that cannot take it has already been refused by `serve`."""
    import json
    import tempfile

    said = {"public_url": service.origins.base_url, "apps_domain": service.origins.apps_domain}
    try:
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=home, prefix=".served-", delete=False) as f:
            json.dump(said, f)
        os.replace(f.name, home / SERVED)  # whole or not at all, for a verb reading it now
    except OSError:
        pass


def kept_served(home: Path) -> tuple[str | None, str | None]:
    """The address and apps domain `serve` last kept in the data directory, or Nones."""
    import json

    try:
        said = json.loads((home / SERVED).read_text())
    except (OSError, ValueError):
        return None, None
    if not isinstance(said, dict):
        return None, None
    url, domain = said.get("public_url"), said.get("apps_domain")
    return (
        url if isinstance(url, str) and url else None,
        domain if isinstance(domain, str) and domain else None,
    )


def open_service(args: argparse.Namespace, base_url: str | None = None) -> Service:
    """The Service the options name, closed when the verb that opened it ends. Its address
    is `base_url`, else $PASTURE_PUBLIC_URL, else the one `serve` kept in the data
    directory (with its apps domain, unless one is given), else 127.0.0.1:8000."""
    from dataclasses import replace

    from pasture.platform import Limits, Service

    url = base_url or os.environ.get("PASTURE_PUBLIC_URL")
    kept_domain: str | None = None
    if not url:
        url, kept_domain = kept_served(home_of(args))
        url = url or DEFAULT_URL
    limits = Limits.from_env()
    given = {
        field: getattr(args, f"worker_{field}", None)
        for field in ("time", "cpu", "memory", "processes", "scratch", "grace")
    }
    limits = replace(limits, **{k: v for k, v in given.items() if v is not None})
    if getattr(args, "worker_network", False):
        limits = replace(limits, network=True)
    apps_domain = given_apps_domain(args)
    if apps_domain is None and not _apps_domain_said(args):
        apps_domain = kept_domain  # the served address's, told nothing else
    audit_days = getattr(args, "audit_days", None)  # else $PASTURE_AUDIT_DAYS, else 90
    # no --database: the Service reads $PASTURE_DATABASE_URL itself
    service = Service(
        home_of(args),
        database_url=args.database or None,
        base_url=url,
        limits=limits,
        apps_domain=apps_domain or None,
        audit_days=audit_days,
        rates=rates_of(args),
        versions_kept=getattr(args, "versions_kept", None),
        space_quota=getattr(args, "space_quota", None),
        max_rows=getattr(args, "max_rows", None),
        history_days=getattr(args, "history_days", None),
    )
    _opened.append(service)
    return service


NO_APPS_DOMAIN = "none"
"""`--apps-domain none` (or `$PASTURE_APPS_DOMAIN=none`): apps' pages sandboxed."""


def given_apps_domain(args: argparse.Namespace) -> str | None:
    """The apps domain `--apps-domain` or `$PASTURE_APPS_DOMAIN` says; None for none, or
    for `none` (apps' pages sandboxed on the main origin)."""
    given = getattr(args, "apps_domain", None) or os.environ.get("PASTURE_APPS_DOMAIN")
    if not given or given.strip().lower() == NO_APPS_DOMAIN:
        return None
    return str(given)


def _apps_domain_said(args: argparse.Namespace) -> bool:
    """Whether `--apps-domain` or `$PASTURE_APPS_DOMAIN` says anything (`none` too)."""
    return bool(getattr(args, "apps_domain", None) or os.environ.get("PASTURE_APPS_DOMAIN"))


def serving_apps_domain(args: argparse.Namespace, url: str) -> None:
    """`serve`'s apps domain: the one given, else `localhost` when the server's address is
    this machine's alone (a browser reaches any `*.localhost` name there with no setup), so
    each app has an origin of its own — and WebMCP — by default. Elsewhere, with no domain
    given, apps' pages stay sandboxed (`start_lines` says what that costs). Set on `args`,
    which each process of `serve --workers` is handed."""
    from pasture.platform import on_loopback

    given = getattr(args, "apps_domain", None) or os.environ.get("PASTURE_APPS_DOMAIN")
    if not given and on_loopback(url):
        args.apps_domain = "localhost"


def apart_line(service: Service) -> str:
    """What `serve` and `demo` say of where apps' pages are: an origin of each app's own, or
    sandboxed, with what a sandboxed page cannot do and how to have it."""
    from pasture.platform import SANDBOXED_PAGES, on_loopback

    origins = service.origins
    if not origins.apps_domain:
        return SANDBOXED_PAGES
    said = f"each app on an origin of its own, as {origins.url('SPACE', 'APP')}"
    if origins.base_url.startswith("http://") and not on_loopback(origins.url("SPACE", "APP")):
        # A browser offers WebMCP (and more) only to a secure context: HTTPS, or loopback.
        said += (
            " (over plain HTTP a browser offers WebMCP only on localhost: serve the apps' "
            "origins over HTTPS for agents in the browser)"
        )
    return said


_RATE_OPTIONS = {"caller": "rate", "address": "rate_address", "open_writes": "rate_open"}


def rates_of(args: argparse.Namespace) -> Rates | None:
    """The limits `--rate`, `--rate-address`, `--rate-open` and `--streams` set, over
    `$PASTURE_RATE…`; None when none is given (the Service reads the environment itself)."""
    given = {k: getattr(args, option, None) for k, option in _RATE_OPTIONS.items()}
    streams = getattr(args, "streams", None)
    if streams is None and all(v is None for v in given.values()):
        return None
    from dataclasses import replace

    from pasture.platform import Rate, Rates, most

    changed: dict[str, Any] = {
        k: Rate.parse(v, "--" + _RATE_OPTIONS[k].replace("_", "-"))
        for k, v in given.items()
        if v is not None
    }
    if streams is not None:
        changed["streams"] = most(streams, "--streams")
    return replace(Rates.from_env(), **changed)


def server_log(log_format: str = "text") -> None:
    """A server's log on stderr: what pasture says, and what its apps' code prints; as
    lines for people, or with `log_format="json"` one JSON object a line."""
    import logging

    from pasture.log_lines import formatter

    handler = logging.StreamHandler()
    # each record with the id of the request it was logged serving (pasture.request_ids)
    handler.setFormatter(formatter(log_format))
    log = logging.getLogger("pasture")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def web_server(service: Service, args: argparse.Namespace) -> WebServer:
    """The web door for `service` as `serve`'s options say: its host and port, the proxies
    whose forwarding headers are believed, its log's form, and whether /metrics is on."""
    from pasture.web import create_app
    from pasture.web.serving import Server

    host, port = args.host, args.port
    trusted = list(getattr(args, "trust_proxy", None) or [])
    every = getattr(args, "backup_every", None)
    if every:  # in each process serving; one of them takes each backup
        from pathlib import Path

        from pasture.platform import seconds_of

        folder = Path(args.backup_dir) if args.backup_dir else None
        service.backups.start_schedule(
            service.local_owner(), seconds_of(every, "--backup-every"), args.backup_keep, folder
        )
    app = create_app(service, bind_host=host, metrics=bool(getattr(args, "metrics", False)))
    return Server(app, host=host, port=port, trust_proxy=trusted)


def serve(service: Service, args: argparse.Namespace) -> None:
    """Serve until stopped, as the options say (`web_server`)."""
    web_server(service, args).run()


def run(args: argparse.Namespace) -> int:
    """Run the verb `args` names; its exit code, a refusal's sentence or one line on stderr."""
    from pasture.errors import PastureError

    opened = len(_opened)
    try:
        code: int = args.run(args)
        return code
    except PastureError as e:
        print(e.sentence, file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug: one line, never a traceback
        print(f"pasture: something went wrong ({type(e).__name__}: {e})", file=sys.stderr)
        return 1
    finally:
        while len(_opened) > opened:
            _opened.pop().close()
