"""The platform's own pages: sign-in, the dashboard, and the page for a refusal.

Plain server-rendered HTML. Everything that came from a person or an app is
passed through `html.escape`; the one inline script carries a nonce that the
page's Content-Security-Policy names, so no other script runs on these pages.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from html import escape
from typing import Any

from pasture.caller import Caller
from pasture.platform import AppInfo, arguments_of, kind_of
from pasture.values import TIME_FORMAT, type_of_property

_STYLE = """
:root { color-scheme: light dark; --line: #d6d3cc; --muted: #6b675f; --accent: #3d6b35; }
* { box-sizing: border-box; }
body { font: 16px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 60rem; padding: 1.5rem; }
header { display: flex; align-items: baseline; justify-content: space-between; gap: 1rem;
  border-bottom: 1px solid var(--line); margin-bottom: 1.5rem; }
header h1 { font-size: 1.4rem; margin: .5rem 0; }
header form { margin: 0; }
a { color: var(--accent); }
h2 { font-size: 1.15rem; margin: 2rem 0 .5rem; }
.app { border: 1px solid var(--line); border-radius: 8px; padding: 1rem; margin: 1rem 0; }
.app h3 { margin: 0 0 .25rem; font-size: 1.05rem; }
.meta, .hint { color: var(--muted); font-size: .875rem; }
.tag { border: 1px solid var(--line); border-radius: 999px; padding: 0 .5rem;
  font-size: .75rem; color: var(--muted); margin-left: .25rem; }
details.command { border-top: 1px solid var(--line); padding: .5rem 0; }
details.command summary { cursor: pointer; }
details.command code { font-weight: 600; }
label { display: block; margin: .5rem 0; }
label.check { display: flex; gap: .5rem; align-items: center; }
input[type=text], input[type=number], input[type=url], input[type=password] {
  display: block; width: 100%; max-width: 24rem; padding: .35rem .5rem; font: inherit;
  border: 1px solid var(--line); border-radius: 4px; }
button { font: inherit; padding: .3rem .9rem; border-radius: 4px; border: 1px solid var(--accent);
  background: var(--accent); color: white; cursor: pointer; }
button.quiet { background: none; color: var(--accent); }
.answer { margin-top: .5rem; }
.answer p { margin: .25rem 0; font-weight: 600; }
.answer p.refused { color: #a33; }
pre { background: rgba(127,127,127,.12); padding: .5rem; border-radius: 4px; overflow: auto;
  font-size: .8rem; max-height: 20rem; }
.error { color: #a33; font-weight: 600; }
"""

# Runs each dashboard form through the app's own ./api/command and shows the answer.
_SCRIPT = """
for (const form of document.querySelectorAll("form.run")) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const args = {};
    for (const input of form.querySelectorAll("input[data-arg]")) {
      const name = input.dataset.arg;
      if (input.type === "checkbox") { args[name] = input.checked; continue; }
      if (input.value === "") continue;
      args[name] = input.type === "number" ? Number(input.value) : input.value;
    }
    const out = form.querySelector(".answer");
    const line = document.createElement("p");
    const data = document.createElement("pre");
    out.replaceChildren(line);
    line.textContent = "running…";
    try {
      const response = await fetch(form.dataset.api, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ name: form.dataset.command, args }),
      });
      const body = await response.json();
      if (!response.ok) {
        line.className = "refused";
        line.textContent = body.error;
        return;
      }
      line.className = "";
      line.textContent = body.text;
      data.textContent = JSON.stringify(body.data, null, 2);
      out.append(data);
    } catch (error) {
      line.className = "refused";
      line.textContent = "the server could not be reached — check that pasture is running";
    }
  });
}
"""


def _page(title: str, body: str, nonce: str | None = None) -> str:
    script = f'<script nonce="{escape(nonce)}">{_SCRIPT}</script>' if nonce else ""
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body>{body}{script}</body></html>\n"
    )


def signin_page(
    error: str | None = None, name: str = "", *, app: str = "", next_path: str = ""
) -> str:
    """The sign-in form; with `app`, signing in goes on to that app's own origin, and with
    `next_path` alone to that page of this origin."""
    problem = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    onward = (f'<input type="hidden" name="app" value="{escape(app)}">' if app else "") + (
        f'<input type="hidden" name="next" value="{escape(next_path)}">' if next_path else ""
    )
    body = (
        "<header><h1>pasture</h1></header>"
        "<h2>Sign in</h2>"
        f"{problem}"
        '<form method="post" action="/signin">'
        f"{onward}"
        '<label>Name <input type="text" name="name" autocomplete="username" required '
        f'value="{escape(name)}" autofocus></label>'
        '<label>Password <input type="password" name="password" '
        'autocomplete="current-password" required></label>'
        '<button type="submit">Sign in</button>'
        "</form>"
        '<p class="hint">An agent or script signs in with a token instead: '
        "<code>pasture token new</code>, then <code>Authorization: Bearer …</code>.</p>"
    )
    return _page("Sign in · pasture", body)


def consent_page(
    asking_client: str,
    client_uri: str | None,
    redirect_host: str,
    request: str,
    asks_to_write: bool,
    spaces: Sequence[str],
    caller: Caller,
) -> str:
    """An OAuth client asks to act as the signed-in person: what, where; approve or deny."""
    site = f' (<a href="{escape(client_uri)}">{escape(client_uri)}</a>)' if client_uri else ""
    write = (
        '<label><input type="radio" name="scope" value="write" checked> read and write: '
        "run commands that change things, add and change data, deploy</label>"
        if asks_to_write
        else ""
    )
    read_checked = "" if asks_to_write else " checked"
    boxes = "".join(
        f'<label><input type="checkbox" name="spaces" value="{escape(s)}" checked> '
        f"{escape(s)}</label>"
        for s in spaces
    )
    body = (
        "<header><h1>pasture</h1>"
        f'<span class="meta">signed in as {escape(caller.name or "")}</span></header>'
        f"<h2>{escape(asking_client)} asks to reach your apps as you</h2>"
        f"<p><strong>{escape(asking_client)}</strong>{site} will be sent back to "
        f"<code>{escape(redirect_host)}</code>. It gets no more than you choose here, and "
        "you can end it at any time (<code>pasture token revoke</code>, or Tokens on the "
        "dashboard).</p>"
        '<form method="post" action="/oauth/consent">'
        f'<input type="hidden" name="request" value="{escape(request)}">'
        "<fieldset><legend>It may</legend>"
        f'<label><input type="radio" name="scope" value="read"{read_checked}> read only: '
        "list and read, never change</label>"
        f"{write}</fieldset>"
        f"<fieldset><legend>In these spaces of yours</legend>{boxes}</fieldset>"
        '<button type="submit" name="decision" value="approve">Approve</button> '
        '<button class="quiet" type="submit" name="decision" value="deny">Deny</button>'
        "</form>"
    )
    return _page(f"{asking_client} asks · pasture", body)


def tokens_page(
    caller: Caller,
    tokens: Sequence[Mapping[str, Any]],
    spaces: Sequence[str],
    made: str | None = None,
    problem: str | None = None,
) -> str:
    """A person's tokens and OAuth grants: make one (its secret shown once), revoke any."""
    shown = (
        '<p class="answer">Your new token, shown this once — copy it now: '
        f"<code>{escape(made)}</code></p>"
        if made
        else ""
    )
    error = f'<p class="error" role="alert">{escape(problem)}</p>' if problem else ""
    rows = "".join(
        "<tr>"
        f"<td><code>{escape(str(t['id']))}</code></td><td>{escape(str(t['label']))}</td>"
        f"<td>{escape(str(t['scope']))}</td><td>{escape(str(t['created']))}</td>"
        f"<td>{escape(str(t.get('last_used') or 'never'))}</td>"
        '<td><form method="post" action="/tokens/revoke">'
        f'<input type="hidden" name="id" value="{escape(str(t["id"]))}">'
        f'<button class="quiet" type="submit" aria-label="Revoke {escape(str(t["label"]))}">'
        "Revoke</button></form></td></tr>"
        for t in tokens
    )
    table = (
        "<table><thead><tr><th>id</th><th>label</th><th>scope</th><th>made</th>"
        f"<th>last used</th><th></th></tr></thead><tbody>{rows}</tbody></table>"
        if tokens
        else '<p class="hint">No tokens yet.</p>'
    )
    boxes = "".join(
        f'<label class="check"><input type="checkbox" name="spaces" value="{escape(s)}"> '
        f"only {escape(s)}</label>"
        for s in spaces
    )
    body = (
        '<header><h1><a href="/">pasture</a></h1>'
        f'<span class="meta">signed in as {escape(caller.name or "")}</span></header>'
        f"<h2>Tokens</h2>{shown}{error}{table}"
        "<h2>A new token</h2>"
        '<form method="post" action="/tokens">'
        '<label>Label <input type="text" name="label" required maxlength="80" '
        'placeholder="laptop, Claude, a script"></label>'
        '<label class="check"><input type="checkbox" name="read" value="1"> read only</label>'
        f"{boxes}"
        '<button type="submit">Make the token</button></form>'
        '<p class="hint">With no space ticked, it reaches all of your spaces.</p>'
    )
    return _page("Tokens · pasture", body)


