"""The `pasture` command line: a thin door onto `Service`, acting as the machine's owner.

Every verb parses its words, makes one call on `Service` and prints the
`Result`: its text for people, its data with `--json`. A `Refused` prints its
sentence to stderr and exits with the error's own exit code; anything else is
one line and exit 1, never a traceback. Every module but argparse is imported only
inside the verbs that use it — the heavy ones (uvicorn, starlette, the MCP SDK,
rich) and the light ones alike — and a verb's parser is made only when the command
line names it (`pasture.cli._verbs`), so `pasture --help` starts fast.
"""

from __future__ import annotations

import argparse
import os
import sys

from pasture.cli._opening import (
    apart_line,
    home_of,
    keep_served,
    open_service,
    run,
    serve,
    server_log,
    serving_apps_domain,
)
from pasture.cli._verbs import Help, Later, Verbs
from pasture.version import __version__

TYPE_CHECKING = False  # not typing's: importing typing costs `pasture --help` a millisecond
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from pasture.caller import Caller
    from pasture.platform import Service
    from pasture.result import Result

    Verb = Callable[[argparse.Namespace], int]


def show(args: argparse.Namespace, result: Result, *, data: bool = False) -> int:
    """Print a result: its data as JSON with --json, else its text and its rows as a table;
    with `data`, its text (when it has one) and all its data formatted."""
    if getattr(args, "json", False):
        import json

        print(json.dumps(result.data, indent=2, ensure_ascii=False, default=str))
        return 0
    if data:
        from pasture.cli._render import command_answer

        command_answer(result.text, result.data)
        return 0
    print(result.text)
    rows = result.data.get("rows")
    if isinstance(rows, list) and rows:
        from pasture.cli._render import rows_table

        rows_table(rows)
        if result.data.get("more"):  # said again where a person looks after a page of rows
            print(result.text)
    return 0


