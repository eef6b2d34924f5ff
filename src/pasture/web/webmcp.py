"""`./api/webmcp.js`: an app's commands as WebMCP tools of the page a person has open.

Every HTML page of an app loads it (the platform adds
`<script type="module" src="./api/webmcp.js">` next to the page's `<base>`;
`<meta name="pasture-webmcp" content="off">` keeps it off a page). In a browser
without WebMCP (`document.modelContext` undefined, and `navigator.modelContext`,
where other browsers may put it) the module does nothing at all. In a sandboxed
page (a server with no apps domain: an opaque origin, whose tools no agent can call
— `pasture.platform.apps.origins`) it offers none, and says so on the console
(`SANDBOXED_PAGES`: what such a page cannot do, and how to have it).
Otherwise it follows `./api/tools/follow` (`pasture.web.live_tools`): the app's
commands as the person sees them, now and again whenever they change — a deploy, a
rollback, a worker registering or removing one — and keeps the browser's tools to
that list without a reload: each command registered with
`document.modelContext.registerTool(tool, {signal})`, and one gone or changed taken
back by aborting its signal (a changed one then registered anew). A stream that
ends is opened again (sooner at first) with the last listing's id; one refused (the
person no longer reaches the app) takes every tool back. Each tool is

    {name: "log_run", description: "Log a run for the club leaderboard",
     title: "Log a run",                 // where the command has a title of its own
     inputSchema: {type: "object", properties: {…}, required: […]},
     annotations: {readOnlyHint: true}   // only on a command that only reads;
                                         // {destructiveHint: true} on a consequential one
     execute}

`execute(input)` posts `{name, args: input}` to `./api/command` with the page's
own sign-in, so the command runs as the person whose tab it is, through the
same Service call and refusals as every other door (its header
`X-Pasture-Door: webmcp` tells the audit it came by WebMCP, not from the page
itself). It resolves to the MCP shape of a tool's answer, its text the one an MCP
tool's answer carries — the sentence, then the data as compact JSON on a line of its
own (`./api/command`'s `tool_text`, from `pasture.mcp.text_of`):

    {content: [{type: "text", text: "log_run: wrote 1 entity in ada/runs: …\\n{…}"}],
     structuredContent: {entities: […], aliases: {…}}}

and a refusal to `{content: [{type: "text", text: <the sentence>}], isError: true}`.

A command that is hard to undo (`consequential`) runs only once the person at
the page says yes: asked through the agent's `client.requestUserInteraction`
where the browser gives one, else the page's `confirm()`; their yes is sent as
`"confirm": true` beside the call's name and args, without which `./api/command`
runs no such command. A no (or nobody to ask) answers the command line's refusal,
`cancelled — nothing was run`.
It does not throw: the browser hands an agent only "the script function threw
an error" for a thrown error, never its message, so the sentence would be lost.
"""

from __future__ import annotations

import json

from pasture.asking import CANCELLED
from pasture.platform import SANDBOXED_PAGES
from pasture.web.client import READ_EVENT_JS

MODULE = "api/webmcp.js"
"""Where the module is, under an app's address (the platform's rewrite injects it)."""