def audit_page(
    caller: Caller,
    app: str | None,
    records: Sequence[Mapping[str, Any]],
    since: str | None = None,
    *,
    done: str | None = None,
    problem: str | None = None,
) -> str:
    """An app's recorded calls, for its space's owners, or (no app) the person's own: who,
    by which door and token or client, what ran, how it went, and an Undo for each call
    that may have changed data; the newest last. `done`/`problem`: how an undo went."""
    title = f"Audit of {app}" if app else "Your calls"
    rows = []
    for r in records:
        what = f"{r['action']} {r['command']}" if r.get("command") else str(r["action"])
        cells = [str(r["at"])[:19].replace("T", " "), r.get("name") or "nobody"]
        cells += [r.get("door") or "—", r.get("via") or "—"]
        cells += [] if app else [r.get("app") or "—"]
        cells += [what, r.get("args") or "", str(r["outcome"]), f"{float(r['ms']):.1f}"]
        row = "".join(f"<td>{escape(str(c))}</td>" for c in cells)
        rows.append(f"<tr>{row}<td>{_undo_button(r, app)}</td></tr>")
    heads = ["when (UTC)", "who", "door", "via", *([] if app else ["app"])]
    heads += ["what", "args", "outcome", "ms", "undo"]
    table = (
        "<table><thead><tr>"
        + "".join(f"<th>{h}</th>" for h in heads)
        + f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        if records
        else '<p class="hint">No calls recorded in this while.</p>'
    )
    kept = f'<input type="hidden" name="app" value="{escape(app)}">' if app else ""
    body = (
        '<header><h1><a href="/">pasture</a></h1>'
        f'<span class="meta">signed in as {escape(caller.name or "")}</span></header>'
        f"<h2>{escape(title)}</h2>"
        + (f'<p class="answer" role="status">{escape(done)}</p>' if done else "")
        + (f'<p class="error" role="alert">{escape(problem)}</p>' if problem else "")
        + f'<form method="get" action="/audit">{kept}'
        '<label>Since <input type="text" name="since" '
        f'value="{escape(since or "")}" placeholder="1h, 2d, 2026-12-01"></label>'
        '<button type="submit">Show</button></form>'
        f"{table}"
        '<p class="hint">Arguments are kept as their names and kinds, never their values.</p>'
    )
    return _page(f"{title} · pasture", body)