# -- the verbs ---------------------------------------------------------------
def do_deploy(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pasture.cli._watching import draws_on, watched

    service = open_service(args)
    with watched(bar=draws_on() and not args.json) as long_call:  # a big app takes seconds
        result = service.deploy(
            service.local_owner(),
            Path(args.dir),
            space=args.space,
            app=args.app,
            access=args.access,
            title=args.title,
            long_call=long_call,
        )
    return show(args, result)


def do_commands(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.listing.list_commands(service.local_owner(), args.app))


def do_inspect(args: argparse.Namespace) -> int:
    """The tools an agent is offered: of this machine's apps, or with --url of a running
    server's (its `/api/tools`, as the token's person). A table, or `--json` as served."""
    import json

    app = args.app_name or args.app
    if args.url:
        from pasture.cli._inspect import tools_at

        token = args.token or os.environ.get("PASTURE_TOKEN") or None
        commands = tools_at(args.url, app, token)
    else:
        service = open_service(args)
        commands = service.listing.list_commands(service.local_owner(), app).data["commands"]
    if args.json:
        print(json.dumps({"commands": commands}, indent=2, ensure_ascii=False))
        return 0
    from pasture.cli._render import tools_table

    tools_table(commands)
    return 0


def do_query(args: argparse.Namespace) -> int:
    """Read an app's data with a filter, as MCP's `graph_query` and `./api/query` do."""
    service = open_service(args)
    token = args.token or os.environ.get("PASTURE_TOKEN")
    caller = service.caller_for_token(token).at_door("cli") if token else service.local_owner()
    return show_query(service.graph.query(caller, args.app, args.filter), as_json=args.json)


def show_query(result: Result, *, as_json: bool) -> int:
    """A query's answer: how many rows and the rows as a table, or with `as_json` JSON
    lines, one row a line. Data without rows (an aggregate's) is `key: value` lines, or
    its one JSON line. A page cut short says so: its line again under the table (where a
    person looks once a page of rows has scrolled past), or, as JSON, a last line that is
    no row, `{"more": true, "cursor": …}`."""
    rows = result.data.get("rows")
    more = bool(result.data.get("more"))
    if as_json:
        import json

        lines = list(rows) if isinstance(rows, list) else [result.data]
        if isinstance(rows, list) and more:
            lines.append({"more": True, "cursor": result.data.get("cursor")})
        for line in lines:
            print(json.dumps(line, ensure_ascii=False, default=str))
        return 0
    print(result.text)
    from pasture.cli._render import key_values, rows_table

    if isinstance(rows, list):
        if rows:
            rows_table(rows)
            if more:
                print(result.text)
    elif result.data:
        key_values(result.data)
    return 0


def do_command(args: argparse.Namespace) -> int:
    from pasture.cli._words import command_name, run_words, split_words

    service = open_service(args)
    owner = service.local_owner()
    name, rest = args.name, list(args.words)
    if rest and not rest[0].startswith("-"):
        # `cart add V60-02 2`, unquoted, is cart_add as the console reads it.
        app = split_words(rest).app or args.app
        names = {o.command.agent_name for o in service.listing.offered(owner, app)}
        name, rest = command_name([name, *rest], names)
    words = split_words(rest)
    args.json = args.json or words.json
    words.app = words.app or args.app
    words.yes = words.yes or args.yes
    confirm = ask if sys.stdin.isatty() else None  # piped: no one to ask, so --yes or nothing
    # Its progress drawn at a terminal (not with --json), and Ctrl-C stops it.
    bar = sys.stderr.isatty() and not args.json
    result, command = run_words(service, owner, name, words, confirm, bar=bar)
    # A code command's answer is its data, and its text a line for people beside it.
    return show(args, result, data=command.family == "code")


def ask(what: str) -> bool:
    """Show what is about to run and ask; only y or yes runs it."""
    print(f"about to run: {what}", file=sys.stderr)
    try:
        answer = input("run it? [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def do_status(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.listing.status(service.local_owner()))


def do_app_list(args: argparse.Namespace) -> int:
    service = open_service(args)
    apps = service.gate.list_apps(service.local_owner())
    if args.json:
        import json

        data = [a.as_data() for a in apps]
        print(json.dumps({"apps": data}, indent=2, ensure_ascii=False))
        return 0
    if not apps:
        print("you have no apps yet — deploy one with pasture deploy DIR")
        return 0
    from pasture.cli._render import apps_table

    apps_table(apps)
    return 0


def do_app_files(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.apps.files(service.local_owner(), args.app, args.path))


def do_app_rollback(args: argparse.Namespace) -> int:
    from pasture.cli._watching import draws_on, watched

    service = open_service(args)
    with watched(bar=draws_on() and not args.json) as long_call:  # an index to make: seconds
        result = service.rollback(
            service.local_owner(), args.app, args.version, long_call=long_call
        )
    return show(args, result)


def do_app_restore(args: argparse.Namespace) -> int:
    from pasture.cli._watching import draws_on, watched

    service = open_service(args)
    caller = _acting(service, args)
    with watched(bar=draws_on() and not args.json) as long_call:  # a big store takes seconds
        result = service.restore_app(caller, args.app, args.to, long_call=long_call)
    return show(args, result)


def do_undo(args: argparse.Namespace) -> int:
    from pasture.cli._watching import draws_on, watched

    service = open_service(args)
    caller = _acting(service, args)
    with watched(bar=draws_on() and not args.json) as long_call:  # a big call takes seconds
        result = service.undo(caller, args.call, args.app, long_call=long_call)
    return show(args, result)


def _acting(service: Service, args: argparse.Namespace) -> Caller:
    """Who a verb acts as: the person `--token` (or `$PASTURE_TOKEN`) is of, else the
    machine's owner."""
    token = getattr(args, "token", None) or os.environ.get("PASTURE_TOKEN")
    return service.caller_for_token(token).at_door("cli") if token else service.local_owner()


def do_app_set(args: argparse.Namespace) -> int:
    service = open_service(args)
    caller = _acting(service, args)
    return show(args, service.change_app(caller, args.app, title=args.title, access=args.access))


def do_app_remove(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.remove_app(service.local_owner(), args.app))


def do_space_remove(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.remove_space(service.local_owner(), args.name))


def do_trash_list(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.trash.listing(service.local_owner()))


def do_trash_restore(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.restore_from_trash(service.local_owner(), args.name))


def do_app_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pasture.cli._watching import draws_on, watched

    service = open_service(args)
    with watched(bar=draws_on() and not args.json) as long_call:  # a bar for a big app
        result = service.export_app(
            service.local_owner(), args.app, Path(args.file), long_call=long_call
        )
    return show(args, result)


def do_app_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pasture.cli._watching import draws_on, watched

    service = open_service(args)
    with watched(bar=draws_on() and not args.json) as long_call:
        result = service.import_app(
            service.local_owner(),
            Path(args.file),
            space=args.space,
            slug=args.as_slug,
            long_call=long_call,
        )
    return show(args, result)


def do_space_new(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.spaces.new_space(service.local_owner(), args.name))


def do_space_trust(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.trust_space(service.local_owner(), args.name, True))


def do_space_untrust(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.trust_space(service.local_owner(), args.name, False))


def do_secret_set(args: argparse.Namespace) -> int:
    if sys.stdin.isatty():
        import getpass

        value = getpass.getpass(f"{args.name}: ")
    else:
        value = sys.stdin.read()
        value = value[:-1] if value.endswith("\n") else value  # what `echo` adds
    service = open_service(args)
    return show(args, service.secrets.set(service.local_owner(), args.app, args.name, value))


def do_secret_list(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.secrets.list(service.local_owner(), args.app))


def do_secret_rm(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.secrets.remove(service.local_owner(), args.app, args.name))


def do_member_list(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.spaces.members(_acting(service, args), args.space))


def do_space_list(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.spaces.listing(_acting(service, args)))


def do_user_list(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.people.listing(_acting(service, args)))


def do_member_remove(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.remove_member(service.local_owner(), args.space, args.user))


def do_user_remove(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.remove_user(service.local_owner(), args.name))


def do_signin(args: argparse.Namespace) -> int:
    from pasture.result import Result

    service = open_service(args, args.public_url)  # else the address the server serves at
    code = service.sign_in_link(service.local_owner(), args.user)
    link = f"{service.origins.base_url.rstrip('/')}/signin?link={code}"
    return show(
        args,
        Result(f"{link}\n(opens once, within ten minutes, in one browser)", {"link": link}),
    )


def do_member_add(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.add_member(service.local_owner(), args.space, args.user, args.role))


def do_user_new(args: argparse.Namespace) -> int:
    from pasture.result import Result

    service = open_service(args)
    user = service.people.new_user(service.local_owner(), args.name, args.password)
    space = service.spaces.of(user)[0][0] if service.spaces.of(user) else args.name
    text = f"user {user.name} added, with a space of their own: {space}"
    if not args.password:
        text += f"; set their web password with pasture password --user {user.name}"
    return show(args, Result(text, {"name": user.name, "eid": user.eid, "space": space}))


def do_password(args: argparse.Namespace) -> int:
    password = args.password
    if password is None and not sys.stdin.isatty():
        # piped (`echo … | pasture password`): the first line is the password, no prompt
        lines = sys.stdin.read().splitlines()
        password = lines[0] if lines else ""
        if not password:
            from pasture.errors import UsageError

            raise UsageError(
                "no password on standard input — send it as one line "
                "(echo … | pasture password), or give --password"
            )
    if password is None:
        import getpass

        password = getpass.getpass("new password: ")
        if getpass.getpass("again: ") != password:
            from pasture.errors import UsageError

            raise UsageError("the two passwords differ — nothing was changed; try again")
    service = open_service(args)
    return show(args, service.people.set_password(service.local_owner(), password, args.user))


def do_token_new(args: argparse.Namespace) -> int:
    from pasture.platform import scope_words
    from pasture.result import Result

    if args.label and args.label_option and args.label != args.label_option:
        from pasture.errors import UsageError

        raise UsageError(
            f"two labels given ({args.label} and --label {args.label_option}) — give one"
        )
    label = args.label or args.label_option or "agent"
    service = open_service(args)
    owner = service.local_owner()
    spaces = args.space or None
    token = service.new_token(owner, label, writes=not args.read, spaces=spaces, user=args.user)
    who = args.user or owner.name
    scope = scope_words(not args.read, None if spaces is None else frozenset(spaces))
    return show(
        args,
        Result(
            f"{token}\n(a token for {who} that {scope}, shown once: send it as "
            "Authorization: Bearer <token>)",
            {"token": token, "user": who, "label": label, "scope": scope},
        ),
    )


def do_token_list(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.tokens(service.local_owner(), args.user))


def do_token_revoke(args: argparse.Namespace) -> int:
    service = open_service(args)
    return show(args, service.revoke_token(service.local_owner(), args.id, args.user))


def do_serve(args: argparse.Namespace) -> int:
    from pasture.faults import check_writable
    from pasture.values import server_zone

    if args.workers < 1:
        from pasture.errors import UsageError

        raise UsageError(f"--workers is how many processes serve: at least 1, not {args.workers}")
    server_log(args.log_format)
    check_writable(home_of(args))  # said now, not at the first write
    server_zone()  # likewise a time zone it does not know, not at the first `today`
    if args.backup_every:
        from pasture.platform import seconds_of

        seconds_of(args.backup_every, "--backup-every")  # said now, not when it is due
    url = args.public_url or f"http://{args.host}:{args.port}"
    serving_apps_domain(args, url)  # localhost on loopback, unless told (`--apps-domain`)
    service = open_service(args, url)
    service.local_owner()
    keep_served(service, home_of(args))  # every verb on this data names this address
    where = "its PostgreSQL database" if service.database_url else home_of(args)
    processes = f" in {args.workers} processes" if args.workers > 1 else ""
    print(f"pasture serving {where} at {url}/{processes}", flush=True)
    print(apart_line(service), flush=True)  # and, sandboxed, what that costs a page
    if args.workers > 1:
        from pasture.cli._serve_processes import serve_in_workers

        service.close()  # each worker opens its own, on the same data
        if args.metrics:  # each counts into one folder, and /metrics in any says all of it
            from pasture.metrics import share_between_processes

            share_between_processes()
        return serve_in_workers(args, args.workers)
    serve(service, args)
    return 0


def do_mcp(args: argparse.Namespace) -> int:
    from pasture.mcp import run_stdio

    server_log()  # stderr: MCP speaks on stdout
    service = open_service(args)
    token = args.token or os.environ.get("PASTURE_TOKEN")
    caller = service.caller_for_token(token) if token else service.local_owner()
    run_stdio(service, caller)
    return 0


def do_console(args: argparse.Namespace) -> int:
    from pasture.cli.console import run_console

    service = open_service(args)
    token = args.token or os.environ.get("PASTURE_TOKEN")
    caller = service.caller_for_token(token).at_door("cli") if token else service.local_owner()
    return run_console(service, caller, json_always=args.json)


def do_audit(args: argparse.Namespace) -> int:
    if args.app is None and not args.mine:
        from pasture.errors import UsageError

        raise UsageError("name an app (pasture audit SPACE/APP), or say --mine for your own calls")
    service = open_service(args)
    result = service.audit(
        service.local_owner(), args.app, args.since, mine=args.mine, limit=args.limit
    )
    records = result.data["records"]
    if args.json or not records:
        return show(args, result)
    from pasture.cli._render import audit_table

    print(result.text.splitlines()[0])
    audit_table(records, apps=args.app is None)
    return 0


def do_backup(args: argparse.Namespace) -> int:
    from pasture.cli._watching import draws_on, watched

    service = open_service(args)
    token = args.token or os.environ.get("PASTURE_TOKEN")
    caller = service.caller_for_token(token).at_door("cli") if token else service.local_owner()
    with watched(bar=draws_on() and not args.json) as long_call:  # a bar on a terminal
        result = service.backups.take(caller, args.file, long_call)
    return show(args, result)


def do_restore(args: argparse.Namespace) -> int:
    from pasture.cli._watching import draws_on, watched
    from pasture.platform import restore_backup

    # no Service: it would make the server that is to come out of the archive
    database = args.database or os.environ.get("PASTURE_DATABASE_URL") or None
    with watched(bar=draws_on() and not args.json) as long_call:
        result = restore_backup(
            args.file,
            home_of(args),
            database,
            key_file=args.key,
            without_secrets=args.without_secrets,
            long_call=long_call,
        )
    return show(args, result)


def do_completion(args: argparse.Namespace) -> int:
    from pasture.cli._shells import script

    sys.stdout.write(script(args.shell, build_parser()))
    return 0


def do_demo(args: argparse.Namespace) -> int:
    from pasture.cli._demo import demo

    return demo(args)


# -- the parser --------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pasture",
        formatter_class=Help,
        description="A self-hosted app platform whose apps carry commands.",
        epilog="The data directory is --home, $PASTURE_HOME, or ~/.local/share/pasture; "
        "with --database or $PASTURE_DATABASE_URL the data is in PostgreSQL.",
    )
    parser.add_argument(
        "--version", action="version", version=f"pasture {__version__}", help="say the version"
    )
    parser.add_argument("--home", metavar="DIR", help="the data directory")
    parser.add_argument(
        "--database",
        metavar="URL",
        help="keep everything in this PostgreSQL database (postgresql://user@host/db), "
        "shared by every server in front of it; else $PASTURE_DATABASE_URL, else SQLite "
        "files in the data directory",
    )
    common = argparse.ArgumentParser(add_help=False, formatter_class=Help)
    common.add_argument("--json", action="store_true", help="print the data as JSON")
    # also after the verb (`pasture serve --database URL`); not given, the one before stands
    common.add_argument(
        "--database", metavar="URL", default=argparse.SUPPRESS, help="a PostgreSQL database"
    )
    verbs = Verbs().attach(parser, dest="verb", metavar="VERB")

    def verb(parent: Verbs, name: str, run: Verb, summary: str, **kw: Any) -> Later:
        p = parent.add_parser(name, help=summary, description=summary, parents=[common], **kw)
        p.set_defaults(run=run)
        return p

    p = verb(verbs, "serve", do_serve, "serve every app, its API and /mcp over HTTP")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--public-url", metavar="URL", help="the address people reach it at")
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="serve in N processes behind the one port, sharing its data (1)",
    )
    p.add_argument(
        "--apps-domain",
        metavar="DOMAIN",
        help="serve each app on an origin of its own, <app>--<space>.DOMAIN (a wildcard DNS "
        "name for it, or localhost: the default when serving on loopback); none: apps' "
        "pages sandboxed on the main origin, with no WebMCP",
    )
    p.add_argument(
        "--audit-days",
        type=float,
        metavar="DAYS",
        help="keep the audit of calls this many days (90; $PASTURE_AUDIT_DAYS); "
        "PASTURE_AUDIT=off keeps none",
    )
    p.add_argument(
        "--history-days",
        type=float,
        metavar="DAYS",
        help="keep what each call changed this many days, for undo and app restore (30; "
        "$PASTURE_HISTORY_DAYS); PASTURE_HISTORY=off keeps none",
    )
    p.add_argument(
        "--backup-every", metavar="WHILE", help="back the server up this often: 6h, 1d, 1w"
    )
    p.add_argument(
        "--backup-keep", type=int, default=7, metavar="N", help="the newest N backups kept (7)"
    )
    p.add_argument(
        "--backup-dir", metavar="DIR", help="where backups are kept (the data directory's backups/)"
    )
    rate_limits(p)
    worker_limits(p)
    hosting(p)

    p = verb(verbs, "mcp", do_mcp, "speak MCP on stdin/stdout, as the owner or a token's person")
    p.add_argument("--token", help="act as the person this token belongs to")

    p = verb(verbs, "console", do_console, "type commands at a prompt, with Tab completion")
    p.add_argument("--token", help="act as the person this token belongs to")

    p = verb(verbs, "deploy", do_deploy, "check an app's folder and install it as a new version")
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--space", help="the space to deploy into (default: your own)")
    p.add_argument("--app", help="the app's name (default: the folder's name)")
    p.add_argument("--access", choices=("private", "public", "open"))
    p.add_argument("--title", help="the app's title (default: index.html's <title>)")

    p = verb(verbs, "commands", do_commands, "list your apps' commands with their arguments")
    p.add_argument("--app", help="only this app (slug or space/slug)")

    p = verb(
        verbs,
        "command",
        do_command,
        "run a command: NAME a b, or NAME --who=a --miles=b",
        usage="pasture command NAME [ARGS…] [--app A] [--yes] [--json]",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("--app", help="the app, where two of yours have this command")
    p.add_argument(
        "--yes", action="store_true", help="run a command that is hard to undo without asking"
    )
    p.add_argument("words", nargs=argparse.REMAINDER, metavar="ARGS")

    p = verb(
        verbs,
        "query",
        do_query,
        "read an app's data with a filter, as you (or a token's person)",
        usage="pasture query APP FILTER [--token T] [--json]",
        epilog="Quote the filter for the shell: pasture query runs '.jog!&.jog.miles>=5'",
    )
    p.add_argument("app", metavar="APP", help="the app (slug or space/slug)")
    p.add_argument("filter", metavar="FILTER", help="the filter, like '.jog!&.created!'")
    p.add_argument("--token", help="act as the person this token belongs to")

    p = verb(
        verbs,
        "inspect",
        do_inspect,
        "the tools agents are offered: your apps', or a running server's with --url",
        usage="pasture inspect [APP] [--url URL [--token T]] [--json]",
    )
    p.add_argument("app_name", metavar="APP", nargs="?", help="only this app (slug or space/slug)")
    p.add_argument("--app", help=argparse.SUPPRESS)  # the older spelling of APP
    p.add_argument(
        "--url",
        help="a running server (http://host:8000) or an app's address on it (…/space/app/)",
    )
    p.add_argument("--token", help="who is asking at --url (default: $PASTURE_TOKEN)")

    verb(verbs, "status", do_status, "one line per app: version, title, size, access")

    app = verbs.add_parser(
        "app", help="your apps: list, files, set, rollback, restore, remove, export, import"
    )
    app_verbs = app.add_subparsers(dest="app_verb", metavar="VERB", required=True)
    verb(app_verbs, "list", do_app_list, "every app in your spaces")
    p = verb(app_verbs, "files", do_app_files, "an app's files, or one file's text")
    p.add_argument("app", metavar="SPACE/APP")
    p.add_argument("path", metavar="PATH", nargs="?")
    p = verb(app_verbs, "rollback", do_app_rollback, "make an earlier version current again")
    p.add_argument("app", metavar="SPACE/APP")
    p.add_argument("version", metavar="VERSION", type=_version)
    p = verb(
        app_verbs,
        "set",
        do_app_set,
        "change an app's title or access without a deploy (its owners and editors)",
        usage="pasture app set APP [--title T] [--access private|public|open] [--json]",
    )
    p.add_argument("app", metavar="APP", help="the app (slug or space/slug)")
    p.add_argument("--title", metavar="T", help="the title its pages and listings show")
    p.add_argument(
        "--access",
        choices=["private", "public", "open"],
        help="private: its space's members; public: anyone reads; open: anyone changes",
    )
    p.add_argument("--token", help="act as the person this token belongs to")
    p = verb(app_verbs, "remove", do_app_remove, "move an app to the trash for 30 days")
    p.add_argument("app", metavar="SPACE/APP")
    p = verb(
        app_verbs,
        "export",
        do_app_export,
        "write an app, every version kept and its data, to one file (its space's owners)",
    )
    p.add_argument("app", metavar="APP", help="the app (slug or space/slug)")
    p.add_argument("file", metavar="FILE", help="the file to write, not there yet: runs.tar.gz")
    p = verb(
        app_verbs,
        "import",
        do_app_import,
        "make an app from the file app export wrote, in a space you own",
    )
    p.add_argument("file", metavar="FILE", help="the file pasture app export wrote")
    p.add_argument("--space", help="a space you own to import it into (default: your own)")
    p.add_argument(
        "--as", dest="as_slug", metavar="SLUG", help="the app's name here (default: its own)"
    )
    p = verb(
        app_verbs,
        "restore",
        do_app_restore,
        "put an app's data back as it was at a moment (undoable)",
        usage="pasture app restore APP --to WHEN [--token T] [--json]",
    )
    p.add_argument("app", metavar="APP", help="the app (slug or space/slug)")
    p.add_argument(
        "--to",
        metavar="WHEN",
        required=True,
        help="the moment: '2 hours ago', 'today', 'yesterday 9pm', 2026-12-01T09:30",
    )
    p.add_argument("--token", help="act as the person this token belongs to")

    space = verbs.add_parser("space", help="spaces: list, new, trust, untrust, remove")
    space_verbs = space.add_subparsers(dest="space_verb", metavar="VERB", required=True)
    p = verb(space_verbs, "list", do_space_list, "the spaces you are in, your role in each")
    p.add_argument("--token", help="act as the person this token belongs to")
    p = verb(space_verbs, "new", do_space_new, "make a space, with you as its owner")
    p.add_argument("name", metavar="NAME")
    p = verb(
        space_verbs, "trust", do_space_trust, "let a space's apps run code (the server's owner)"
    )
    p.add_argument("name", metavar="NAME")
    p = verb(space_verbs, "untrust", do_space_untrust, "stop a space's apps running code")
    p.add_argument("name", metavar="NAME")
    p = verb(
        space_verbs, "remove", do_space_remove, "move a space and its apps to the trash for 30 days"
    )
    p.add_argument("name", metavar="NAME")

    # `pasture trash` alone lists, as `pasture trash list` does
    trash = verb(verbs, "trash", do_trash_list, "removed apps and spaces: list, restore")
    trash_verbs = trash.add_subparsers(dest="trash_verb", metavar="VERB")
    verb(trash_verbs, "list", do_trash_list, "what the trash holds of your spaces")
    p = verb(trash_verbs, "restore", do_trash_restore, "bring an app or a space back as it was")
    p.add_argument("name", metavar="SPACE/APP|SPACE")

    secret = verbs.add_parser("secret", help="apps' secrets: set, list, rm")
    secret_verbs = secret.add_subparsers(dest="secret_verb", metavar="VERB", required=True)
    p = verb(
        secret_verbs,
        "set",
        do_secret_set,
        "keep a secret for an app's code; the value is read from standard input",
    )
    p.add_argument("app", metavar="APP")
    p.add_argument("name", metavar="NAME")
    p = verb(secret_verbs, "list", do_secret_list, "an app's secrets by name, never their values")
    p.add_argument("app", metavar="APP")
    p = verb(secret_verbs, "rm", do_secret_rm, "forget one of an app's secrets")
    p.add_argument("app", metavar="APP")
    p.add_argument("name", metavar="NAME")

    member = verbs.add_parser("member", help="members of a space: list, add, remove")
    member_verbs = member.add_subparsers(dest="member_verb", metavar="VERB", required=True)
    p = verb(member_verbs, "list", do_member_list, "who is in a space of yours, and their roles")
    p.add_argument("space", metavar="SPACE")
    p.add_argument("--token", help="act as the person this token belongs to")
    p = verb(member_verbs, "add", do_member_add, "give a person a role in a space")
    p.add_argument("space", metavar="SPACE")
    p.add_argument("user", metavar="USER")
    p.add_argument("role", metavar="ROLE", choices=("owner", "editor", "viewer"))
    p = verb(member_verbs, "remove", do_member_remove, "take a person out of a space you own")
    p.add_argument("space", metavar="SPACE")
    p.add_argument("user", metavar="USER")

    user = verbs.add_parser("user", help="people: list, new, remove")
    user_verbs = user.add_subparsers(dest="user_verb", metavar="VERB", required=True)
    p = verb(user_verbs, "list", do_user_list, "everyone on this server (the server's owner)")
    p.add_argument("--token", help="act as the person this token belongs to")
    p = verb(user_verbs, "new", do_user_new, "add a person, with a space of their own")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--password", help="their web password (or set it later)")
    p = verb(
        user_verbs, "remove", do_user_remove, "take a person off the server: all their sign-ins end"
    )
    p.add_argument("name", metavar="NAME")

    p = verb(verbs, "signin", do_signin, "a one-time link that signs a browser in as you")
    p.add_argument("--public-url", metavar="URL", help="the address the browser reaches")
    p.add_argument("--user", help="a link for another person (the server's owner only)")

    p = verb(
        verbs,
        "password",
        do_password,
        "set your web password (asks for it, or reads a line piped in)",
    )
    p.add_argument("--password", help="the new password, instead of asking")
    p.add_argument("--user", help="set another person's password (the server's owner only)")

    token = verbs.add_parser("token", help="tokens for agents and the API: new, list, revoke")
    token_verbs = token.add_subparsers(dest="token_verb", metavar="VERB", required=True)
    p = verb(token_verbs, "new", do_token_new, "a new bearer token for you, shown once")
    p.add_argument("label", metavar="LABEL", nargs="?", help="what the token is for: laptop")
    p.add_argument("--label", dest="label_option", metavar="LABEL", help="the same, as an option")
    p.add_argument("--read", action="store_true", help="it only reads (else it reads and writes)")
    p.add_argument(
        "--space",
        action="append",
        metavar="SPACE",
        help="it reaches only this space (again for more); else all of yours",
    )
    p.add_argument("--user", help="make it for another person (the server's owner only)")
    p = verb(token_verbs, "list", do_token_list, "your tokens and OAuth grants; never a secret")
    p.add_argument("--user", help="another person's (the server's owner only)")
    p = verb(token_verbs, "revoke", do_token_revoke, "end a token or an OAuth grant at once")
    p.add_argument("id", metavar="ID", help="its id, as token list shows it")
    p.add_argument("--user", help="another person's (the server's owner only)")

    p = verb(
        verbs,
        "audit",
        do_audit,
        "an app's recorded calls (its space's owners), or --mine: your own",
        usage="pasture audit [APP] [--mine] [--since WHEN] [--limit N] [--json]",
    )
    p.add_argument("app", metavar="APP", nargs="?", help="the app (slug or space/slug)")
    p.add_argument("--mine", action="store_true", help="only your own calls, in every app")
    p.add_argument(
        "--since", metavar="WHEN", help="from this moment: 2026-12-01, 2026-12-01T09:30, 1h, 2d"
    )
    p.add_argument("--limit", type=int, default=100, help="the newest N calls (100)")

    p = verb(
        verbs,
        "undo",
        do_undo,
        "put back exactly what one call changed (its id, as pasture audit shows it)",
        usage="pasture undo CALL [--app APP] [--token T] [--json]",
    )
    p.add_argument("call", metavar="CALL", help="the call's id: 12 letters and digits")
    p.add_argument("--app", metavar="APP", help="its app, where the audit was off")
    p.add_argument("--token", help="act as the person this token belongs to")

    p = verb(verbs, "backup", do_backup, "one archive of the whole server, taken while it serves")
    p.add_argument("file", metavar="FILE", help="the archive to write (a .tar)")
    p.add_argument("--token", help="act as the person this token belongs to")

    p = verb(verbs, "restore", do_restore, "a backup into an empty data directory or database")
    p.add_argument("file", metavar="FILE", help="the archive pasture backup wrote")
    p.add_argument("--key", metavar="FILE", help="the backup.key of the server it was taken from")
    p.add_argument(
        "--without-secrets", action="store_true", help="restore all but apps' secrets (no key)"
    )

    p = verb(
        verbs,
        "completion",
        do_completion,
        "print Tab completion for your shell: source <(pasture completion bash)",
    )
    p.add_argument("shell", metavar="SHELL", choices=("bash", "zsh", "fish"))

    p = verb(verbs, "demo", do_demo, "deploy the example apps, make a token, and serve")
    p.add_argument("--examples", default="examples", metavar="DIR")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument(
        "--apps-domain",
        metavar="DOMAIN",
        default="localhost",
        help="each app on an origin of its own under it (localhost: nothing to set up); "
        "none: apps' pages sandboxed on the main origin, with no WebMCP",
    )
    rate_limits(p)
    worker_limits(p)
    hosting(p)
    return parser


def rate_limits(p: Later) -> None:
    """How fast callers may call this server (`pasture.platform.access.limits`)."""
    p.add_argument(
        "--rate",
        metavar="N/minute",
        help="calls a token, OAuth grant or signed-in person may make (600/minute; off)",
    )
    p.add_argument(
        "--rate-address", metavar="N/minute", help="calls from one address (1200/minute; off)"
    )
    p.add_argument(
        "--rate-open",
        metavar="N/minute",
        help="anonymous writes to open apps from one address (60/minute; off)",
    )
    p.add_argument(
        "--streams",
        metavar="N",
        help="live streams one person (signed out: one address) may hold open (100; off)",
    )


def hosting(p: Later) -> None:
    """What a server run for others needs: its disk bounded, the proxy in front of it named,
    its log and its metrics in the forms an operator's tools read."""
    p.add_argument(
        "--max-rows",
        type=int,
        metavar="N",
        help="rows one answer holds at most; one cut short says how to read on (1000)",
    )
    p.add_argument(
        "--versions-kept",
        type=int,
        metavar="N",
        help="versions of each app kept on disk, the ones rollback reaches (20)",
    )
    p.add_argument(
        "--space-quota",
        type=int,
        metavar="MB",
        help="disk a space's apps may use, every version kept counted (1024)",
    )
    p.add_argument(
        "--trust-proxy",
        action="append",
        metavar="ADDR",
        help="the address of a proxy in front of this server, whose X-Forwarded-For and "
        "X-Forwarded-Proto are believed (again for more); else no forwarding header is",
    )
    p.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="the server's log: lines for people (text), or one JSON object a line (json)",
    )
    p.add_argument(
        "--metrics",
        action="store_true",
        help="serve /metrics in Prometheus' text format, to the server's owner alone",
    )


