"""`pasture demo` (what `make run` calls): deploy the examples, make a token, and serve.

Every run deploys each example again, so its version goes up by one; the data
the apps hold is kept in their stores across runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pasture.errors import PastureError


def demo(args: argparse.Namespace) -> int:
    from pasture.cli._opening import (
        apart_line,
        home_of,
        keep_served,
        open_service,
        serve,
        server_log,
    )
    from pasture.faults import check_writable

    server_log(args.log_format)
    check_writable(home_of(args))
    url = f"http://{args.host}:{args.port}"
    service = open_service(args, url)
    owner = service.local_owner()
    keep_served(service, home_of(args))  # the verbs run beside it name its addresses
    examples = Path(args.examples)
    folders = sorted(p for p in examples.iterdir() if p.is_dir() and not p.name.startswith("."))
    print(f"deploying {len(folders)} example apps from {examples}/ into {home_of(args)}")
    for folder in folders:
        try:
            print("  " + service.deploy(owner, folder).text.replace("\n", "\n    "))
        except PastureError as e:
            print(f"  {folder.name} was not deployed: {e.sentence}", file=sys.stderr)
    from pasture.platform import confinement

    print(f"app code (worker.py) runs {confinement().describe()}")
    token = service.new_token(owner, "make run")
    link = service.sign_in_link(owner)
    stdio = {
        "mcpServers": {
            "pasture": {
                "command": sys.executable,
                "args": ["-m", "pasture", "mcp"],
                # the addresses its answers name are this server's
                "env": {
                    "PASTURE_HOME": str(home_of(args).resolve()),
                    "PASTURE_PUBLIC_URL": url,
                    **(
                        {"PASTURE_APPS_DOMAIN": service.origins.apps_domain}
                        if service.origins.apps_domain
                        else {}
                    ),
                },
            }
        }
    }
    http = {
        "mcpServers": {
            "pasture": {
                "type": "http",
                "url": f"{url}/mcp",
                "headers": {"Authorization": f"Bearer {token}"},
            }
        }
    }
    oauth = {"mcpServers": {"pasture": {"type": "http", "url": f"{url}/mcp"}}}
    apart = apart_line(service)
    print(
        f"""
pasture is serving at {url}/ as {owner.name}; {apart}

token (shown once): {token}
sign in in a browser (once, within ten minutes): {url}/signin?link={link}

point an agent at it, with an MCP client's config:
  over stdio:  {json.dumps(stdio)}
  over HTTP:   {json.dumps(http)}
  or, for a client that signs in with OAuth (it opens this server's consent page):
               {json.dumps(oauth)}

stop with Ctrl-C""",
        flush=True,
    )
    serve(service, args)
    return 0