# the calls that can change an app's data, so may be undone
CHANGES = frozenset({"command", "handler", "apply", "undo", "restore"})


def _undo_button(record: Mapping[str, Any], app: str | None) -> str:
    """An Undo for one call that went through and may have changed data (the server says
    whether the caller may, and whether it changed anything)."""
    call = record.get("call")
    if not call or record.get("outcome") != "ok" or record.get("action") not in CHANGES:
        return ""
    kept = f'<input type="hidden" name="app" value="{escape(app)}">' if app else ""
    return (
        f'<form method="post" action="/audit/undo">{kept}'
        f'<input type="hidden" name="call" value="{escape(str(call))}">'
        f'<button class="quiet" type="submit" aria-label="Undo call {escape(str(call))}">'
        "Undo</button></form>"
    )


def tools_page(
    caller: Caller, app: str | None, entries: Sequence[Mapping[str, Any]], said: str
) -> str:
    """The Tools tab: every command of the person's apps (or of one), as `/api/tools`,
    MCP's `commands` and `pasture inspect` list them, one table per app. `said` is the
    listing's sentence, shown when there is nothing to list."""
    by_app: dict[str, list[Mapping[str, Any]]] = {}
    for entry in entries:
        by_app.setdefault(str(entry.get("at", "")), []).append(entry)
    heads = ["tool", "title", "what it does", "kind", "arguments", "view"]
    parts = []
    for at, listed in by_app.items():
        rows = "".join(_tool_row(e) for e in listed)
        app_title = escape(str(listed[0].get("title") or at))
        parts.append(
            f'<section class="app" data-app="{escape(at)}"><h3>{app_title} '
            f'<span class="meta">{escape(at)}</span></h3>'
            "<table><thead><tr>"
            + "".join(f"<th>{h}</th>" for h in heads)
            + f"</tr></thead><tbody>{rows}</tbody></table></section>"
        )
    title = f"Tools of {app}" if app else "Tools"
    json_at = "/api/tools" + (f"?app={escape(app)}" if app else "")
    body = (
        '<header><h1><a href="/">pasture</a></h1>'
        f'<span class="meta">signed in as {escape(caller.name or "")}</span></header>'
        f"<h2>{escape(title)}</h2>"
        '<p class="hint">What every agent you connect is offered, through MCP\'s '
        "<code>commands</code>, WebMCP in your apps' pages and the console; "
        f'<a href="{json_at}">the same list as JSON</a>.</p>'
        + ("".join(parts) or f"<p>{escape(said)}</p>")
    )
    return _page(f"{title} · pasture", body)


