"""`./api/client.js`: the ES module an app's pages import to reach their own API.

    import { apply, query, command, call, me } from "./api/client.js";

Each function fetches the app's own `./api/` (found from the module's own
address, so it works whatever `<base>` the page has), as whoever has the page
open, and resolves to the answer's `data`; a refusal throws an `Error` whose
message is the sentence the server gave and whose `status` is the HTTP status.
"""

from __future__ import annotations

CLIENT_JS = """\
// The app's own API, as whoever has this page open.
//   apply(bundles)       -> {entities, aliases}
//   query(filter)        -> {rows}, or an aggregate's {count}, {tally} or {distinct}
//   command(name, args)  -> the command's data
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
  if (!response.ok) {
    const sentence = body && typeof body.error === "string"
      ? body.error
      : `the server answered ${response.status} — try again in a moment`;
    const error = new Error(sentence);
    error.status = response.status;
    throw error;
  }
  return body;
}

export async function apply(bundles) {
  return (await request("apply", { method: "POST", body: JSON.stringify(bundles) })).data;
}

export async function query(filter) {
  // As ?filter=…, encoded whole: a URL would otherwise change `<`, `>` and `"`.
  const encoded = encodeURIComponent(String(filter ?? ""));
  return (await request("query?filter=" + encoded, { method: "GET" })).data;
}

export async function command(name, args = {}) {
  return (await request("command", { method: "POST", body: JSON.stringify({ name, args }) })).data;
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
"""

__all__ = ["CLIENT_JS"]
