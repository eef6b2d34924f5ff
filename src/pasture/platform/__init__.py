"""The platform: people, spaces, apps and their commands, and the `Service` every door calls.

This package's own names are what a door (the command line, the web, MCP) may use of
it, and the only way a door reaches the platform (`scripts/layers.py` holds them to it):
the façade and its parts, and the nouns its answers are made of. Inside, one folder per
concern (`docs/architecture.md` has the map):

    auth/      who is asking: people, sessions, tokens, OAuth, client documents, passes
    access/    who may do what, and how fast: the gate, spaces, limits, the audit
    apps/      an app's life: deploy and versions, files and pages, origins, secrets
    workers/   other people's code: worker.py in confined processes of its own
    db/        the platform's own database on SQLite or PostgreSQL, and the bus

and on top the parts every concern shares: `service` (the façade), `catalog` (what
the database says of apps), `listing` and `running` (commands found and run), `graph`
(an app's store, read and written as the caller) and `nouns`.

Each name is imported on first use, so a process that needs one part (a worker, the
command line's `--help`) loads no other.
"""

from __future__ import annotations

from pasture._lazy import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pasture.platform.access.limits import Rate, Rates, most
    from pasture.platform.apps.origins import PASS_MARK, SANDBOX, SANDBOXED_PAGES, on_loopback
    from pasture.platform.apps.rewrite import with_base
    from pasture.platform.auth.client_documents import is_document_id
    from pasture.platform.auth.tokens import scope_words
    from pasture.platform.backups import restore_backup
    from pasture.platform.backups.scheduled import seconds_of
    from pasture.platform.db.bus import Change
    from pasture.platform.listing import Offered, arguments_of, kind_of
    from pasture.platform.nouns import (
        ACCESS_SAID,
        ACCESSES,
        READ_ONLY_GRANT,
        ROLES,
        SIGN_IN,
        VIEWER_WRITES,
        Access,
        AppInfo,
        CommandInfo,
        Page,
        Resolved,
        Role,
    )
    from pasture.platform.service import Service
    from pasture.platform.workers.sandbox import Limits, confinement

_NOUNS = "pasture.platform.nouns"
_LIMITS = "pasture.platform.access.limits"
_LISTING = "pasture.platform.listing"
_ORIGINS = "pasture.platform.apps.origins"
__getattr__ = lazy_names(
    globals(),
    {
        "Service": "pasture.platform.service",
        **{
            name: _NOUNS
            for name in (
                "ACCESS_SAID",
                "ACCESSES",
                "READ_ONLY_GRANT",
                "ROLES",
                "SIGN_IN",
                "VIEWER_WRITES",
                "Access",
                "AppInfo",
                "CommandInfo",
                "Page",
                "Resolved",
                "Role",
            )
        },
        **{name: _LISTING for name in ("Offered", "arguments_of", "kind_of")},
        **{name: _LIMITS for name in ("Rate", "Rates", "most")},
        "Limits": "pasture.platform.workers.sandbox",
        "confinement": "pasture.platform.workers.sandbox",
        "Change": "pasture.platform.db.bus",
        "with_base": "pasture.platform.apps.rewrite",
        "PASS_MARK": _ORIGINS,
        "SANDBOX": _ORIGINS,
        "SANDBOXED_PAGES": _ORIGINS,
        "on_loopback": _ORIGINS,
        "scope_words": "pasture.platform.auth.tokens",
        "restore_backup": "pasture.platform.backups",
        "seconds_of": "pasture.platform.backups.scheduled",
        "is_document_id": "pasture.platform.auth.client_documents",
    },
)

__all__ = [
    "ACCESSES",
    "ACCESS_SAID",
    "PASS_MARK",
    "READ_ONLY_GRANT",
    "ROLES",
    "SANDBOX",
    "SANDBOXED_PAGES",
    "SIGN_IN",
    "VIEWER_WRITES",
    "Access",
    "AppInfo",
    "Change",
    "CommandInfo",
    "Limits",
    "Offered",
    "Page",
    "Rate",
    "Rates",
    "Resolved",
    "Role",
    "Service",
    "arguments_of",
    "confinement",
    "is_document_id",
    "kind_of",
    "most",
    "on_loopback",
    "restore_backup",
    "scope_words",
    "seconds_of",
    "with_base",
]