def _tool_row(entry: Mapping[str, Any]) -> str:
    args = ", ".join(arguments_of(entry)) or "none"
    kind = kind_of(entry)
    cells = [
        f"<code>{escape(str(entry.get('name', '')))}</code>",
        escape(str(entry.get("commandTitle") or "")),
        escape(str(entry.get("description") or "")),
        kind,
        f"<code>{escape(args)}</code>",
        f"<code>{escape(str(entry['view']))}</code>" if entry.get("view") else "",
    ]
    name = escape(str(entry.get("name", "")))
    return f'<tr data-tool="{name}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def message_page(title: str, sentence: str, sign_in: str | None = None) -> str:
    """A short page with a sentence; `sign_in` is where a signed-out visitor signs in."""
    link = f'<p><a href="{escape(sign_in)}">Sign in</a></p>' if sign_in else ""
    body = (
        f'<header><h1><a href="/">pasture</a></h1></header><h2>{escape(title)}</h2>'
        f"<p>{escape(sentence)}</p>{link}"
    )
    return _page(f"{title} · pasture", body)


def signed_out_dashboard() -> str:
    body = (
        "<header><h1>pasture</h1></header>"
        "<p>Your spaces, apps and their commands are here once you sign in.</p>"
        '<p><a href="/signin">Sign in</a></p>'
    )
    return _page("pasture", body)


def dashboard(
    caller: Caller,
    apps: Sequence[AppInfo],
    commands: Mapping[str, Sequence[Mapping[str, Any]]],
    nonce: str,
    problems: Mapping[str, str] | None = None,
    opens: Mapping[str, str] | None = None,
    owned: Collection[str] = (),
) -> str:
    """The signed-in person's spaces, apps and commands, each command with a form to try it.

    `opens` is where each app's link goes, by `space/app` (its page, or the hop that
    signs the visitor in to its own origin). The apps of the spaces in `owned` link to
    their audit.
    """
    head = (
        "<header><h1>pasture</h1>"
        '<form method="post" action="/signout">'
        f'<span class="meta">signed in as {escape(caller.name or "")}</span> '
        '<a href="/tools">Tools</a> '
        '<a href="/tokens">Tokens</a> '
        '<button class="quiet" type="submit">Sign out</button></form></header>'
    )
    if not apps:
        body = head + (
            "<p>No apps yet. Deploy one with <code>pasture deploy DIR</code>; it shows up here.</p>"
        )
        return _page("pasture", body, nonce)
    spaces: dict[str, list[AppInfo]] = {}
    for app in apps:
        spaces.setdefault(app.space, []).append(app)
    parts = [head]
    for space in sorted(spaces):
        parts.append(f"<h2>{escape(space)}</h2>")
        for app in sorted(spaces[space], key=lambda a: a.slug):
            problem = (problems or {}).get(app.at)
            opened = (opens or {}).get(app.at, f"/{app.space}/{app.slug}/")
            audit = app.space in owned
            parts.append(_app(app, commands.get(app.at, ()), problem, opened, audit))
    return _page("pasture", "".join(parts), nonce)


