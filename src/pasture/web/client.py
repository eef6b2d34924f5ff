"""`./api/client.js`: the ES module an app's pages import to reach their own API.

    import { apply, query, subscribe, command, call, me } from "./api/client.js";

Each function fetches the app's own `./api/` (found from the module's own
address, so it works whatever `<base>` the page has), as whoever has the page
open, and resolves to the answer's `data`; a refusal throws an `Error` whose
message is the sentence the server gave and whose `status` is the HTTP status.

`subscribe(filter, callback, onRefused)` reads `./api/subscribe`'s event
stream (`pasture.web.live`) with `fetch`, not `EventSource`, so that a refusal's
sentence and status reach the page as every other function's do. A stream that
ends without a refusal (the server restarting, the network gone) is opened
again, sooner at first, with the last answer's id: the server sends its newest
answer whenever it differs from that one, so the page ends with the final state.

An answer holds at most one page of rows (1,000 unless the server says otherwise):
one cut short carries `more: true` and a `cursor`, and `query(filter + "&after=" +
cursor)` reads the page after it. A subscription watches one page, the one its own
filter names — the first, or the one after its `after=` — and is sent again only when
that page changes (its rows, or whether more follow it); rows past it move nothing.
A page that shows the newest rows watches `sort=-created.at`, whose first page changes
with every row added.
"""

from __future__ import annotations

# One block of an event stream read in a page: its event name, id and data (both scripts
# read streams of pasture's, `subscribe` and the tools a page offers).
READ_EVENT_JS = """\
  // One event block of the stream: its event name, id and data.
  function read(block) {
    let event = "message";
    let id = null;
    const data = [];
    for (const line of block.split("\\n")) {
      if (line === "" || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const name = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (name === "event") event = value;
      else if (name === "id") id = value;
      else if (name === "data") data.push(value);
    }
    return { event, id, data: data.length ? JSON.parse(data.join("\\n")) : null };
  }
"""

CLIENT_JS = """\
// The app's own API, as whoever has this page open.
//   apply(bundles)       -> {entities, aliases}
//   query(filter)        -> {rows}, or an aggregate's {count}, {tally} or {distinct};
//                           one page of rows at most: cut short, {rows, more: true, cursor},
//                           and query(filter + "&after=" + cursor) is the page after it
//   subscribe(filter, callback, onRefused)
//                        -> unsubscribe(); callback(what query(filter) answers) now and
//                           whenever that changes (that one page of it);
//                           onRefused(error) when it may not go on
//   command(name, args)  -> the command's data; one that is hard to undo runs only as
//                           command(name, args, {confirm: true}), once the person said yes
//   call(name, args)     -> what one of the app's handlers (worker.py) returned
//   me()                 -> {eid, name}, or {eid: null} when signed out
// A refusal throws an Error whose message is the server's sentence.

const api = new URL("./", import.meta.url);

async function request(path, init) {
  const response = await fetch(new URL(path, api), {
    credentials: "same-origin",
    headers: init.body
      ? { Accept: "application/json", "Content-Type": "application/json" }
      : { Accept: "application/json" },
    ...init,
  });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) throw refusal(response.status, body);
  return body;
}

// A refusal as an Error: the server's sentence, and the HTTP status.
function refusal(status, body) {
  const sentence = body && typeof body.error === "string"
    ? body.error
    : `the server answered ${status} — try again in a moment`;
  const error = new Error(sentence);
  error.status = status;
  return error;
}

export async function apply(bundles) {
  return (await request("apply", { method: "POST", body: JSON.stringify(bundles) })).data;
}

export async function query(filter) {
  // As ?filter=…, encoded whole: a URL would otherwise change `<`, `>` and `"`.
  const encoded = encodeURIComponent(String(filter ?? ""));
  return (await request("query?filter=" + encoded, { method: "GET" })).data;
}

export function subscribe(filter, callback, onRefused) {
  const address = new URL("subscribe?filter=" + encodeURIComponent(String(filter ?? "")), api);
  const stop = new AbortController();
  let last = null; // the id of the answer the page has
  let wait = 100;
  const refused = (error) => {
    stop.abort();
    if (onRefused) onRefused(error);
    else console.error(error);
  };

  /* read(block): READ_EVENT_JS */

  async function follow() {
    const headers = { Accept: "text/event-stream" };
    if (last !== null) headers["Last-Event-ID"] = last;
    const response = await fetch(address, {
      credentials: "same-origin", headers, cache: "no-store", signal: stop.signal,
    });
    if (!response.ok) {
      let body = null;
      try {
        body = await response.json();
      } catch {
        body = null;
      }
      const error = refusal(response.status, body);
      // A refusal stands; a busy or failing server is asked again.
      if (response.status < 500 && response.status !== 429) refused(error);
      return;
    }
    wait = 100;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replaceAll("\\r\\n", "\\n");
      let end;
      while ((end = buffer.indexOf("\\n\\n")) >= 0) {
        const { event, id, data } = read(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (data === null) continue;
        if (event === "refused") {
          refused(refusal(data.status ?? 403, data));
          return;
        }
        if (id !== null) last = id;
        callback(data.data);
      }
    }
  }

  (async () => {
    while (!stop.signal.aborted) {
      try {
        await follow();
      } catch {
        // the server went away mid-stream, or could not be reached: asked again below
      }
      if (stop.signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, 2000);
    }
  })();
  return () => stop.abort();
}

export async function command(name, args = {}, { confirm = false } = {}) {
  // confirm: only once the person said yes to a command that is hard to undo
  const body = JSON.stringify(confirm === true ? { name, args, confirm } : { name, args });
  return (await request("command", { method: "POST", body })).data;
}

export async function call(name, args = {}) {
  // A handler's own answer: what it returned ({result}), or the data of its {text, data}.
  const body = JSON.stringify({ name, args });
  const data = (await request("call", { method: "POST", body })).data;
  return data && Object.keys(data).length === 1 && "result" in data ? data.result : data;
}

export async function me() {
  return await request("me", { method: "GET" });
}
""".replace("  /* read(block): READ_EVENT_JS */\n", READ_EVENT_JS, 1)


__all__ = ["CLIENT_JS", "READ_EVENT_JS"]
