"""The pieces hostile inputs are built from, shared by the fuzz suite's strategies
(`fuzz_inputs`) and `benchmarks/fuzz.py`'s generator: the grammar's own names, salted with
what breaks careless code."""

from __future__ import annotations

from typing import Any

BIG = 2**70  # 1180591620717411303424: past every 64-bit integer

HOSTILE_NUMBERS: list[Any] = [
    BIG,
    -BIG,
    2**63,
    2**63 - 1,
    -(2**63),
    -(2**63) - 1,
    10**30,
    1e308,
    -1e308,
    5e-324,
    0,
    -0.0,
    float("inf"),
    float("-inf"),
    float("nan"),
]

HOSTILE_WORDS = [
    "\ud800",
    "a\udfffb",
    "\x00",
    "nul\x00inside",
    "\x01\x1f\x7f",
    "%ED%A0%80",
    "%00",
    "%FF%FE",
    "%",
    "%2",
    "1180591620717411303424",
    "-1180591620717411303424",
    "99999999999999999999999999999.5",
    "1e999",
    "NaN",
    "Infinity",
    "9999-12-31T23:59:59-23:59",
    "0001-01-01T00:00:00+05:00",
    "2026-02-30",
    "999999-days-ago",
    "today",
    '"',
    '\\"',
    "&",
    ",",
    "..",
    "...",
    "$",
    "$run",
    "$\ud800",
    "../../etc/passwd",
    "é",
    "😀",
    "\u202e",
    "",
    " ",
]

COMPONENTS = ["jog", "doc", "alias", "comment", "created", "updated", "person", "line", "nope"]
COLUMNS = ["who", "miles", "at", "title", "body", "name", "target", "by", "sku", "qty", "x"]
OPERATORS = ["=", "!=", "~=", "<", "<=", ">", ">=", "=>", "==", "!", "~", "<>"]
ARGUMENTS = ["who", "miles", "at", "since", "sku", "qty", "kind", "x"]
COMMANDS = [
    "log_run",
    "leaderboard",
    "since",
    "add_jog",
    "find_jog",
    "cart add",
    "cart_add",
    "cart remove",
    "cart status",
    "answer",
]

# What the `wild` app's worker answers with (see fuzz_site.WILD_WORKER).
WILD_ANSWERS = [
    "set",
    "nan",
    "infinity",
    "surrogate",
    "deep",
    "bytes",
    "object",
    "text_number",
    "huge_int",
    "loop",
    "big_int",
    "ok",
]

# Segments of a page's address, as sent (percent-encoded where it says so).
SEGMENTS = [
    "index.html",
    "style.css",
    "leaderboard.html",
    "sub",
    "..",
    "%2e%2e",
    "%2E%2E%2F",
    ".",
    "%00",
    "a%00b",
    "%ED%A0%80",
    "%FF",
    "%5c..%5c",
    "%2F",
    "api",
    "tools.json",
    "vocab.json",
    "worker.py",
    "a" * 300,
    "",
]

# Paths of files in a deploy.
FILE_PATHS = [
    "index.html",
    "style.css",
    "sub/page.html",
    "../escape.html",
    "/etc/passwd",
    "//host/share",
    "C:/win.ini",
    "a\\b.html",
    "a//b.html",
    "a/./b.html",
    "nul\x00.html",
    "ctl\x01.html",
    "\ud800.html",
    "a" * 300 + ".html",
    "/".join(["d"] * 300) + "/x.html",
    "",
    ".",
    "..",
    "tools.json/x",
    "index.html/x",
]

YAML_BOMBS = [
    "a: &a [*a]",
    "a: " + "[" * 2_000 + "]" * 2_000,
    "a: &a [x, x, x, x, x, x, x, x, x]\n"
    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
    "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
    "x: .nan",
    "x: .inf",
    "x: " + "9" * 5_000,
    "x: !!python/object:os.system ls",
    "\ud800: 1",
    "log_run: {description: d, input: {miles: number}, query: .jog.miles>$miles}",
]