def _app(
    app: AppInfo,
    commands: Sequence[Mapping[str, Any]],
    problem: str | None,
    opens: str,
    audit: bool = False,
) -> str:
    path = f"/{app.space}/{app.slug}/"
    title = app.title or app.slug
    parts = [
        f'<section class="app" data-app="{escape(app.at)}">',
        f'<h3><a href="{escape(opens)}">{escape(title)}</a>'
        f'<span class="tag">{escape(app.access)}</span>'
        f'<span class="tag">v{app.version}</span>'
        + (
            '<span class="tag code" title="its worker.py runs in a process of its own">'
            "runs code</span>"
            if app.code
            else ""
        )
        + "</h3>",
        f'<div class="meta">{escape(app.at)} · '
        f'<a href="/tools?app={escape(app.at)}">its tools</a>'
        + (f' · <a href="/audit?app={escape(app.at)}">its audit</a>' if audit else "")
        + "</div>",
    ]
    if problem:
        parts.append(f'<p class="error">{escape(problem)}</p>')
    elif not commands:
        parts.append('<p class="hint">This app has no commands.</p>')
    for entry in commands:
        parts.append(_command_form(path + "api/command", entry))
    parts.append("</section>")
    return "".join(parts)


def _command_form(api: str, entry: Mapping[str, Any]) -> str:
    name = str(entry.get("name", ""))
    schema = entry.get("input")
    props: Mapping[str, Any] = {}
    required: set[str] = set()
    if isinstance(schema, Mapping):
        found = schema.get("properties")
        props = found if isinstance(found, Mapping) else {}
        required = {str(r) for r in schema.get("required", []) if isinstance(r, str)}
    kind = "reads" if entry.get("readOnly") else "writes"
    fields = "".join(_field(arg, prop, arg in required) for arg, prop in props.items())
    titled = entry.get("commandTitle")
    said = escape(str(entry.get("description", "")))
    if isinstance(titled, str) and titled:
        said = f"<strong>{escape(titled)}</strong>: {said}"
    hard = '<span class="tag">hard to undo</span>' if entry.get("consequential") else ""
    return (
        f'<details class="command" data-command="{escape(name)}">'
        f"<summary><code>{escape(name)}</code> — {said}"
        f'<span class="tag">{kind}</span>{hard}</summary>'
        f'<form class="run" data-api="{escape(api)}" data-command="{escape(name)}">'
        f"{fields}"
        f'<button type="submit">Run {escape(name)}</button>'
        '<div class="answer" aria-live="polite"></div>'
        "</form></details>"
    )


def _field(arg: str, prop: Any, required: bool) -> str:
    prop = prop if isinstance(prop, Mapping) else {}
    kind = prop.get("type")
    fmt = prop.get("format")
    label = escape(arg)
    attrs = f'name="{label}" data-arg="{label}"'
    hint = ""
    if isinstance(prop.get("description"), str):
        hint = f' <span class="hint">{escape(prop["description"])}</span>'
    if kind == "boolean":
        return f'<label class="check"><input type="checkbox" {attrs}> {label}{hint}</label>'
    need = " required" if required else ""
    if not required:
        label += ' <span class="hint">(optional)</span>'
    if kind in ("number", "integer"):
        step = "1" if kind == "integer" else "any"
        return f'<label>{label}{hint}<input type="number" step="{step}" {attrs}{need}></label>'
    if type_of_property(dict(prop)) == "time":
        if not hint:
            hint = f' <span class="hint">a time: {escape(TIME_FORMAT)}</span>'
        return (
            f'<label>{label}{hint}<input type="text" {attrs}{need} '
            f'placeholder="{escape(TIME_FORMAT)}"></label>'
        )
    if fmt == "uri":
        return f'<label>{label}{hint}<input type="url" {attrs}{need}></label>'
    return f'<label>{label}{hint}<input type="text" {attrs}{need}></label>'


__all__ = ["dashboard", "message_page", "signed_out_dashboard", "signin_page", "tools_page"]