WEBMCP_JS = (
    """\
// This app's commands as WebMCP tools, run as whoever has this page open.
// Without WebMCP in the browser (no document.modelContext, nor navigator's) it does nothing.
// A tool answers {content: [{type: "text", text}], structuredContent: data};
// a refusal answers {content: [{type: "text", text: sentence}], isError: true}.

const context = globalThis.document?.modelContext ?? globalThis.navigator?.modelContext;
const once = Symbol.for("pasture.webmcp");

// A sandboxed page (an opaque origin: a server with no apps domain) is not one an
// agent can call tools of, so it offers none, and says why on the console.
const opaque = globalThis.origin === "null";

if (context && typeof context.registerTool === "function" && !opaque && !document[once]) {
  document[once] = true;
  const api = new URL("./", import.meta.url);
  const unreachable = "the server could not be reached — check that pasture is running";
  const cancelled = CANCELLED;

  const answer = (text, data) => ({
    content: [{ type: "text", text: String(text) }],
    structuredContent: data && typeof data === "object" ? data : {},
  });
  const refusal = (sentence) => ({
    content: [{ type: "text", text: String(sentence) }],
    isError: true,
  });

  async function run(name, input, confirm = false) {
    if (typeof input === "string") {
      try { input = JSON.parse(input); } catch { input = {}; }
    }
    const call = { name, args: input ?? {} };
    if (confirm) call.confirm = true;  // the person at the page said yes to it
    let response;
    try {
      response = await fetch(new URL("command", api), {
        method: "POST",
        credentials: "same-origin",
        headers: {
          Accept: "application/json",
          "Content-Type": "application/json",
          "X-Pasture-Door": "webmcp",  // for the audit: which door the call came by
        },
        body: JSON.stringify(call),
      });
    } catch {
      return refusal(unreachable);
    }
    let body = null;
    try { body = await response.json(); } catch { body = null; }
    if (!response.ok) {
      return refusal(body && typeof body.error === "string"
        ? body.error
        : `the server answered ${response.status} — try again in a moment`);
    }
    // The text an MCP tool's answer carries: the sentence, then the data as compact JSON.
    return answer(body?.tool_text ?? body?.text ?? "", body?.data);
  }

  // A command that is hard to undo runs only once the person at the page says yes: through
  // the agent's own way of asking where the browser gives one, else the page's confirm().
  async function asked(command, client) {
    const what = command.commandTitle ? `${command.commandTitle} (${command.name})` : command.name;
    const question = `An agent is about to run ${what}, which is hard to undo. Run it?`;
    const ask = () => globalThis.confirm(question);
    try {
      if (typeof client?.requestUserInteraction === "function") {
        return Boolean(await client.requestUserInteraction(ask));
      }
      return Boolean(ask());
    } catch {
      return false;  // nobody could be asked: nothing runs
    }
  }

  // The tools offered now: each name's definition as sent, and the signal that takes it back.
  const offered = new Map();

  function toolOf(command) {
    const tool = {
      name: command.name,
      description: command.description || command.name,
      inputSchema: command.input ?? { type: "object", properties: {} },
      execute: command.consequential
        ? async (input, client) =>
            (await asked(command, client)) ? run(command.name, input, true) : refusal(cancelled)
        : (input) => run(command.name, input),
    };
    // A short name for people, where the command has one, as MCP tools carry it.
    if (command.commandTitle) tool.title = command.commandTitle;
    // What the command says of itself, as MCP's hints: it only reads, or is hard to undo.
    if (command.readOnly) tool.annotations = { readOnlyHint: true };
    else if (command.consequential) tool.annotations = { destructiveHint: true };
    return tool;
  }

  // Offer what the listing holds, and nothing else: a tool gone from it is taken back, a
  // new one registered, one whose definition changed taken back and registered again.
  async function offer(commands) {
    const wanted = new Map(commands.map((command) => [command.name, command]));
    for (const [name, held] of offered) {
      const command = wanted.get(name);
      if (!command || JSON.stringify(command) !== held.said) {
        held.stop.abort();
        offered.delete(name);
      }
    }
    for (const [name, command] of wanted) {
      if (offered.has(name)) continue;
      const stop = new AbortController();
      offered.set(name, { said: JSON.stringify(command), stop });
      try {
        await context.registerTool(toolOf(command), { signal: stop.signal });
      } catch (error) {
        if (offered.get(name)?.stop === stop) offered.delete(name);
        // Another page script may have offered a tool of the same name first.
        if (!stop.signal.aborted) {
          console.warn(`WebMCP: ${name} is not offered: ${error?.message ?? error}`);
        }
      }
    }
  }

  function withdraw(sentence) {
    offer([]);
    console.warn(`WebMCP: this app's commands are not offered: ${sentence}`);
  }

  /* read(block): READ_EVENT_JS */

  // ./api/tools/follow: the app's commands now, and again whenever they change (a deploy,
  // a rollback, a worker registering or removing one). True: it stands refused.
  let last = null;  // the id of the listing offered now
  let wait = 100;  // before the stream is opened again, doubled up to 2 s while it fails
  async function follow() {
    const headers = { Accept: "text/event-stream" };
    if (last !== null) headers["Last-Event-ID"] = last;
    const response = await fetch(new URL("tools/follow", api), {
      credentials: "same-origin", headers, cache: "no-store",
    });
    if (!response.ok) {
      let body = null;
      try { body = await response.json(); } catch { body = null; }
      if (response.status < 500 && response.status !== 429) {
        withdraw(body && typeof body.error === "string" ? body.error : `${response.status}`);
        return true;
      }
      return false;  // a busy or failing server: asked again
    }
    wait = 100;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      buffer += value.replaceAll("\\r\\n", "\\n");
      let end;
      while ((end = buffer.indexOf("\\n\\n")) >= 0) {
        const { event, id, data } = read(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (data === null) continue;
        if (event === "refused") {
          withdraw(data.error);
          return true;
        }
        if (id !== null) last = id;
        await offer(data.commands ?? []);
      }
    }
  }

  (async () => {
    for (;;) {
      let refused = false;
      try {
        refused = await follow();
      } catch {
        // the server went away mid-stream, or could not be reached: asked again below
      }
      if (refused) return;
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, 2000);
    }
  })();
} else if (context && typeof context.registerTool === "function" && opaque) {
  console.info(SANDBOXED);
}
""".replace("  /* read(block): READ_EVENT_JS */\n", READ_EVENT_JS, 1)
    .replace("CANCELLED;", json.dumps(CANCELLED, ensure_ascii=False) + ";", 1)
    .replace("SANDBOXED);", json.dumps("WebMCP: " + SANDBOXED_PAGES, ensure_ascii=False) + ");", 1)
)

__all__ = ["MODULE", "WEBMCP_JS"]