def worker_limits(p: Later) -> None:
    """What one call of an app's code may use, on this server."""
    p.add_argument(
        "--worker-time", type=float, metavar="S", help="seconds a call of app code may take (10)"
    )
    p.add_argument(
        "--worker-cpu", type=float, metavar="S", help="seconds of CPU a call may use (10)"
    )
    p.add_argument(
        "--worker-memory", type=int, metavar="MB", help="memory of a worker process (512)"
    )
    p.add_argument(
        "--worker-processes",
        type=int,
        metavar="N",
        help="calls of one app's code at once, each in its own process (4)",
    )
    p.add_argument(
        "--worker-scratch",
        type=int,
        metavar="MB",
        help="scratch (/tmp and /dev/shm) a worker process may fill, across its calls (64)",
    )
    p.add_argument(
        "--worker-grace",
        type=float,
        metavar="S",
        help="seconds a call its caller stopped has to answer before it is ended (5)",
    )
    p.add_argument(
        "--worker-network",
        action="store_true",
        help="let app code reach the network (it cannot otherwise)",
    )


def _version(text: str) -> int:
    try:
        return int(text.lstrip("vV"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text} is not a version — say 3 or v3") from None


def verbs() -> list[str]:
    """Every verb of the command line, nested ones as `app list`."""
    found: list[str] = []

    def walk(parser: argparse.ArgumentParser, prefix: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers = action._name_parser_map  # each made as it is looked up
                for name in list(parsers):
                    before = len(found)
                    walk(parsers[name], f"{prefix}{name} ")
                    if len(found) == before:
                        found.append(f"{prefix}{name}")

    walk(build_parser(), "")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
    if getattr(args, "run", None) is None:
        parser.print_help()
        return 0 if args.verb is None else 2
    return run(args)
